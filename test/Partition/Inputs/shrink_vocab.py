#!/usr/bin/env python3
"""Writes a copy of an exported model with a smaller vocabulary.

usage: shrink_vocab.py <model.onnx> <out.onnx> <vocab>

Keeps the first <vocab> rows of the model's vocabulary tables: the token
embedding table [V, H] (the data of a Gather) and the lm head (the weight of
the MatMul or Gemm the logits output comes from, through elementwise ops
such as Gemma 2's softcap, as [H, V] or, tied, [V, H] behind a Transpose).
Other weights with a dimension that happens to equal V (Phi3's fused
gate_up [H, 2I] when 2I = V) are left alone. The value_info of the tensors
computed from the lm head, and the logits output's last dimension, become
<vocab>. Used to give accelc a vocabulary that -tp=N does not divide while
the heads do; the logits of the kept entries are the whole model's.
"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def lm_head(graph, inits):
    """The initializer the logits output is projected with, or None."""
    producer = {o: n for n in graph.node for o in n.output}
    name = graph.output[0].name
    while name in producer:
        node = producer[name]
        if node.op_type in ("MatMul", "Gemm"):
            for i in node.input[:2]:
                while i in producer and producer[i].op_type == "Transpose":
                    i = producer[i].input[0]
                if i in inits:
                    return i
            return None
        # An elementwise op (softcap's Div, Tanh, Mul; a Cast): follow the
        # input that is not a constant.
        dynamic = [i for i in node.input if i and i not in inits and
                   not (i in producer and producer[i].op_type == "Constant")]
        if len(dynamic) != 1:
            return None
        name = dynamic[0]
    return None


def main():
    src, dst, vocab = sys.argv[1], sys.argv[2], int(sys.argv[3])
    m = onnx.load(src)
    g = m.graph
    old = g.output[0].type.tensor_type.shape.dim[-1].dim_value
    inits = {init.name: i for i, init in enumerate(g.initializer)}
    tables = {n.input[0] for n in g.node if n.op_type == "Gather" and n.input[0] in inits
              and g.initializer[inits[n.input[0]]].dims[:1] == [old]}
    head = lm_head(g, inits)
    if head is None:
        sys.exit(f"{src}: cannot find the lm head the logits output is projected with")
    tables.add(head)
    for name in tables:
        init = g.initializer[inits[name]]
        a = numpy_helper.to_array(init)
        idx = tuple(slice(0, vocab) if d == old else slice(None) for d in a.shape)
        init.CopyFrom(numpy_helper.from_array(np.ascontiguousarray(a[idx]), name))
    # The tensors computed from the lm head (not through a Gather: the
    # lookup's rows are hidden-sized).
    reach = {head}
    for n in g.node:
        if n.op_type != "Gather" and any(i in reach for i in n.input):
            reach.update(n.output)
    reach |= tables
    for v in list(g.value_info) + [g.output[0]]:
        if v.name in reach or v is g.output[0]:
            for d in v.type.tensor_type.shape.dim:
                if d.dim_value == old:
                    d.dim_value = vocab
    onnx.save(m, dst)


if __name__ == "__main__":
    main()
