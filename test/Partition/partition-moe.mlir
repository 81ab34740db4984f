// RUN: accel-opt %s -split-input-file -accel-partition=tp-size=2 | FileCheck %s
//
// transformer.moe for 2 ranks: every expert's intermediate size I = 4 is
// split as a gated_mlp's (rank r: gate rows 2r, 2r+1 and up rows 4+2r,
// 5+2r of each expert, down the same columns), the router replicated, and
// an all_reduce after. Row j of expert e holds 8e + j (gate_up) so that
// each shard shows what it took.

// CHECK-LABEL: func.func @experts_gate_up
// CHECK: %[[R:.+]] = onnx.Constant {value = dense<1.000000e+00> : tensor<2x2xf32>}
// CHECK: %[[GU:.+]] = onnx.Constant {accel.tp_shards = {{\[}}dense<{{\[}}{{\[}}{{\[}}0.000000e+00, 0.000000e+00], {{\[}}1.000000e+00, 1.000000e+00], {{\[}}4.000000e+00, 4.000000e+00], {{\[}}5.000000e+00, 5.000000e+00]], {{\[}}{{\[}}8.000000e+00, 8.000000e+00], {{\[}}9.000000e+00, 9.000000e+00], {{\[}}1.200000e+01, 1.200000e+01], {{\[}}1.300000e+01, 1.300000e+01]]]> : tensor<2x4x2xf32>, dense<{{\[}}{{\[}}{{\[}}2.000000e+00, 2.000000e+00], {{\[}}3.000000e+00, 3.000000e+00], {{\[}}6.000000e+00, 6.000000e+00], {{\[}}7.000000e+00, 7.000000e+00]], {{\[}}{{\[}}1.000000e+01, 1.000000e+01], {{\[}}1.100000e+01, 1.100000e+01], {{\[}}1.400000e+01, 1.400000e+01], {{\[}}1.500000e+01, 1.500000e+01]]]> : tensor<2x4x2xf32>]
// CHECK: %[[D:.+]] = onnx.Constant {accel.tp_shards = {{\[}}dense<{{\[}}{{\[}}{{\[}}0.000000e+00, 1.000000e+00], {{\[}}0.000000e+00, 1.000000e+00]], {{\[}}{{\[}}8.000000e+00, 9.000000e+00], {{\[}}8.000000e+00, 9.000000e+00]]]> : tensor<2x2x2xf32>, dense<{{\[}}{{\[}}{{\[}}2.000000e+00, 3.000000e+00], {{\[}}2.000000e+00, 3.000000e+00]], {{\[}}{{\[}}1.000000e+01, 1.100000e+01], {{\[}}1.000000e+01, 1.100000e+01]]]> : tensor<2x2x2xf32>]
// CHECK: %[[M:.+]] = transformer.moe %{{.+}} router(%[[R]]) gate_up(%[[GU]]) down(%[[D]]) kind = silu routing = renormalize {num_experts = 2 : i64, top_k = 1 : i64} : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2x4x2xf32>, tensor<2x2x2xf32>) -> tensor<?x2xf32>
// CHECK: %[[A:.+]] = transformer.all_reduce %[[M]] kind = sum {group_size = 2 : i64} : tensor<?x2xf32>
// CHECK: return %[[A]]
func.func @experts_gate_up(%x: tensor<?x2xf32>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x2xf32> {
  %gu = onnx.Constant {value = dense<[[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0], [5.0, 5.0], [6.0, 6.0], [7.0, 7.0]], [[8.0, 8.0], [9.0, 9.0], [10.0, 10.0], [11.0, 11.0], [12.0, 12.0], [13.0, 13.0], [14.0, 14.0], [15.0, 15.0]]]> : tensor<2x8x2xf32>} : () -> tensor<2x8x2xf32>
  %d = onnx.Constant {value = dense<[[[0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0]], [[8.0, 9.0, 10.0, 11.0], [8.0, 9.0, 10.0, 11.0]]]> : tensor<2x2x4xf32>} : () -> tensor<2x2x4xf32>
  %r = onnx.Constant {value = dense<1.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %y = transformer.moe %x router(%r) gate_up(%gu) down(%d) kind = silu routing = renormalize {num_experts = 2 : i64, top_k = 1 : i64} : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2x8x2xf32>, tensor<2x2x4xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// Separate gate and up take their rows of each expert; the shared expert
// is cut as a gated_mlp; router, its bias and the shared gate replicated.
// CHECK-LABEL: func.func @experts_separate_shared
// CHECK-DAG: onnx.Constant {value = dense<1.000000e+00> : tensor<2x2xf32>}
// CHECK-DAG: onnx.Constant {value = dense<5.000000e-01> : tensor<2xf32>}
// CHECK-DAG: onnx.Constant {value = dense<2.500000e-01> : tensor<1x2xf32>}
// CHECK-DAG: %[[G:.+]] = onnx.Constant {accel.tp_shards = {{\[}}dense<{{\[}}{{\[}}{{\[}}0.000000e+00, 0.000000e+00], {{\[}}1.000000e+00, 1.000000e+00]], {{\[}}{{\[}}8.000000e+00, 8.000000e+00], {{\[}}9.000000e+00, 9.000000e+00]]]> : tensor<2x2x2xf32>, dense<{{\[}}{{\[}}{{\[}}2.000000e+00, 2.000000e+00], {{\[}}3.000000e+00, 3.000000e+00]], {{\[}}{{\[}}1.000000e+01, 1.000000e+01], {{\[}}1.100000e+01, 1.100000e+01]]]> : tensor<2x2x2xf32>]
// CHECK-DAG: %[[U:.+]] = onnx.Constant {accel.tp_shards = {{\[}}dense<{{\[}}{{\[}}{{\[}}4.000000e+00, 4.000000e+00], {{\[}}5.000000e+00, 5.000000e+00]], {{\[}}{{\[}}1.200000e+01, 1.200000e+01], {{\[}}1.300000e+01, 1.300000e+01]]]> : tensor<2x2x2xf32>, dense<{{\[}}{{\[}}{{\[}}6.000000e+00, 6.000000e+00], {{\[}}7.000000e+00, 7.000000e+00]], {{\[}}{{\[}}1.400000e+01, 1.400000e+01], {{\[}}1.500000e+01, 1.500000e+01]]]> : tensor<2x2x2xf32>]
// CHECK-DAG: %[[SGU:.+]] = onnx.Constant {accel.tp_shards = {{\[}}dense<{{\[}}{{\[}}0.000000e+00, 0.000000e+00], {{\[}}2.000000e+00, 2.000000e+00]]> : tensor<2x2xf32>, dense<{{\[}}{{\[}}1.000000e+00, 1.000000e+00], {{\[}}3.000000e+00, 3.000000e+00]]> : tensor<2x2xf32>]
// CHECK-DAG: %[[SD:.+]] = onnx.Constant {accel.tp_shards = {{\[}}dense<0.000000e+00> : tensor<2x1xf32>, dense<1.000000e+00> : tensor<2x1xf32>]
// CHECK: transformer.moe %{{.+}} router(%{{.+}}) router_bias(%{{.+}}) gate(%[[G]]) up(%[[U]]) down(%{{.+}}) shared_gate_up(%[[SGU]]) shared_down(%[[SD]]) shared_expert_gate(%{{.+}}) kind = silu routing = softmax {num_experts = 2 : i64, top_k = 2 : i64} : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2xf32>, tensor<2x1xf32>, tensor<1x2xf32>) -> tensor<?x2xf32>
// CHECK: transformer.all_reduce
func.func @experts_separate_shared(%x: tensor<?x2xf32>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x2xf32> {
  %r = onnx.Constant {value = dense<1.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %rb = onnx.Constant {value = dense<0.5> : tensor<2xf32>} : () -> tensor<2xf32>
  %g = onnx.Constant {value = dense<[[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]], [[8.0, 8.0], [9.0, 9.0], [10.0, 10.0], [11.0, 11.0]]]> : tensor<2x4x2xf32>} : () -> tensor<2x4x2xf32>
  %u = onnx.Constant {value = dense<[[[4.0, 4.0], [5.0, 5.0], [6.0, 6.0], [7.0, 7.0]], [[12.0, 12.0], [13.0, 13.0], [14.0, 14.0], [15.0, 15.0]]]> : tensor<2x4x2xf32>} : () -> tensor<2x4x2xf32>
  %d = onnx.Constant {value = dense<[[[0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0]], [[8.0, 9.0, 10.0, 11.0], [8.0, 9.0, 10.0, 11.0]]]> : tensor<2x2x4xf32>} : () -> tensor<2x2x4xf32>
  %sgu = onnx.Constant {value = dense<[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %sd = onnx.Constant {value = dense<[[0.0, 1.0], [0.0, 1.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %sg = onnx.Constant {value = dense<0.25> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %y = transformer.moe %x router(%r) router_bias(%rb) gate(%g) up(%u) down(%d) shared_gate_up(%sgu) shared_down(%sd) shared_expert_gate(%sg) kind = silu routing = softmax {num_experts = 2 : i64, top_k = 2 : i64} : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2x4x2xf32>, tensor<2x4x2xf32>, tensor<2x2x4xf32>, tensor<4x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}
