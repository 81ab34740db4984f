#!/usr/bin/env python3
"""Writes a copy of an exported model with a smaller vocabulary.

usage: shrink_vocab.py <model.onnx> <out.onnx> <vocab>

Keeps the first <vocab> rows of every initializer that has the model's
vocabulary as a dimension (the embedding table [V, H], the lm head [H, V] of
the MatMul), with their value_info, and sets the logits output's last
dimension to <vocab>. Used to give accelc a vocabulary that -tp=N does not
divide while the heads do.
"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def main():
    src, dst, vocab = sys.argv[1], sys.argv[2], int(sys.argv[3])
    m = onnx.load(src)
    old = m.graph.output[0].type.tensor_type.shape.dim[-1].dim_value
    changed = set()
    for i, init in enumerate(m.graph.initializer):
        if old in init.dims:
            a = numpy_helper.to_array(init)
            idx = tuple(slice(0, vocab) if d == old else slice(None) for d in a.shape)
            m.graph.initializer[i].CopyFrom(numpy_helper.from_array(np.ascontiguousarray(a[idx]), init.name))
            changed.add(init.name)
    for v in list(m.graph.value_info) + [m.graph.output[0]]:
        if v.name in changed or v is m.graph.output[0]:
            for d in v.type.tensor_type.shape.dim:
                if d.dim_value == old:
                    d.dim_value = vocab
    onnx.save(m, dst)


if __name__ == "__main__":
    main()
