#!/usr/bin/env python3
"""Writes a Hugging Face Llama checkpoint folder of Llama-3-8B's widths (vocab 128256, hidden
4096, MLP 14336, 32 query / 8 KV heads of 128, untied head) with --layers decoder layers and bf16
weights (random values of magnitude 2^-7..2^-6 with random signs; finite, never NaN), for the
compile-memory test of the checkpoint importer (test/Plan/streaming-checkpoint.test). numpy
only; tensors are generated and written one at a time, so the writer holds one tensor at most.
Prints a JSON line with weight_bytes.

    make_wide_checkpoint.py --out DIR --layers 2
"""
import argparse
import json
import os

import numpy as np

VOCAB, HIDDEN, INTER, HEADS, KV_HEADS, HEAD_DIM = 128256, 4096, 14336, 32, 8, 128


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
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
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    header, offset, items = {}, 0, list(tensors(a.layers))
    for name, shape in items:
        n = int(np.prod(shape)) * 2
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    rng = np.random.default_rng(a.seed)
    with open(os.path.join(a.out, "model.safetensors"), "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for name, shape in items:
            if len(shape) == 1:  # norm weights near 1
                bits = np.full(shape, 0x3F80, dtype=np.uint16)
            else:  # exponent 2^-7 (0x3C00), random mantissa and sign
                bits = rng.integers(0, 1 << 16, size=shape, dtype=np.uint16)
                bits = (bits & 0x807F) | 0x3C00
            f.write(bits.tobytes())
    print(json.dumps({"weight_bytes": offset, "layers": a.layers}))


if __name__ == "__main__":
    main()
