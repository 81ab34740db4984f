#!/usr/bin/env python3
"""Writes single-node com.microsoft GroupQueryAttention models and onnxruntime's outputs.

    python3 gen_gqa_cases.py OUT_DIR      (needs onnx, onnxruntime, numpy)

Each case OUT_DIR/<case>/ holds model.onnx, one <input>.npy per graph input and ort_<output>.npy
per output, computed by onnxruntime's CPU GroupQueryAttention. The committed copies were made with
onnxruntime 1.32.0 (see test/fixtures/README.md). test/Import/ms-group-query-attention.test runs
them through accelc -emit=onnx -interpret.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

rng = np.random.default_rng(7)


def f(*shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


def rope(max_pos, half, theta=10000.0):
    inv = theta ** (-np.arange(half, dtype=np.float64) / half)
    ang = np.arange(max_pos)[:, None] * inv[None, :]
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def case(out, name, n, nkv, hd, B, S, P, seqlens, total, packed=True, rotary=False, half=None,
         interleaved=0, window=-1, softcap=0.0, scale=None):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    feeds, ins, node_in = {}, [], []

    def add(nm, arr, elem=TensorProto.FLOAT):
        feeds[nm] = arr
        ins.append(helper.make_tensor_value_info(nm, elem, list(arr.shape)))
        node_in.append(nm)

    if packed:
        add("query", f(B, S, (n + 2 * nkv) * hd))
        node_in += ["", ""]
    else:
        add("query", f(B, S, n * hd))
        add("key", f(B, S, nkv * hd))
        add("value", f(B, S, nkv * hd))
    add("past_key", f(B, nkv, P, hd))
    add("past_value", f(B, nkv, P, hd))
    add("seqlens_k", np.array(seqlens, np.int32), TensorProto.INT32)
    add("total_sequence_length", np.array(total, np.int32), TensorProto.INT32)
    if rotary:
        c, s = rope(32, half)
        add("cos_cache", c)
        add("sin_cache", s)
    attrs = dict(num_heads=n, kv_num_heads=nkv, local_window_size=window, softcap=softcap,
                 do_rotary=int(rotary), rotary_interleaved=interleaved)
    if scale is not None:
        attrs["scale"] = scale
    outs = ["output", "present_key", "present_value"]
    node = helper.make_node("GroupQueryAttention", node_in, outs, domain="com.microsoft", **attrs)
    g = helper.make_graph([node], name, ins, [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 10
    onnx.save(m, os.path.join(d, "model.onnx"))
    import onnxruntime as ort

    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    res = sess.run(None, feeds)
    for k, v in feeds.items():
        np.save(os.path.join(d, f"{k}.npy"), v)
    for k, v in zip(outs, res):
        np.save(os.path.join(d, f"ort_{k}.npy"), v)
    print(name, [r.shape for r in res])


def main():
    out = sys.argv[1]
    # first prompt (S == total), packed qkv, fused rotary, empty past, batch 2
    case(out, "prompt_rotary", 4, 2, 16, B=2, S=5, P=0, seqlens=[4, 4], total=5, rotary=True, half=8)
    # a chunk after a past of 3: packed, rotary
    case(out, "step_rotary", 4, 2, 16, B=1, S=2, P=3, seqlens=[4], total=5, rotary=True, half=8)
    # separate q/k/v, no rotary, window 2, softcap 5, explicit scale, past 4 then 3 tokens
    case(out, "window_softcap", 4, 1, 8, B=1, S=3, P=4, seqlens=[6], total=7, packed=False,
         window=2, softcap=5.0, scale=0.3)
    # one decode token, interleaved partial rotary (rotary_dim 16 of 32)
    case(out, "decode_interleaved_partial", 2, 2, 32, B=1, S=1, P=6, seqlens=[6], total=7,
         rotary=True, half=8, interleaved=1)


if __name__ == "__main__":
    main()
