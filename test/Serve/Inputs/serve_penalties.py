#!/usr/bin/env python3
"""frequency_penalty and presence_penalty (issue 24) on accel-run's OpenAI
server and its offline generation, checked against OpenAI's formula
written here in NumPy:

    logits[t] -= frequency_penalty * c(t) + presence_penalty * (c(t) > 0)

c(t) the count of t in the tokens generated so far (not the prompt: vLLM's
rule), on the engine's own logits (`accel-run --score`, one call per step).
Greedy decoding takes the argmax of the penalised row (ties: lowest id).
Also: a penalty at temperature 0 changes the output; n=2 choices each count
their own tokens; speculative decoding keeps the penalised tokens; bad
values are 400s naming the parameter. One line per check.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import openai

from serve_util import Server, check, failures

N = 16  # tokens generated per request


def score(accel_run, plan, ids, tmp):
    """float32 logits [len(ids), vocab] of the sequence, from accel-run --score."""
    src, out = os.path.join(tmp, "ids.npy"), os.path.join(tmp, "logits.npy")
    np.save(src, np.asarray(ids, dtype=np.int64))
    subprocess.run([accel_run, plan, "--score", src, "--logits-out", out], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return np.load(out)[0]


def penalise(row, generated, frequency, presence):
    """OpenAI's formula in float32 (vLLM's two subtractions on float32 logits)."""
    row = row.astype(np.float32).copy()
    counts = np.bincount(np.asarray(generated, dtype=np.int64), minlength=row.shape[0])
    counts = counts.astype(np.float32)
    row -= np.float32(frequency) * counts
    row -= np.float32(presence) * (counts > 0).astype(np.float32)
    return row


def reference(accel_run, plan, prompt, frequency, presence, tmp, n=N):
    """Greedy ids under the penalties, and the smallest top-2 margin seen."""
    out, margin = [], np.inf
    for _ in range(n):
        row = penalise(score(accel_run, plan, list(prompt) + out, tmp)[-1], out, frequency,
                       presence)
        top2 = np.sort(row)[-2:]
        margin = min(margin, float(top2[1] - top2[0]))
        out.append(int(np.argmax(row)))  # first maximum: the lowest id
    return out, margin


def detokenize(s, ids):
    status, _, body = s.request("POST", "/detokenize", {"tokens": ids})
    assert status == 200, body
    return json.loads(body)["prompt"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--accel-run", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--ids", required=True, help="test/fixtures/demo/generated_ids.npy")
    args = ap.parse_args()
    prompt = [int(t) for t in np.load(args.ids).reshape(-1)[:12]]
    tmp = tempfile.mkdtemp(prefix="serve-penalties-")
    refs = {}
    for f, p in ((2.0, 0.0), (0.7, 0.4), (0.0, 1.5), (-2.0, 0.0)):
        refs[(f, p)], margin = reference(args.accel_run, args.plan, prompt, f, p, tmp)
        print(f"reference f={f} p={p}: {refs[(f, p)]} (smallest top-2 margin {margin:.3g})",
              file=sys.stderr)
    plain, _ = reference(args.accel_run, args.plan, prompt, 0.0, 0.0, tmp)
    check(refs[(2.0, 0.0)] != plain and refs[(-2.0, 0.0)] != plain,
          "the NumPy references with frequency_penalty=2 and -2 differ from plain greedy")
    only_f, _ = reference(args.accel_run, args.plan, prompt, 0.7, 0.0, tmp)
    only_p, _ = reference(args.accel_run, args.plan, prompt, 0.0, 0.4, tmp)
    check(refs[(0.7, 0.4)] not in (only_f, only_p),
          "frequency 0.7 + presence 0.4 differs from either alone (so the test can tell)")
    # The prompt must not count: counting it would give other tokens here.
    with_prompt = []
    for _ in range(N):
        row = penalise(score(args.accel_run, args.plan, prompt + with_prompt, tmp)[-1],
                       prompt + with_prompt, 2.0, 0.0)
        with_prompt.append(int(np.argmax(row)))
    check(with_prompt != refs[(2.0, 0.0)],
          "counting the prompt would change the reference (so the test can tell)")

    # Offline generation (TextGenerator): accel-run --prompt-ids, with and
    # without speculative decoding.
    np.save(os.path.join(tmp, "prompt.npy"), np.asarray(prompt, dtype=np.int64))
    for extra, what in (([], "accel-run --prompt-ids"),
                        (["--speculative-method", "ngram", "--num-speculative-tokens", "4"],
                         "accel-run --prompt-ids, ngram speculation")):
        for (f, p), want in refs.items():
            r = subprocess.run([args.accel_run, args.plan, "--prompt-ids",
                                os.path.join(tmp, "prompt.npy"), "-n", str(N), "--ignore-eos",
                                "--print-ids", "--frequency-penalty", str(f),
                                "--presence-penalty", str(p), *extra],
                               capture_output=True, text=True)
            got = [int(x) for line in r.stdout.splitlines() if line.startswith("ids:")
                   for x in line.split()[1:]]
            check(r.returncode == 0 and got == want,
                  f"{what} --frequency-penalty {f} --presence-penalty {p}: the ids equal the "
                  f"NumPy reference ({got})")
    r = subprocess.run([args.accel_run, args.plan, "--prompt-ids", os.path.join(tmp, "prompt.npy"),
                        "--frequency-penalty", "2.5"], capture_output=True, text=True)
    check(r.returncode != 0 and "frequency_penalty must be in [-2, 2]" in r.stderr,
          f"accel-run --frequency-penalty 2.5 fails naming it ({r.stderr.strip()})")

    for server_args, what in (([], "server"),
                              (["--speculative-method", "ngram", "--num-speculative-tokens", "4"],
                               "ngram server")):
        s = Server(args.accel_run, args.plan, ["--served-model-name", "demo", *server_args])
        try:
            serve(s, what, prompt, refs)
        except openai.APIStatusError as e:
            check(False, f"{what}: a request failed: {e.status_code} {e.body}")
        finally:
            rc = s.stop()
            check(rc == 0, f"{what}: accel-run exits 0 on SIGTERM (got {rc})")
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("done")
    return 0


def serve(s, what, prompt, refs):
    client = openai.OpenAI(base_url=s.base + "/v1", api_key="none", max_retries=0, timeout=120)
    kw = dict(model="demo", prompt=prompt, max_tokens=N, temperature=0,
              extra_body={"ignore_eos": True, "skip_special_tokens": False})
    plain = client.completions.create(**kw).choices[0].text
    for (f, p), want in refs.items():
        c = client.completions.create(frequency_penalty=f, presence_penalty=p, **kw)
        text = c.choices[0].text
        if (f, p) == (2.0, 0.0):
            check(text != plain, f"{what}: frequency_penalty=2 at temperature 0 changes the "
                  f"output ({plain!r} -> {text!r})")
        check(c.usage.completion_tokens == N and text == detokenize(s, want),
              f"{what}: frequency_penalty={f}, presence_penalty={p}: the tokens equal the NumPy "
              f"reference")
    # n=2 (greedy): each choice counts its own tokens, both equal n=1.
    want = detokenize(s, refs[(0.7, 0.4)])
    c = client.completions.create(frequency_penalty=0.7, presence_penalty=0.4, n=2, **kw)
    check([ch.text for ch in c.choices] == [want, want],
          f"{what}: n=2 with penalties: both choices equal the reference")
    # Chat takes them too (the rendered prompt differs; only the effect is checked).
    msgs = [{"role": "user", "content": "And the LORD said"}]
    a = client.chat.completions.create(model="demo", messages=msgs, max_tokens=N, temperature=0)
    b = client.chat.completions.create(model="demo", messages=msgs, max_tokens=N, temperature=0,
                                       frequency_penalty=2)
    check(a.choices[0].message.content != b.choices[0].message.content,
          f"{what}: chat with frequency_penalty=2 changes the output")
    # Bad values: 400 naming the parameter, through the client and raw HTTP.
    for extra, param in (({"frequency_penalty": 2.5}, "frequency_penalty"),
                         ({"presence_penalty": -2.01}, "presence_penalty"),
                         ({"presence_penalty": "1"}, "presence_penalty"),
                         ({"frequency_penalty": None, "presence_penalty": True},
                          "presence_penalty")):
        status, _, body = s.request("POST", "/v1/completions",
                                    {"model": "demo", "prompt": "x", **extra})
        err = json.loads(body).get("error", {}) if body else {}
        check(status == 400 and err.get("param") == param,
              f"{what}: {extra} -> 400 naming {param} ({err.get('message')})")


if __name__ == "__main__":
    sys.exit(main())
