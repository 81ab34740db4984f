#!/usr/bin/env python3
"""Speculative decoding through the OpenAI API (test/Serve/serve-speculative.test).

usage: serve_speculative.py --accel-run BIN --plan demo.plan --draft-i8 demo-i8.plan
                            --generated generated.txt

A plain server gives the reference: greedy completions of several prompts.
Then, for each proposer (prompt lookup K=4; the plan as its own draft, K=4;
its int8-weight variant as the draft, K=8), a server started with it must
give HF's text for the demo prompt (whole and streamed, usage 4 + 48) and
the plain server's text for every prompt when they run concurrently and
streamed; /metrics counts draft tokens, accepted ones and their ratio (1 for
the plan as its own draft). One line per check ('ok ' or 'FAIL ').
"""
import argparse
import concurrent.futures
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import openai  # noqa: E402
from serve_util import Server, check, failures, hf_reference, metric, metrics  # noqa: E402

PROMPTS = ["And the LORD spake unto Moses, saying",
           "The LORD is my shepherd",
           "And it came to pass",
           "Blessed are the poor in spirit",
           "For God so loved the world",
           "Let every thing that hath breath praise the LORD. Praise ye"]
N = 40


def client_of(server):
    return openai.OpenAI(base_url=server.base + "/v1", api_key="none", max_retries=0,
                         timeout=120)


def streamed(client, prompt, n):
    pieces, finish = [], None
    for chunk in client.completions.create(model="demo", prompt=prompt, max_tokens=n,
                                           temperature=0, stream=True):
        for ch in chunk.choices:
            pieces.append(ch.text)
            finish = ch.finish_reason or finish
    return "".join(pieces), finish


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--accel-run", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--draft-i8", required=True)
    ap.add_argument("--generated", required=True)
    a = ap.parse_args()
    prompt, hf_text = hf_reference(a.generated)

    plain = Server(a.accel_run, a.plan, ["--served-model-name", "demo"])
    try:
        c = client_of(plain)
        ref = [c.completions.create(model="demo", prompt=p, max_tokens=N, temperature=0)
               .choices[0] for p in PROMPTS]
    finally:
        check(plain.stop() == 0, "the plain server exits 0")

    modes = [("ngram K=4", ["--speculative-method", "ngram", "--num-speculative-tokens", "4"]),
             ("self draft K=4", ["--draft", a.plan, "--num-speculative-tokens", "4"]),
             ("int8 draft K=8", ["--draft", a.draft_i8, "--num-speculative-tokens", "8"])]
    for name, flags in modes:
        s = Server(a.accel_run, a.plan, ["--served-model-name", "demo", *flags])
        try:
            c = client_of(s)
            r = c.completions.create(model="demo", prompt=prompt, max_tokens=48, temperature=0)
            check(r.choices[0].text == hf_text and r.usage.completion_tokens == 48 and
                  r.choices[0].finish_reason == "length",
                  f"{name}: greedy completion equals HF's text")
            text, finish = streamed(c, prompt, 48)
            check(text == hf_text and finish == "length",
                  f"{name}: streamed greedy completion equals HF's text")
            with concurrent.futures.ThreadPoolExecutor(len(PROMPTS)) as pool:
                outs = list(pool.map(lambda p: streamed(c, p, N), PROMPTS))
            same = all(o[0] == r.text and o[1] == r.finish_reason for o, r in zip(outs, ref))
            check(same, f"{name}: {len(PROMPTS)} concurrent streams equal plain decoding")
            if not same:
                for p, o, r in zip(PROMPTS, outs, ref):
                    if (o[0], o[1]) != (r.text, r.finish_reason):
                        print(f"  {p!r}: {o!r} vs {(r.text, r.finish_reason)!r}")
            ms = metrics(s)
            drafts = metric(ms, "accel:spec_decode_num_draft_tokens_total")
            accepted = metric(ms, "accel:spec_decode_num_accepted_tokens_total")
            rate = metric(ms, "accel:spec_decode_draft_acceptance_rate")
            check(drafts > 0 and 0 <= accepted <= drafts and abs(rate - accepted / drafts) < 1e-9,
                  f"{name}: /metrics: {int(drafts)} draft tokens, {int(accepted)} accepted")
            if name.startswith("self"):
                check(rate == 1.0, f"{name}: every draft token accepted")
        finally:
            check(s.stop() == 0, f"{name}: the server exits 0")
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
