#!/usr/bin/env python3
"""Tiny mixture-of-experts Hugging Face checkpoints written with numpy, and their logits computed
here in float64 by a re-implementation of transformers' modeling code (modeling_mixtral.py,
modeling_qwen3_moe.py, modeling_qwen2_moe.py), independent of accel.

    moe_checkpoint.py write <family> <dir> [--stacked] [--dtype bf16]
    moe_checkpoint.py broken <case> <dir>

<family>: mixtral, qwen3_moe or qwen2_moe. <dir> gets config.json (the fields transformers 5
writes for the family), generation_config.json, model.safetensors, input_ids.npy [1, T] and
logits.npy [1, T, V] (float32 of the float64 reference).

Tensors are named as save_pretrained stores them: one module per expert (Mixtral's
block_sparse_moe.experts.N.w1/w2/w3 and block_sparse_moe.gate; Qwen's
mlp.experts.N.gate_proj/up_proj/down_proj and mlp.gate), or with --stacked as transformers 5
holds them in memory (mlp.experts.gate_up_proj [E, 2I, H], gate rows first, and
mlp.experts.down_proj [E, H, I]). --dtype bf16 stores bf16 weights; the reference then uses the
rounded weights.

The families differ where the importer must: Mixtral renormalises the top-k weights; Qwen3-MoE
(norm_topk_prob true) has per-head q/k norms, an explicit head_dim and a dense layer
(mlp_only_layers); Qwen2-MoE (norm_topk_prob false) has q/k/v biases, a shared expert scaled by
sigmoid(x . shared_expert_gate) and dense layers from decoder_sparse_step 2. The weights' seed is
the first from 0 whose reference tokens route to every expert of every sparse layer with a margin
between the k-th and (k+1)-th router probability that f32 arithmetic cannot cross (asserted).

<case> of broken: a mixtral checkpoint with one thing wrong: missing_expert (no
experts.3.w2.weight), expert_count (config.json says 3 experts, the file holds 4), top_k
(num_experts_per_tok 5 of 4 experts), sliding_qwen3_moe (a qwen3_moe with use_sliding_window).
"""
import argparse
import json
import os
import struct
import sys

import numpy as np

T = 16  # reference tokens
MARGIN = 1e-3  # least gap between the k-th and (k+1)-th router probability

FAMILIES = {
    "mixtral": dict(vocab=96, hidden=32, layers=2, heads=4, kv=2, head_dim=8, inter=48, experts=4,
                    top_k=2, eps=1e-5, theta=1e6),
    "qwen3_moe": dict(vocab=96, hidden=32, layers=3, heads=4, kv=2, head_dim=16, inter=40,
                      moe_inter=24, experts=6, top_k=3, eps=1e-6, theta=1e4, dense=[1]),
    "qwen2_moe": dict(vocab=96, hidden=32, layers=4, heads=4, kv=2, head_dim=8, inter=40,
                      moe_inter=24, shared=40, experts=4, top_k=2, eps=1e-6, theta=1e4, step=2),
}


def config_json(family):
    f = FAMILIES[family]
    common = {
        "attention_dropout": 0.0, "bos_token_id": 1, "dtype": "float32", "eos_token_id": 2,
        "hidden_act": "silu", "hidden_size": f["hidden"], "initializer_range": 0.02,
        "intermediate_size": f["inter"], "max_position_embeddings": 128, "model_type": family,
        "num_attention_heads": f["heads"], "num_experts_per_tok": f["top_k"],
        "num_hidden_layers": f["layers"], "num_key_value_heads": f["kv"],
        "output_router_logits": False, "pad_token_id": 0, "rms_norm_eps": f["eps"],
        "rope_parameters": {"rope_theta": f["theta"], "rope_type": "default"},
        "router_aux_loss_coef": 0.001, "tie_word_embeddings": False,
        "transformers_version": "5.17.0", "use_cache": True, "vocab_size": f["vocab"],
    }
    if family == "mixtral":
        return dict(common, architectures=["MixtralForCausalLM"], head_dim=None,
                    num_local_experts=f["experts"], router_jitter_noise=0.0, sliding_window=None)
    qwen = dict(common, decoder_sparse_step=f.get("step", 1), mlp_only_layers=f.get("dense", []),
                moe_intermediate_size=f["moe_inter"], num_experts=f["experts"],
                sliding_window=None, use_sliding_window=False)
    if family == "qwen3_moe":
        return dict(qwen, architectures=["Qwen3MoeForCausalLM"], attention_bias=False,
                    head_dim=f["head_dim"], norm_topk_prob=True)
    return dict(qwen, architectures=["Qwen2MoeForCausalLM"], layer_types=["full_attention"] *
                f["layers"], max_window_layers=f["layers"], norm_topk_prob=False, qkv_bias=True,
                shared_expert_intermediate_size=f["shared"])


def sparse_layers(family):
    f = FAMILIES[family]
    return [i for i in range(f["layers"]) if i not in f.get("dense", [])
            and (i + 1) % f.get("step", 1) == 0]


def make_weights(family, seed):
    """HF parameter names (one module per expert) -> float32 arrays."""
    f = FAMILIES[family]
    rng = np.random.default_rng(seed)
    H, D, E = f["hidden"], f["head_dim"], f["experts"]
    I = f["inter"] if family == "mixtral" else f["moe_inter"]
    mat = lambda *s, a=0.15: (a * rng.standard_normal(s)).astype(np.float32)
    norm = lambda n: (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)
    w = {"model.embed_tokens.weight": mat(f["vocab"], H, a=0.5),
         "model.norm.weight": norm(H), "lm_head.weight": mat(f["vocab"], H, a=0.2)}
    for l in range(f["layers"]):
        p = f"model.layers.{l}."
        w[p + "input_layernorm.weight"] = norm(H)
        w[p + "post_attention_layernorm.weight"] = norm(H)
        w[p + "self_attn.q_proj.weight"] = mat(f["heads"] * D, H)
        w[p + "self_attn.k_proj.weight"] = mat(f["kv"] * D, H)
        w[p + "self_attn.v_proj.weight"] = mat(f["kv"] * D, H)
        w[p + "self_attn.o_proj.weight"] = mat(H, f["heads"] * D)
        if family == "qwen2_moe":
            for n, rows in (("q", f["heads"] * D), ("k", f["kv"] * D), ("v", f["kv"] * D)):
                w[p + f"self_attn.{n}_proj.bias"] = mat(rows, a=0.05)
        if family == "qwen3_moe":
            w[p + "self_attn.q_norm.weight"] = norm(D)
            w[p + "self_attn.k_norm.weight"] = norm(D)
        if l not in sparse_layers(family):
            w[p + "mlp.gate_proj.weight"] = mat(f["inter"], H)
            w[p + "mlp.up_proj.weight"] = mat(f["inter"], H)
            w[p + "mlp.down_proj.weight"] = mat(H, f["inter"])
            continue
        b = p + ("block_sparse_moe." if family == "mixtral" else "mlp.")
        w[b + "gate.weight"] = mat(E, H, a=0.6)
        names = ("w1", "w3", "w2") if family == "mixtral" else ("gate_proj", "up_proj", "down_proj")
        for e in range(E):
            w[b + f"experts.{e}.{names[0]}.weight"] = mat(I, H)
            w[b + f"experts.{e}.{names[1]}.weight"] = mat(I, H)
            w[b + f"experts.{e}.{names[2]}.weight"] = mat(H, I)
        if family == "qwen2_moe":
            S = f["shared"]
            w[b + "shared_expert.gate_proj.weight"] = mat(S, H)
            w[b + "shared_expert.up_proj.weight"] = mat(S, H)
            w[b + "shared_expert.down_proj.weight"] = mat(H, S)
            w[b + "shared_expert_gate.weight"] = mat(1, H, a=0.3)
    return w


def stacked(family, w):
    """transformers 5's in-memory names: experts stacked, gate and up fused, the block `mlp`."""
    f = FAMILIES[family]
    out = {}
    names = ("w1", "w3", "w2") if family == "mixtral" else ("gate_proj", "up_proj", "down_proj")
    for l in range(f["layers"]):
        p = f"model.layers.{l}."
        b = p + ("block_sparse_moe." if family == "mixtral" else "mlp.")
        if l not in sparse_layers(family):
            continue
        E = f["experts"]
        ex = lambda e, n: w.pop(b + f"experts.{e}.{n}.weight")
        gate_up = [np.concatenate([ex(e, names[0]), ex(e, names[1])]) for e in range(E)]
        out[p + "mlp.experts.gate_up_proj"] = np.stack(gate_up)
        out[p + "mlp.experts.down_proj"] = np.stack([ex(e, names[2]) for e in range(E)])
        out[p + "mlp.gate.weight"] = w.pop(b + "gate.weight")
    w.update(out)
    return w


def to_bf16(a):
    """float32 -> bf16 bits (round to nearest even) and the rounded float32."""
    u = a.astype(np.float32).view(np.uint32)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return r, (r.astype(np.uint32) << 16).view(np.float32)


def write_safetensors(path, tensors, dtype):
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        a = tensors[name]
        if dtype == "bf16":
            raw, st = to_bf16(a)[0].tobytes(), "BF16"
        else:
            raw, st = np.ascontiguousarray(a, dtype="<f4").tobytes(), "F32"
        header[name] = {"dtype": st, "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


# ------------------------------------------------------------------------------------------------
# The reference forward pass (float64), after transformers' modeling code.
# ------------------------------------------------------------------------------------------------

def rms_norm(x, g, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * g


def silu(v):
    return v / (1.0 + np.exp(-v))


def rotary(x, theta):
    """x [T, heads, D]: rotate_half with inv_freq = theta^(-2i/D), positions 0..T-1."""
    t, _, d = x.shape
    inv = 1.0 / theta ** (np.arange(0, d, 2, dtype=np.float64) / d)
    ang = np.arange(t, dtype=np.float64)[:, None] * inv[None, :]
    cos = np.concatenate([np.cos(ang)] * 2, axis=-1)[:, None, :]
    sin = np.concatenate([np.sin(ang)] * 2, axis=-1)[:, None, :]
    half = np.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)
    return x * cos + half * sin


def attention(family, w, p, x):
    f = FAMILIES[family]
    nh, nkv, d = f["heads"], f["kv"], f["head_dim"]
    t = x.shape[0]
    lin = lambda n: x @ w[p + f"self_attn.{n}_proj.weight"].T + w.get(p + f"self_attn.{n}_proj.bias", 0)
    q = lin("q").reshape(t, nh, d)
    k = lin("k").reshape(t, nkv, d)
    v = lin("v").reshape(t, nkv, d)
    if family == "qwen3_moe":
        q = rms_norm(q, w[p + "self_attn.q_norm.weight"], f["eps"])
        k = rms_norm(k, w[p + "self_attn.k_norm.weight"], f["eps"])
    q, k = rotary(q, f["theta"]), rotary(k, f["theta"])
    rep = nh // nkv
    k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    s = np.einsum("thd,shd->hts", q, k) / np.sqrt(d)
    s = np.where(np.tril(np.ones((t, t), dtype=bool))[None], s, -np.inf)
    s = np.exp(s - s.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    o = np.einsum("hts,shd->thd", s, v).reshape(t, nh * d)
    return o @ w[p + "self_attn.o_proj.weight"].T


def mlp(x, gate, up, down):
    return (silu(x @ gate.T) * (x @ up.T)) @ down.T


def moe(family, w, b, x, hits, margins):
    """Router softmax over all experts, top-k, renormalised (Mixtral, norm_topk_prob) or not;
    the experts' SiLU gated MLPs weighted; Qwen2-MoE's shared expert gated by a sigmoid."""
    f = FAMILIES[family]
    E, K = f["experts"], f["top_k"]
    renorm = family != "qwen2_moe"
    names = ("w1", "w3", "w2") if family == "mixtral" else ("gate_proj", "up_proj", "down_proj")
    logits = x @ w[b + "gate.weight"].T
    out = np.zeros_like(x)
    for t in range(x.shape[0]):
        p = np.exp(logits[t] - logits[t].max())
        p /= p.sum()
        order = sorted(range(E), key=lambda e: (-p[e], e))
        chosen = order[:K]
        if K < E:
            margins.append(p[order[K - 1]] - p[order[K]])
        weights = p[chosen] / (p[chosen].sum() if renorm else 1.0)
        for e, wt in zip(chosen, weights):
            hits.add(e)
            ex = lambda n: w[b + f"experts.{e}.{n}.weight"]
            out[t] += wt * mlp(x[t], ex(names[0]), ex(names[1]), ex(names[2]))
    if family == "qwen2_moe":
        se = b + "shared_expert."
        g = 1.0 / (1.0 + np.exp(-(x @ w[b + "shared_expert_gate.weight"].T)))
        out += g * mlp(x, w[se + "gate_proj.weight"], w[se + "up_proj.weight"],
                       w[se + "down_proj.weight"])
    return out


def forward(family, w, ids):
    f = FAMILIES[family]
    w = {k: v.astype(np.float64) for k, v in w.items()}
    h = w["model.embed_tokens.weight"][ids]
    routing = {}
    for l in range(f["layers"]):
        p = f"model.layers.{l}."
        h = h + attention(family, w, p, rms_norm(h, w[p + "input_layernorm.weight"], f["eps"]))
        x = rms_norm(h, w[p + "post_attention_layernorm.weight"], f["eps"])
        if l in sparse_layers(family):
            hits, margins = set(), []
            b = p + ("block_sparse_moe." if family == "mixtral" else "mlp.")
            h = h + moe(family, w, b, x, hits, margins)
            routing[l] = (hits, min(margins) if margins else 1.0)
        else:
            h = h + mlp(x, w[p + "mlp.gate_proj.weight"], w[p + "mlp.up_proj.weight"],
                        w[p + "mlp.down_proj.weight"])
    h = rms_norm(h, w["model.norm.weight"], f["eps"])
    return h @ w["lm_head.weight"].T, routing


def ids_for(family):
    return (np.arange(T, dtype=np.int64) * 37 + 5) % FAMILIES[family]["vocab"]


def build(family, dtype):
    """The first seed whose routing hits every expert of every sparse layer with the margin."""
    ids = ids_for(family)
    for seed in range(200):
        w = make_weights(family, seed)
        if dtype == "bf16":
            w = {k: to_bf16(v)[1].reshape(v.shape) for k, v in w.items()}
        logits, routing = forward(family, w, ids)
        E = FAMILIES[family]["experts"]
        if all(len(hits) == E and margin > MARGIN for hits, margin in routing.values()):
            return w, ids, logits, routing
    sys.exit(f"{family}: no seed below 200 routes to every expert with margin {MARGIN}")


def write(family, d, stacked_form=False, dtype="f32", config_patch=None, tensor_patch=None):
    os.makedirs(d, exist_ok=True)
    w, ids, logits, routing = build(family, dtype)
    E = FAMILIES[family]["experts"]
    for l, (hits, margin) in routing.items():
        assert hits == set(range(E)), (l, hits)
        assert margin > MARGIN, (l, margin)
    cfg = config_json(family)
    cfg["dtype"] = "bfloat16" if dtype == "bf16" else "float32"
    if config_patch:
        cfg.update(config_patch)
    with open(os.path.join(d, "config.json"), "w") as fh:
        json.dump(cfg, fh, indent=2, sort_keys=True)
    with open(os.path.join(d, "generation_config.json"), "w") as fh:
        json.dump({"bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0,
                   "transformers_version": "5.17.0"}, fh, indent=2)
    w = dict(w)
    if stacked_form:
        w = stacked(family, w)
    if tensor_patch:
        tensor_patch(w)
    write_safetensors(os.path.join(d, "model.safetensors"), w, dtype)
    np.save(os.path.join(d, "input_ids.npy"), ids[None, :])
    np.save(os.path.join(d, "logits.npy"), logits[None].astype(np.float32))
    print(f"{family}: every expert of sparse layers {sorted(routing)} routed to; least top-k "
          f"margin {min(m for _, m in routing.values()):.3g}")


def broken(case, d):
    if case == "missing_expert":
        write("mixtral", d, tensor_patch=lambda w: w.pop(
            "model.layers.0.block_sparse_moe.experts.3.w2.weight"))
    elif case == "expert_count":
        write("mixtral", d, config_patch={"num_local_experts": 3})
    elif case == "top_k":
        write("mixtral", d, config_patch={"num_experts_per_tok": 5})
    elif case == "sliding_qwen3_moe":
        write("qwen3_moe", d, config_patch={"use_sliding_window": True, "sliding_window": 8})
    else:
        sys.exit(f"unknown case {case}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["write", "broken"])
    ap.add_argument("name")
    ap.add_argument("dir")
    ap.add_argument("--stacked", action="store_true")
    ap.add_argument("--dtype", default="f32", choices=["f32", "bf16"])
    a = ap.parse_args()
    if a.what == "write":
        if a.name not in FAMILIES:
            sys.exit(f"unknown family {a.name}")
        write(a.name, a.dir, a.stacked, a.dtype)
    else:
        broken(a.name, a.dir)


if __name__ == "__main__":
    main()
