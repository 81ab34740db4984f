#!/usr/bin/env python3
"""Checks that `accelc -emit=onnx` produced one op per ONNX node.

usage: compare_op_histogram.py <model.onnx> <imported.mlir>

The expected histogram is computed here with the onnx package (the outside
reference), inlining model-local functions the way the importer does; the
imported one is read from the printed IR. Initializers count as onnx.Constant.
"""
import collections
import re
import sys

import onnx


def expected(model):
    funcs = {(f.domain, f.name): f for f in model.functions}
    hist = collections.Counter()

    def walk(nodes):
        for n in nodes:
            f = funcs.get((n.domain, n.op_type))
            if f is not None:
                walk(f.node)
                continue
            prefix = "ms_" if n.domain == "com.microsoft" else ""
            hist["onnx." + prefix + n.op_type] += 1

    walk(model.graph.node)
    hist["onnx.Constant"] += len(model.graph.initializer)
    return hist


def imported(text):
    hist = collections.Counter()
    for m in re.finditer(r"^\s*(?:%[^=]+=\s*)?(onnx\.\w+)\b", text, re.M):
        hist[m.group(1)] += 1
    return hist


def main():
    model = onnx.load(sys.argv[1], load_external_data=False)
    with open(sys.argv[2]) as f:
        got = imported(f.read())
    want = expected(model)
    if got != want:
        keys = sorted(set(got) | set(want))
        for k in keys:
            if got[k] != want[k]:
                print(f"{k}: onnx has {want[k]}, imported {got[k]}")
        sys.exit(1)
    print(f"ok: {sum(want.values())} ops, {len(want)} kinds")


if __name__ == "__main__":
    main()
