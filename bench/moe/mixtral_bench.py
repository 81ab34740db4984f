#!/usr/bin/env python3
"""The PyTorch side of bench/moe/run.sh: a Mixtral-8x7B-shaped checkpoint, its PyTorch reference
timings, and the summary beside accel-bench's.

    mixtral_bench.py checkpoint --out DIR [--layers 2]
        MixtralForCausalLM with Mixtral-8x7B's shapes (hidden 4096, intermediate 14336, 8 experts,
        top-2, 32 query / 8 KV heads of 128, vocab 32000) and LAYERS layers, random weights
        (normal, std 0.02; norms 1) made on the GPU, rounded to bf16 and written with
        save_pretrained (safetensors) into DIR, with input_ids.npy [1, 16] and logits.npy: fp32
        logits of the stored (bf16) weights, from a fresh fp32 model (fp32 rotary frequencies).
    mixtral_bench.py torch --model-dir DIR --out torch.json [--batches 1,16,64]
            [--compile reduce-overhead|default|none] [--compile-budget 240]
        The checkpoint in bf16 on the GPU (transformers' MixtralForCausalLM; experts through
        transformers' grouped_mm implementation where it has one), a static KV cache. For each
        batch B: B random prompts of 128 tokens prefilled, then decode steps of one token per
        sequence (greedy, on the device), eager and torch.compile'd (mode reduce-overhead: CUDA
        graphs), timed as ../shared/peers/gptfast_peer.py times them: CUDA events recorded between
        64 consecutive steps (no host synchronisation), the median interval; also the median with
        the new tokens copied to the host every step. Then one 2048-token prefill (median of 3
        after a warm-up), eager and compiled. torch.compile is given --compile-budget seconds in
        all; what is left after that runs eager only. Every phase prints its time.
    mixtral_bench.py summary --accel accel.json --torch torch.json --out OUTDIR
        accel-bench's and this script's JSON side by side: OUTDIR/summary.md and summary.json.
"""
import argparse
import json
import os
import statistics
import sys
import time
import traceback

SHAPES = dict(vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_attention_heads=32,
              num_key_value_heads=8, num_local_experts=8, num_experts_per_tok=2,
              max_position_embeddings=4096, rms_norm_eps=1e-5)
INPUT_LEN = 128
STEPS = 64
PREFILL = 2048


def log(*a):
    print(*a, flush=True)


class Phase:
    """Prints how long a phase took."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.t0 = time.time()
        log(f"[{self.name}] ...")
        return self

    def __exit__(self, *exc):
        log(f"[{self.name}] took {time.time() - self.t0:.1f} s" + (" (failed)" if exc[0] else ""))
        return False


def mixtral_config(layers):
    from transformers import MixtralConfig
    return MixtralConfig(num_hidden_layers=layers, tie_word_embeddings=False, **SHAPES)


# ------------------------------------------------------------------------------------------------
# checkpoint
# ------------------------------------------------------------------------------------------------

def cmd_checkpoint(a):
    import numpy as np
    import torch
    from transformers import MixtralForCausalLM

    os.makedirs(a.out, exist_ok=True)
    cfg = mixtral_config(a.layers)
    with Phase("checkpoint: make the model on the GPU"):
        torch.manual_seed(a.seed)
        with torch.device("cuda"):
            model = MixtralForCausalLM(cfg)
        with torch.no_grad():
            for _, p in model.named_parameters():
                if p.dim() == 1:
                    p.fill_(1.0)  # RMSNorm weights
                else:
                    p.normal_(0.0, 0.02)
        model.to(torch.bfloat16).eval()
        params = sum(p.numel() for p in model.parameters())
        log(f"checkpoint: {params / 1e9:.3f} B parameters, {a.layers} layers")
    with Phase("checkpoint: save_pretrained"):
        model.save_pretrained(a.out, safe_serialization=True, max_shard_size="5GB")
    with Phase("checkpoint: fp32 reference logits"):
        with torch.device("cuda"):
            ref = MixtralForCausalLM(cfg).eval()
        ref.load_state_dict(model.state_dict())  # the bf16 weights, widened exactly
        del model
        torch.cuda.empty_cache()
        g = torch.Generator(device="cuda").manual_seed(1234)
        ids = torch.randint(3, cfg.vocab_size, (1, a.ref_tokens), device="cuda", generator=g)
        with torch.no_grad():
            logits = ref(input_ids=ids, use_cache=False).logits.float().cpu().numpy()
        np.save(os.path.join(a.out, "input_ids.npy"), ids.cpu().numpy().astype(np.int64))
        np.save(os.path.join(a.out, "logits.npy"), logits.astype(np.float32))
    sizes = {f: os.path.getsize(os.path.join(a.out, f)) for f in sorted(os.listdir(a.out))}
    log(f"checkpoint: {json.dumps(sizes)}")
    return 0


# ------------------------------------------------------------------------------------------------
# torch reference
# ------------------------------------------------------------------------------------------------

def sync():
    import torch
    torch.cuda.synchronize()


def stats(ms):
    s = sorted(ms)
    return {"median": statistics.median(s), "mean": sum(s) / len(s), "min": s[0],
            "p10": s[int(round(0.1 * (len(s) - 1)))], "p90": s[int(round(0.9 * (len(s) - 1)))]}


def time_calls(fn, reps, warmup=1):
    """ms per call (CUDA events); the device is idle at the start of every call."""
    import torch
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(reps):
        sync()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        out.append(e0.elapsed_time(e1))
    return out


def copy_bandwidth(gib=4):
    import torch
    n = int(gib * (1 << 30)) // 2
    src = torch.ones(n, dtype=torch.bfloat16, device="cuda")
    dst = torch.empty_like(src)
    ms = statistics.median(time_calls(lambda: dst.copy_(src), 10, warmup=3))
    del src, dst
    torch.cuda.empty_cache()
    return 2 * n * 2 / (ms / 1e3) / 1e9  # GB/s read + written


class Stepper:
    """gpt-fast's loop: the next token cloned out of the (CUDA-graph) output, the position tensor
    advanced in place; `mark` starts a cudagraph-trees step before each call."""

    def __init__(self, fn, mark):
        self.fn, self.mark = fn, mark
        self.tok = self.pos = None

    def reset(self, tok0, p0):
        import torch
        self.tok = tok0.clone()
        self.pos = torch.full((1,), p0, dtype=torch.long, device="cuda")

    def step(self):
        import torch
        if self.mark:
            torch.compiler.cudagraph_mark_step_begin()
        nxt = self.fn(self.tok, self.pos)
        self.tok = nxt.clone()
        self.pos.add_(1)


def time_steps(stepper, n):
    """Per-step ms from CUDA events recorded between consecutive steps (no host sync)."""
    import torch
    sync()
    evs = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    for i in range(n):
        evs[i].record()
        stepper.step()
    evs[n].record()
    sync()
    return [evs[i].elapsed_time(evs[i + 1]) for i in range(n)]


def time_steps_host(stepper, n):
    """Per-step ms with the new tokens copied to the host every step."""
    per = []
    sync()
    for _ in range(n):
        t = time.perf_counter()
        stepper.step()
        stepper.tok.to("cpu")
        per.append((time.perf_counter() - t) * 1e3)
    return per


def make_cache(model, batch, max_len):
    """A transformers StaticCache (the constructor's arguments changed across versions)."""
    import torch
    from transformers import StaticCache
    errors = []
    for kw in (dict(config=model.config, max_cache_len=max_len),
               dict(config=model.config, max_batch_size=batch, max_cache_len=max_len,
                    device="cuda", dtype=torch.bfloat16)):
        try:
            return StaticCache(**kw)
        except TypeError as e:
            errors.append(f"{sorted(kw)}: {e}")
    raise RuntimeError("cannot make a StaticCache: " + "; ".join(errors))


class Runner:
    def __init__(self, model):
        self.model = model
        self.keep = True  # forward(logits_to_keep=1) works

    def forward(self, ids, cache, pos):
        kw = dict(input_ids=ids, past_key_values=cache, cache_position=pos, use_cache=True)
        if self.keep:
            try:
                return self.model(**kw, logits_to_keep=1).logits
            except TypeError:
                self.keep = False
        return self.model(**kw).logits

    def prefill(self, cache, ids):
        import torch
        pos = torch.arange(ids.shape[1], device="cuda")
        return self.forward(ids, cache, pos)[:, -1, :].argmax(dim=-1, keepdim=True)

    def step_fn(self, cache):
        def step(tok, pos):
            return self.forward(tok, cache, pos)[:, -1, :].argmax(dim=-1, keepdim=True)
        return step


def bench_decode(r, batch, mode, budget, gen):
    """One batch size: eager, then compiled while the compile budget lasts."""
    import torch
    row = {"batch": batch, "input_len": INPUT_LEN, "steps": STEPS}
    cache = make_cache(r.model, batch, INPUT_LEN + STEPS + 16)
    prompt = torch.randint(3, SHAPES["vocab_size"], (batch, INPUT_LEN), device="cuda", generator=gen)
    with torch.no_grad():
        tok0 = r.prefill(cache, prompt)
        eager = Stepper(r.step_fn(cache), mark=False)
        eager.reset(tok0, INPUT_LEN)
        for _ in range(3):
            eager.step()
        eager.reset(tok0, INPUT_LEN)
        st = stats(time_steps(eager, STEPS))
        eager.reset(tok0, INPUT_LEN)
        host = stats(time_steps_host(eager, STEPS))
        eager.reset(tok0, INPUT_LEN)
        eager.step()
        first = eager.tok.clone()
    row["eager_ms"] = round(st["median"], 4)
    row["eager_ms_p10_p90"] = [round(st["p10"], 4), round(st["p90"], 4)]
    row["eager_ms_host_sync"] = round(host["median"], 4)
    log(f"torch: batch {batch} eager {row['eager_ms']:.3f} ms/step "
        f"(host sync {row['eager_ms_host_sync']:.3f})")
    if mode == "none":
        return row, 0.0
    if budget <= 0:
        row["compile_skipped"] = "compile budget spent"
        log(f"torch: batch {batch}: torch.compile skipped (budget spent)")
        return row, 0.0
    t0 = time.time()
    try:
        fn = torch.compile(r.step_fn(cache), mode=None if mode == "default" else mode,
                           fullgraph=False, dynamic=False)
        comp = Stepper(fn, mark=mode in ("reduce-overhead", "max-autotune"))
        with torch.no_grad():
            comp.reset(tok0, INPUT_LEN)
            for _ in range(4):
                comp.step()
            sync()
            row["compile_s"] = round(time.time() - t0, 1)
            comp.reset(tok0, INPUT_LEN)
            st = stats(time_steps(comp, STEPS))
            comp.reset(tok0, INPUT_LEN)
            host = stats(time_steps_host(comp, STEPS))
            comp.reset(tok0, INPUT_LEN)
            comp.step()
            row["compiled_token_agree_vs_eager"] = float((comp.tok == first).float().mean().item())
        row["compiled_ms"] = round(st["median"], 4)
        row["compiled_ms_p10_p90"] = [round(st["p10"], 4), round(st["p90"], 4)]
        row["compiled_ms_host_sync"] = round(host["median"], 4)
        row["compile_mode"] = mode
        log(f"torch: batch {batch} compiled ({mode}) {row['compiled_ms']:.3f} ms/step (host sync "
            f"{row['compiled_ms_host_sync']:.3f}), compile {row['compile_s']} s")
    except Exception as e:  # noqa: BLE001 - keep the eager number
        row["compile_error"] = f"{type(e).__name__}: {str(e)[:400]}"
        log(f"torch: batch {batch}: torch.compile failed: {row['compile_error']}")
        traceback.print_exc()
    return row, time.time() - t0


def bench_prefill(r, mode, budget, gen):
    import torch
    out = {"tokens": PREFILL}
    cache = make_cache(r.model, 1, PREFILL + 16)
    prompt = torch.randint(3, SHAPES["vocab_size"], (1, PREFILL), device="cuda", generator=gen)
    with torch.no_grad():
        ms = time_calls(lambda: r.prefill(cache, prompt), 3, warmup=1)
    out["eager_ms"] = round(statistics.median(ms), 3)
    out["eager_ms_all"] = [round(v, 3) for v in ms]
    log(f"torch: prefill {PREFILL} eager {out['eager_ms']:.2f} ms")
    if mode == "none" or budget <= 0:
        out["compile_skipped"] = "compile off" if mode == "none" else "compile budget spent"
        return out
    t0 = time.time()
    try:
        fn = torch.compile(lambda ids: r.prefill(cache, ids), fullgraph=False, dynamic=False)
        with torch.no_grad():
            fn(prompt)
            sync()
            out["compile_s"] = round(time.time() - t0, 1)
            ms = time_calls(lambda: fn(prompt), 3, warmup=1)
        out["compiled_ms"] = round(statistics.median(ms), 3)
        out["compiled_ms_all"] = [round(v, 3) for v in ms]
        log(f"torch: prefill {PREFILL} compiled {out['compiled_ms']:.2f} ms "
            f"(compile {out['compile_s']} s)")
    except Exception as e:  # noqa: BLE001
        out["compile_error"] = f"{type(e).__name__}: {str(e)[:400]}"
        log(f"torch: prefill: torch.compile failed: {out['compile_error']}")
        traceback.print_exc()
    return out


def load_model(model_dir, experts):
    import torch
    from transformers import MixtralForCausalLM
    try:
        model = MixtralForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16)
    except TypeError:
        model = MixtralForCausalLM.from_pretrained(model_dir, torch_dtype=torch.bfloat16)
    model.to("cuda").eval()
    chosen = None
    if hasattr(model, "set_experts_implementation"):
        for impl in experts.split(","):
            try:
                model.set_experts_implementation(impl)
                chosen = impl
                break
            except Exception as e:  # noqa: BLE001 - try the next
                log(f"torch: experts implementation {impl}: {type(e).__name__}: {e}")
    return model, getattr(model.config, "_experts_implementation", None) or chosen or "default"


def cmd_torch(a):
    import torch
    import transformers
    res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "transformers": transformers.__version__, "input_len": INPUT_LEN, "steps": STEPS,
           "timing": "CUDA events between consecutive decode steps, median (gptfast_peer.py)",
           "decode": [], "errors": []}
    try:
        import torch._dynamo
        torch._dynamo.config.cache_size_limit = max(torch._dynamo.config.cache_size_limit, 64)
    except Exception:  # noqa: BLE001
        pass
    with Phase("torch: load the checkpoint"):
        model, impl = load_model(a.model_dir, a.experts)
    res["experts_implementation"] = impl
    res["weight_bytes"] = sum(p.numel() * p.element_size() for p in model.parameters())
    res["layers"] = model.config.num_hidden_layers
    log(f"torch: {res['gpu']}, torch {res['torch']}, transformers {res['transformers']}, "
        f"experts {impl}, {res['weight_bytes'] / 1e9:.2f} GB of weights")
    r = Runner(model)
    gen = torch.Generator(device="cuda").manual_seed(1)
    # The experts implementation must run; else transformers' eager loop.
    with Phase("torch: first forward"):
        try:
            with torch.no_grad():
                r.prefill(make_cache(model, 1, 32), torch.randint(3, 1000, (1, 8), device="cuda"))
        except Exception as e:  # noqa: BLE001
            res["errors"].append(f"experts {impl}: {type(e).__name__}: {str(e)[:300]}")
            log(f"torch: {res['errors'][-1]}; switching to eager experts")
            traceback.print_exc()
            if hasattr(model, "set_experts_implementation"):
                model.set_experts_implementation("eager")
                res["experts_implementation"] = "eager"
    with Phase("torch: copy bandwidth"):
        res["copy_GBps"] = round(copy_bandwidth(), 1)
    budget = float(a.compile_budget)
    for b in [int(x) for x in a.batches.split(",")]:
        with Phase(f"torch: decode batch {b}"):
            try:
                row, spent = bench_decode(r, b, a.compile, budget, gen)
                budget -= spent
            except Exception as e:  # noqa: BLE001
                row = {"batch": b, "error": f"{type(e).__name__}: {str(e)[:400]}"}
                traceback.print_exc()
            res["decode"].append(row)
            torch.cuda.empty_cache()
    with Phase(f"torch: prefill {PREFILL}"):
        try:
            res["prefill"] = bench_prefill(r, a.compile, budget, gen)
        except Exception as e:  # noqa: BLE001
            res["prefill"] = {"tokens": PREFILL, "error": f"{type(e).__name__}: {str(e)[:400]}"}
            traceback.print_exc()
    text = json.dumps(res, indent=1)
    with open(a.out, "w") as f:
        f.write(text + "\n")
    log(text)
    return 0


# ------------------------------------------------------------------------------------------------
# summary
# ------------------------------------------------------------------------------------------------

def fmt(v, digits=2):
    return f"{v:.{digits}f}" if isinstance(v, (int, float)) else "–"


def summarize(acc, tor):
    """The table rows and the markdown."""
    rows = []
    tdec = {d.get("batch"): d for d in (tor or {}).get("decode", [])}
    for d in (acc or {}).get("decode", []):
        b = d["batch"]
        t = tdec.get(b, {})
        best = min([v for v in (t.get("eager_ms"), t.get("compiled_ms")) if v] or [None],
                   key=lambda v: v if v is not None else 1e30)
        rows.append({"batch": b, "accel_ms": d.get("decode_ms_per_step"),
                     "torch_eager_ms": t.get("eager_ms"), "torch_compiled_ms": t.get("compiled_ms"),
                     "torch_eager_ms_host_sync": t.get("eager_ms_host_sync"),
                     "torch_compiled_ms_host_sync": t.get("compiled_ms_host_sync"),
                     "torch_best_ms": best,
                     "speedup_vs_best": (best / d["decode_ms_per_step"])
                     if best and d.get("decode_ms_per_step") else None,
                     "torch_note": t.get("compile_error") or t.get("compile_skipped") or t.get("error")})
    tp = (tor or {}).get("prefill", {})
    pbest = min([v for v in (tp.get("eager_ms"), tp.get("compiled_ms")) if v] or [None],
                key=lambda v: v if v is not None else 1e30)
    prefill = {"tokens": (acc or {}).get("prefill_tokens"), "accel_ms": (acc or {}).get("prefill_ms"),
               "torch_eager_ms": tp.get("eager_ms"), "torch_compiled_ms": tp.get("compiled_ms"),
               "torch_best_ms": pbest,
               "speedup_vs_best": (pbest / acc["prefill_ms"]) if pbest and acc and acc.get("prefill_ms") else None,
               "torch_note": tp.get("compile_error") or tp.get("compile_skipped") or tp.get("error")}
    md = []
    if tor:
        md.append(f"GPU {tor.get('gpu')}; torch {tor.get('torch')}, transformers {tor.get('transformers')}; "
                  f"{tor.get('layers')} Mixtral-8x7B-shaped layers, {fmt((tor.get('weight_bytes') or 0) / 1e9)} GB "
                  f"of bf16 weights; experts implementation `{tor.get('experts_implementation')}`; copy "
                  f"bandwidth {fmt((tor.get('copy_GBps') or 0) / 1e3)} TB/s. PyTorch decode timed with "
                  "CUDA events between steps (median of 64), accel-bench on the wall clock per "
                  "synchronous step.")
        md.append("")
    md.append("| decode ms/step (prompt 128) | accel | PyTorch eager | PyTorch compiled | "
              "PyTorch eager / compiled, host sync per step | PyTorch best / accel | note |")
    md.append("|---|---|---|---|---|---|---|")
    for r in rows:
        md.append(f"| batch {r['batch']} | {fmt(r['accel_ms'], 3)} | {fmt(r['torch_eager_ms'], 3)} | "
                  f"{fmt(r['torch_compiled_ms'], 3)} | {fmt(r['torch_eager_ms_host_sync'], 3)} / "
                  f"{fmt(r['torch_compiled_ms_host_sync'], 3)} | "
                  f"{fmt(r['speedup_vs_best'])}{'x' if r['speedup_vs_best'] else ''} | "
                  f"{(r['torch_note'] or '')[:80]} |")
    md.append(f"| prefill {prefill['tokens']} tokens (ms) | {fmt(prefill['accel_ms'], 1)} | "
              f"{fmt(prefill['torch_eager_ms'], 1)} | {fmt(prefill['torch_compiled_ms'], 1)} | | "
              f"{fmt(prefill['speedup_vs_best'])}{'x' if prefill['speedup_vs_best'] else ''} | "
              f"{(prefill['torch_note'] or '')[:80]} |")
    return {"decode": rows, "prefill": prefill}, "\n".join(md) + "\n"


def cmd_summary(a):
    def load(p):
        try:
            with open(p) as f:
                return json.load(f)
        except (OSError, ValueError) as e:
            log(f"summary: {p}: {e}")
            return None
    acc, tor = load(a.accel), load(a.torch)
    table, md = summarize(acc, tor)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump({"accel": acc, "torch": tor, "table": table}, f, indent=1)
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write(md)
    print(md)
    return 0 if acc and tor else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("checkpoint")
    c.add_argument("--out", required=True)
    c.add_argument("--layers", type=int, default=2)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--ref-tokens", type=int, default=16)
    t = sub.add_parser("torch")
    t.add_argument("--model-dir", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--batches", default="1,16,64")
    t.add_argument("--compile", default="reduce-overhead",
                   choices=["reduce-overhead", "default", "max-autotune", "none"])
    t.add_argument("--compile-budget", type=float, default=240)
    t.add_argument("--experts", default="grouped_mm,batched_mm",
                   help="transformers experts implementations to try, in order")
    s = sub.add_parser("summary")
    s.add_argument("--accel", required=True)
    s.add_argument("--torch", required=True)
    s.add_argument("--out", required=True)
    a = ap.parse_args()
    return {"checkpoint": cmd_checkpoint, "torch": cmd_torch, "summary": cmd_summary}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
