// RUN: accel-opt %s -split-input-file -accel-fuse-add-rms-norm | FileCheck %s
//
// The pre-norm residual stream as raising leaves it (llama_op18, hidden 64
// → 8 here): each sublayer's sum feeds the next norm and the next add.

// Both sublayers of a decoder layer: the attention sum is normed for the
// MLP and is the MLP's residual; the MLP sum is normed by the next layer.
// CHECK-LABEL: func @decoder_layer
// CHECK-SAME: (%[[H:[^:]+]]: tensor<?x8xf32>, %[[ATTN:[^:]+]]: tensor<?x8xf32>, %[[W1:[^:]+]]: tensor<8xf32>, %[[W2:[^:]+]]: tensor<8xf32>)
// CHECK-NEXT: %[[N1:.+]], %[[H1:.+]] = transformer.add_rms_norm %[[ATTN]], %[[H]], %[[W1]] {epsilon = 1.000000e-05 : f64} : tensor<?x8xf32>, tensor<8xf32>
// CHECK-NEXT: %[[MLP:.+]] = transformer.activation %[[N1]] kind = silu
// CHECK-NEXT: %[[N2:.+]], %[[H2:.+]] = transformer.add_rms_norm %[[MLP]], %[[H1]], %[[W2]] {epsilon = 1.000000e-05 : f64}
// CHECK-NEXT: return %[[N2]], %[[H2]]
func.func @decoder_layer(%h: tensor<?x8xf32>, %attn: tensor<?x8xf32>, %w1: tensor<8xf32>,
                         %w2: tensor<8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %h1 = transformer.residual_add %h, %attn : tensor<?x8xf32>
  %n1 = transformer.rms_norm %h1, %w1 {epsilon = 1.0e-05 : f64} : tensor<?x8xf32>, tensor<8xf32>
  %mlp = transformer.activation %n1 kind = silu : tensor<?x8xf32>
  %h2 = transformer.residual_add %h1, %mlp : tensor<?x8xf32>
  %n2 = transformer.rms_norm %h2, %w2 {epsilon = 1.0e-05 : f64} : tensor<?x8xf32>, tensor<8xf32>
  return %n2, %h2 : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// The final norm: the sum has no other use; the fused op's second result
// is left unused. Gemma's weight_offset is carried over; the weight
// constant, defined after the add, moves up to the fused op.
// CHECK-LABEL: func @final_norm_gemma
// CHECK-SAME: (%[[H:[^:]+]]: tensor<?x8xbf16>, %[[B:[^:]+]]: tensor<?x8xbf16>)
// CHECK-NEXT: %[[W:.+]] = onnx.Constant {value = dense<5.000000e-01> : tensor<8xbf16>}
// CHECK-NEXT: %[[N:.+]], %{{.+}} = transformer.add_rms_norm %[[B]], %[[H]], %[[W]] {epsilon = 9.9999999999999995E-7 : f64, weight_offset = 1.000000e+00 : f64} : tensor<?x8xbf16>, tensor<8xbf16>
// CHECK-NEXT: return %[[N]]
func.func @final_norm_gemma(%h: tensor<?x8xbf16>, %b: tensor<?x8xbf16>) -> tensor<?x8xbf16> {
  %s = transformer.residual_add %h, %b : tensor<?x8xbf16>
  %w = onnx.Constant {value = dense<0.5> : tensor<8xbf16>} : () -> tensor<8xbf16>
  %n = transformer.rms_norm %s, %w {epsilon = 1.0e-06 : f64, weight_offset = 1.0 : f64} : tensor<?x8xbf16>, tensor<8xbf16>
  return %n : tensor<?x8xbf16>
}

// -----

// Two norms of one sum: one is fused (the greedy driver reaches the
// second first); the other reads the fused op's sum, which is no longer a
// residual_add's result.
// CHECK-LABEL: func @two_norms
// CHECK: %[[N2:.+]], %[[S:.+]] = transformer.add_rms_norm {{.+}} {epsilon = 9.9999999999999995E-7 : f64}
// CHECK-NEXT: %[[N1:.+]] = transformer.rms_norm %[[S]], %{{.+}} {epsilon = 1.000000e-05 : f64}
// CHECK-NEXT: return %[[N1]], %[[N2]]
func.func @two_norms(%h: tensor<?x8xf32>, %b: tensor<?x8xf32>, %w: tensor<8xf32>)
    -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %s = transformer.residual_add %h, %b : tensor<?x8xf32>
  %n1 = transformer.rms_norm %s, %w {epsilon = 1.0e-05 : f64} : tensor<?x8xf32>, tensor<8xf32>
  %n2 = transformer.rms_norm %s, %w {epsilon = 1.0e-06 : f64} : tensor<?x8xf32>, tensor<8xf32>
  return %n1, %n2 : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Not fused: the norm reads the embedding, not a residual add (the first
// layer's input norm), so there is no add to fold in.
// CHECK-LABEL: func @norm_of_embedding
// CHECK-NOT: add_rms_norm
// CHECK: transformer.rms_norm
func.func @norm_of_embedding(%table: tensor<16x8xf32>, %ids: tensor<?xi64>, %w: tensor<8xf32>) -> tensor<?x8xf32> {
  %e = transformer.embedding %table[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %n = transformer.rms_norm %e, %w {epsilon = 1.0e-05 : f64} : tensor<?x8xf32>, tensor<8xf32>
  return %n : tensor<?x8xf32>
}

// -----

// Not fused: a layer_norm of the sum (GPT-2, Phi-2) has no fused form.
// CHECK-LABEL: func @layer_norm_of_sum
// CHECK-NOT: add_rms_norm
// CHECK: transformer.residual_add
// CHECK-NEXT: transformer.layer_norm
func.func @layer_norm_of_sum(%h: tensor<?x8xf32>, %b: tensor<?x8xf32>, %w: tensor<8xf32>) -> tensor<?x8xf32> {
  %s = transformer.residual_add %h, %b : tensor<?x8xf32>
  %n = transformer.layer_norm %s, %w {epsilon = 1.0e-05 : f64} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %n : tensor<?x8xf32>
}

// -----

// Not fused: a per-head rms_norm (Qwen3's q norm) reads split heads, not
// the residual stream.
// CHECK-LABEL: func @per_head_norm
// CHECK-NOT: add_rms_norm
// CHECK: transformer.rms_norm
func.func @per_head_norm(%h: tensor<?x8xf32>, %b: tensor<?x8xf32>, %w: tensor<4xf32>) -> tensor<?x2x4xf32> {
  %s = transformer.residual_add %h, %b : tensor<?x8xf32>
  %q = transformer.split_heads %s : tensor<?x8xf32> -> tensor<?x2x4xf32>
  %n = transformer.rms_norm %q, %w {epsilon = 1.0e-06 : f64} : tensor<?x2x4xf32>, tensor<4xf32>
  return %n : tensor<?x2x4xf32>
}
