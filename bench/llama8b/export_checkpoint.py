#!/usr/bin/env python3
"""Writes the Llama-3-8B-shaped model of bench/llama8b as a Hugging Face checkpoint folder
(config.json + bf16 safetensors shards + index, generation_config.json) with transformers'
save_pretrained: the input `accelc CHECKPOINT_DIR` reads (issue 21), in about a minute instead of
the ONNX export's seven. The same seeded random init as export.py (so the logits are those of the
ONNX export's weights rounded to bf16), plus input_ids.npy [1, N] and HF's fp32 logits.npy of the
bf16-rounded weights (computed on the GPU when there is one).

    python3 bench/llama8b/export_checkpoint.py --out /dev/shm/llama8b-ckpt [--layers 32]
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
from transformers import LlamaForCausalLM

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export import build_model  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ref-tokens", type=int, default=16)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    model, cfg, dev = build_model(args.layers, args.seed)
    model.to(torch.bfloat16)
    print(f"checkpoint: init on {dev} in {time.time() - t0:.1f} s", flush=True)
    t1 = time.time()
    model.save_pretrained(args.out, safe_serialization=True, max_shard_size="5GB")
    print(f"checkpoint: saved in {time.time() - t1:.1f} s", flush=True)
    if args.ref_tokens:
        # fp32 arithmetic on the stored (bf16) weights, with fp32 rotary frequencies: a fresh
        # fp32 model with the rounded weights copied in.
        with torch.device(dev):
            ref = LlamaForCausalLM(cfg).to(torch.float32).eval()
        with torch.no_grad():
            stored = dict(model.named_parameters())
            for name, p in ref.named_parameters():
                p.copy_(stored[name].float())
        del model
        g = torch.Generator(device=dev).manual_seed(1234)
        ids = torch.randint(3, cfg.vocab_size, (1, args.ref_tokens), device=dev, generator=g)
        with torch.no_grad():
            logits = ref(input_ids=ids, use_cache=False).logits.float().cpu().numpy()
        np.save(os.path.join(args.out, "input_ids.npy"), ids.cpu().numpy().astype(np.int64))
        np.save(os.path.join(args.out, "logits.npy"), logits)
    sizes = {f: os.path.getsize(os.path.join(args.out, f)) for f in sorted(os.listdir(args.out))}
    print(f"checkpoint: {json.dumps(sizes)}", flush=True)
    print(f"checkpoint: total {time.time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
