#!/usr/bin/env python3
"""Tool calls (issue 24 item 4; docs/serving.md "Tool calls") through the
official `openai` client against accel-run serving the demo plan with the
real Qwen2.5 (hermes) and Llama-3.1 (llama3_json) chat templates.

The demo model does not call tools by itself. Its reply is forced with the
request's own parameters: tool_choice names a function, so the assistant's
turn begins with the call up to its arguments, and allowed_token_ids lets the
model write only '{' and '}' (temperature 1000: either with the same chance)
for 3 tokens. Exactly one of the 8 replies, '{}}', completes the call; every
other reply must come back as plain content, the forced beginning included.
Over 64 seeds some replies are calls and some are not (the seeds fix which).
The call found is streamed with the same seed (the tool_calls delta), sent
back with its result in the next request, and that prompt's ids must equal
transformers' apply_chat_template of the same conversation.

Also: the parser each template selects (the startup line), auto with a text
reply (the same text as tool_choice "none"), and 400s naming the field.

usage: serve_tools.py ACCEL_RUN PLAN TOKENIZER_JSON FIXTURE_DIR
"""
import copy
import json
import os
import sys

import jsonschema
import openai
from transformers import PreTrainedTokenizerFast

sys.path.insert(0, os.path.dirname(__file__))
from serve_util import Server, check, failures  # noqa: E402

accel_run, plan, tokenizer_json, fixtures = sys.argv[1:5]
SPECIAL = "<|endoftext|>"

# Small, so that the prompts fit the demo's 512 positions (its byte-level
# vocabulary spends many tokens on the templates' markers).
NOOP = {"type": "function", "function": {"name": "noop"}}
TOOLS = [NOOP]
WEATHER = {"type": "function", "function": {"name": "wx", "parameters": {
    "type": "object", "properties": {"c": {"type": "string", "maxLength": 6},
                                     "n": {"type": "integer", "minimum": 1, "maximum": 7}},
    "required": ["c"]}}}
USER = {"role": "user", "content": "Zürich?"}
FAMILIES = [  # template, parser it selects, the call's beginning for noop
    ("qwen2.5-instruct", "hermes", '<tool_call>\n{"name": "noop", "arguments": '),
    ("llama-3.1-8b-instruct", "llama3_json", '{"name": "noop", "parameters": '),
]


STARTED = []  # every server, killed if the script fails (it must not outlive us)


def serve(args):
    server = Server(accel_run, plan, args)
    STARTED.append(server)
    return server


def template_messages(messages):
    """What vLLM passes a chat template (and so transformers gets here): an
    assistant's tool-call arguments as the object its JSON string holds,
    null content as ""."""
    out = copy.deepcopy(messages)
    for m in out:
        if m.get("tool_calls"):
            m["content"] = m.get("content") or ""
            for c in m["tool_calls"]:
                args = c["function"].get("arguments")
                c["function"]["arguments"] = json.loads(args) if args else {}
    return out


def hf_ids(tok, messages, tools):
    out = tok.apply_chat_template(template_messages(messages), tools=tools, tokenize=True,
                                  add_generation_prompt=True)
    if isinstance(out, dict) or hasattr(out, "keys"):
        out = out["input_ids"]
    return list(out)


def forced(client, braces, seed, stream=False):
    return client.chat.completions.create(
        model="demo", messages=[USER], tools=TOOLS, max_tokens=3, temperature=1000, seed=seed,
        tool_choice={"type": "function", "function": {"name": "noop"}}, stream=stream,
        extra_body={"allowed_token_ids": braces})


def family(name, parser, prefix):
    path = os.path.join(fixtures, name + ".jinja")
    server = serve(["--chat-template", path, "--served-model-name", "demo"])
    client = openai.OpenAI(base_url=server.base + "/v1", api_key="none", max_retries=0)
    check(f"tool-call parser {parser})" in "".join(server.lines),
          f"{name}: the template selects the {parser} parser")
    braces = []
    for text in ("{", "}"):
        _, _, body = server.request("POST", "/tokenize", {"prompt": text, "add_special_tokens": False})
        braces += json.loads(body)["tokens"]
    check(len(braces) == 2, f"{name}: '{{' and '}}' are one token each in the demo's vocabulary")

    # The forced replies: a call exactly when the model wrote '{}}'.
    calls, texts, wrong = [], [], []
    for seed in range(64):
        r = forced(client, braces, seed)
        c = r.choices[0]
        if c.message.tool_calls:
            tc = c.message.tool_calls
            ok = (len(tc) == 1 and tc[0].type == "function" and tc[0].function.name == "noop"
                  and tc[0].function.arguments == "{}" and tc[0].id.startswith("call_")
                  and c.message.content is None and c.finish_reason == "length"
                  and r.usage.completion_tokens == 3)
            (calls if ok else wrong).append((seed, r))
        else:
            reply = (c.message.content or "")[len(prefix):]
            ok = ((c.message.content or "").startswith(prefix) and len(reply) == 3
                  and set(reply) <= {"{", "}"} and reply != "{}}" and c.finish_reason == "length"
                  and r.usage.completion_tokens == 3)
            (texts if ok else wrong).append((seed, r))
    check(not wrong, f"{name}: every forced reply is the call (reply '{{}}}}') or the text "
          f"(any other reply){'' if not wrong else ': ' + repr(wrong[0][1])}")
    check(calls and texts, f"{name}: {len(calls)} of 64 seeds give the call, {len(texts)} plain text")
    if not calls or not texts:
        server.stop()
        return

    # The same seed streamed: the call as one tool_calls delta, no content.
    seed, whole = calls[0]
    deltas, content, finish = [], "", None
    for chunk in forced(client, braces, seed, stream=True):
        for ch in chunk.choices:
            deltas += ch.delta.tool_calls or []
            content += ch.delta.content or ""
            finish = ch.finish_reason or finish
    check(len(deltas) == 1 and deltas[0].index == 0 and deltas[0].function.name == "noop"
          and deltas[0].function.arguments == "{}" and deltas[0].id.startswith("call_")
          and content == "" and finish == "length",
          f"{name}: streamed, seed {seed} gives the same call in one tool_calls delta")
    seed_text, whole_text = texts[0]
    content = "".join(ch.delta.content or "" for chunk in forced(client, braces, seed_text, True)
                      for ch in chunk.choices)
    check(content == whole_text.choices[0].message.content,
          f"{name}: streamed, seed {seed_text} gives the same text as whole")

    # The call and its result in the next request: the prompt is
    # transformers' apply_chat_template of the conversation.
    call_msg = whole.choices[0].message.model_dump(exclude_none=True)
    result = {"role": "tool", "tool_call_id": call_msg["tool_calls"][0]["id"], "content": "done"}
    messages = [USER, call_msg, result]
    tok = PreTrainedTokenizerFast(tokenizer_file=tokenizer_json, bos_token=SPECIAL,
                                  eos_token=SPECIAL)
    tok.chat_template = open(path, encoding="utf-8").read()
    want = hf_ids(tok, messages, TOOLS)
    _, _, body = server.request("POST", "/tokenize", {"messages": messages, "tools": TOOLS})
    got = json.loads(body).get("tokens")
    r = client.chat.completions.create(model="demo", messages=messages, tools=TOOLS, max_tokens=1)
    check(got == want and r.usage.prompt_tokens == len(want),
          f"{name}: the call and its result sent back: transformers' prompt ids "
          f"({len(want)} tokens)")

    # auto with a text reply: the same text as tool_choice "none".
    texts = []
    for choice in ("auto", "none"):
        r = client.chat.completions.create(model="demo", messages=[USER], tools=TOOLS,
                                           tool_choice=choice, max_tokens=8, temperature=0)
        texts.append((r.choices[0].message.content, r.choices[0].message.tool_calls,
                      r.choices[0].finish_reason))
    check(texts[0] == texts[1] and texts[0][1] is None and texts[0][0],
          f"{name}: auto with a reply that is no call: the text, as with tool_choice none")

    # Without allowed_token_ids, a named or required tool_choice constrains
    # the rest of the call (docs/structured-output.md): at temperature 1
    # every reply is the call, its arguments valid under the parameters.
    if parser != "hermes":  # Llama-3.1's tool prompt does not leave room in 512 positions
        check(server.stop() == 0, f"{name}: accel-run exits 0")
        return
    tools = [WEATHER]
    bad = []
    for seed in range(12):
        for choice in ({"type": "function", "function": {"name": "wx"}}, "required"):
            r = client.chat.completions.create(model="demo", messages=[USER], tools=tools,
                                               tool_choice=choice, max_tokens=40,
                                               temperature=1.0, seed=seed)
            tc = r.choices[0].message.tool_calls or []
            ok = len(tc) == 1 and tc[0].function.name == "wx"
            if ok:
                try:
                    jsonschema.validate(json.loads(tc[0].function.arguments),
                                        WEATHER["function"]["parameters"])
                except (ValueError, jsonschema.ValidationError):
                    ok = False
            if not ok:
                bad.append((seed, choice, r.choices[0].message))
    check(not bad, f"{name}: named and required tool_choice at temperature 1: 24 of 24 replies "
          f"are calls with valid arguments{'' if not bad else ': ' + repr(bad[0])[:300]}")
    check(server.stop() == 0, f"{name}: accel-run exits 0")


def main():
    for args in FAMILIES:
        family(*args)
    errors()


def errors():
    """400s naming the field, through the client; the built-in formats."""
    qwen = os.path.join(fixtures, "qwen2.5-instruct.jinja")
    server = serve(["--chat-template", qwen, "--served-model-name", "demo"])
    client = openai.OpenAI(base_url=server.base + "/v1", api_key="none", max_retries=0)
    for label, kwargs, param in [
            ("a named function not in tools",
             {"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "rm"}}},
             "tool_choice.function.name"),
            ("a tool without its function", {"tools": [NOOP, {"type": "function"}]},
             "tools[1].function"),
            ("required without tools", {"tool_choice": "required"}, "tool_choice"),
            ("a tool message without tool_call_id",
             {"messages": [USER, {"role": "tool", "content": "x"}]}, "messages[1].tool_call_id")]:
        body = {"model": "demo", "messages": [USER], "max_tokens": 1, **kwargs}
        try:
            client.chat.completions.create(**body)
            check(False, f"{label}: refused")
        except openai.BadRequestError as e:
            check(e.status_code == 400 and e.body.get("param") == param,
                  f"{label}: 400 naming {param} ({e.body.get('message')})")
    check(server.stop() == 0, "accel-run exits 0")

    # The built-in formats take no tools; --tool-call-parser names the parser.
    server = serve(["--served-model-name", "demo"])
    client = openai.OpenAI(base_url=server.base + "/v1", api_key="none", max_retries=0)
    check("tool-call parser none)" in "".join(server.lines), "plain: no tool-call parser")
    try:
        client.chat.completions.create(model="demo", messages=[USER], tools=TOOLS, max_tokens=1)
        check(False, "plain: tools refused")
    except openai.BadRequestError as e:
        check(e.body.get("param") == "tool_choice" and "--tool-call-parser" in e.body.get("message"),
              "plain: tools with tool_choice auto: 400 naming tool_choice, pointing at --tool-call-parser")
    check(server.stop() == 0, "accel-run exits 0")
    server = serve(["--chat-template", qwen, "--tool-call-parser", "mistral"])
    check("tool-call parser mistral)" in "".join(server.lines), "--tool-call-parser mistral wins")
    check(server.stop() == 0, "accel-run exits 0")


try:
    main()
except BaseException:
    for server in STARTED:
        server.proc.kill()
    raise
print(f"tool calls: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
