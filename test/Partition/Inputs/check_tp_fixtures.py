#!/usr/bin/env python3
"""Tensor-parallel (and pipelined) plans against the TP=1 plan and HF's logits.

usage: check_tp_fixtures.py <accelc> <accel-run> <fixtures dir> <work dir>
                            [--ranks 2 4 8] [--pp M] [--only NAME ...]
                            [--vocab-cut K] [--tp1-rtol R] [--hf-rtol R]
                            [--flags "-precision=fp8 ..."]

For every fixture (test/fixtures/models/*, and the demo model) it compiles
the TP=1 plan and, for each N in --ranks, `accelc -tp=N`:

- when every sharded dimension divides (query heads by N; KV heads by N, or
  N by the KV heads when there are fewer; the fixtures' intermediate sizes
  all divide by 8; a vocabulary that N does not divide is padded to the next
  multiple of N, and the padding logits dropped after the all_gather),
  the compile must succeed and the TP=N plan, run by accel-run as N threads,
  must give the TP=1 plan's logits within f32 reordering (max abs error <=
  1e-5 of max |logit|, or --tp1-rtol) and HF's (<= 1e-4 of max |logit|, the tolerance of
  test/Plan/score-fixtures.test), scored whole (--chunk 0), token by token
  through the KV cache (--chunk 1) and in chunks of 5;
- otherwise the compile must fail with the one-sentence divisibility error
  naming the dimension and the layer.

With --vocab-cut K every fixture's vocabulary V is cut to V - K entries
first (Inputs/shrink_vocab.py keeps the first rows of the embedding table
and the lm head; the fixtures' prompts use none of the cut ids), and HF's
logits to their first V - K columns: with K = 1 the vocabularies (256, the
demo's 2048) become odd, so that every -tp=N with N > 1 pads them.

With --pp M every plan is also split into M pipeline stages (`-pp=M`; --ranks
may then include 1, a pipeline of one rank per stage): run as M x N threads,
it must give the same logits; a model with fewer than M layers must be
refused in one sentence.

With --flags every plan (TP=1 too) is compiled with those accelc flags
(a -precision mode, say): the TP=N plans must then equal that TP=1 plan,
and HF within --hf-rtol (the mode's own error).

Head counts are read from the TP=1 plan (accel-run --describe), never from
the partitioned one. Prints one line per fixture and rank count, and the
largest errors seen.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

TP1_RTOL = 1e-5
HF_RTOL = 1e-4
CHUNKS = (0, 1, 5)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def shape_facts(accel_run, plan):
    """num_heads / num_kv_heads of the first attention step, vocab, layers."""
    out = run([accel_run, plan, "--describe"]).stdout
    heads = int(re.search(r"num_heads = (\d+)", out).group(1))
    kv = int(re.search(r"num_kv_heads = (\d+)", out).group(1))
    vocab = int(re.search(r"vocab (\d+)", out).group(1))
    layers = int(re.search(r"kv cache: (\d+) layers", out).group(1))
    return heads, kv, vocab, layers


def divides(n, heads, kv):
    if heads % n:
        return False
    return kv % n == 0 if kv >= n else n % kv == 0


def score(accel_run, plan, ids, out, chunk):
    r = run([accel_run, plan, "--score", ids, "--logits-out", out, "--chunk", str(chunk)])
    if r.returncode != 0:
        raise RuntimeError(f"accel-run {plan} --chunk {chunk} failed: {r.stderr.strip()}")
    return np.load(out).astype(np.float64)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("accelc")
    p.add_argument("accel_run")
    p.add_argument("fixtures")
    p.add_argument("work")
    p.add_argument("--ranks", type=int, nargs="+", default=[2, 4, 8])
    p.add_argument("--pp", type=int, default=1)
    p.add_argument("--only", nargs="*")
    p.add_argument("--vocab-cut", type=int, default=0)
    p.add_argument("--tp1-rtol", type=float, default=TP1_RTOL)
    p.add_argument("--hf-rtol", type=float, default=HF_RTOL)
    p.add_argument("--flags", default="")
    a = p.parse_args()
    flags = a.flags.split()
    os.makedirs(a.work, exist_ok=True)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

    fixtures = []
    models = os.path.join(a.fixtures, "models")
    for name in sorted(os.listdir(models)):
        d = os.path.join(models, name)
        if os.path.exists(os.path.join(d, "model.onnx")) and os.path.exists(os.path.join(d, "logits.npy")):
            fixtures.append((name, d))
    fixtures.append(("demo", os.path.join(a.fixtures, "demo")))
    if a.only:
        fixtures = [f for f in fixtures if f[0] in a.only]

    failures = []
    worst_tp1 = worst_hf = 0.0
    divided = refused = 0
    for name, d in fixtures:
        onnx = os.path.join(d, "model.onnx")
        ids = os.path.join(d, "input_ids.npy")
        hf = np.load(os.path.join(d, "logits.npy")).astype(np.float64)
        base = os.path.join(a.work, name)
        if a.vocab_cut:
            vocab = hf.shape[-1] - a.vocab_cut
            if int(np.load(ids).max()) >= vocab:
                failures.append(f"{name}: the prompt uses ids that --vocab-cut {a.vocab_cut} cuts")
                continue
            onnx = f"{base}.v{vocab}.onnx"
            r = run([sys.executable, os.path.join(os.path.dirname(__file__), "shrink_vocab.py"),
                     os.path.join(d, "model.onnx"), onnx, str(vocab)])
            if r.returncode != 0:
                failures.append(f"{name}: shrink_vocab.py failed: {r.stderr.strip()}")
                continue
            hf = hf[..., :vocab]
        r = run([a.accelc, onnx, *flags, "-o", base + ".tp1.plan"])
        if r.returncode != 0:
            failures.append(f"{name}: TP=1 compile failed: {r.stderr.strip()}")
            continue
        heads, kv, vocab, layers = shape_facts(a.accel_run, base + ".tp1.plan")
        ref = {c: score(a.accel_run, base + ".tp1.plan", ids, f"{base}.tp1.c{c}.npy", c)
               for c in CHUNKS}
        scale = float(np.abs(hf).max())
        for n in a.ranks:
            tag = f"pp={a.pp} tp={n}" if a.pp > 1 else f"tp={n}"
            plan = f"{base}.pp{a.pp}.tp{n}.plan" if a.pp > 1 else f"{base}.tp{n}.plan"
            r = run([a.accelc, onnx, *flags, f"-tp={n}", f"-pp={a.pp}", "-o", plan])
            def expect_refusal(pattern, what, context):
                # One error line matching `pattern`, a non-zero exit, no plan.
                msg = r.stderr.strip()
                ok = r.returncode != 0 and re.search(pattern, msg) and \
                    len(msg.splitlines()) == 1 and not os.path.exists(plan)
                print(f"{name} {tag}: {context}: refused: {msg}")
                if not ok:
                    failures.append(f"{name} {tag}: expected one {what} error, got rc "
                                    f"{r.returncode}: {msg!r}")

            if a.pp > layers:
                expect_refusal(rf"error: -pp={a.pp} asks for more pipeline stages than the "
                               rf"{layers} decoder layers of this model", "stage-count",
                               f"{layers} layers")
                refused += 1
                continue
            if not divides(n, heads, kv):
                expect_refusal(rf"error: -tp={n} (does not divide the \d+ (attention heads|KV heads) "
                               rf"of layer \d+|is not a multiple of the \d+ KV heads of layer \d+)",
                               "divisibility", f"{heads} heads, {kv} KV heads")
                refused += 1
                continue
            if r.returncode != 0:
                failures.append(f"{name} {tag}: compile failed: {r.stderr.strip()}")
                continue
            divided += 1
            errs = []
            for c in CHUNKS:
                got = score(a.accel_run, plan, ids, f"{plan}.c{c}.npy", c)
                if got.shape != ref[c].shape:
                    failures.append(f"{name} {tag} chunk {c}: shape {got.shape} != {ref[c].shape}")
                    continue
                e1 = float(np.abs(got - ref[c]).max()) / float(np.abs(ref[c]).max())
                e2 = float(np.abs(got.reshape(hf.shape) - hf).max()) / scale
                worst_tp1, worst_hf = max(worst_tp1, e1), max(worst_hf, e2)
                errs.append(f"c{c} {e1:.2g}/{e2:.2g}")
                if e1 > a.tp1_rtol:
                    failures.append(f"{name} {tag} chunk {c}: {e1:.3g} of max |logit| from TP=1 "
                                    f"(limit {a.tp1_rtol:g})")
                if e2 > a.hf_rtol:
                    failures.append(f"{name} {tag} chunk {c}: {e2:.3g} of max |logit| from HF "
                                    f"(limit {a.hf_rtol:g})")
            stages = f", {layers} layers" if a.pp > 1 else ""
            padded = -(-vocab // n) * n
            vocabs = f", vocab {vocab} padded to {padded}" if padded != vocab else ""
            print(f"{name} {tag}: {heads} heads, {kv} KV heads{stages}{vocabs}: rel. error vs "
                  "TP=1 / vs HF: " + ", ".join(errs))
    print(f"{divided} partitioned plans checked, {refused} refused; worst relative error "
          f"{worst_tp1:.3g} vs TP=1 (limit {a.tp1_rtol:g}), {worst_hf:.3g} vs HF (limit {a.hf_rtol:g})")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures or divided == 0 else 0)


if __name__ == "__main__":
    main()
