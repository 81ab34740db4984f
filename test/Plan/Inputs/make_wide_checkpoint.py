#!/usr/bin/env python3
"""Writes a Hugging Face Llama checkpoint folder of Llama-3-8B's widths (vocab 128256, hidden
4096, MLP 14336, 32 query / 8 KV heads of 128, untied head) or, with --widths 70b, of
Llama-3.1-70B's (hidden 8192, MLP 28672, 64 query / 8 KV heads of 128, llama3 rope scaling),
with --layers decoder layers and bf16 weights (random values of magnitude 2^-7..2^-6 with random
signs; finite, never NaN): for the compile-memory test of the checkpoint importer
(test/Plan/streaming-checkpoint.test) and the 70B-shaped runs of docs/performance.md (80 layers:
141 GB). numpy only; tensors are generated and written one at a time, so the writer holds one
tensor at most. One model.safetensors, or with --shard-gb G shards of at most G GB and
model.safetensors.index.json, as save_pretrained lays them out. Prints a JSON line with
weight_bytes.

    make_wide_checkpoint.py --out DIR --layers 2 [--widths 8b|70b] [--shard-gb 5]
"""
import argparse
import json
import os

import numpy as np

VOCAB, KV_HEADS, HEAD_DIM = 128256, 8, 128
WIDTHS = {"8b": (4096, 14336, 32), "70b": (8192, 28672, 64)}  # hidden, MLP, query heads
HIDDEN, INTER, HEADS = WIDTHS["8b"]


def tensors(layers):
    yield "model.embed_tokens.weight", (VOCAB, HIDDEN)
    for i in range(layers):
        p = f"model.layers.{i}."
        yield p + "input_layernorm.weight", (HIDDEN,)
        yield p + "self_attn.q_proj.weight", (HEADS * HEAD_DIM, HIDDEN)
        yield p + "self_attn.k_proj.weight", (KV_HEADS * HEAD_DIM, HIDDEN)
        yield p + "self_attn.v_proj.weight", (KV_HEADS * HEAD_DIM, HIDDEN)
        yield p + "self_attn.o_proj.weight", (HIDDEN, HEADS * HEAD_DIM)
        yield p + "post_attention_layernorm.weight", (HIDDEN,)
        yield p + "mlp.gate_proj.weight", (INTER, HIDDEN)
        yield p + "mlp.up_proj.weight", (INTER, HIDDEN)
        yield p + "mlp.down_proj.weight", (HIDDEN, INTER)
    yield "model.norm.weight", (HIDDEN,)
    yield "lm_head.weight", (VOCAB, HIDDEN)


def write_file(path, names, shapes, rng):
    """One safetensors file of these tensors; returns their bytes."""
    header, offset = {}, 0
    for name in names:
        n = int(np.prod(shapes[name])) * 2
        header[name] = {"dtype": "BF16", "shape": list(shapes[name]),
                        "data_offsets": [offset, offset + n]}
        offset += n
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for name in names:
            shape = shapes[name]
            if len(shape) == 1:  # norm weights near 1
                bits = np.full(shape, 0x3F80, dtype=np.uint16)
            else:  # exponent 2^-7 (0x3C00), random mantissa and sign
                bits = rng.integers(0, 1 << 16, size=shape, dtype=np.uint16)
                bits = (bits & 0x807F) | 0x3C00
            f.write(bits.tobytes())
    return offset


def main():
    global HIDDEN, INTER, HEADS
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--widths", choices=sorted(WIDTHS), default="8b")
    ap.add_argument("--shard-gb", type=float, default=0.0)
    a = ap.parse_args()
    if a.layers < 1:
        ap.error("--layers must be 1 or more")
    HIDDEN, INTER, HEADS = WIDTHS[a.widths]
    os.makedirs(a.out, exist_ok=True)
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": VOCAB,
        "hidden_size": HIDDEN, "intermediate_size": INTER, "num_hidden_layers": a.layers,
        "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS, "head_dim": HEAD_DIM,
        "hidden_act": "silu", "max_position_embeddings": 8192, "rms_norm_eps": 1e-5,
        "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0},
        "attention_bias": False, "mlp_bias": False, "tie_word_embeddings": False,
        "bos_token_id": 128000, "eos_token_id": 128001, "dtype": "bfloat16",
    }
    if a.widths == "70b":
        config["max_position_embeddings"] = 131072
        config["rope_parameters"] = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                     "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                     "original_max_position_embeddings": 8192}
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    items = list(tensors(a.layers))
    shapes = dict(items)
    rng = np.random.default_rng(a.seed)
    if a.shard_gb <= 0:
        total = write_file(os.path.join(a.out, "model.safetensors"), [n for n, _ in items],
                           shapes, rng)
    else:
        limit, groups, cur, size = int(a.shard_gb * 1e9), [], [], 0
        for name, shape in items:
            b = int(np.prod(shape)) * 2
            if cur and size + b > limit:
                groups.append(cur)
                cur, size = [], 0
            cur.append(name)
            size += b
        groups.append(cur)
        weight_map, total = {}, 0
        for i, names in enumerate(groups):
            fname = f"model-{i + 1:05d}-of-{len(groups):05d}.safetensors"
            total += write_file(os.path.join(a.out, fname), names, shapes, rng)
            weight_map.update({n: fname for n in names})
        with open(os.path.join(a.out, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=1)
    print(json.dumps({"weight_bytes": total, "layers": a.layers, "widths": a.widths}))


if __name__ == "__main__":
    main()
