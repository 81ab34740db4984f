"""Writes a copy of an ONNX LM whose LM head reads Sin(h) instead of h.

usage: add_host_op.py <model.onnx> <out.onnx>

Sin is an operator raising leaves as it is (no transformer op computes it)
and no GPU kernel implements: the plan of the copy keeps an exec.onnx step,
which a GPU plan must refuse (or, with accelc -allow-host-steps, run on the
host). The last MatMul of the graph is taken as the LM head.
"""
import sys

import onnx
from onnx import helper, shape_inference


def main():
    src, dst = sys.argv[1:3]
    m = onnx.load(src)
    g = m.graph
    head = [n for n in g.node if n.op_type == "MatMul"][-1]
    h = head.input[0]
    node = helper.make_node("Sin", [h], [h + "_sin"], name="node_host_sin")
    idx = list(g.node).index(head)
    g.node.insert(idx, node)
    head.input[0] = h + "_sin"
    # Its output's type, as an exporter writes it.
    m = shape_inference.infer_shapes(m)
    onnx.save(m, dst)


if __name__ == "__main__":
    main()
