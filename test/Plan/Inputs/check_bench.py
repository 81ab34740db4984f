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
ap.add_argument("--pp-stages", type=int, default=0,
                help="a pipelined plan of this many stages (micro-batches: one per stage)")
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
def check_stages(where, stages, kinds):
    """Each stage of the pipeline, busy > 0 and idle >= 0 per step of each kind
    (name, expected micro-batches a step)."""
    if [st["stage"] for st in stages] != list(range(a.pp_stages)):
        errors.append(f"{where}: stages {[st['stage'] for st in stages]}, expected {a.pp_stages}")
    for st in stages:
        for kind, parts in kinds:
            if not st[f"{kind}_busy_ms"] > 0 or not st[f"{kind}_idle_ms"] >= 0:
                errors.append(f"{where}: stage {st['stage']}: {kind} busy {st[f'{kind}_busy_ms']}"
                              f" ms, idle {st[f'{kind}_idle_ms']} ms")
            if st[f"{kind}_micro_batches"] != parts:
                errors.append(f"{where}: stage {st['stage']}: {st[f'{kind}_micro_batches']} "
                              f"{kind} micro-batches a step, expected {parts}")


if a.pp_stages:
    for d in r["decode"]:
        check_stages(f"batch {d['batch']}", d.get("pp_stages", []),
                     [("prefill", min(a.pp_stages, d["batch"] * a.input_len)),
                      ("decode", min(a.pp_stages, d["batch"]))])
    if a.prefill:
        check_stages("prefill", r.get("prefill_pp_stages", []), [("prefill", a.pp_stages)])
elif any("pp_stages" in d for d in r["decode"]) or "prefill_pp_stages" in r:
    errors.append("pipeline stages reported for a plan of one stage")
if r["prefill_tokens"] != a.prefill or (a.prefill > 0) != (r["prefill_ms"] > 0):
    errors.append(f"prefill {r['prefill_tokens']} tokens in {r['prefill_ms']} ms, expected {a.prefill}")
for e in errors:
    print("check_bench:", e, file=sys.stderr)
sys.exit(1 if errors else 0)
