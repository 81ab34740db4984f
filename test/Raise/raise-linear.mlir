// RUN: accel-opt %s -split-input-file -accel-raise-linear | FileCheck %s
// RUN: accel-opt %s -split-input-file -accel-raise-linear=absorb-bias=false | FileCheck %s --check-prefix=NOBIAS
//
// Dense layers as the fixtures spell them: `MatMul(x, W)` + `Add(bias)`
// (qwen2_op18's q_proj), bias-free MatMuls (every llama-family linear),
// GPT-2's Conv1D as Gemm between two Reshapes (gpt2_op18), and the
// transposed-constant weights transformer.linear needs.

// qwen2_op18, model.model.layers.0.self_attn.q_proj (hidden 2, out 3 here),
// with a dense_resource weight: the [in, out] blob is copied transposed
// into a new blob named after it + ".T", and the bias Add is absorbed.
// CHECK-LABEL: func @qwen2_q_proj
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x2xf32>, %[[B:[^:]+]]: tensor<3xf32>)
// CHECK: %[[WT:.+]] = onnx.Constant {value = dense_resource<val_145.T> : tensor<3x2xf32>} : () -> tensor<3x2xf32>
// CHECK: %[[T:.+]] = transformer.flatten_tokens %[[X]] : tensor<?x?x2xf32> -> tensor<?x2xf32>
// CHECK-NEXT: %[[L:.+]] = transformer.linear %[[T]], %[[WT]] bias(%[[B]]) : (tensor<?x2xf32>, tensor<3x2xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[L]] like %[[X]] : tensor<?x3xf32>, tensor<?x?x2xf32> -> tensor<?x?x3xf32>
// CHECK-NEXT: return %[[Y]]
// With absorb-bias=false the bias stays an Add.
// NOBIAS-LABEL: func @qwen2_q_proj
// NOBIAS: %[[L:.+]] = transformer.linear %{{[^ ]+}}, %{{[^ ]+}} : (tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<?x3xf32>
// NOBIAS-NEXT: %[[U:.+]] = transformer.unflatten_tokens %[[L]]
// NOBIAS-NEXT: onnx.Add %[[U]], %{{.+}}
// The weight 1 2 3 / 4 5 6 becomes 1 4 / 2 5 / 3 6 (f32, little-endian).
// CHECK: val_145.T: "0x400000000000803F00008040000000400000A040000040400000C040"
func.func @qwen2_q_proj(%mul_124: tensor<?x?x2xf32>, %bias: tensor<3xf32>) -> tensor<?x?x3xf32> {
  %val_145 = onnx.Constant {value = dense_resource<val_145> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %val_146 = onnx.MatMul %mul_124, %val_145 : (tensor<?x?x2xf32>, tensor<2x3xf32>) -> tensor<?x?x3xf32>
  %linear = onnx.Add %val_146, %bias : (tensor<?x?x3xf32>, tensor<3xf32>) -> tensor<?x?x3xf32>
  return %linear : tensor<?x?x3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      val_145: "0x040000000000803F0000004000004040000080400000A0400000C040"
    }
  }
#-}

// -----

// An inline weight stays inline, transposed.
// CHECK-LABEL: func @inline_weight
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x2xf32>)
// CHECK: %[[WT:.+]] = onnx.Constant {value = dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>}
// CHECK: %[[T:.+]] = transformer.flatten_tokens %[[X]]
// CHECK-NEXT: %[[L:.+]] = transformer.linear %[[T]], %[[WT]] : (tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: transformer.unflatten_tokens %[[L]] like %[[X]]
func.func @inline_weight(%x: tensor<?x?x2xf32>) -> tensor<?x?x3xf32> {
  %w = onnx.Constant {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %y = onnx.MatMul %x, %w : (tensor<?x?x2xf32>, tensor<2x3xf32>) -> tensor<?x?x3xf32>
  return %y : tensor<?x?x3xf32>
}

// -----

// A weight written `Transpose(C) {perm = [1, 0]}` of a [out, in] constant is
// C itself (no copy); a token-major x needs no flatten.
// CHECK-LABEL: func @transposed_constant
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x4xbf16>)
// CHECK: %[[C:.+]] = onnx.Constant {value = dense_resource<proj> : tensor<6x4xbf16>}
// CHECK-NEXT: %[[L:.+]] = transformer.linear %[[X]], %[[C]] : (tensor<?x4xbf16>, tensor<6x4xbf16>) -> tensor<?x6xbf16>
// CHECK-NEXT: %[[S:.+]] = onnx.Sigmoid %[[L]]
func.func @transposed_constant(%x: tensor<?x4xbf16>) -> tensor<?x6xbf16> {
  %c = onnx.Constant {value = dense_resource<proj> : tensor<6x4xbf16>} : () -> tensor<6x4xbf16>
  %t = onnx.Transpose %c {perm = array<i64: 1, 0>} : (tensor<6x4xbf16>) -> tensor<4x6xbf16>
  %y = onnx.MatMul %x, %t : (tensor<?x4xbf16>, tensor<4x6xbf16>) -> tensor<?x6xbf16>
  %s = onnx.Sigmoid %y : (tensor<?x6xbf16>) -> tensor<?x6xbf16>
  return %s : tensor<?x6xbf16>
}

// -----

// gpt2_op18, model.transformer.h.0.attn.c_attn (hidden 8, out 24 here):
// `Reshape(ln, [-1, 8])`, `Gemm` with the bias, `Reshape(., [B, S, 24])`
// whose B and S are Shape slices of input_ids, which the layer norm's
// input was gathered with. And GPT-2's `view` of the ids, which keeps
// their shape, goes away.
// CHECK-LABEL: func @gpt2_c_attn
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi64> {{{.*}}}, %[[TABLE:[^:]+]]: tensor<16x8xf32>, %[[LNW:[^:]+]]: tensor<8xf32>, %[[B:[^:]+]]: tensor<24xf32>)
// CHECK: %[[WT:.+]] = onnx.Constant {value = dense_resource<model.transformer.h.0.attn.c_attn.weight.T> : tensor<24x8xf32>}
// CHECK: %[[E:.+]] = onnx.Gather %[[TABLE]], %[[IDS]]
// CHECK: %[[LN:.+]] = onnx.LayerNormalization %[[E]]
// CHECK-NEXT: %[[T:.+]] = transformer.flatten_tokens %[[LN]] : tensor<?x?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: %[[L:.+]] = transformer.linear %[[T]], %[[WT]] bias(%[[B]]) : (tensor<?x8xf32>, tensor<24x8xf32>, tensor<24xf32>) -> tensor<?x24xf32>
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[L]] like %[[LN]] : tensor<?x24xf32>, tensor<?x?x8xf32> -> tensor<?x?x24xf32>
// CHECK-NEXT: return %[[Y]]
// CHECK-NOT: onnx.Reshape
// CHECK-NOT: onnx.Gemm
func.func @gpt2_c_attn(%input_ids: tensor<?x?xi64> {onnx.dim_params = ["batch", "sequence"]}, %wte: tensor<16x8xf32>,
                       %ln_1_weight: tensor<8xf32>, %c_attn_bias: tensor<24xf32>) -> tensor<?x?x24xf32> {
  %c_attn_weight = onnx.Constant {value = dense_resource<model.transformer.h.0.attn.c_attn.weight> : tensor<8x24xf32>} : () -> tensor<8x24xf32>
  %val_47 = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %val_134 = onnx.Constant {value = dense<[-1, 8]> : tensor<2xi64>} : () -> tensor<2xi64>
  %val_138 = onnx.Constant {value = dense<24> : tensor<1xi64>} : () -> tensor<1xi64>
  %val_0 = onnx.Shape %input_ids {end = 1 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %val_1 = onnx.Shape %input_ids {end = 2 : i64, start = 1 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %val_6 = onnx.Concat %val_47, %val_1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %view = onnx.Reshape %input_ids, %val_6 {allowzero = 1 : i64} : (tensor<?x?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
  %embedding = onnx.Gather %wte, %view : (tensor<16x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  %layer_norm = onnx.LayerNormalization %embedding, %ln_1_weight {axis = -1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %view_1 = onnx.Reshape %layer_norm, %val_134 {allowzero = 1 : i64} : (tensor<?x?x8xf32>, tensor<2xi64>) -> tensor<?x8xf32>
  %addmm = onnx.Gemm %view_1, %c_attn_weight C(%c_attn_bias) {alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, transA = 0 : i64, transB = 0 : i64} : (tensor<?x8xf32>, tensor<8x24xf32>, tensor<24xf32>) -> tensor<?x24xf32>
  %val_139 = onnx.Concat %val_0, %val_1, %val_138 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %view_2 = onnx.Reshape %addmm, %val_139 {allowzero = 1 : i64} : (tensor<?x24xf32>, tensor<3xi64>) -> tensor<?x?x24xf32>
  return %view_2 : tensor<?x?x24xf32>
}

// -----

// Gemm with transB = 1 takes its [out, in] weight as is.
// CHECK-LABEL: func @gemm_trans_b
// CHECK-SAME: (%[[A:[^:]+]]: tensor<?x8xf16>)
// CHECK: %[[W:.+]] = onnx.Constant {value = dense_resource<w> : tensor<4x8xf16>}
// CHECK-NEXT: %[[L:.+]] = transformer.linear %[[A]], %[[W]] : (tensor<?x8xf16>, tensor<4x8xf16>) -> tensor<?x4xf16>
// CHECK-NEXT: return %[[L]]
func.func @gemm_trans_b(%a: tensor<?x8xf16>) -> tensor<?x4xf16> {
  %w = onnx.Constant {value = dense_resource<w> : tensor<4x8xf16>} : () -> tensor<4x8xf16>
  %y = onnx.Gemm %a, %w {transB = 1 : i64} : (tensor<?x8xf16>, tensor<4x8xf16>) -> tensor<?x4xf16>
  return %y : tensor<?x4xf16>
}

// -----

// The lm head (its result is the graph output and its out features are the
// vocabulary of the embedding table) is left to accel-raise-logits.
// CHECK-LABEL: func @lm_head_left_alone
// CHECK-NOT: transformer.linear
// CHECK: onnx.MatMul
func.func @lm_head_left_alone(%ids: tensor<?x?xi64>, %h: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x16xf32>) {
  %table = onnx.Constant {value = dense_resource<embed_tokens> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %w = onnx.Constant {value = dense_resource<val_514> : tensor<8x16xf32>} : () -> tensor<8x16xf32>
  %e = onnx.Gather %table, %ids : (tensor<16x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  %logits = onnx.MatMul %h, %w : (tensor<?x?x8xf32>, tensor<8x16xf32>) -> tensor<?x?x16xf32>
  return %e, %logits : tensor<?x?x8xf32>, tensor<?x?x16xf32>
}

// -----

// Negative: attention scores, MatMul(q, k^T) of two activations: the weight
// is not a constant.
// CHECK-LABEL: func @scores
// CHECK-NOT: transformer.
// CHECK: onnx.MatMul
func.func @scores(%q: tensor<?x4x?x16xf32>, %kt: tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32> {
  %s = onnx.MatMul %q, %kt : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
  return %s : tensor<?x4x?x?xf32>
}

// -----

// Negative: a constant but 3-D weight (a batched product) is not a linear.
// CHECK-LABEL: func @batched_weight
// CHECK-NOT: transformer.
// CHECK: onnx.MatMul
func.func @batched_weight(%x: tensor<1x?x2xf32>) -> tensor<1x?x3xf32> {
  %w = onnx.Constant {value = dense<1.0> : tensor<1x2x3xf32>} : () -> tensor<1x2x3xf32>
  %y = onnx.MatMul %x, %w : (tensor<1x?x2xf32>, tensor<1x2x3xf32>) -> tensor<1x?x3xf32>
  return %y : tensor<1x?x3xf32>
}

// -----

// Negative: alpha = 0.5 scales the product; linear has no scale.
// CHECK-LABEL: func @gemm_alpha
// CHECK-NOT: transformer.
// CHECK: onnx.Gemm
func.func @gemm_alpha(%a: tensor<?x8xf32>) -> tensor<?x4xf32> {
  %w = onnx.Constant {value = dense<1.0> : tensor<8x4xf32>} : () -> tensor<8x4xf32>
  %y = onnx.Gemm %a, %w {alpha = 5.000000e-01 : f32} : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// Negative for the bias: Add of a [1, out] tensor (not 1-D) stays an Add.
// CHECK-LABEL: func @bias_2d
// CHECK: %[[L:.+]] = transformer.linear %{{[^ ]+}}, %{{[^ ]+}} : (tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<?x3xf32>
// CHECK: %[[U:.+]] = transformer.unflatten_tokens %[[L]]
// CHECK: onnx.Add %[[U]], %{{.+}} : (tensor<?x?x3xf32>, tensor<1x3xf32>)
func.func @bias_2d(%x: tensor<?x?x2xf32>, %b: tensor<1x3xf32>) -> tensor<?x?x3xf32> {
  %w = onnx.Constant {value = dense<1.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %y = onnx.MatMul %x, %w : (tensor<?x?x2xf32>, tensor<2x3xf32>) -> tensor<?x?x3xf32>
  %z = onnx.Add %y, %b : (tensor<?x?x3xf32>, tensor<1x3xf32>) -> tensor<?x?x3xf32>
  return %z : tensor<?x?x3xf32>
}

// -----

// Negative for the Reshape back: its dims come from another tensor (%other)
// than the one flattened, so it is not an unflatten (nor removable).
// CHECK-LABEL: func @reshape_other_dims
// CHECK: transformer.linear
// CHECK: onnx.Reshape %{{.+}}, %{{.+}} {allowzero = 1 : i64} : (tensor<?x4xf32>, tensor<3xi64>)
func.func @reshape_other_dims(%x: tensor<?x?x8xf32>, %other: tensor<?x?xi64>) -> tensor<?x?x4xf32> {
  %w = onnx.Constant {value = dense<1.0> : tensor<8x4xf32>} : () -> tensor<8x4xf32>
  %flat = onnx.Constant {value = dense<[-1, 8]> : tensor<2xi64>} : () -> tensor<2xi64>
  %n = onnx.Constant {value = dense<4> : tensor<1xi64>} : () -> tensor<1xi64>
  %v = onnx.Reshape %x, %flat {allowzero = 1 : i64} : (tensor<?x?x8xf32>, tensor<2xi64>) -> tensor<?x8xf32>
  %g = onnx.Gemm %v, %w : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  %b = onnx.Shape %other {end = 1 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %s = onnx.Shape %other {end = 2 : i64, start = 1 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %shape = onnx.Concat %b, %s, %n {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %y = onnx.Reshape %g, %shape {allowzero = 1 : i64} : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<?x?x4xf32>
  return %y : tensor<?x?x4xf32>
}

// -----

// Views around a Reshape fold (what a function made token-major by
// accel-raise-attention looks like): ids [T] reshaped to [1, T] and
// flattened again are the ids; an unflattened [T, N] reshaped to [-1, N] is
// the [T, N] value.
// CHECK-LABEL: func @views_of_reshapes
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?xi64>, %[[R:[^:]+]]: tensor<?x8xf32>, %[[X:[^:]+]]: tensor<?x?x4xf32>)
// CHECK: %[[E:.+]] = transformer.embedding %{{.+}}[%[[IDS]]]
// CHECK-NEXT: return %[[E]], %[[R]]
func.func @views_of_reshapes(%ids: tensor<?xi64>, %r: tensor<?x8xf32>, %x: tensor<?x?x4xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %table = onnx.Constant {value = dense_resource<table> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %shape = onnx.Constant {value = dense<[1, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %flat = onnx.Constant {value = dense<[-1, 8]> : tensor<2xi64>} : () -> tensor<2xi64>
  %batched = onnx.Reshape %ids, %shape : (tensor<?xi64>, tensor<2xi64>) -> tensor<1x?xi64>
  %i = transformer.flatten_tokens %batched : tensor<1x?xi64> -> tensor<?xi64>
  %e = transformer.embedding %table[%i] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %u = transformer.unflatten_tokens %r like %x : tensor<?x8xf32>, tensor<?x?x4xf32> -> tensor<?x?x8xf32>
  %v = onnx.Reshape %u, %flat : (tensor<?x?x8xf32>, tensor<2xi64>) -> tensor<?x8xf32>
  return %e, %v : tensor<?x8xf32>, tensor<?x8xf32>
}
