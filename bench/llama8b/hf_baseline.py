#!/usr/bin/env python3
"""The peer side of bench/llama8b/run.sh: PyTorch + HF transformers on the same GPU, same shapes.

For each batch size B (prompt 128 random tokens, greedy, exactly N new tokens) it times
`model.generate` with the default dynamic cache ("eager") and with `cache_implementation="static"`
(transformers compiles the decode step itself when it can; the JSON says whether it did), and the
prefill latency of one 2048-token prompt (generate with max_new_tokens=1). Per-step times come from
a stopping criterion that synchronises and reads the clock after every generated token, so
decode ms/step is the median interval between consecutive tokens (the first token, which includes
the prefill, is excluded). Every configuration runs once untimed first (warm-up, compilation).

It also measures the device-to-device copy bandwidth (the roofline's denominator) and prints one
JSON object.

    python3 bench/llama8b/hf_baseline.py --model-dir /tmp/llama8b [--batches 1,16,64] [--modes eager,static]
"""
import argparse
import json
import statistics
import sys
import time

import torch
import transformers
from transformers import LlamaConfig, LlamaForCausalLM, StoppingCriteria, StoppingCriteriaList


class StepTimer(StoppingCriteria):
    def __init__(self):
        self.times = []

    def __call__(self, input_ids, scores, **kwargs):
        torch.cuda.synchronize()
        self.times.append(time.perf_counter())
        return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)


def timed_generate(model, ids, new_tokens, mode):
    timer = StepTimer()
    kw = dict(max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
              stopping_criteria=StoppingCriteriaList([timer]), pad_token_id=0,
              attention_mask=torch.ones_like(ids))
    if mode == "static":
        kw["cache_implementation"] = "static"
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    with torch.no_grad():
        model.generate(ids, **kw)
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    ticks = [t0] + timer.times
    steps = [b - a for a, b in zip(ticks[1:], ticks[2:])]
    return {"first_token_ms": (ticks[1] - t0) * 1e3, "total_ms": (t1 - t0) * 1e3,
            "decode_ms_per_step": statistics.median(steps) * 1e3 if steps else None,
            "decode_ms_mean": statistics.fmean(steps) * 1e3 if steps else None}


def copy_bandwidth(gib=4):
    n = gib * (1 << 30) // 2
    a = torch.empty(n, dtype=torch.bfloat16, device="cuda").normal_()
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    reps = 10
    e0.record()
    for _ in range(reps):
        b.copy_(a)
    e1.record()
    torch.cuda.synchronize()
    s = e0.elapsed_time(e1) / 1e3 / reps
    del a, b
    torch.cuda.empty_cache()
    return 2 * n * 2 / s  # bytes read + written per second


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", required=True, help="export.py's --out (its config.json)")
    ap.add_argument("--batches", default="1,16,64")
    ap.add_argument("--modes", default="eager,static")
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--prefill", type=int, default=2048)
    ap.add_argument("--out", default="-")
    args = ap.parse_args()

    cfg = LlamaConfig.from_pretrained(args.model_dir)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = LlamaForCausalLM(cfg).to(torch.bfloat16).eval()
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    bw = copy_bandwidth()
    res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "transformers": transformers.__version__, "weight_bytes": weight_bytes,
           "copy_bandwidth_Bps": bw, "roofline_ms_per_step_b1": weight_bytes / bw * 1e3,
           "prompt": args.prompt, "new_tokens": args.new_tokens, "runs": []}
    print(json.dumps({k: v for k, v in res.items() if k != "runs"}), file=sys.stderr, flush=True)
    g = torch.Generator(device="cuda").manual_seed(1)
    for mode in args.modes.split(","):
        for b in [int(x) for x in args.batches.split(",")]:
            ids = torch.randint(3, cfg.vocab_size, (b, args.prompt), device="cuda", generator=g)
            t = time.time()
            timed_generate(model, ids, args.new_tokens, mode)  # warm-up / compile
            warm = time.time() - t
            r = timed_generate(model, ids, args.new_tokens, mode)
            r.update(mode=mode, batch=b, warmup_s=warm)
            res["runs"].append(r)
            print(json.dumps(r), file=sys.stderr, flush=True)
        ids = torch.randint(3, cfg.vocab_size, (1, args.prefill), device="cuda", generator=g)
        timed_generate(model, ids, 1, mode)
        r = timed_generate(model, ids, 1, mode)
        res["runs"].append({"mode": mode, "batch": 1, "prefill_tokens": args.prefill,
                            "prefill_ms": r["first_token_ms"]})
        print(json.dumps(res["runs"][-1]), file=sys.stderr, flush=True)
    res["compiled_forward"] = getattr(model, "_compiled_call", None) is not None
    text = json.dumps(res, indent=1)
    if args.out == "-":
        print(text)
    else:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
