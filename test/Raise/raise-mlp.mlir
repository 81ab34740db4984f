// RUN: accel-opt %s -split-input-file -accel-raise-mlp | FileCheck %s
//
// Gated MLPs, on what accel-raise-linear and accel-raise-activations make
// of the fixtures (hidden 64 → 8, intermediate 128 → 16 here): the product
// act(gate) * up stays an onnx.Mul between unflatten/flatten views.

// llama_op18, model.model.layers.0.mlp: gate_proj, act_fn, up_proj,
// Mul, down_proj.
// CHECK-LABEL: func @llama_mlp
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi64>, %[[X:[^:]+]]: tensor<?x8xf32>, %[[WG:[^:]+]]: tensor<16x8xf32>, %[[WU:[^:]+]]: tensor<16x8xf32>, %[[WD:[^:]+]]: tensor<8x16xf32>)
// CHECK-NEXT: %[[M:.+]] = transformer.gated_mlp %[[X]] gate(%[[WG]]) up(%[[WU]]) down(%[[WD]]) kind = silu : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: return %[[M]]
func.func @llama_mlp(%input_ids: tensor<?x?xi64>, %mul_356: tensor<?x8xf32>, %gate_proj: tensor<16x8xf32>,
                     %up_proj: tensor<16x8xf32>, %down_proj: tensor<8x16xf32>) -> tensor<?x8xf32> {
  %linear_4 = transformer.linear %mul_356, %gate_proj : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %silu = transformer.activation %linear_4 kind = silu : tensor<?x16xf32>
  %silu_b = transformer.unflatten_tokens %silu like %input_ids : tensor<?x16xf32>, tensor<?x?xi64> -> tensor<?x?x16xf32>
  %linear_5 = transformer.linear %mul_356, %up_proj : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %linear_5_b = transformer.unflatten_tokens %linear_5 like %input_ids : tensor<?x16xf32>, tensor<?x?xi64> -> tensor<?x?x16xf32>
  %mul_369 = onnx.Mul %silu_b, %linear_5_b : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %t = transformer.flatten_tokens %mul_369 : tensor<?x?x16xf32> -> tensor<?x16xf32>
  %linear_6 = transformer.linear %t, %down_proj : (tensor<?x16xf32>, tensor<8x16xf32>) -> tensor<?x8xf32>
  return %linear_6 : tensor<?x8xf32>
}

// -----

// gemma_op18: gelu_tanh, and the product written up * act.
// CHECK-LABEL: func @gemma_mlp
// CHECK-SAME: (%[[H:[^:]+]]: tensor<?x?x8xbf16>, %[[X:[^:]+]]: tensor<?x8xbf16>, %[[WG:[^:]+]]: tensor<16x8xbf16>, %[[WU:[^:]+]]: tensor<16x8xbf16>, %[[WD:[^:]+]]: tensor<8x16xbf16>)
// CHECK-NEXT: %[[M:.+]] = transformer.gated_mlp %[[X]] gate(%[[WG]]) up(%[[WU]]) down(%[[WD]]) kind = gelu_tanh
// CHECK-NEXT: return %[[M]]
func.func @gemma_mlp(%h: tensor<?x?x8xbf16>, %x: tensor<?x8xbf16>, %wg: tensor<16x8xbf16>,
                     %wu: tensor<16x8xbf16>, %wd: tensor<8x16xbf16>) -> tensor<?x8xbf16> {
  %g = transformer.linear %x, %wg : (tensor<?x8xbf16>, tensor<16x8xbf16>) -> tensor<?x16xbf16>
  %a = transformer.activation %g kind = gelu_tanh : tensor<?x16xbf16>
  %ab = transformer.unflatten_tokens %a like %h : tensor<?x16xbf16>, tensor<?x?x8xbf16> -> tensor<?x?x16xbf16>
  %u = transformer.linear %x, %wu : (tensor<?x8xbf16>, tensor<16x8xbf16>) -> tensor<?x16xbf16>
  %ub = transformer.unflatten_tokens %u like %h : tensor<?x16xbf16>, tensor<?x?x8xbf16> -> tensor<?x?x16xbf16>
  %m = onnx.Mul %ub, %ab : (tensor<?x?x16xbf16>, tensor<?x?x16xbf16>) -> tensor<?x?x16xbf16>
  %t = transformer.flatten_tokens %m : tensor<?x?x16xbf16> -> tensor<?x16xbf16>
  %d = transformer.linear %t, %wd : (tensor<?x16xbf16>, tensor<8x16xbf16>) -> tensor<?x8xbf16>
  return %d : tensor<?x8xbf16>
}

// -----

// phi3_op18, model.model.layers.0.mlp: gate_up_proj, Split in halves on
// the last axis, the activation on the first half, up * act, down_proj.
// CHECK-LABEL: func @phi3_gate_up
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi64>, %[[X:[^:]+]]: tensor<?x8xf32>, %[[WGU:[^:]+]]: tensor<32x8xf32>, %[[WD:[^:]+]]: tensor<8x16xf32>)
// CHECK-NEXT: %[[M:.+]] = transformer.gated_mlp %[[X]] gate_up(%[[WGU]]) down(%[[WD]]) kind = silu : (tensor<?x8xf32>, tensor<32x8xf32>, tensor<8x16xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: return %[[M]]
func.func @phi3_gate_up(%input_ids: tensor<?x?xi64>, %mul_395: tensor<?x8xf32>, %gate_up_proj: tensor<32x8xf32>,
                        %down_proj: tensor<8x16xf32>) -> tensor<?x8xf32> {
  %linear_2 = transformer.linear %mul_395, %gate_up_proj : (tensor<?x8xf32>, tensor<32x8xf32>) -> tensor<?x32xf32>
  %linear_2_b = transformer.unflatten_tokens %linear_2 like %input_ids : tensor<?x32xf32>, tensor<?x?xi64> -> tensor<?x?x32xf32>
  %split_0, %split_1 = onnx.Split %linear_2_b {axis = 2 : i64, num_outputs = 2 : i64} : (tensor<?x?x32xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x16xf32>)
  %s0 = transformer.flatten_tokens %split_0 : tensor<?x?x16xf32> -> tensor<?x16xf32>
  %silu = transformer.activation %s0 kind = silu : tensor<?x16xf32>
  %silu_b = transformer.unflatten_tokens %silu like %split_0 : tensor<?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %mul_411 = onnx.Mul %split_1, %silu_b : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %t = transformer.flatten_tokens %mul_411 : tensor<?x?x16xf32> -> tensor<?x16xf32>
  %linear_3 = transformer.linear %t, %down_proj : (tensor<?x16xf32>, tensor<8x16xf32>) -> tensor<?x8xf32>
  return %linear_3 : tensor<?x8xf32>
}

// -----

// Token-major all along (a model raised to [tokens, hidden] already), the
// split sizes given as an input.
// CHECK-LABEL: func @token_major_gate_up
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x8xf16>, %[[WGU:[^:]+]]: tensor<32x8xf16>, %[[WD:[^:]+]]: tensor<8x16xf16>)
// CHECK-NEXT: %[[M:.+]] = transformer.gated_mlp %[[X]] gate_up(%[[WGU]]) down(%[[WD]]) kind = gelu
// CHECK-NEXT: return %[[M]]
func.func @token_major_gate_up(%x: tensor<?x8xf16>, %wgu: tensor<32x8xf16>, %wd: tensor<8x16xf16>) -> tensor<?x8xf16> {
  %sizes = onnx.Constant {value = dense<16> : tensor<2xi64>} : () -> tensor<2xi64>
  %gu = transformer.linear %x, %wgu : (tensor<?x8xf16>, tensor<32x8xf16>) -> tensor<?x32xf16>
  %g, %u = onnx.Split %gu split(%sizes) {axis = -1 : i64} : (tensor<?x32xf16>, tensor<2xi64>) -> (tensor<?x16xf16>, tensor<?x16xf16>)
  %a = transformer.activation %g kind = gelu : tensor<?x16xf16>
  %m = onnx.Mul %a, %u : (tensor<?x16xf16>, tensor<?x16xf16>) -> tensor<?x16xf16>
  %d = transformer.linear %m, %wd : (tensor<?x16xf16>, tensor<8x16xf16>) -> tensor<?x8xf16>
  return %d : tensor<?x8xf16>
}

// -----

// The halves taken by two Slices on the last axis (the second one up to
// INT64_MAX, as torch's `x[..., I:]` exports).
// CHECK-LABEL: func @gate_up_slices
// CHECK-SAME: (%[[H:[^:]+]]: tensor<?x?x8xf32>, %[[X:[^:]+]]: tensor<?x8xf32>, %[[WGU:[^:]+]]: tensor<32x8xf32>, %[[WD:[^:]+]]: tensor<8x16xf32>)
// CHECK-NEXT: %[[M:.+]] = transformer.gated_mlp %[[X]] gate_up(%[[WGU]]) down(%[[WD]]) kind = silu
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[M]] like %[[H]]
// CHECK-NEXT: return %[[Y]]
func.func @gate_up_slices(%h: tensor<?x?x8xf32>, %x: tensor<?x8xf32>, %wgu: tensor<32x8xf32>, %wd: tensor<8x16xf32>) -> tensor<?x?x8xf32> {
  %zero = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %half = onnx.Constant {value = dense<16> : tensor<1xi64>} : () -> tensor<1xi64>
  %max = onnx.Constant {value = dense<9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %last = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %gu = transformer.linear %x, %wgu : (tensor<?x8xf32>, tensor<32x8xf32>) -> tensor<?x32xf32>
  %gub = transformer.unflatten_tokens %gu like %h : tensor<?x32xf32>, tensor<?x?x8xf32> -> tensor<?x?x32xf32>
  %g = onnx.Slice %gub, %zero, %half axes(%last) : (tensor<?x?x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x16xf32>
  %u = onnx.Slice %gub, %half, %max axes(%last) : (tensor<?x?x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x16xf32>
  %gt = transformer.flatten_tokens %g : tensor<?x?x16xf32> -> tensor<?x16xf32>
  %a = transformer.activation %gt kind = silu : tensor<?x16xf32>
  %ab = transformer.unflatten_tokens %a like %g : tensor<?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  %m = onnx.Mul %ab, %u : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %mt = transformer.flatten_tokens %m : tensor<?x?x16xf32> -> tensor<?x16xf32>
  %d = transformer.linear %mt, %wd : (tensor<?x16xf32>, tensor<8x16xf32>) -> tensor<?x8xf32>
  %y = transformer.unflatten_tokens %d like %m : tensor<?x8xf32>, tensor<?x?x16xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Negative: a three-way split (8 + 8 + 8): the first two parts are not
// the halves of the projection.
// CHECK-LABEL: func @three_way_split
// CHECK-NOT: transformer.gated_mlp
// CHECK: onnx.Split
func.func @three_way_split(%x: tensor<?x8xf32>, %w: tensor<24x8xf32>, %wd: tensor<8x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %p = transformer.linear %x, %w : (tensor<?x8xf32>, tensor<24x8xf32>) -> tensor<?x24xf32>
  %g, %u, %r = onnx.Split %p {axis = 1 : i64, num_outputs = 3 : i64} : (tensor<?x24xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
  %a = transformer.activation %g kind = silu : tensor<?x8xf32>
  %m = onnx.Mul %a, %u : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %d = transformer.linear %m, %wd : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %d, %r : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Negative: gate and up project different inputs.
// CHECK-LABEL: func @different_inputs
// CHECK-NOT: transformer.gated_mlp
// CHECK: onnx.Mul
func.func @different_inputs(%x: tensor<?x8xf32>, %z: tensor<?x8xf32>, %wg: tensor<16x8xf32>,
                            %wu: tensor<16x8xf32>, %wd: tensor<8x16xf32>) -> tensor<?x8xf32> {
  %g = transformer.linear %x, %wg : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %a = transformer.activation %g kind = silu : tensor<?x16xf32>
  %u = transformer.linear %z, %wu : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %m = onnx.Mul %a, %u : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %d = transformer.linear %m, %wd : (tensor<?x16xf32>, tensor<8x16xf32>) -> tensor<?x8xf32>
  return %d : tensor<?x8xf32>
}

// -----

// Negative: the up projection has a bias, which gated_mlp cannot hold.
// CHECK-LABEL: func @up_with_bias
// CHECK-NOT: transformer.gated_mlp
// CHECK: onnx.Mul
func.func @up_with_bias(%x: tensor<?x8xf32>, %wg: tensor<16x8xf32>, %wu: tensor<16x8xf32>,
                        %bu: tensor<16xf32>, %wd: tensor<8x16xf32>) -> tensor<?x8xf32> {
  %g = transformer.linear %x, %wg : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %a = transformer.activation %g kind = silu : tensor<?x16xf32>
  %u = transformer.linear %x, %wu bias(%bu) : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %m = onnx.Mul %a, %u : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %d = transformer.linear %m, %wd : (tensor<?x16xf32>, tensor<8x16xf32>) -> tensor<?x8xf32>
  return %d : tensor<?x8xf32>
}

// -----

// Negative: the activation is on the second half of the fused projection
// (up rows first); gate_up wants the gate rows first.
// CHECK-LABEL: func @activation_on_second_half
// CHECK-NOT: transformer.gated_mlp
// CHECK: onnx.Split
func.func @activation_on_second_half(%x: tensor<?x8xf32>, %wgu: tensor<32x8xf32>, %wd: tensor<8x16xf32>) -> tensor<?x8xf32> {
  %gu = transformer.linear %x, %wgu : (tensor<?x8xf32>, tensor<32x8xf32>) -> tensor<?x32xf32>
  %u, %g = onnx.Split %gu {axis = 1 : i64, num_outputs = 2 : i64} : (tensor<?x32xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>)
  %a = transformer.activation %g kind = silu : tensor<?x16xf32>
  %m = onnx.Mul %a, %u : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %d = transformer.linear %m, %wd : (tensor<?x16xf32>, tensor<8x16xf32>) -> tensor<?x8xf32>
  return %d : tensor<?x8xf32>
}

// -----

// Negative: GPT-2's MLP is not gated (linear, activation, linear); it stays.
// CHECK-LABEL: func @gpt2_not_gated
// CHECK-NOT: transformer.gated_mlp
// CHECK: transformer.activation
func.func @gpt2_not_gated(%x: tensor<?x8xf32>, %wfc: tensor<16x8xf32>, %bfc: tensor<16xf32>,
                          %wproj: tensor<8x16xf32>, %bproj: tensor<8xf32>) -> tensor<?x8xf32> {
  %fc = transformer.linear %x, %wfc bias(%bfc) : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %a = transformer.activation %fc kind = gelu_tanh : tensor<?x16xf32>
  %p = transformer.linear %a, %wproj bias(%bproj) : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %p : tensor<?x8xf32>
}
