#!/usr/bin/env python3
"""Greedy generation with and without speculative decoding on fixture plans.

usage: check_speculative.py --accel-run BIN --accelc BIN --out DIR --other PLAN
                            [--target T] [--run-arg ARG]... FIXTURE_DIR...

For each FIXTURE_DIR: compiles its model.onnx to a plan (for -target=T, cpu
by default; --run-arg: more accel-run flags, e.g. a GPU's --kv-cache-memory),
generates 24 tokens greedily from its input_ids.npy (--ignore-eos) plainly,
with --speculative-method ngram (K=4), with the plan as its own draft (K=3:
every draft token must be accepted) and with OTHER as the draft (K=4), and
checks that the four give the same ids. Prints one line per fixture, then
'ok'; exits 1 on the first difference.
"""
import argparse
import os
import re
import subprocess
import sys

N = 24


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr))
    ids = [l for l in p.stdout.splitlines() if l.startswith("ids:")]
    if len(ids) != 1:
        sys.exit("no ids line from %s:\n%s" % (" ".join(cmd), p.stdout))
    m = re.search(r"draft tokens (\d+), accepted (\d+) \(([0-9.]+)%\)", p.stderr)
    return ids[0], (int(m.group(1)), int(m.group(2)), m.group(3)) if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--accel-run", required=True)
    ap.add_argument("--accelc", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--other", required=True)
    ap.add_argument("--target", default="cpu")
    ap.add_argument("--run-arg", action="append", default=[])
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    for d in a.dirs:
        name = os.path.basename(os.path.normpath(d))
        plan = "%s/%s.plan" % (a.out, name)
        c = subprocess.run([a.accelc, "%s/model.onnx" % d, "-target=" + a.target, "-o", plan],
                           capture_output=True, text=True)
        if c.returncode != 0:
            sys.exit("accelc failed on %s:\n%s" % (name, c.stderr))
        base = [a.accel_run, plan, "--prompt-ids", "%s/input_ids.npy" % d,
                "-n", str(N), "--ignore-eos", *a.run_arg]
        plain, _ = run(base)
        if len(plain.split()) != N + 1:
            sys.exit("%s: expected %d ids, got: %s" % (name, N, plain))
        ngram, _ = run(base + ["--speculative-method", "ngram", "--num-speculative-tokens", "4"])
        self_ids, self_stats = run(base + ["--draft", plan, "--num-speculative-tokens", "3"])
        other, other_stats = run(base + ["--draft", a.other, "--num-speculative-tokens", "4"])
        for what, ids in (("ngram", ngram), ("self-draft", self_ids), ("other draft", other)):
            if ids != plain:
                sys.exit("%s: %s gives other tokens:\n  plain: %s\n  %s: %s" %
                         (name, what, plain, what, ids))
        if self_stats is None or self_stats[0] == 0 or self_stats[0] != self_stats[1]:
            sys.exit("%s: its own draft was not accepted everywhere: %s" % (name, self_stats))
        print("%s: plain, ngram, self (%s%%), other (%s%%): the same %d tokens" %
              (name, "100" if self_stats[2] == "100.0" else self_stats[2], other_stats[2], N))
    print("ok")


if __name__ == "__main__":
    main()
