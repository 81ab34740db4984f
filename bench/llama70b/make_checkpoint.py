#!/usr/bin/env python3
"""Writes a Llama-3-70B-shaped Hugging Face checkpoint with random bf16 weights, with numpy alone
(no torch, no transformers): config.json, generation_config.json, model-XXXXX-of-YYYYY.safetensors
shards of at most --shard-gb and model.safetensors.index.json, as save_pretrained lays them out.

    make_checkpoint.py --out DIR [--layers 80] [--shard-gb 5] [--seed 0]

Shapes (Llama-3-70B / 3.1-70B): vocab 128256, hidden 8192, MLP 28672, 64 query heads and 8 KV
heads of 128, rope theta 500000, RMSNorm eps 1e-5, untied embeddings. Weights ~ N(0, 0.02^2)
rounded to bf16 (norms 1.0): 80 layers are 70.6e9 parameters, 141 GB; 4 layers 8.9 GB. For
compiling and timing at the real shapes (issue 27; docs/performance.md): random weights give
near-flat logits, so this checks what runs and what it costs, not numerics (the fixtures do).
"""
import argparse
import json
import os
import struct

import numpy as np

VOCAB, HIDDEN, INTER, HEADS, KV_HEADS, HEAD_DIM = 128256, 8192, 28672, 64, 8, 128


def tensors(layers):
    """(name, shape) in save_pretrained's order, norms marked."""
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


def bf16_bytes(rng, shape, norm):
    """Random bf16 values as little-endian bytes (the top half of each f32, rounded to nearest)."""
    n = int(np.prod(shape))
    if norm:
        return np.full(n, 0x3F80, dtype=np.uint16).tobytes()  # 1.0
    out = np.empty(n, dtype=np.uint16)
    step = 1 << 26
    for s in range(0, n, step):
        f = rng.standard_normal(min(step, n - s), dtype=np.float32) * np.float32(0.02)
        u = f.view(np.uint32)
        out[s:s + len(f)] = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return out.tobytes()


def write_shard(path, items):
    header, off = {}, 0
    for name, shape, raw in items:
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [off, off + len(raw)]}
        off += len(raw)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for _, _, raw in items:
            f.write(raw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=80)
    ap.add_argument("--shard-gb", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if a.layers < 1:
        ap.error("--layers must be 1 or more")
    os.makedirs(a.out, exist_ok=True)
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": VOCAB,
        "hidden_size": HIDDEN, "intermediate_size": INTER, "num_hidden_layers": a.layers,
        "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS, "head_dim": HEAD_DIM,
        "hidden_act": "silu", "max_position_embeddings": 131072, "rms_norm_eps": 1e-5,
        "rope_theta": 500000.0, "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
                                                 "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                 "original_max_position_embeddings": 8192},
        "attention_bias": False, "mlp_bias": False, "tie_word_embeddings": False,
        "torch_dtype": "bfloat16", "bos_token_id": 128000, "eos_token_id": 128001,
    }
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    with open(os.path.join(a.out, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": 128000, "eos_token_id": 128001}, f, indent=2)
    # Shards: consecutive tensors up to --shard-gb each.
    limit = int(a.shard_gb * 1e9)
    groups, cur, size = [], [], 0
    for name, shape in tensors(a.layers):
        b = 2 * int(np.prod(shape))
        if cur and size + b > limit:
            groups.append(cur)
            cur, size = [], 0
        cur.append((name, shape))
        size += b
    groups.append(cur)
    rng = np.random.default_rng(a.seed)
    weight_map, total = {}, 0
    for i, g in enumerate(groups):
        fname = f"model-{i + 1:05d}-of-{len(groups):05d}.safetensors"
        items = [(n, s, bf16_bytes(rng, s, n.endswith("norm.weight"))) for n, s in g]
        write_shard(os.path.join(a.out, fname), items)
        for n, s, raw in items:
            weight_map[n] = fname
            total += len(raw)
        print(f"{fname}: {len(g)} tensors, {sum(len(r) for _, _, r in items) / 1e9:.2f} GB", flush=True)
    with open(os.path.join(a.out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    print(f"{a.out}: {a.layers} layers, {total / 1e9:.2f} GB in {len(groups)} shards")


if __name__ == "__main__":
    main()
