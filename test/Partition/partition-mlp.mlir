// RUN: accel-opt %s -split-input-file -accel-partition=tp-size=2 | FileCheck %s
//
// MLPs without attention around them (the rules are independent). Weight
// rows / columns hold their index so that each shard shows what it took.
// These functions have no KV cache: the pass needs one, so each takes an
// unused cache argument like the token-major functions raising makes.

// A fused gate_up ([gate; up], intermediate 4): rank r takes gate rows
// 2r, 2r+1 and up rows 4+2r, 5+2r, stacked [gate_r; up_r]; down takes the
// same columns of the intermediate; an all_reduce follows.
// CHECK-LABEL: func.func @gated_mlp_gate_up
// CHECK: %[[GU:.+]] = onnx.Constant {accel.tp_shards = [dense<{{\[}}[0.0{{.*}}, [1.0{{.*}}, [4.0{{.*}}, [5.0{{.*}}]]> : tensor<4x2xf32>, dense<{{\[}}[2.0{{.*}}, [3.0{{.*}}, [6.0{{.*}}, [7.0{{.*}}]]> : tensor<4x2xf32>]
// CHECK: %[[D:.+]] = onnx.Constant {accel.tp_shards = [dense<{{\[}}[0.0{{[^]]*}}, 1.0{{[^]]*}}], [1.0{{[^]]*}}e+01, 1.1{{[^]]*}}]]> : tensor<2x2xf32>, dense<{{\[}}[2.0{{[^]]*}}, 3.0{{[^]]*}}], [1.2{{[^]]*}}, 1.3{{[^]]*}}]]> : tensor<2x2xf32>]
// CHECK: %[[M:.+]] = transformer.gated_mlp %{{.+}} gate_up(%[[GU]]) down(%[[D]]) kind = silu : (tensor<?x2xf32>, tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
// CHECK: %[[R:.+]] = transformer.all_reduce %[[M]] kind = sum {group_size = 2 : i64} : tensor<?x2xf32>
// CHECK: return %[[R]]
func.func @gated_mlp_gate_up(%x: tensor<?x2xf32>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x2xf32> {
  %gu = onnx.Constant {value = dense<[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0], [5.0, 5.0], [6.0, 6.0], [7.0, 7.0]]> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %d = onnx.Constant {value = dense<[[0.0, 1.0, 2.0, 3.0], [10.0, 11.0, 12.0, 13.0]]> : tensor<2x4xf32>} : () -> tensor<2x4xf32>
  %y = transformer.gated_mlp %x gate_up(%gu) down(%d) kind = silu : (tensor<?x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// Separate gate and up: each takes its rows.
// CHECK-LABEL: func.func @gated_mlp_separate
// CHECK: %[[G:.+]] = onnx.Constant {accel.tp_shards = [dense<{{\[}}[0.0{{.*}}, [1.0{{.*}}]]> : tensor<2x2xf32>, dense<{{\[}}[2.0{{.*}}, [3.0{{.*}}]]> : tensor<2x2xf32>]
// CHECK: %[[U:.+]] = onnx.Constant {accel.tp_shards = [dense<{{\[}}[4.0{{.*}}, [5.0{{.*}}]]> : tensor<2x2xf32>, dense<{{\[}}[6.0{{.*}}, [7.0{{.*}}]]> : tensor<2x2xf32>]
// CHECK: transformer.gated_mlp %{{.+}} gate(%[[G]]) up(%[[U]]) down(%{{.+}}) kind = gelu_tanh
// CHECK: transformer.all_reduce
func.func @gated_mlp_separate(%x: tensor<?x2xf32>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x2xf32> {
  %g = onnx.Constant {value = dense<[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %u = onnx.Constant {value = dense<[[4.0, 4.0], [5.0, 5.0], [6.0, 6.0], [7.0, 7.0]]> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %d = onnx.Constant {value = dense<1.0> : tensor<2x4xf32>} : () -> tensor<2x4xf32>
  %y = transformer.gated_mlp %x gate(%g) up(%u) down(%d) kind = gelu_tanh : (tensor<?x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<2x4xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// GPT-2's MLP: c_fc column-parallel with its bias, gelu on the rank's
// columns, c_proj row-parallel with its bias on rank 0 only.
// CHECK-LABEL: func.func @linear_activation_linear
// CHECK: %[[B1:.+]] = onnx.Constant {accel.tp_shards = [dense<[0.0{{.*}}, 1.0{{.*}}]> : tensor<2xf32>, dense<[2.0{{.*}}, 3.0{{.*}}]> : tensor<2xf32>]
// CHECK: %[[FC:.+]] = transformer.linear %{{.+}}, %{{.+}} bias(%[[B1]]) : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
// CHECK: %[[A:.+]] = transformer.activation %[[FC]] kind = gelu_tanh : tensor<?x2xf32>
// CHECK: %[[B2:.+]] = onnx.Constant {accel.tp_shards = [dense<[7.0{{.*}}, 8.0{{.*}}]> : tensor<2xf32>, dense<0.0{{.*}}> : tensor<2xf32>]
// CHECK: %[[P:.+]] = transformer.linear %[[A]], %{{.+}} bias(%[[B2]]) : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
// CHECK: transformer.all_reduce %[[P]] kind = sum {group_size = 2 : i64}
func.func @linear_activation_linear(%x: tensor<?x2xf32>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x2xf32> {
  %w1 = onnx.Constant {value = dense<1.0> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %b1 = onnx.Constant {value = dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %w2 = onnx.Constant {value = dense<2.0> : tensor<2x4xf32>} : () -> tensor<2x4xf32>
  %b2 = onnx.Constant {value = dense<[7.0, 8.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %h = transformer.linear %x, %w1 bias(%b1) : (tensor<?x2xf32>, tensor<4x2xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %a = transformer.activation %h kind = gelu_tanh : tensor<?x4xf32>
  %y = transformer.linear %a, %w2 bias(%b2) : (tensor<?x4xf32>, tensor<2x4xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// GPT-2's MLP after accel-fuse-linear-activation: c_fc carries the gelu as
// its epilogue and keeps it (elementwise, on the rank's columns).
// CHECK-LABEL: func.func @linear_epilogue_linear
// CHECK: %[[B1:.+]] = onnx.Constant {accel.tp_shards = [dense<[0.0{{.*}}, 1.0{{.*}}]> : tensor<2xf32>, dense<[2.0{{.*}}, 3.0{{.*}}]> : tensor<2xf32>]
// CHECK: %[[FC:.+]] = transformer.linear %{{.+}}, %{{.+}} bias(%[[B1]]) activation = gelu_tanh : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
// CHECK: %[[P:.+]] = transformer.linear %[[FC]], %{{.+}} bias(%{{.+}}) : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
// CHECK: %[[R:.+]] = transformer.all_reduce %[[P]] kind = sum {group_size = 2 : i64}
// CHECK: return %[[R]]
func.func @linear_epilogue_linear(%x: tensor<?x2xf32>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x2xf32> {
  %w1 = onnx.Constant {value = dense<1.0> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %b1 = onnx.Constant {value = dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %w2 = onnx.Constant {value = dense<2.0> : tensor<2x4xf32>} : () -> tensor<2x4xf32>
  %b2 = onnx.Constant {value = dense<[7.0, 8.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %a = transformer.linear %x, %w1 bias(%b1) activation = gelu_tanh : (tensor<?x2xf32>, tensor<4x2xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %y = transformer.linear %a, %w2 bias(%b2) : (tensor<?x4xf32>, tensor<2x4xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// Both linears with an epilogue: the second is row-parallel, and an
// activation of partial sums is not the activation of their sum, so its
// epilogue moves past the all_reduce as a transformer.activation.
// CHECK-LABEL: func.func @row_parallel_epilogue
// CHECK: %[[FC:.+]] = transformer.linear %{{.+}}, %{{.+}} activation = relu : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
// CHECK: %[[P:.+]] = transformer.linear %[[FC]], %{{.+}} : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
// CHECK: %[[R:.+]] = transformer.all_reduce %[[P]] kind = sum {group_size = 2 : i64}
// CHECK: %[[A:.+]] = transformer.activation %[[R]] kind = tanh : tensor<?x2xf32>
// CHECK: return %[[A]]
func.func @row_parallel_epilogue(%x: tensor<?x2xf32>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x2xf32> {
  %w1 = onnx.Constant {value = dense<1.0> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %w2 = onnx.Constant {value = dense<2.0> : tensor<2x4xf32>} : () -> tensor<2x4xf32>
  %a = transformer.linear %x, %w1 activation = relu : (tensor<?x2xf32>, tensor<4x2xf32>) -> tensor<?x4xf32>
  %y = transformer.linear %a, %w2 activation = tanh : (tensor<?x4xf32>, tensor<2x4xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// linear → gated_act → linear: the first linear's rows are [gate; up] and
// are cut as [gate_r; up_r], like a fused gate_up.
// CHECK-LABEL: func.func @linear_gated_act_linear
// CHECK: onnx.Constant {accel.tp_shards = [dense<{{\[}}[0.0{{.*}}, [1.0{{.*}}, [4.0{{.*}}, [5.0{{.*}}]]> : tensor<4x2xf32>, dense<{{\[}}[2.0{{.*}}, [3.0{{.*}}, [6.0{{.*}}, [7.0{{.*}}]]> : tensor<4x2xf32>]
// CHECK: %[[H:.+]] = transformer.linear {{.*}} -> tensor<?x4xf32>
// CHECK: transformer.gated_act %[[H]] kind = silu : tensor<?x4xf32> -> tensor<?x2xf32>
// CHECK: transformer.all_reduce
func.func @linear_gated_act_linear(%x: tensor<?x2xf32>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x2xf32> {
  %w1 = onnx.Constant {value = dense<[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0], [5.0, 5.0], [6.0, 6.0], [7.0, 7.0]]> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %w2 = onnx.Constant {value = dense<2.0> : tensor<2x4xf32>} : () -> tensor<2x4xf32>
  %h = transformer.linear %x, %w1 : (tensor<?x2xf32>, tensor<8x2xf32>) -> tensor<?x8xf32>
  %a = transformer.gated_act %h kind = silu : tensor<?x8xf32> -> tensor<?x4xf32>
  %y = transformer.linear %a, %w2 : (tensor<?x4xf32>, tensor<2x4xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// Negative: an activation whose input linear has another reader is not an
// MLP the rule knows (splitting it would change that reader's input), so
// nothing is partitioned and everything stays replicated.
// CHECK-LABEL: func.func @activation_with_shared_input
// CHECK-NOT: accel.tp_shards
// CHECK-NOT: all_reduce
// CHECK: return
func.func @activation_with_shared_input(%x: tensor<?x2xf32>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> (tensor<?x2xf32>, tensor<?x4xf32>) {
  %w1 = onnx.Constant {value = dense<1.0> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %w2 = onnx.Constant {value = dense<2.0> : tensor<2x4xf32>} : () -> tensor<2x4xf32>
  %h = transformer.linear %x, %w1 : (tensor<?x2xf32>, tensor<4x2xf32>) -> tensor<?x4xf32>
  %a = transformer.activation %h kind = gelu_tanh : tensor<?x4xf32>
  %y = transformer.linear %a, %w2 : (tensor<?x4xf32>, tensor<2x4xf32>) -> tensor<?x2xf32>
  return %y, %h : tensor<?x2xf32>, tensor<?x4xf32>
}

// -----

// W8A8 (static i8, per-channel scales): the column-parallel linear takes
// its rows and their scales; the activation's rank columns are quantised
// (the static input scale, whole on every rank) into the row-parallel
// linear, which takes its columns and keeps every per-channel scale (its
// outputs are not split); an all_reduce follows.
// CHECK-LABEL: func.func @w8a8_mlp
// CHECK-DAG: %[[W1:.+]] = onnx.Constant {accel.tp_shards = [dense<{{\[}}[0, 0], [1, 1]]> : tensor<2x2xi8>, dense<{{\[}}[2, 2], [3, 3]]> : tensor<2x2xi8>]
// CHECK-DAG: %[[S1:.+]] = onnx.Constant {accel.tp_shards = [dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>, dense<[3.000000e+00, 4.000000e+00]> : tensor<2xf32>]
// CHECK-DAG: %[[S2:.+]] = onnx.Constant {value = dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>}
// CHECK-DAG: %[[XS:.+]] = onnx.Constant {value = dense<1.250000e-01> : tensor<f32>}
// CHECK: %[[H:.+]] = transformer.linear %{{.+}}, %[[W1]] weight_scale(%[[S1]]) granularity = per_channel : (tensor<?x2xf32>, tensor<2x2xi8>, tensor<2xf32>) -> tensor<?x2xf32>
// CHECK: %[[A:.+]] = transformer.activation %[[H]] kind = gelu_tanh : tensor<?x2xf32>
// CHECK: %[[Q:.+]] = transformer.quantize %[[A]], %[[XS]] : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xi8>
// CHECK: %[[W2:.+]] = onnx.Constant {accel.tp_shards = [dense<{{\[}}[0, 1], [10, 11]]> : tensor<2x2xi8>, dense<{{\[}}[2, 3], [12, 13]]> : tensor<2x2xi8>]
// CHECK: %[[Y:.+]] = transformer.linear %[[Q]], %[[W2]] weight_scale(%[[S2]]) input_scale(%[[XS]]) granularity = per_channel : (tensor<?x2xi8>, tensor<2x2xi8>, tensor<2xf32>, tensor<f32>) -> tensor<?x2xf32>
// CHECK: %[[R:.+]] = transformer.all_reduce %[[Y]] kind = sum {group_size = 2 : i64} : tensor<?x2xf32>
// CHECK: return %[[R]]
func.func @w8a8_mlp(%x: tensor<?x2xf32>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x2xf32> {
  %w1 = onnx.Constant {value = dense<[[0, 0], [1, 1], [2, 2], [3, 3]]> : tensor<4x2xi8>} : () -> tensor<4x2xi8>
  %s1 = onnx.Constant {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %w2 = onnx.Constant {value = dense<[[0, 1, 2, 3], [10, 11, 12, 13]]> : tensor<2x4xi8>} : () -> tensor<2x4xi8>
  %s2 = onnx.Constant {value = dense<[0.5, 0.25]> : tensor<2xf32>} : () -> tensor<2xf32>
  %xs = onnx.Constant {value = dense<0.125> : tensor<f32>} : () -> tensor<f32>
  %h = transformer.linear %x, %w1 weight_scale(%s1) granularity = per_channel : (tensor<?x2xf32>, tensor<4x2xi8>, tensor<4xf32>) -> tensor<?x4xf32>
  %a = transformer.activation %h kind = gelu_tanh : tensor<?x4xf32>
  %q = transformer.quantize %a, %xs : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xi8>
  %y = transformer.linear %q, %w2 weight_scale(%s2) input_scale(%xs) granularity = per_channel : (tensor<?x4xi8>, tensor<2x4xi8>, tensor<2xf32>, tensor<f32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}
