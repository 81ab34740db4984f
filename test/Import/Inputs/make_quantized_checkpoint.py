"""Writes a pre-quantised (AutoAWQ GEMM or GPTQ) copy of a float checkpoint
and the float checkpoint of the same dequantised weights, for
test/Import/checkpoint-quantized.test.

    make_quantized_checkpoint.py SRC OUT awq|gptq|gptq_v2 GROUP [--sym]

OUT/quant holds config.json with its quantization_config and the linears as
qweight / qzeros / scales (the formats as AutoAWQ and AutoGPTQ write them,
implemented here from their descriptions with NumPy); OUT/dequant holds the
same model with every linear's weight = (q - zero) * scale in f32, the scale
rounded to f16 as stored. Everything else is copied.

AWQ (GEMM): qweight int32 [in, out/8], eight output columns per word in the
order 0 2 4 6 1 3 5 7 (nibble i holds column ORDER[i]); qzeros int32
[in/group, out/8] the same way; scales f16 [in/group, out].
GPTQ: qweight int32 [in/8, out], eight input rows per word in order;
qzeros int32 [in/group, out/8], eight output columns per word in order,
holding zero - 1 in format v1 (checkpoint_format gptq), the zero in v2;
scales f16 [in/group, out].
"""
import json
import shutil
import sys
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]
LINEARS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def quantise(w, group, sym):
    """w [out, in] f32 -> q [out, in] 0..15, zero [out, G] 0..15 (GPTQ v1: 1..15), scale f16 [out, G]."""
    out, k = w.shape
    g = w.reshape(out, k // group, group)
    if sym:
        scale = np.abs(g).max(axis=2) / 7.5
        zero = np.full(scale.shape, 8, dtype=np.int64)
    else:
        lo = np.minimum(g.min(axis=2), 0)
        hi = np.maximum(g.max(axis=2), 0)
        scale = (hi - lo) / 15.0
        zero = np.clip(np.rint(-lo / np.where(scale > 0, scale, 1)), 1, 15).astype(np.int64)
    scale = np.where(scale > 0, scale, 1.0).astype(np.float16)
    s32 = scale.astype(np.float32)[:, :, None]
    q = np.clip(np.rint(g / s32) + zero[:, :, None], 0, 15).astype(np.int64)
    deq = ((q - zero[:, :, None]) * s32).reshape(out, k).astype(np.float32)
    return q.reshape(out, k), zero, scale, deq


def pack_rows(vals, order):
    """vals [R, C] 0..15 -> int32 [R, C/8]: word j of row r holds vals[r, 8j + order[i]] at nibble i."""
    r, c = vals.shape
    v = vals.reshape(r, c // 8, 8)
    word = np.zeros((r, c // 8), dtype=np.uint32)
    for i, col in enumerate(order):
        word |= (v[:, :, col].astype(np.uint32) << np.uint32(4 * i))
    return word.view(np.int32)


def main():
    src, out, method, group = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    sym = "--sym" in sys.argv
    tensors = load_file(str(src / "model.safetensors"))
    config = json.loads((src / "config.json").read_text())
    quant, deq = {}, {}
    for name, t in tensors.items():
        parts = name.rsplit(".", 2)
        if len(parts) == 3 and parts[1] in LINEARS and parts[2] == "weight":
            base = name[: -len(".weight")]
            w = t.astype(np.float32)
            n, k = w.shape
            grp = k if group == -1 else group
            q, zero, scale, d = quantise(w, grp, sym)
            deq[name] = d
            if method == "awq":
                quant[base + ".qweight"] = pack_rows(q.T.copy(), AWQ_ORDER)          # [in, out/8]
                quant[base + ".qzeros"] = pack_rows(zero.T.copy(), AWQ_ORDER)       # [G, out/8]
            else:
                # qweight [in/8, out]: eight input rows per word, in order.
                qt = q.T.reshape(k // 8, 8, n)
                word = np.zeros((k // 8, n), dtype=np.uint32)
                for i in range(8):
                    word |= qt[:, i, :].astype(np.uint32) << np.uint32(4 * i)
                quant[base + ".qweight"] = word.view(np.int32)
                stored = zero - 1 if method == "gptq" else zero
                quant[base + ".qzeros"] = pack_rows(stored.T.copy(), list(range(8)))
                quant[base + ".g_idx"] = (np.arange(k) // grp).astype(np.int32)
            quant[base + ".scales"] = scale.T.copy()                                 # [G, out]
        else:
            quant[name] = t
            deq[name] = t
    (out / "quant").mkdir(parents=True, exist_ok=True)
    (out / "dequant").mkdir(parents=True, exist_ok=True)
    save_file(quant, str(out / "quant" / "model.safetensors"))
    save_file(deq, str(out / "dequant" / "model.safetensors"))
    qc = {"quant_method": "awq", "bits": 4, "group_size": group, "zero_point": not sym,
          "version": "gemm"} if method == "awq" else \
         {"quant_method": "gptq", "bits": 4, "group_size": group, "desc_act": False, "sym": sym,
          "checkpoint_format": "gptq" if method == "gptq" else "gptq_v2"}
    (out / "dequant" / "config.json").write_text(json.dumps(config, indent=2))
    config["quantization_config"] = qc
    (out / "quant" / "config.json").write_text(json.dumps(config, indent=2))
    for extra in ("generation_config.json",):
        if (src / extra).exists():
            shutil.copy(src / extra, out / "quant" / extra)
            shutil.copy(src / extra, out / "dequant" / extra)


if __name__ == "__main__":
    main()
