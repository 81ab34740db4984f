#!/usr/bin/env python3
"""Structured output on accel-run's OpenAI server (docs/structured-output.md),
through the official openai client on the demo plan: response_format
json_schema (100 of 100 requests at temperature 1 parse with Python's json
and validate with the jsonschema package), json_object, vLLM's guided_regex
and guided_choice (checked with Python's re), streaming, chat, a tight
max_tokens that still ends in a valid document, unconstrained requests
unaffected (greedy text equal to HF's while constrained ones run), and bad
constraints answered 400 naming the parameter. One line per check.
"""
import argparse
import concurrent.futures as cf
import json
import re
import sys

import jsonschema
import openai

from serve_util import Server, check, failures, hf_reference

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "email": {"type": "string", "pattern": "^[a-z]{1,8}@[a-z]{1,8}\\.(com|org)$"},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 3},
        "score": {"type": ["number", "null"]},
        "active": {"type": "boolean"},
        "born": {"type": "string", "format": "date"},
    },
    "required": ["name", "age", "active"],
    "additionalProperties": False,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--accel-run", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--generated", required=True, help="test/fixtures/demo/generated.txt")
    args = ap.parse_args()
    prompt, hf_text = hf_reference(args.generated)
    s = Server(args.accel_run, args.plan, ["--served-model-name", "demo", "--max-num-seqs", "32"])
    try:
        run(s, prompt, hf_text)
    finally:
        rc = s.stop()
        check(rc == 0, f"accel-run exits 0 on SIGTERM (got {rc})")
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    return 0


def run(s, prompt, hf_text):
    client = openai.OpenAI(base_url=s.base + "/v1", api_key="none", max_retries=0, timeout=300)
    cmp = client.completions.create
    rf = {"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON, "strict": True}}

    # 100 requests at temperature 1, 16 at a time, with an unconstrained
    # greedy request in the middle of them.
    def one(i):
        return cmp(model="demo", prompt=prompt, max_tokens=160, temperature=1.0, seed=i,
                   extra_body={"response_format": rf})
    with cf.ThreadPoolExecutor(16) as pool:
        futs = [pool.submit(one, i) for i in range(100)]
        greedy = cmp(model="demo", prompt=prompt, max_tokens=48, temperature=0)
        outs = [f.result() for f in futs]
    valid, stopped, bad = 0, 0, []
    for o in outs:
        text = o.choices[0].text
        try:
            jsonschema.validate(json.loads(text), PERSON)
            valid += 1
        except (ValueError, jsonschema.ValidationError) as e:
            bad.append((text, str(e)[:80]))
        stopped += o.choices[0].finish_reason == "stop"
    check(valid == 100, f"json_schema: {valid} of 100 outputs at temperature 1 parse and "
          f"validate (jsonschema) {bad[:2]}")
    check(stopped == 100, f"json_schema: {stopped} of 100 finish with 'stop'")
    check(len({o.choices[0].text for o in outs}) > 50,
          f"json_schema: the outputs differ ({len({o.choices[0].text for o in outs})} distinct)")
    check(greedy.choices[0].text == hf_text,
          "an unconstrained greedy request beside them still equals HF's text")
    print("  e.g. " + outs[0].choices[0].text, flush=True)

    # Chat, streamed.
    msgs = [{"role": "user", "content": "Describe a person as JSON."}]
    chat = client.chat.completions.create(model="demo", messages=msgs, max_tokens=160,
                                          temperature=1.0, seed=5, response_format=rf)
    content = chat.choices[0].message.content
    try:
        jsonschema.validate(json.loads(content), PERSON)
        ok = True
    except (ValueError, jsonschema.ValidationError):
        ok = False
    check(ok, f"chat with response_format json_schema validates ({content!r})")
    parts = []
    for chunk in client.chat.completions.create(model="demo", messages=msgs, max_tokens=160,
                                                temperature=1.0, seed=5, response_format=rf,
                                                stream=True):
        for c in chunk.choices:
            parts.append(c.delta.content or "")
    check("".join(parts) == content, "streamed chat with json_schema joins to the same text")

    # json_object: any object.
    objs = [cmp(model="demo", prompt=prompt, max_tokens=120, temperature=1.0, seed=i,
                extra_body={"response_format": {"type": "json_object"}}).choices[0].text
            for i in range(10)]
    def is_object(t):
        try:
            return isinstance(json.loads(t), dict)
        except ValueError:
            return False
    check(all(is_object(t) for t in objs),
          f"json_object: 10 of 10 outputs are JSON objects ({[t for t in objs if not is_object(t)][:2]})")

    # guided_regex and guided_choice (vLLM's parameters).
    rx = r"\d{3}-[a-z]{2,4}( [A-Z][a-z]*)?"
    got = [cmp(model="demo", prompt=prompt, max_tokens=40, temperature=1.0, seed=i,
               extra_body={"guided_regex": rx}).choices[0].text for i in range(20)]
    check(all(re.fullmatch(rx, t) for t in got),
          f"guided_regex: 20 of 20 outputs match {rx} (e.g. {got[0]!r})")
    choices = ["alpha", "beta", "gamma delta", "\u00e9t\u00e9"]
    got = [cmp(model="demo", prompt=prompt, max_tokens=10, temperature=1.0, seed=i,
               extra_body={"guided_choice": choices}).choices[0].text for i in range(30)]
    check(all(t in choices for t in got) and len(set(got)) >= 2,
          f"guided_choice: 30 of 30 outputs are choices, {len(set(got))} distinct")
    got = [cmp(model="demo", prompt=prompt, max_tokens=10, temperature=1.0, seed=i,
               extra_body={"structured_outputs": {"choice": choices}}).choices[0].text
           for i in range(5)]
    check(all(t in choices for t in got), "structured_outputs.choice: outputs are choices")

    # A tight budget: the output is still steered to a complete document.
    tight = {"type": "object", "properties": {"a": {"type": "string"},
                                              "b": {"type": "integer"}},
             "required": ["a", "b"]}
    got = [cmp(model="demo", prompt=prompt, max_tokens=16, temperature=1.0, seed=i,
               extra_body={"guided_json": tight}).choices[0].text for i in range(10)]
    def valid_tight(t):
        try:
            jsonschema.validate(json.loads(t), tight)
            return True
        except (ValueError, jsonschema.ValidationError):
            return False
    check(all(valid_tight(t) for t in got),
          f"max_tokens=16: 10 of 10 outputs still validate ({[t for t in got if not valid_tight(t)][:2]})")

    # Bad constraints: 400 naming the parameter, with why.
    def expect_400(body, param, words):
        status, _, raw = s.request("POST", "/v1/completions",
                                   dict({"model": "demo", "prompt": prompt, "max_tokens": 4},
                                        **body))
        err = json.loads(raw or b"{}").get("error", {})
        check(status == 400 and err.get("param") == param and words in err.get("message", ""),
              f"{json.dumps(body)[:100]} -> 400 naming {param} ({status}: {err.get('message')})")
    expect_400({"guided_regex": "(ab"}, "guided_regex", "regex has an unclosed '(' at offset 0")
    expect_400({"guided_json": {"type": "string", "contentEncoding": "base64"}}, "guided_json",
               "keyword 'contentEncoding' at schema is not supported")
    expect_400({"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}},
               "response_format", "has no 'schema'")
    expect_400({"response_format": {"type": "yaml"}}, "response_format", "'yaml' is not supported")
    expect_400({"guided_regex": "a", "guided_choice": ["a"]}, "guided_choice",
               "only one output constraint")
    expect_400({"guided_grammar": "root ::= \"a\""}, "guided_grammar", "context-free grammars")
    expect_400({"guided_choice": []}, "guided_choice", "non-empty array")
    expect_400({"guided_regex": "a", "guided_whitespace_pattern": " "},
               "guided_whitespace_pattern", "JSON constraints only")
    expect_400({"guided_json": {"type": "integer", "minimum": 3, "maximum": 2}}, "guided_json",
               "allows no integer")


if __name__ == "__main__":
    sys.exit(main())
