#!/usr/bin/env python3
"""Checks that one -report-accuracy report's mean KL is below another's.

usage: kl_less.py <better.txt> <worse.txt> [--factor F]

Passes when mean KL(better) * F < mean KL(worse) (F defaults to 1). Prints
both either way.
"""
import argparse
import re
import sys


def mean_kl(path):
    m = re.search(r"KL\(f32 \|\| [^)]*\)\s+mean ([0-9.e+-]+) nats", open(path).read())
    if not m:
        print(f"{path}: no 'KL(...) mean' line")
        sys.exit(1)
    return float(m.group(1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("better")
    p.add_argument("worse")
    p.add_argument("--factor", type=float, default=1.0)
    a = p.parse_args()
    b, w = mean_kl(a.better), mean_kl(a.worse)
    print(f"mean KL {b:.3e} ({a.better}) x {a.factor} vs {w:.3e} ({a.worse})")
    sys.exit(0 if b * a.factor < w else 1)


if __name__ == "__main__":
    main()
