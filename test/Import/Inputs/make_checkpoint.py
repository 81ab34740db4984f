#!/usr/bin/env python3
"""Writes damaged Hugging Face checkpoint folders for test/Import/checkpoint-errors.test.

usage: make_checkpoint.py <case> <dir>

Each case starts from test/fixtures/checkpoints/llama (its config.json and tensors) and breaks
one thing: the config (unknown model_type, an unsupported field), the safetensors file (truncated,
a header length beyond the file, overlapping or out-of-range offsets), a tensor against the config
(shape, dtype), the index (a missing shard) or the tensor set (a missing tensor).
"""
import json
import os
import shutil
import struct
import sys


HERE = os.path.dirname(os.path.abspath(__file__))
LLAMA = os.path.join(HERE, "..", "..", "fixtures", "checkpoints", "llama")


def read_tensors(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    header = json.loads(b[8:8 + n])
    data = b[8 + n:]
    out = {}
    for name, d in header.items():
        if name == "__metadata__":
            continue
        s, e = d["data_offsets"]
        out[name] = (d["dtype"], d["shape"], data[s:e])
    return out


def write_safetensors(path, tensors, header_patch=None):
    header, blobs, off = {}, [], 0
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    if header_patch:
        header_patch(header)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def config(d, **changes):
    c = json.load(open(os.path.join(LLAMA, "config.json")))
    c.update(changes)
    json.dump(c, open(os.path.join(d, "config.json"), "w"), indent=1)


def main():
    case, d = sys.argv[1], sys.argv[2]
    os.makedirs(d, exist_ok=True)
    tensors = read_tensors(os.path.join(LLAMA, "model.safetensors"))
    st = os.path.join(d, "model.safetensors")
    if case == "unknown_model_type":
        config(d, model_type="mamba")
        shutil.copy(os.path.join(LLAMA, "model.safetensors"), st)
    elif case == "unsupported_rope":
        config(d, rope_parameters={"rope_type": "yarn", "factor": 4.0, "rope_theta": 10000.0})
        shutil.copy(os.path.join(LLAMA, "model.safetensors"), st)
    elif case == "unsupported_field":
        config(d, mlp_bias=True)
        shutil.copy(os.path.join(LLAMA, "model.safetensors"), st)
    elif case == "truncated":
        config(d)
        open(st, "wb").write(b"\x10\x00\x00")
    elif case == "header_beyond_file":
        config(d)
        open(st, "wb").write(struct.pack("<Q", 1 << 30) + b'{"a": 1}')
    elif case == "overlap":
        config(d)

        def patch(h):
            h["model.layers.0.self_attn.k_proj.weight"]["data_offsets"] = \
                list(h["model.layers.0.self_attn.q_proj.weight"]["data_offsets"][:1]) + \
                [h["model.layers.0.self_attn.q_proj.weight"]["data_offsets"][0] + 32 * 64 * 4]
        write_safetensors(st, tensors, patch)
    elif case == "out_of_range":
        config(d)

        def patch(h):
            h["lm_head.weight"]["data_offsets"] = [10 ** 9, 10 ** 9 + 256 * 64 * 4]
        write_safetensors(st, tensors, patch)
    elif case == "shape_mismatch":
        config(d)
        dtype, shape, raw = tensors["model.layers.0.self_attn.q_proj.weight"]
        tensors["model.layers.0.self_attn.q_proj.weight"] = (dtype, [32, 128], raw)
        write_safetensors(st, tensors)
    elif case == "dtype_mismatch":
        config(d)
        dtype, shape, raw = tensors["model.layers.0.mlp.up_proj.weight"]
        tensors["model.layers.0.mlp.up_proj.weight"] = ("I32", shape, raw)
        write_safetensors(st, tensors)
    elif case == "missing_tensor":
        config(d)
        del tensors["model.layers.1.mlp.down_proj.weight"]
        write_safetensors(st, tensors)
    elif case == "missing_shard":
        config(d)
        names = sorted(tensors)
        half = len(names) // 2
        write_safetensors(os.path.join(d, "model-00001-of-00002.safetensors"),
                          {n: tensors[n] for n in names[:half]})
        index = {"metadata": {}, "weight_map": {n: ("model-00001-of-00002.safetensors" if i < half
                                                    else "model-00002-of-00002.safetensors")
                                                for i, n in enumerate(names)}}
        json.dump(index, open(os.path.join(d, "model.safetensors.index.json"), "w"))
    elif case == "not_json":
        config(d)
        h = b"{not json}    "
        open(st, "wb").write(struct.pack("<Q", len(h)) + h)
    elif case == "size_mismatch":
        config(d)

        def patch(h):
            s, e = h["model.norm.weight"]["data_offsets"]
            h["model.norm.weight"]["data_offsets"] = [s, e - 4]
        write_safetensors(st, tensors, patch)
    elif case == "unknown_dtype":
        config(d)

        def patch(h):
            h["model.norm.weight"]["dtype"] = "F4"
        write_safetensors(st, tensors, patch)
    elif case == "index_wrong_shard":
        config(d)
        write_safetensors(os.path.join(d, "model-00001-of-00001.safetensors"), tensors)
        weight_map = {n: "model-00001-of-00001.safetensors" for n in tensors}
        weight_map["model.extra.weight"] = "model-00001-of-00001.safetensors"
        json.dump({"weight_map": weight_map}, open(os.path.join(d, "model.safetensors.index.json"), "w"))
    elif case == "no_config":
        shutil.copy(os.path.join(LLAMA, "model.safetensors"), st)
    elif case == "no_weights":
        config(d)
    elif case == "falcon_alibi":
        c = json.load(open(os.path.join(LLAMA, "..", "falcon", "config.json")))
        c["alibi"] = True
        json.dump(c, open(os.path.join(d, "config.json"), "w"))
    else:
        sys.exit(f"unknown case {case}")


if __name__ == "__main__":
    main()
