#!/usr/bin/env python3
"""Writes one small model per operator that a transformer export can contain
and accel does not support (the unsupported operators of ctest
onnx-conformance that fit a transformer, and the onnxruntime transformer
optimizer's fused com.microsoft operators), runs `accelc MODEL -emit=onnx`
on each, and checks the refusal: exit status 1 and exactly one line on
stderr, which is printed for FileCheck. Anything else exits non-zero.

usage: check_unsupported_ops.py ACCELC OUT_DIR
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

F, U8, I64, B = T.FLOAT, T.UINT8, T.INT64, T.BOOL


def vi(name, dt, shape):
    return h.make_tensor_value_info(name, dt, shape)


# (file, op, domain, inputs [(name, type, shape)], outputs, attributes, opset)
# Inputs may also be initializers: (name, numpy array).
CASES = [
    # Default domain, in operator order of the conformance report.
    ("causal_conv", "CausalConvWithState", "", [("x", F, [1, 4, 8]), ("w", F, [4, 1, 3])],
     ["y", "state"], {"group": 4}, 23),
    ("conv", "Conv", "", [("pixels", F, [1, 3, 32, 32]), ("w", F, [8, 3, 16, 16])],
     ["patches"], {"strides": [16, 16]}, 23),
    ("dropout", "Dropout", "",
     [("x", F, [1, 4, 8]), ("ratio", np.array(0.1, np.float32)),
      ("training_mode", np.array(True))], ["y"], {}, 23),
    ("dynamic_quantize", "DynamicQuantizeLinear", "", [("x", F, [4, 8])],
     ["y", "y_scale", "y_zero_point"], {}, 23),
    ("linear_attention", "LinearAttention", "",
     [("q", F, [1, 2, 4, 8]), ("k", F, [1, 2, 4, 8]), ("v", F, [1, 2, 4, 8])], ["y"], {}, 23),
    ("matmul_integer", "MatMulInteger", "", [("a", U8, [4, 8]), ("b", U8, [8, 4])], ["y"], {}, 23),
    ("qlinear_matmul", "QLinearMatMul", "",
     [("a", U8, [4, 8]), ("a_scale", np.array(0.1, np.float32)), ("a_zp", np.array(0, np.uint8)),
      ("b", U8, [8, 4]), ("b_scale", np.array(0.1, np.float32)), ("b_zp", np.array(0, np.uint8)),
      ("y_scale", np.array(0.1, np.float32)), ("y_zp", np.array(0, np.uint8))], ["y"], {}, 23),
    ("swiglu", "SwiGLU", "", [("x", F, [1, 4, 16])], ["y"], {}, 23),
    ("tensor_scatter", "TensorScatter", "",
     [("past", F, [1, 2, 16, 8]), ("update", F, [1, 2, 1, 8]), ("write_indices", I64, [1])],
     ["present"], {"axis": 2}, 23),
    # As an exporter writes them: SwiGLU is in opset 28 and TensorScatter in 24, newer than
    # accel's; the model is refused for its opset.
    ("swiglu_opset28", "SwiGLU", "", [("x", F, [1, 4, 16])], ["y"], {}, 28),
    ("tensor_scatter_opset24", "TensorScatter", "",
     [("past", F, [1, 2, 16, 8]), ("update", F, [1, 2, 1, 8]), ("write_indices", I64, [1])],
     ["present"], {"axis": 2}, 24),
    # Other domains.
    ("flex_attention", "FlexAttention", "ai.onnx.preview",
     [("q", F, [1, 2, 4, 8]), ("k", F, [1, 2, 4, 8]), ("v", F, [1, 2, 4, 8])], ["y"], {}, 23),
    ("ms_attention", "Attention", "com.microsoft",
     [("x", F, [1, 4, 16]), ("w", F, [16, 48]), ("bias", F, [48])], ["y"], {"num_heads": 2}, 23),
    ("ms_multi_head_attention", "MultiHeadAttention", "com.microsoft",
     [("q", F, [1, 4, 16]), ("k", F, [1, 4, 16]), ("v", F, [1, 4, 16])], ["y"],
     {"num_heads": 2}, 23),
    ("ms_embed_layer_norm", "EmbedLayerNormalization", "com.microsoft",
     [("ids", T.INT32, [1, 4]), ("segment_ids", T.INT32, [1, 4]), ("word_emb", F, [32, 16]),
      ("pos_emb", F, [16, 16]), ("seg_emb", F, [2, 16]), ("gamma", F, [16]), ("beta", F, [16])],
     ["y", "mask_index"], {"epsilon": 1e-5}, 23),
    ("ms_fast_gelu", "FastGelu", "com.microsoft", [("x", F, [1, 4, 16]), ("bias", F, [16])],
     ["y"], {}, 23),
    ("ms_bias_gelu", "BiasGelu", "com.microsoft", [("x", F, [1, 4, 16]), ("bias", F, [16])],
     ["y"], {}, 23),
    ("ms_quick_gelu", "QuickGelu", "com.microsoft", [("x", F, [1, 4, 16])], ["y"],
     {"alpha": 1.702}, 23),
    ("ms_gelu", "Gelu", "com.microsoft", [("x", F, [1, 4, 16])], ["y"], {}, 23),
]


def make(op, domain, inputs, outputs, attrs, opset):
    gin, inits, names = [], [], []
    for inp in inputs:
        if isinstance(inp[1], np.ndarray):
            inits.append(nh.from_array(inp[1], inp[0]))
        else:
            gin.append(vi(*inp))
        names.append(inp[0])
    node = h.make_node(op, names, outputs, name=f"/model/layers.0/{op}", domain=domain or None,
                       **attrs)
    gout = [onnx.ValueInfoProto(name=o) for o in outputs]
    opsets = [h.make_opsetid("", opset)]
    if domain:
        opsets.append(h.make_opsetid(domain, 1))
    m = h.make_model(h.make_graph([node], "g", gin, gout, initializer=inits),
                     opset_imports=opsets, producer_name="check_unsupported_ops")
    m.ir_version = 10
    return m


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    accelc, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    bad = []
    for name, op, domain, inputs, outputs, attrs, opset in CASES:
        path = os.path.join(out, name + ".onnx")
        onnx.save(make(op, domain, inputs, outputs, attrs, opset), path)
        r = subprocess.run([accelc, path, "-emit=onnx", "-o", os.devnull],
                           capture_output=True, text=True, timeout=60)
        lines = r.stderr.splitlines()
        if r.returncode != 1 or len(lines) != 1 or r.stdout:
            bad.append(f"{name}: exit {r.returncode}, stderr {r.stderr!r}, stdout {r.stdout[:200]!r}")
        print(r.stderr.rstrip("\n"))
    for b in bad:
        print("check_unsupported_ops.py: not a one-sentence refusal with exit 1: " + b,
              file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
