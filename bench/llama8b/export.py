#!/usr/bin/env python3
"""Exports a Llama-3-8B-shaped model with random weights to ONNX (torch dynamo exporter), for
bench/llama8b/run.sh on the GPU machine.

The model is transformers' LlamaForCausalLM built from Llama-3-8B's config (vocab 128256, hidden
4096, 32 layers, 32 query / 8 KV heads of 128, MLP 14336, rope theta 500000, untied LM head) with
transformers' own random initialisation (seeded), in fp32: the graph accelc sees is the same as a
real Llama-3-8B export's, only the numbers differ. Written as <out>/model.onnx with its weights in
<out>/model.onnx.data (about 32 GB), and <out>/config.json beside it (accelc reads max positions
and the end-of-sequence ids from it).

    python3 bench/llama8b/export.py --out /tmp/llama8b [--layers 32]
"""
import argparse
import json
import os
import sys
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM

# The fixtures' wrapper (input_ids -> logits, no cache), so that this export sees what theirs do.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "fixtures"))
from export_fixtures import LogitsOnly  # noqa: E402

LLAMA3_8B = dict(
    vocab_size=128256,
    hidden_size=4096,
    intermediate_size=14336,
    num_hidden_layers=32,
    num_attention_heads=32,
    num_key_value_heads=8,
    head_dim=128,
    max_position_embeddings=8192,
    rope_theta=500000.0,
    rms_norm_eps=1e-5,
    hidden_act="silu",
    tie_word_embeddings=False,
    bos_token_id=128000,
    eos_token_id=128001,
    attention_bias=False,
    mlp_bias=False,
)


def llama3_8b_config(layers=32):
    cfg = dict(LLAMA3_8B, num_hidden_layers=layers)
    return LlamaConfig(**cfg)


def build_model(layers, seed):
    """The seeded fp32 model (on the GPU when there is one); model, config, device."""
    torch.manual_seed(seed)
    cfg = llama3_8b_config(layers)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    with torch.device(dev):
        model = LlamaForCausalLM(cfg).to(torch.float32).eval()
    return model, cfg, dev


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ref-tokens", type=int, default=0,
                    help="also write input_ids.npy [1, N] and HF's fp32 logits.npy for them")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    model, cfg, dev = build_model(args.layers, args.seed)
    n = sum(p.numel() for p in model.parameters())
    print(f"export: {n / 1e9:.2f} B parameters, init on {dev} in {time.time() - t0:.1f} s", flush=True)
    ids = torch.randint(3, cfg.vocab_size, (1, 8), device=dev)
    t1 = time.time()
    with torch.no_grad():
        prog = torch.onnx.export(
            LogitsOnly(model), (ids,), dynamo=True, opset_version=18,
            input_names=["input_ids"], output_names=["logits"],
            # Named dims as strings (as test/fixtures/export_fixtures.py does): torch.export.Dim
            # objects let the exporter specialise the batch of the batch-1 example to a static 1.
            dynamic_shapes={"input_ids": {0: "batch", 1: "sequence"}},
            optimize=True)
    print(f"export: traced in {time.time() - t1:.1f} s", flush=True)
    if args.ref_tokens:
        import numpy as np
        g = torch.Generator(device=dev).manual_seed(1234)
        ref = torch.randint(3, cfg.vocab_size, (1, args.ref_tokens), device=dev, generator=g)
        with torch.no_grad():
            logits = model(input_ids=ref, use_cache=False).logits.float().cpu().numpy()
        np.save(os.path.join(args.out, "input_ids.npy"), ref.cpu().numpy().astype(np.int64))
        np.save(os.path.join(args.out, "logits.npy"), logits)
    t2 = time.time()
    path = os.path.join(args.out, "model.onnx")
    prog.save(path, external_data=True)
    cfg.save_pretrained(args.out)
    sizes = {f: os.path.getsize(os.path.join(args.out, f)) for f in sorted(os.listdir(args.out))}
    print(f"export: saved in {time.time() - t2:.1f} s: {json.dumps(sizes)}", flush=True)
    print(f"export: total {time.time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
