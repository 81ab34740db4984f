#!/usr/bin/env python3
"""The peer's FP8 GEMM on the GPU machine: PyTorch's torch._scaled_mm (e4m3 x e4m3 with row-wise
scales, bf16 out: what vLLM-style FP8 W8A8 runs) against its bf16 matmul, on Llama-3-8B's
linear shapes (qkv, o_proj, gate_up, down) at M tokens. Prints a Markdown table of microseconds
per GEMM (CUDA events, median of 20 after 5 warm-ups) and the TFLOP/s they reach.

    python3 bench/llama8b/fp8_gemm_peer.py [--m 16,64,2048]
"""
import argparse

import torch

SHAPES = {"qkv": (6144, 4096), "o_proj": (4096, 4096), "gate_up": (28672, 4096),
          "down": (4096, 14336)}


def timed(fn, reps=20):
    for _ in range(5):
        fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1000.0)
    return sorted(times)[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", default="16,64,2048")
    args = ap.parse_args()
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("| GEMM | M | bf16 matmul (us) | _scaled_mm e4m3 row-wise (us) | FP8 TFLOP/s |")
    print("|---|---|---|---|---|")
    for m in [int(x) for x in args.m.split(",")]:
        for name, (n, k) in SHAPES.items():
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.02
            xs = x.abs().amax(dim=1, keepdim=True).float() / 448.0
            ws = w.abs().amax(dim=1, keepdim=True).float() / 448.0
            xq = (x / xs).to(torch.float8_e4m3fn)
            wq = (w / ws).to(torch.float8_e4m3fn)
            t16 = timed(lambda: x @ w.t())
            t8 = timed(lambda: torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws.t(),
                                                out_dtype=torch.bfloat16))
            print(f"| {name} {n}x{k} | {m} | {t16:.1f} | {t8:.1f} | {2 * m * n * k / t8 / 1e6:.0f} |")


if __name__ == "__main__":
    main()
