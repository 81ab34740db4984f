#!/usr/bin/env python3
"""accel-bench's and hf_baseline.py's JSON side by side, as the Markdown table of
docs/performance.md, with the HBM roofline (weight bytes / measured copy bandwidth)."""
import json
import sys


def main(accel_path, hf_path):
    a = json.load(open(accel_path))
    h = json.load(open(hf_path))
    roof = h["roofline_ms_per_step_b1"]
    hf = {(r["mode"], r["batch"], "prefill_tokens" in r): r for r in h["runs"]}
    print(f"GPU {h['gpu']}; torch {h['torch']}, transformers {h['transformers']}; "
          f"weights {h['weight_bytes'] / 1e9:.2f} GB bf16; copy bandwidth "
          f"{h['copy_bandwidth_Bps'] / 1e12:.2f} TB/s (read + write); HBM roofline at batch 1: "
          f"{roof:.2f} ms/step. HF static compiled its forward: {h.get('compiled_forward')}.")
    print()
    print("| decode ms/step (prompt %d) | accel | HF eager | HF static cache | accel vs static | "
          "accel: roofline / measured |" % a["input_len"])
    print("|---|---|---|---|---|---|")
    for d in a["decode"]:
        b = d["batch"]
        e = hf.get(("eager", b, False), {}).get("decode_ms_per_step")
        s = hf.get(("static", b, False), {}).get("decode_ms_per_step")
        ours = d["decode_ms_per_step"]
        fmt = lambda x: f"{x:.2f}" if x else "–"
        ratio = f"{s / ours:.2f}x" if s else "–"
        bw = f"{roof / ours * 100:.0f}%" if b == 1 else ""
        print(f"| batch {b} | {ours:.2f} | {fmt(e)} | {fmt(s)} | {ratio} | {bw} |")
    pe = hf.get(("eager", 1, True), {}).get("prefill_ms")
    ps = hf.get(("static", 1, True), {}).get("prefill_ms")
    print(f"| prefill {a['prefill_tokens']} tokens (ms) | {a['prefill_ms']:.1f} | "
          f"{pe:.1f} | {ps:.1f} | {ps / a['prefill_ms']:.2f}x | |" if pe and ps else "")


if __name__ == "__main__":
    main(*sys.argv[1:3])
