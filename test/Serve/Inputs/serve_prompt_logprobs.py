#!/usr/bin/env python3
"""vLLM's prompt_logprobs on accel-run's OpenAI server, checked against
onnxruntime running the demo model's ONNX file on the same ids: every prompt
token's logprob (log_softmax of the previous position's logits), its rank and
the top alternatives, for a prompt longer than one prefill chunk of logits
rows, with n=2, on chat, and with the prefix cache on; bad values are 400s.
One line per check.
"""
import argparse
import json
import math
import sys

import numpy as np
import onnxruntime as ort

from serve_util import Server, check, failures, hf_reference, read_stream


def reference(session, ids):
    logits = session.run(None, {"input_ids": np.array([ids], dtype=np.int64)})[0][0].astype(np.float64)
    m = logits.max(axis=1, keepdims=True)
    return logits - (m + np.log(np.exp(logits - m).sum(axis=1, keepdims=True)))


def compare(lps, ref, ids, top):
    """The largest |logprob - reference| over every entry, and whether the
    ids, ranks and alternatives are the reference's."""
    if lps[0] is not None or len(lps) != len(ids):
        return math.inf, False
    worst, same = 0.0, True
    for pos in range(1, len(ids)):
        row = ref[pos - 1]
        entry = {int(k): v for k, v in lps[pos].items()}
        tok = ids[pos]
        if tok not in entry:
            return math.inf, False
        worst = max(worst, abs(entry[tok]["logprob"] - row[tok]))
        same &= entry[tok]["rank"] == 1 + int((row > row[tok]).sum())
        order = np.argsort(-row, kind="stable")[:top]
        want = {int(t) for t in order} | {tok}
        same &= set(entry) == want
        for t in order:
            worst = max(worst, abs(entry[int(t)]["logprob"] - row[t]))
    return worst, same


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--accel-run", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--onnx", required=True)
    ap.add_argument("--generated", required=True)
    args = ap.parse_args()
    prompt, _ = hf_reference(args.generated)
    session = ort.InferenceSession(args.onnx)
    s = Server(args.accel_run, args.plan, ["--served-model-name", "demo", "--enable-prefix-caching",
                                          "--max-num-batched-tokens", "128"])
    try:
        run(s, session, prompt)
    finally:
        rc = s.stop()
        check(rc == 0, f"accel-run exits 0 on SIGTERM (got {rc})")
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    return 0


def post(s, path, body):
    status, _, raw = s.request("POST", path, body)
    return status, json.loads(raw or b"{}")


def run(s, session, prompt):
    rng = np.random.default_rng(0)
    # Random ids: a prompt of 300 tokens (the demo's vocabulary is 2,048: one
    # step brings back at most 64 MiB of logits rows, 8,192 rows, so this
    # also runs with --max-num-batched-tokens chunks).
    ids = [int(x) for x in rng.integers(3, 2048, size=300)]
    ref = reference(session, ids)
    status, r = post(s, "/v1/completions", {"model": "demo", "prompt": ids, "max_tokens": 2,
                                            "temperature": 0, "prompt_logprobs": 5})
    lps = r["choices"][0].get("prompt_logprobs") if status == 200 else None
    worst, same = compare(lps or [], ref, ids, 5)
    check(status == 200 and worst < 1e-3 and same,
          f"300 random ids, prompt_logprobs=5: equal to onnxruntime's log_softmax "
          f"(max |diff| {worst:.2e}), ranks and top 5 the same")
    status, r = post(s, "/v1/completions", {"model": "demo", "prompt": ids, "max_tokens": 2,
                                            "temperature": 0, "prompt_logprobs": 0, "n": 2})
    ok = status == 200 and all(compare(c.get("prompt_logprobs") or [], ref, ids, 0)[0] < 1e-3
                               for c in r["choices"])
    check(ok, "n=2: each choice carries the prompt's logprobs")
    # The prompt again: the prefix cache would hold its blocks, but prompt
    # logprobs need every row computed.
    status, r = post(s, "/v1/completions", {"model": "demo", "prompt": ids, "max_tokens": 1,
                                            "temperature": 0, "prompt_logprobs": 1})
    worst, same = compare(r["choices"][0].get("prompt_logprobs") or [], ref, ids, 1)
    check(status == 200 and worst < 1e-3 and same,
          "the same prompt again (prefix cache on): every position still there and equal")
    # Text prompt; a one-token prompt is [null].
    status, r = post(s, "/v1/completions", {"model": "demo", "prompt": [7], "max_tokens": 1,
                                            "prompt_logprobs": 3})
    check(status == 200 and r["choices"][0].get("prompt_logprobs") == [None],
          "a one-token prompt gives [null]")
    status, r = post(s, "/v1/chat/completions", {"model": "demo", "max_tokens": 1,
                                                 "messages": [{"role": "user", "content": prompt}],
                                                 "prompt_logprobs": 2})
    lps = r.get("prompt_logprobs") if status == 200 else None
    check(status == 200 and lps and lps[0] is None and len(lps) == r["usage"]["prompt_tokens"],
          f"chat: prompt_logprobs on the response, one per prompt token "
          f"({len(lps or [])} for {r.get('usage', {}).get('prompt_tokens')})")
    # Streamed: a chunk carries them before the first token's text, equal
    # to the whole response's.
    c = s.conn()
    c.request("POST", "/v1/completions", body=json.dumps(
        {"model": "demo", "prompt": ids, "max_tokens": 3, "temperature": 0,
         "prompt_logprobs": 5, "stream": True}), headers={"Content-Type": "application/json"})
    events = read_stream(c.getresponse())
    c.close()
    chunks = [json.loads(e) for e in events if e != "[DONE]"]
    first = [ch for ch in chunks if ch["choices"] and "prompt_logprobs" in ch["choices"][0]]
    worst, same = compare(first[0]["choices"][0]["prompt_logprobs"] if first else [], ref, ids, 5)
    check(len(first) == 1 and chunks.index(first[0]) == 0 and worst < 1e-3 and same and
          "".join(ch["choices"][0]["text"] for ch in chunks if ch["choices"]) != "",
          f"streamed: the first chunk carries the prompt logprobs (max |diff| {worst:.2e}), "
          f"then the text")
    for body, words in (({"prompt_logprobs": 21}, "in [0, 20]"),
                        ({"prompt_logprobs": -1}, "in [0, 20]")):
        status, r = post(s, "/v1/completions", dict({"model": "demo", "prompt": "x"}, **body))
        err = r.get("error", {})
        check(status == 400 and err.get("param") == "prompt_logprobs" and
              words in err.get("message", ""),
              f"{json.dumps(body)} -> 400 naming prompt_logprobs ({err.get('message')})")


if __name__ == "__main__":
    sys.exit(main())
