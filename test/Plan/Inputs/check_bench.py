"""Checks accel-bench's JSON report: the configurations asked for, positive times."""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("report")
ap.add_argument("--batches", required=True)
ap.add_argument("--input-len", type=int, required=True)
ap.add_argument("--steps", type=int, required=True)
ap.add_argument("--prefill", type=int, required=True)
a = ap.parse_args()
r = json.load(open(a.report))
errors = []
batches = [int(b) for b in a.batches.split(",")]
if [d["batch"] for d in r["decode"]] != batches:
    errors.append(f"batches {[d['batch'] for d in r['decode']]}, expected {batches}")
if r["input_len"] != a.input_len:
    errors.append(f"input_len {r['input_len']}, expected {a.input_len}")
for d in r["decode"]:
    if d["steps"] != a.steps:
        errors.append(f"batch {d['batch']}: {d['steps']} steps, expected {a.steps}")
    for k in ("prefill_ms", "decode_ms_per_step", "decode_ms_mean", "decode_ms_min"):
        if not d[k] > 0:
            errors.append(f"batch {d['batch']}: {k} = {d[k]}, not positive")
    if not d["decode_ms_min"] <= d["decode_ms_per_step"]:
        errors.append(f"batch {d['batch']}: min {d['decode_ms_min']} > median {d['decode_ms_per_step']}")
if r["prefill_tokens"] != a.prefill or (a.prefill > 0) != (r["prefill_ms"] > 0):
    errors.append(f"prefill {r['prefill_tokens']} tokens in {r['prefill_ms']} ms, expected {a.prefill}")
for e in errors:
    print("check_bench:", e, file=sys.stderr)
sys.exit(1 if errors else 0)
