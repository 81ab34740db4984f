#!/usr/bin/env python3
"""Compares logits with a reference: max |got - want| <= rtol * max |want|.

usage: compare_logits.py <got.npy> <want.npy> [--rtol 1e-4]

The reference is the framework's own output (HF transformers, saved with the
fixture), never an earlier accel output.
"""
import argparse
import sys

import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("got")
    p.add_argument("want")
    p.add_argument("--rtol", type=float, default=1e-4)
    a = p.parse_args()
    got, want = np.load(a.got), np.load(a.want)
    if got.shape != want.shape:
        print(f"shape {got.shape} != reference {want.shape}")
        sys.exit(1)
    err = float(np.abs(got.astype(np.float64) - want).max())
    scale = float(np.abs(want).max())
    ok = err <= a.rtol * scale
    print(f"{'ok' if ok else 'MISMATCH'}: max abs error {err:.3g}, "
          f"{err / scale:.3g} of max |logit| {scale:.3g} (limit {a.rtol:g})")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
