#!/usr/bin/env python3
"""compare.sh's accel-bench JSONs (and, when given, hf_baseline.py's) as one Markdown table:
decode ms/step per batch size and the prefill, one column per plan.

    python3 bench/llama8b/compare_summary.py RES/bf16.json RES/fp8.json ... [--hf RES/hf.json]
"""
import argparse
import json
import os


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--hf")
    a = ap.parse_args()
    runs = [(os.path.basename(p).rsplit(".", 1)[0], json.load(open(p))) for p in a.runs]
    hf = json.load(open(a.hf)) if a.hf else None
    cols = [n for n, _ in runs] + (["HF static"] if hf else [])
    print("| | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    batches = sorted({d["batch"] for _, r in runs for d in r["decode"]})
    hfr = {(r["mode"], r["batch"], "prefill_tokens" in r): r for r in hf["runs"]} if hf else {}
    for b in batches:
        row = []
        for _, r in runs:
            d = [x for x in r["decode"] if x["batch"] == b]
            row.append(f"{d[0]['decode_ms_per_step']:.2f}" if d else "–")
        if hf:
            s = hfr.get(("static", b, False), {}).get("decode_ms_per_step")
            row.append(f"{s:.2f}" if s else "–")
        print(f"| decode batch {b} (ms/step) | " + " | ".join(row) + " |")
    row = [f"{r['prefill_ms']:.1f}" if r.get("prefill_ms") else "–" for _, r in runs]
    if hf:
        p = hfr.get(("static", 1, True), {}).get("prefill_ms")
        row.append(f"{p:.1f}" if p else "–")
    print(f"| prefill {runs[0][1].get('prefill_tokens')} tokens (ms) | " + " | ".join(row) + " |")
    if hf:
        print(f"\nHF: {hf['gpu']}, torch {hf['torch']}, transformers {hf['transformers']}; copy "
              f"bandwidth {hf['copy_bandwidth_Bps'] / 1e12:.2f} TB/s, bf16 roofline at batch 1 "
              f"{hf['roofline_ms_per_step_b1']:.2f} ms/step")


if __name__ == "__main__":
    main()
