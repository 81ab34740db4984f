#!/usr/bin/env python3
"""Writes a Llama model of Llama-3-8B's widths and any number of layers as ONNX with its f32
weights in external data (random numbers), for measuring accelc's memory (issue 21).

The graph is onnxruntime-genai's form (test/fixtures/models/llama_genai): embedding Gather,
SimplifiedLayerNormalization, one fused QKV MatMul, GroupQueryAttention with rotary caches,
SkipSimplifiedLayerNormalization, gate/up/down MatMuls with SiLU, an untied lm head. Widths:
vocab 128256, hidden 4096, MLP 14336, 32 query / 8 KV heads of 128. Two layers hold 1.45e9
parameters: 5.8 GB of f32 in <out>/model.onnx.data.

The weights are written a block at a time, so the generator's own memory stays small:

    python3 make_wide_llama.py --out DIR [--layers 2] [--vocab 128256] [--hidden 4096] ...
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

BLOCK = 1 << 22  # f32 values written at a time (16 MB)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--vocab", type=int, default=128256)
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--mlp", type=int, default=14336)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--max-position", type=int, default=256)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    data_path = os.path.join(a.out, "model.onnx.data")
    rng = np.random.default_rng(0)
    # One random block, reused at shifting offsets: the numbers only need to be non-trivial
    # (not zero pages), and generating 1.5e9 of them would dominate the test's time.
    pool = (rng.standard_normal(BLOCK * 2, dtype=np.float32) * 0.02).astype(np.float32)
    inits = []
    weight_bytes = [0]

    with open(data_path, "wb") as data:
        def tensor(name, shape, value=None):
            t = TensorProto()
            t.name = name
            t.data_type = TensorProto.FLOAT
            t.dims.extend(shape)
            n = int(np.prod(shape))
            offset = data.tell()
            if value is not None:
                data.write(np.asarray(value, dtype=np.float32).reshape(-1).tobytes())
            else:
                done = 0
                while done < n:
                    k = min(BLOCK, n - done)
                    start = (done * 7 + len(inits) * 131) % BLOCK
                    data.write(pool[start:start + k].tobytes())
                    done += k
            t.data_location = TensorProto.EXTERNAL
            for key, v in (("location", "model.onnx.data"), ("offset", str(offset)),
                           ("length", str(n * 4))):
                e = t.external_data.add()
                e.key, e.value = key, v
            # 64-byte aligned tensors, as onnx's writer makes them.
            pad = (-data.tell()) % 64
            data.write(b"\0" * pad)
            weight_bytes[0] += n * 4
            inits.append(t)
            return name

        H, V, M = a.hidden, a.vocab, a.mlp
        qkv = (a.heads + 2 * a.kv_heads) * a.head_dim
        nodes = []
        ln = lambda name: tensor(name, [H], np.ones(H, np.float32))
        embed = tensor("model.embed_tokens.weight", [V, H])
        half = a.head_dim // 2
        inv = 1.0 / (500000.0 ** (np.arange(half, dtype=np.float64) * 2 / a.head_dim))
        ang = np.arange(a.max_position, dtype=np.float64)[:, None] * inv[None, :]
        cos = tensor("cos_cache", [a.max_position, half], np.cos(ang))
        sin = tensor("sin_cache", [a.max_position, half], np.sin(ang))
        one = helper.make_tensor("one", TensorProto.INT64, [1], [1])
        one_s = helper.make_tensor("one_s", TensorProto.INT64, [], [1])
        nodes += [
            helper.make_node("ReduceSum", ["attention_mask", "one"], ["mask_sum"], keepdims=0),
            helper.make_node("Sub", ["mask_sum", "one"], ["mask_sub"]),
            helper.make_node("Cast", ["mask_sub"], ["seqlens_k"], to=TensorProto.INT32),
            helper.make_node("Shape", ["attention_mask"], ["mask_shape"]),
            helper.make_node("Gather", ["mask_shape", "one_s"], ["total_len64"], axis=0),
            helper.make_node("Cast", ["total_len64"], ["total_len"], to=TensorProto.INT32),
            helper.make_node("Gather", [embed, "input_ids"], ["h0"]),
        ]
        eps = 1e-5
        nodes.append(helper.make_node("SimplifiedLayerNormalization", ["h0", ln("model.layers.0.input_layernorm.weight")],
                                      ["x0"], epsilon=eps, axis=-1, stash_type=1))
        residual = "h0"
        inputs, outputs = [], []
        for i in range(a.layers):
            L = f"model.layers.{i}"
            x = f"x{i}"
            w_qkv = tensor(f"{L}.attn.qkv_proj.MatMul.weight", [H, qkv])
            w_o = tensor(f"{L}.attn.o_proj.MatMul.weight", [a.heads * a.head_dim, H])
            ln2 = ln(f"{L}.post_attention_layernorm.weight")
            w_g = tensor(f"{L}.mlp.gate_proj.MatMul.weight", [H, M])
            w_u = tensor(f"{L}.mlp.up_proj.MatMul.weight", [H, M])
            w_d = tensor(f"{L}.mlp.down_proj.MatMul.weight", [M, H])
            nxt = ln(f"model.layers.{i + 1}.input_layernorm.weight") if i + 1 < a.layers else \
                ln(f"model.layers.{a.layers}.final_norm_layernorm.weight")
            pk, pv = f"past_key_values.{i}.key", f"past_key_values.{i}.value"
            kv_shape = ["batch_size", a.kv_heads, "past_sequence_length", a.head_dim]
            inputs += [helper.make_tensor_value_info(pk, TensorProto.FLOAT, kv_shape),
                       helper.make_tensor_value_info(pv, TensorProto.FLOAT, kv_shape)]
            outputs += [helper.make_tensor_value_info(f"present.{i}.key", TensorProto.FLOAT, None),
                        helper.make_tensor_value_info(f"present.{i}.value", TensorProto.FLOAT, None)]
            nodes += [
                helper.make_node("MatMul", [x, w_qkv], [f"qkv{i}"]),
                helper.make_node("GroupQueryAttention",
                                 [f"qkv{i}", "", "", pk, pv, "seqlens_k", "total_len", cos, sin],
                                 [f"attn{i}", f"present.{i}.key", f"present.{i}.value"],
                                 domain="com.microsoft", num_heads=a.heads, kv_num_heads=a.kv_heads,
                                 scale=float(a.head_dim) ** -0.5, local_window_size=-1, softcap=0.0,
                                 do_rotary=1, rotary_interleaved=0),
                helper.make_node("MatMul", [f"attn{i}", w_o], [f"o{i}"]),
                helper.make_node("SkipSimplifiedLayerNormalization", [residual, f"o{i}", ln2],
                                 [f"y{i}", "", "", f"r{i}"], domain="com.microsoft", epsilon=eps),
                helper.make_node("MatMul", [f"y{i}", w_g], [f"g{i}"]),
                helper.make_node("MatMul", [f"y{i}", w_u], [f"u{i}"]),
                helper.make_node("Sigmoid", [f"g{i}"], [f"gs{i}"]),
                helper.make_node("Mul", [f"g{i}", f"gs{i}"], [f"act{i}"]),
                helper.make_node("Mul", [f"act{i}", f"u{i}"], [f"m{i}"]),
                helper.make_node("MatMul", [f"m{i}", w_d], [f"d{i}"]),
            ]
            last = i + 1 == a.layers
            nodes.append(helper.make_node("SkipSimplifiedLayerNormalization", [f"r{i}", f"d{i}", nxt],
                                          [f"x{i + 1}"] + ([] if last else ["", "", f"h{i + 1}"]),
                                          domain="com.microsoft", epsilon=eps))
            residual = f"h{i + 1}"
        lm = tensor("lm_head.MatMul.weight", [H, V])
        nodes.append(helper.make_node("MatMul", [f"x{a.layers}", lm], ["logits"]))

    # Shapes of the activations (onnx's shape inference does not know com.microsoft's ops).
    value_info = []
    BS = ["batch_size", "sequence_length"]
    def vi(name, last):
        value_info.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, BS + [last]))
    vi("h0", H)
    for i in range(a.layers):
        vi(f"x{i}", H); vi(f"qkv{i}", qkv); vi(f"attn{i}", a.heads * a.head_dim); vi(f"o{i}", H)
        vi(f"y{i}", H); vi(f"r{i}", H); vi(f"g{i}", M); vi(f"u{i}", M); vi(f"gs{i}", M)
        vi(f"act{i}", M); vi(f"m{i}", M); vi(f"d{i}", H)
        if i + 1 < a.layers:
            vi(f"h{i + 1}", H)
    vi(f"x{a.layers}", H)
    graph = helper.make_graph(
        nodes, "wide_llama",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                       ["batch_size", "total_sequence_length"])] + inputs,
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, BS + [V])] + outputs,
        initializer=inits + [one, one_s], value_info=value_info)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 10
    onnx.save(model, os.path.join(a.out, "model.onnx"))
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump({"model_type": "llama", "max_position_embeddings": a.max_position,
                   "bos_token_id": 128000, "eos_token_id": 128001}, f)
    print(json.dumps({"weight_bytes": weight_bytes[0], "layers": a.layers}))


if __name__ == "__main__":
    main()
