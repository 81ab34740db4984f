#!/usr/bin/env python3
"""Checks an ACCEL_PP_TRACE file: one JSON line per engine step of a pipelined plan.

usage: check_pp_trace.py TRACE --stages S --micro-batches M [--tokens N N ...]

Every line must be {"step", "tokens", "parts", "wall_ms", "stages": [{"stage", "busy_ms",
"idle_ms", "micro_batches"}, ...]} with steps numbered 0, 1, ... (one process), S stages in
order, parts = min(M, tokens) (the step split as asked), each stage busy (> 0) on every step and
running every part, idle >= 0, and busy + idle = the step's wall time (to the printed 4
decimals). With --tokens, the lines' token counts must be those. Prints one summary line;
exits 1 naming each line that fails.
"""
import argparse
import json
import sys


def check_lines(lines, stages, micro, tokens=None):
    """The errors of the parsed trace lines (a list of dicts)."""
    errors = []
    if tokens is not None and [l.get("tokens") for l in lines] != tokens:
        errors.append(f"token counts {[l.get('tokens') for l in lines]}, expected {tokens}")
    for n, l in enumerate(lines):
        where = f"line {n + 1}"
        if sorted(l) != ["parts", "stages", "step", "tokens", "wall_ms"]:
            errors.append(f"{where}: keys {sorted(l)}")
            continue
        if l["step"] != n:
            errors.append(f"{where}: step {l['step']}, expected {n}")
        if l["parts"] != min(micro, l["tokens"]):
            errors.append(f"{where}: {l['parts']} parts for {l['tokens']} tokens, expected "
                          f"{min(micro, l['tokens'])}")
        if [s["stage"] for s in l["stages"]] != list(range(stages)):
            errors.append(f"{where}: stages {[s['stage'] for s in l['stages']]}")
        for s in l["stages"]:
            if not s["busy_ms"] > 0 or not s["idle_ms"] >= 0:
                errors.append(f"{where}: stage {s['stage']} busy {s['busy_ms']} ms, idle "
                              f"{s['idle_ms']} ms")
            if abs(s["busy_ms"] + s["idle_ms"] - l["wall_ms"]) > 2e-4:
                errors.append(f"{where}: stage {s['stage']} busy + idle = "
                              f"{s['busy_ms'] + s['idle_ms']} ms, the step took {l['wall_ms']}")
            if s["micro_batches"] != l["parts"]:
                errors.append(f"{where}: stage {s['stage']} ran {s['micro_batches']} of "
                              f"{l['parts']} parts")
    return errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--stages", type=int, required=True)
    ap.add_argument("--micro-batches", type=int, required=True)
    ap.add_argument("--tokens", type=int, nargs="*")
    a = ap.parse_args()
    with open(a.trace) as f:
        lines = [json.loads(line) for line in f]
    errors = check_lines(lines, a.stages, a.micro_batches, a.tokens)
    for e in errors:
        print("FAIL:", e)
    if not lines:
        print("FAIL: the trace is empty")
        return 1
    parts = [l["parts"] for l in lines]
    busy = [sum(l["stages"][s]["busy_ms"] for l in lines) for s in range(a.stages)]
    print(f"{len(lines)} steps of {sum(l['tokens'] for l in lines)} tokens in parts {parts}: "
          f"every stage busy on every step (" +
          ", ".join(f"stage {s} {b:.1f} ms" for s, b in enumerate(busy)) +
          "), busy + idle = the step's wall time")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
