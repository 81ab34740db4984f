#!/usr/bin/env python3
"""Compares reduced-precision logits with the framework's f32 logits.

usage: compare_precision.py <got.npy> <want.npy> --rtol R --min-agree A

Passes when max |got - want| <= R * max |want| and the argmax (next token)
agrees at no fewer than a fraction A of the positions. The reference is the
framework's own output (HF transformers, saved with the fixture), never an
earlier accel output. Prints the numbers either way.
"""
import argparse
import sys

import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("got")
    p.add_argument("want")
    p.add_argument("--rtol", type=float, required=True)
    p.add_argument("--min-agree", type=float, required=True)
    a = p.parse_args()
    got, want = np.load(a.got).astype(np.float64), np.load(a.want).astype(np.float64)
    if got.shape != want.shape:
        print(f"shape {got.shape} != reference {want.shape}")
        sys.exit(1)
    err = float(np.abs(got - want).max())
    scale = float(np.abs(want).max())
    g = got.reshape(-1, got.shape[-1])
    w = want.reshape(-1, want.shape[-1])
    agree = float((g.argmax(-1) == w.argmax(-1)).mean())
    ok = err <= a.rtol * scale and agree >= a.min_agree
    print(f"{'ok' if ok else 'MISMATCH'}: max abs error {err:.3g}, {err / scale:.3g} of max "
          f"|logit| {scale:.3g} (limit {a.rtol:g}); argmax agrees at {agree:.3f} of "
          f"{g.shape[0]} positions (limit {a.min_agree:g})")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
