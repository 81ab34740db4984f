#!/usr/bin/env python3
"""Exports test cases for OnnxConformanceTest.cpp into a directory.

Two sources, both run at export time (not at test time):
  * the ONNX backend node tests (onnx.backend.test.case.node): every
    single-node case whose tensors have a dtype the runtime stores;
  * com.microsoft contrib ops (and a few opset-23 ops) evaluated by
    onnxruntime on random inputs.
onnx, onnxruntime and ml_dtypes are required (scripts/setup.sh pins onnx
and onnxruntime; ml_dtypes comes with onnx): a missing one fails the export,
and so ctest onnx-conformance, rather than dropping cases.

Each case is a folder with case.txt (op, attributes, inputs, outputs) and
.npy files; bf16/f8/i4 tensors are stored as their storage integers with the
real dtype named in case.txt.

usage: export_onnx_cases.py OUT_DIR
"""
import os
import shutil
import sys
import warnings

try:
    import ml_dtypes
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import AttributeProto, TensorProto, helper, numpy_helper
except ImportError as e:
    sys.exit(f"export_onnx_cases.py: the Python package '{e.name}' is missing "
             "(scripts/setup.sh installs numpy, onnx with ml_dtypes, and onnxruntime)")

warnings.filterwarnings("ignore")

SPECIAL = {
    np.dtype(ml_dtypes.bfloat16): ("bf16", np.uint16),
    np.dtype(ml_dtypes.float8_e4m3fn): ("f8E4M3FN", np.uint8),
    np.dtype(ml_dtypes.float8_e5m2): ("f8E5M2", np.uint8),
    np.dtype(ml_dtypes.int4): ("i4", np.int8),
    np.dtype(ml_dtypes.uint4): ("ui4", np.uint8),
}
PLAIN = {np.dtype(k): v for k, v in {
    np.float32: "f32", np.float16: "f16", np.float64: "f64", np.int8: "i8",
    np.uint8: "ui8", np.int16: "i16", np.uint16: "ui16", np.int32: "i32",
    np.uint32: "ui32", np.int64: "i64", np.uint64: "ui64", np.bool_: "i1"}.items()}


class Skip(Exception):
    pass


def save(path, a):
    if isinstance(a, onnx.TensorProto):
        a = numpy_helper.to_array(a)
    a = np.asarray(a)
    if a.dtype in SPECIAL:
        name, storage = SPECIAL[a.dtype]
        b = a.astype(storage) if name in ("i4", "ui4") else a.view(storage)
        np.save(path, np.require(b, requirements="C"))
        return name
    if a.dtype in PLAIN:
        np.save(path, np.require(a, requirements="C"))
        return PLAIN[a.dtype]
    raise Skip(str(a.dtype))


def attr_lines(d, attrs):
    lines = []
    for a in attrs:
        if a.type == AttributeProto.INT:
            lines.append(f"attr {a.name} int {a.i}")
        elif a.type == AttributeProto.FLOAT:
            lines.append(f"attr {a.name} float {a.f!r}")
        elif a.type == AttributeProto.INTS:
            lines.append(f"attr {a.name} ints {len(a.ints)} " + " ".join(map(str, a.ints)))
        elif a.type == AttributeProto.FLOATS:
            lines.append(f"attr {a.name} floats {len(a.floats)} " +
                         " ".join(repr(float(x)) for x in a.floats))
        elif a.type == AttributeProto.STRING:
            lines.append(f"attr {a.name} string {a.s.hex() or '-'}")
        elif a.type == AttributeProto.TENSOR:
            dt = save(os.path.join(d, f"attr_{a.name}.npy"), a.t)
            lines.append(f"attr {a.name} tensor attr_{a.name}.npy {dt}")
        else:
            raise Skip("attribute type")
    return lines


def write_case(out, name, node, inputs, outputs, rtol, atol):
    """inputs/outputs: lists aligned with node.input/node.output (None: absent)."""
    d = os.path.join(out, name)
    os.makedirs(d)
    try:
        lines = [f"op {node.op_type} {node.domain or '-'}", f"nout {len(node.output)}"]
        lines += attr_lines(d, node.attribute)
        for kind, arrays in (("in", inputs), ("out", outputs)):
            for i, a in enumerate(arrays):
                if a is None:
                    lines.append(f"{kind} {i} - -")
                else:
                    lines.append(f"{kind} {i} {kind}{i}.npy {save(os.path.join(d, f'{kind}{i}.npy'), a)}")
        lines.append(f"tol {rtol} {atol}")
        with open(os.path.join(d, "case.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        return True
    except Skip:
        shutil.rmtree(d)
        return False


def export_node_tests(out):
    import onnx.backend.test.case.node as node_cases
    count = 0
    for c in node_cases.collect_testcases(None):
        g = c.model.graph
        if len(g.node) != 1:
            continue
        node = g.node[0]
        ins, outs = c.data_sets[0]
        names_in = [i.name for i in g.input]
        names_out = [o.name for o in g.output]
        try:
            inputs = [None if n == "" else ins[names_in.index(n)] for n in node.input]
            outputs = [outs[names_out.index(n)] if n in names_out else None for n in node.output]
        except (ValueError, IndexError):
            continue
        try:
            count += write_case(out, c.name, node, inputs, outputs, c.rtol, c.atol)
        except Exception:  # sequences, strings, optional types
            shutil.rmtree(os.path.join(out, c.name), ignore_errors=True)
    return count


def export_ort_cases(out):
    rng = np.random.default_rng(0)
    count = 0

    def f(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def case(name, op, domain, inputs, nout, attrs=None, opset=23):
        nonlocal count
        attrs = attrs or {}
        in_names = [f"in{i}" if x is not None else "" for i, x in enumerate(inputs)]
        node = helper.make_node(op, in_names, [f"out{i}" for i in range(nout)],
                                domain=domain or None, **attrs)
        gin = [helper.make_tensor_value_info(f"in{i}", helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
               for i, x in enumerate(inputs) if x is not None]
        gout = [onnx.ValueInfoProto(name=f"out{i}") for i in range(nout)]
        model = helper.make_model(helper.make_graph([node], name, gin, gout), opset_imports=[
            helper.make_opsetid("", opset), helper.make_opsetid("com.microsoft", 1)])
        model.ir_version = 10
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        res = sess.run(None, {f"in{i}": x for i, x in enumerate(inputs) if x is not None})
        count += write_case(out, name, node, inputs, res, 1e-4, 1e-5)

    ms = "com.microsoft"
    case("ort_fastgelu", "FastGelu", ms, [f(2, 3, 8)], 1)
    case("ort_fastgelu_bias", "FastGelu", ms, [f(2, 3, 8), f(8)], 1)
    case("ort_biasgelu", "BiasGelu", ms, [f(2, 3, 8), f(8)], 1)
    case("ort_quickgelu", "QuickGelu", ms, [f(2, 3, 8)], 1, {"alpha": 1.702})
    case("ort_gelu", "Gelu", ms, [f(2, 3, 8)], 1)
    case("ort_skip_layernorm", "SkipLayerNormalization", ms,
         [f(2, 3, 8), f(2, 3, 8), f(8), f(8), f(8)], 4, {"epsilon": 1e-5})
    case("ort_skip_simplified_layernorm", "SkipSimplifiedLayerNormalization", ms,
         [f(2, 3, 8), f(2, 3, 8), f(8)], 4, {"epsilon": 1e-6})
    case("ort_simplified_layernorm", "SimplifiedLayerNormalization", "", [f(2, 3, 8), f(8)], 1,
         {"epsilon": 1e-6, "axis": -1}, opset=17)
    maxpos, hd = 16, 8
    cos = np.cos(rng.uniform(0, 3, (maxpos, hd // 2))).astype(np.float32)
    sin = np.sin(rng.uniform(0, 3, (maxpos, hd // 2))).astype(np.float32)
    pos = np.array([[0, 1, 2], [5, 6, 7]], np.int64)
    for inter in (0, 1):
        case(f"ort_ms_rotary_3d_i{inter}", "RotaryEmbedding", ms, [f(2, 3, 2 * hd), pos, cos, sin], 1,
             {"interleaved": inter, "num_heads": 2})
        case(f"ort_ms_rotary_4d_i{inter}", "RotaryEmbedding", ms, [f(2, 2, 3, hd), pos, cos, sin], 1,
             {"interleaved": inter})
        case(f"ort_ms_rotary_offset_i{inter}", "RotaryEmbedding", ms,
             [f(1, 3, 2 * hd), np.array([4], np.int64), cos, sin], 1, {"interleaved": inter, "num_heads": 2})
        case(f"ort_ms_rotary_partial_i{inter}", "RotaryEmbedding", ms, [f(2, 3, 32), pos, cos, sin], 1,
             {"interleaved": inter, "num_heads": 2, "rotary_embedding_dim": 8})
    case("ort_rotary23_batch_caches", "RotaryEmbedding", "",
         [f(2, 2, 3, hd), cos[None, :3].repeat(2, 0), sin[None, :3].repeat(2, 0)], 1)
    case("ort_rotary23_position_ids", "RotaryEmbedding", "", [f(2, 3, 2 * hd), cos, sin, pos], 1,
         {"num_heads": 2, "interleaved": 1})
    case("ort_attention23_gqa_causal", "Attention", "", [f(2, 4, 5, 8), f(2, 2, 5, 8), f(2, 2, 5, 8)], 1,
         {"is_causal": 1})
    case("ort_attention23_3d_past", "Attention", "",
         [f(2, 2, 16), f(2, 2, 8), f(2, 2, 8), None, f(2, 1, 3, 8), f(2, 1, 3, 8)], 3,
         {"is_causal": 1, "q_num_heads": 2, "kv_num_heads": 1})
    case("ort_rmsnorm23", "RMSNormalization", "", [f(2, 3, 8), f(8)], 1, {"epsilon": 1e-6})
    for bits in (4, 8):
        k, n, bs = 48, 5, 16
        kb = (k + bs - 1) // bs
        b = rng.integers(0, 256, (n, kb, bs * bits // 8), dtype=np.uint8)
        sc = rng.uniform(0.01, 0.1, (n * kb,)).astype(np.float32)
        zp = rng.integers(0, 256, (n * ((kb * bits + 7) // 8),), dtype=np.uint8)
        at = {"K": k, "N": n, "bits": bits, "block_size": bs}
        case(f"ort_matmulnbits{bits}", "MatMulNBits", ms, [f(2, 3, k), b, sc], 1, at)
        case(f"ort_matmulnbits{bits}_zp_bias", "MatMulNBits", ms,
             [f(2, 3, k), b, sc, zp, None, f(n)], 1, at)
    b = rng.integers(0, 256, (3, 3, 8), dtype=np.uint8)
    case("ort_matmulnbits4_ragged_k", "MatMulNBits", ms,
         [f(4, 40), b, rng.uniform(0.01, 0.1, (9,)).astype(np.float32)], 1,
         {"K": 40, "N": 3, "bits": 4, "block_size": 16})
    return count


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    n = export_node_tests(out)
    m = export_ort_cases(out)
    print(f"exported {n} ONNX node test cases (onnx {onnx.__version__}, ml_dtypes "
          f"{ml_dtypes.__version__}) and {m} onnxruntime {ort.__version__} cases to {out}")


if __name__ == "__main__":
    main()
