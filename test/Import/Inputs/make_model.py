#!/usr/bin/env python3
"""Writes small ONNX models for the importer's lit tests.

usage: make_model.py <case> <output.onnx>

Each case is built with onnx.helper, so the test reads what an exporter would
write without committing binaries. Some cases are broken on purpose.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def model(nodes, inputs, outputs, inits=(), value_info=(), opset=18, extra_opsets=(),
          functions=()):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits), value_info=list(value_info))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset), *extra_opsets],
                     functions=list(functions), producer_name="accel-test")
    m.ir_version = 8
    return m


def vi(name, dt, shape):
    return h.make_tensor_value_info(name, dt, shape)


def mlp():
    w = nh.from_array(np.arange(64 * 32, dtype=np.float32).reshape(64, 32) / 100, "w")
    eps = nh.from_array(np.array(1e-6, dtype=np.float32), "eps")
    nodes = [h.make_node("MatMul", ["x", "w"], ["y"], name="/mm"),
             h.make_node("Add", ["y", "eps"], ["z"], name="/add"),
             h.make_node("Softmax", ["z"], ["out"], name="/softmax", axis=-1),
             h.make_node("Transpose", ["out"], ["t"], name="/tr", perm=[1, 0, 2])]
    return model(nodes, [vi("x", T.FLOAT, ["batch", "seq", 64])],
                 [vi("t", T.FLOAT, ["seq", "batch", 32])], [w, eps],
                 [vi("y", T.FLOAT, ["batch", "seq", 32]), vi("z", T.FLOAT, ["batch", "seq", 32]),
                  vi("out", T.FLOAT, ["batch", "seq", 32])])


def no_value_info():
    # Intermediate types are not given: the importer falls back to unranked
    # tensors with the element type the operator defines.
    nodes = [h.make_node("Shape", ["x"], ["s"], name="/shape"),
             h.make_node("Cast", ["s"], ["f"], name="/cast", to=T.FLOAT16),
             h.make_node("Equal", ["f", "f"], ["e"], name="/eq")]
    return model(nodes, [vi("x", T.FLOAT, [2, 3])], [vi("e", T.BOOL, None)])


def qdq_no_value_info():
    # A QDQ weight whose DequantizeLinear output has no value_info (as
    # quantisation tools often write it): its type is the int8 input's shape
    # in the scale's element type, so the MatMul that reads it can live in a
    # plan.
    wq = nh.from_array(np.array([[1, -2, 3], [4, 5, -6]], dtype=np.int8), "wq")
    sc = nh.from_array(np.array([0.5, 0.25, 2.0], dtype=np.float32), "sc")
    nodes = [h.make_node("DequantizeLinear", ["wq", "sc"], ["w"], name="/dq", axis=1),
             h.make_node("MatMul", ["x", "w"], ["y"], name="/mm")]
    return model(nodes, [vi("x", T.FLOAT, ["tokens", 2])], [vi("y", T.FLOAT, ["tokens", 3])],
                 [wq, sc])


def int4_short():
    # 3 INT4 values need 2 packed bytes in int32_data; the model gives 1.
    i4 = onnx.TensorProto(name="i4", data_type=T.INT4, dims=[3])
    i4.int32_data.extend([0x21])
    return model([h.make_node("Identity", ["i4"], ["c"], name="/c")], [],
                 [vi("c", T.INT4, [3])], [i4])


def element_types():
    # onnx.helper stores BFLOAT16 values as bit patterns in int32_data.
    bf = onnx.helper.make_tensor("bf", T.BFLOAT16, [4], [1.0, 2.0, 3.0, 4.0], raw=False)
    f8 = onnx.TensorProto(name="f8", data_type=T.FLOAT8E4M3FN, dims=[3],
                          raw_data=bytes([0x38, 0x40, 0x44]))
    i4 = onnx.TensorProto(name="i4", data_type=T.INT4, dims=[3], raw_data=bytes([0x21, 0x0F]))
    # The same INT4 values packed into int32_data (one byte per entry), and
    # UINT4 likewise.
    i4t = onnx.TensorProto(name="i4t", data_type=T.INT4, dims=[3])
    i4t.int32_data.extend([0x21, 0x0F])
    u4t = onnx.TensorProto(name="u4t", data_type=T.UINT4, dims=[4])
    u4t.int32_data.extend([0xF3, 0x70])
    nodes = [h.make_node("Identity", ["bf"], ["a"], name="/a"),
             h.make_node("Identity", ["f8"], ["b"], name="/b"),
             h.make_node("Identity", ["i4"], ["c"], name="/c"),
             h.make_node("Identity", ["i4t"], ["d"], name="/d"),
             h.make_node("Identity", ["u4t"], ["e"], name="/e")]
    return model(nodes, [], [vi("a", T.BFLOAT16, [4]), vi("b", T.FLOAT8E4M3FN, [3]),
                             vi("c", T.INT4, [3]), vi("d", T.INT4, [3]), vi("e", T.UINT4, [4])],
                 [bf, f8, i4, i4t, u4t])


def external_data(out, location=None, truncate=False):
    w = nh.from_array(np.arange(256, dtype=np.float32).reshape(16, 16), "w")
    m = model([h.make_node("MatMul", ["x", "w"], ["y"], name="/mm")],
              [vi("x", T.FLOAT, ["tokens", 16])], [vi("y", T.FLOAT, ["tokens", 16])], [w])
    onnx.save_model(m, out, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=0)
    data = os.path.join(os.path.dirname(out), "weights.bin")
    if truncate:
        with open(data, "r+b") as f:
            f.truncate(100)
    if location is not None:
        m = onnx.load(out, load_external_data=False)
        for kv in m.graph.initializer[0].external_data:
            if kv.key == "location":
                kv.value = location
        onnx.save(m, out)
    return None


def unsupported_op():
    return model([h.make_node("Det", ["x"], ["y"], name="/det")],
                 [vi("x", T.FLOAT, [3, 3])], [vi("y", T.FLOAT, [])])


def unsupported_domain():
    return model([h.make_node("Frobnicate", ["x"], ["y"], name="/frob", domain="org.example")],
                 [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])],
                 extra_opsets=[h.make_opsetid("org.example", 1)])


def ms_domain():
    g = nh.from_array(np.ones(8, dtype=np.float32), "gamma")
    return model([h.make_node("SimplifiedLayerNormalization", ["x", "gamma"], ["y"],
                              name="/norm", domain="com.microsoft", epsilon=1e-3, axis=-1)],
                 [vi("x", T.FLOAT, ["tokens", 8])], [vi("y", T.FLOAT, ["tokens", 8])], [g],
                 extra_opsets=[h.make_opsetid("com.microsoft", 1)])


def local_function():
    # y = x * sigmoid(x), written as a model-local function the exporter kept.
    fn = h.make_function("pkg.custom", "Silu", ["X"], ["Y"],
                         [h.make_node("Sigmoid", ["X"], ["S"]), h.make_node("Mul", ["X", "S"], ["Y"])],
                         opset_imports=[h.make_opsetid("", 18)])
    return model([h.make_node("Silu", ["x"], ["y"], name="/act", domain="pkg.custom")],
                 [vi("x", T.FLOAT, ["tokens", 8])], [vi("y", T.FLOAT, ["tokens", 8])],
                 extra_opsets=[h.make_opsetid("pkg.custom", 1)], functions=[fn])


def not_sorted():
    return model([h.make_node("Neg", ["a"], ["y"], name="/second"),
                  h.make_node("Neg", ["x"], ["a"], name="/first")],
                 [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])])


def old_opset():
    return model([h.make_node("Neg", ["x"], ["y"], name="/neg")],
                 [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])], opset=11)


def bad_shapes():
    # value_info claims a MatMul result the operands cannot give.
    w = nh.from_array(np.ones((64, 16), dtype=np.float32), "w")
    return model([h.make_node("MatMul", ["x", "w"], ["y"], name="/mm")],
                 [vi("x", T.FLOAT, [4, 32])], [vi("y", T.FLOAT, [4, 16])], [w])


def wrong_attr_kind():
    # axis given as a list of floats where the operator takes one integer
    # (found by the importer fuzzer: the attribute used to be dropped).
    g = nh.from_array(np.ones(8, dtype=np.float32), "gamma")
    return model([h.make_node("SimplifiedLayerNormalization", ["x", "gamma"], ["y"],
                              name="/norm", domain="com.microsoft", epsilon=1e-3,
                              axis=[-1.0])],
                 [vi("x", T.FLOAT, ["tokens", 8])], [vi("y", T.FLOAT, ["tokens", 8])], [g],
                 extra_opsets=[h.make_opsetid("com.microsoft", 1)])


def optional_inputs():
    # Clip with no min and a max: the empty name keeps max in third place.
    mx = nh.from_array(np.array(6.0, dtype=np.float32), "max")
    return model([h.make_node("Clip", ["x", "", "max"], ["y"], name="/clip")],
                 [vi("x", T.FLOAT, ["n"])], [vi("y", T.FLOAT, ["n"])], [mx])


def wrong_data_size():
    t = onnx.TensorProto(name="w", data_type=T.FLOAT, dims=[4], raw_data=b"\0" * 12)
    return model([h.make_node("Neg", ["w"], ["y"], name="/neg")], [], [vi("y", T.FLOAT, [4])],
                 [t])


def huge_dims():
    # 2^62 x 4 elements overflow any element count; the tensor has no data.
    t = onnx.TensorProto(name="w", data_type=T.FLOAT, dims=[2 ** 62, 4])
    return model([h.make_node("Neg", ["w"], ["y"], name="/neg")], [], [vi("y", T.FLOAT, None)],
                 [t])


def huge_no_data():
    # Issue 20's 79-byte model: an initializer of 2^40 floats with no data
    # at all. The importer must compare the data to the dims before it
    # allocates anything for them.
    X = vi("x", T.INT64, [1])
    Y = vi("y", T.FLOAT, [1])
    g = h.make_graph([h.make_node("Identity", ["w"], ["y"])], "g", [X], [Y],
                     initializer=[onnx.TensorProto(name="w", data_type=1, dims=[1 << 40])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 18)], ir_version=8)


def exponential_functions():
    # f_i calls f_{i-1} twice: 24 levels inline to 2^24 nodes.
    fns = [h.make_function("pkg", "f0", ["X"], ["Y"], [h.make_node("Neg", ["X"], ["Y"])],
                           opset_imports=[h.make_opsetid("", 18)])]
    for i in range(1, 24):
        fns.append(h.make_function(
            "pkg", f"f{i}", ["X"], ["Y"],
            [h.make_node(f"f{i-1}", ["X"], ["A"], domain="pkg"),
             h.make_node(f"f{i-1}", ["A"], ["Y"], domain="pkg")],
            opset_imports=[h.make_opsetid("", 18), h.make_opsetid("pkg", 1)]))
    return model([h.make_node("f23", ["x"], ["y"], name="/call", domain="pkg")],
                 [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])],
                 extra_opsets=[h.make_opsetid("pkg", 1)], functions=fns)


CASES = {
    "mlp": mlp, "no_value_info": no_value_info, "element_types": element_types,
    "unsupported_op": unsupported_op, "unsupported_domain": unsupported_domain,
    "ms_domain": ms_domain, "local_function": local_function, "not_sorted": not_sorted,
    "old_opset": old_opset, "bad_shapes": bad_shapes, "optional_inputs": optional_inputs,
    "wrong_data_size": wrong_data_size, "huge_dims": huge_dims, "huge_no_data": huge_no_data,
    "qdq_no_value_info": qdq_no_value_info, "int4_short": int4_short, "exponential_functions": exponential_functions, "wrong_attr_kind": wrong_attr_kind,
}


def main():
    case, out = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    if case == "external":
        external_data(out)
    elif case == "external_escape":
        external_data(out, location="../weights.bin")
    elif case == "external_absolute":
        external_data(out, location="/etc/passwd")
    elif case == "external_missing":
        external_data(out, location="missing.bin")
    elif case == "external_short":
        external_data(out, truncate=True)
    elif case == "truncated":
        onnx.save(mlp(), out)
        with open(out, "r+b") as f:
            f.truncate(os.path.getsize(out) // 2)
    elif case == "not_onnx":
        with open(out, "w") as f:
            f.write("this is a text file, not a model\n" * 10)
    else:
        onnx.save(CASES[case](), out)


if __name__ == "__main__":
    main()
