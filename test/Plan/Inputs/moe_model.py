"""A tiny two-layer mixture-of-experts model in the transformer dialect,
with its logits computed here in float64 (numpy).

    moe_model.py write <dir>     model.mlir (weights as dense attributes),
                                 ids.npy, want.npy (the reference logits)
    moe_model.py compare <want.npy> <got.npy> <rtol>

Layer 0 is Mixtral-shaped (separate stacked w1/w3 as gate/up, top-2,
renormalised); layer 1 Qwen2-MoE-shaped (fused gate_up, top-2 of the
softmax un-normalised, a router bias, a shared expert scaled by
sigmoid(x . shared_expert_gate)). Each layer is x + moe(rms_norm(x)); a final
rms_norm and an untied lm head give the logits of every token. The ids
reach every expert of both layers (checked here). No attention: the moe
layers are what the plans under test differ in.
"""
import sys

import numpy as np

V, H, E, I, S, K, T = 32, 16, 4, 8, 8, 2, 23
EPS = 1e-5


def weights():
    rng = np.random.default_rng(22)
    f = lambda *shape, a=0.5: (rng.uniform(-a, a, size=shape)).astype(np.float32)
    w = {"embed": f(V, H, a=1.0), "lm": f(V, H), "norm_f": 1.0 + f(H, a=0.1)}
    for l in range(2):
        w[f"norm{l}"] = 1.0 + f(H, a=0.1)
        w[f"router{l}"] = f(E, H, a=1.5)
        w[f"gate_up{l}"] = f(E, 2 * I, H)
        w[f"down{l}"] = f(E, H, I)
    w["router_bias1"] = f(E, a=0.2)
    w["shared_gate_up1"] = f(2 * S, H)
    w["shared_down1"] = f(H, S)
    w["shared_gate1"] = f(1, H)
    return w


def ids():
    return (np.arange(T, dtype=np.int64) * 7 + 3) % V


def rms_norm(x, g):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * g


def silu(v):
    return v / (1.0 + np.exp(-v))


def moe(x, w, l, renormalize, hits):
    logits = x @ w[f"router{l}"].T.astype(np.float64)
    if f"router_bias{l}" in w:
        logits = logits + w[f"router_bias{l}"]
    out = np.zeros_like(x)
    for t in range(x.shape[0]):
        p = np.exp(logits[t] - logits[t].max())
        p /= p.sum()
        chosen = sorted(range(E), key=lambda e: (-p[e], e))[:K]
        total = sum(p[e] for e in chosen)
        for e in chosen:
            hits[e] += 1
            gu = w[f"gate_up{l}"][e].astype(np.float64) @ x[t]
            y = w[f"down{l}"][e].astype(np.float64) @ (silu(gu[:I]) * gu[I:])
            out[t] += (p[e] / total if renormalize else p[e]) * y
    if f"shared_gate_up{l}" in w:
        gu = x @ w[f"shared_gate_up{l}"].T.astype(np.float64)
        y = (silu(gu[:, :S]) * gu[:, S:]) @ w[f"shared_down{l}"].T.astype(np.float64)
        g = 1.0 / (1.0 + np.exp(-(x @ w[f"shared_gate{l}"][0].astype(np.float64))))
        out += g[:, None] * y
    return out


def reference(w):
    x = w["embed"][ids()].astype(np.float64)
    for l in range(2):
        hits = [0] * E
        x = x + moe(rms_norm(x, w[f"norm{l}"]), w, l, l == 0, hits)
        assert all(hits), f"layer {l}: the ids reach no token to some expert: {hits}"
    return rms_norm(x, w["norm_f"]) @ w["lm"].T.astype(np.float64)


def dense(a):
    return "dense<" + np.array2string(np.asarray(a, dtype=np.float32), separator=", ", threshold=1 << 30,
                                      max_line_width=1 << 30, floatmode="unique").replace("\n", "") + ">"


def ty(shape):
    return "tensor<" + "x".join(str(d) for d in shape) + "xf32>"


def write(out):
    w = weights()
    lines = []
    c = lambda name: lines.append(
        f'  %{name} = onnx.Constant {{value = {dense(w[name])} : {ty(w[name].shape)}}} : () -> {ty(w[name].shape)}')
    for name in w:
        if name != "gate_up0":  # layer 0 reads it as separate gate and up
            c(name)
    hid = f"tensor<?x{H}xf32>"
    body = [f'  %h0 = transformer.embedding %embed[%ids] : ({ty((V, H))}, tensor<?xi64>) -> {hid}']
    for l in range(2):
        body.append(f'  %n{l} = transformer.rms_norm %h{l}, %norm{l} {{epsilon = 1.0e-05 : f64}} : {hid}, {ty((H,))}')
        if l == 0:
            # Mixtral's w1 / w3 as separate stacks: the gate and up halves.
            gate, up = w["gate_up0"][:, :I], w["gate_up0"][:, I:]
            lines.append(f'  %gate0 = onnx.Constant {{value = {dense(gate)} : {ty(gate.shape)}}} : () -> {ty(gate.shape)}')
            lines.append(f'  %up0 = onnx.Constant {{value = {dense(up)} : {ty(up.shape)}}} : () -> {ty(up.shape)}')
            body.append(
                f'  %m0 = transformer.moe %n0 router(%router0) gate(%gate0) up(%up0) down(%down0) kind = silu '
                f'routing = renormalize {{num_experts = {E} : i64, top_k = {K} : i64}} : ({hid}, {ty((E, H))}, '
                f'{ty((E, I, H))}, {ty((E, I, H))}, {ty((E, H, I))}) -> {hid}')
        else:
            body.append(
                f'  %m1 = transformer.moe %n1 router(%router1) router_bias(%router_bias1) gate_up(%gate_up1) '
                f'down(%down1) shared_gate_up(%shared_gate_up1) shared_down(%shared_down1) '
                f'shared_expert_gate(%shared_gate1) kind = silu routing = softmax '
                f'{{num_experts = {E} : i64, top_k = {K} : i64}} : ({hid}, {ty((E, H))}, {ty((E,))}, '
                f'{ty((E, 2 * I, H))}, {ty((E, H, I))}, {ty((2 * S, H))}, {ty((H, S))}, {ty((1, H))}) -> {hid}')
        body.append(f'  %h{l + 1} = transformer.residual_add %h{l}, %m{l} : {hid}')
    body.append(f'  %nf = transformer.rms_norm %h2, %norm_f {{epsilon = 1.0e-05 : f64}} : {hid}, {ty((H,))}')
    body.append(f'  %logits = transformer.logits %nf, %lm : ({hid}, {ty((V, H))}) -> tensor<?x{V}xf32>')
    body.append(f'  return %logits : tensor<?x{V}xf32>')
    text = ("// Written by test/Plan/Inputs/moe_model.py.\n"
            "func.func @main_graph(%ids: tensor<?xi64>, %batch: !transformer.batch,\n"
            "    %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 8, block_size = 16, f32>)\n"
            f"    -> tensor<?x{V}xf32> {{\n" + "\n".join(lines + body) + "\n}\n")
    with open(f"{out}/model.mlir", "w") as fh:
        fh.write(text)
    np.save(f"{out}/ids.npy", ids())
    np.save(f"{out}/want.npy", reference(w).astype(np.float32))


def compare(want_path, got_path, rtol):
    want, got = np.load(want_path).astype(np.float64), np.load(got_path).astype(np.float64)
    got = got.reshape(want.shape)
    err = np.abs(got - want).max() / np.abs(want).max()
    print(f"max relative error {err:.3g} (bound {rtol})")
    sys.exit(0 if err <= float(rtol) else 1)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        compare(*sys.argv[2:5])
