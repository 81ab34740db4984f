// RUN: accel-opt %s -split-input-file -accel-raise-logits | FileCheck %s
// RUN: accel-opt %s -split-input-file -accel-raise-logits=detect-tied=false | FileCheck %s --check-prefix=NOTIED
//
// The lm head as the fixtures spell it (vocab 256 → 16, hidden 64 → 8):
// qwen2/llama's own [hidden, vocab] weight, gemma/gpt2's tied head
// `MatMul(h, Transpose(embed))`, gemma2's final logit softcap.

// qwen2_op18, model.lm_head: an untied [hidden, vocab] weight, transposed
// to lm_head [vocab, hidden].
// CHECK-LABEL: func @qwen2_lm_head
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi64>, %[[H:[^:]+]]: tensor<?x?x8xf32>)
// CHECK: %[[WT:.+]] = onnx.Constant {value = dense_resource<val_514.T> : tensor<16x8xf32>}
// CHECK: %[[T:.+]] = transformer.flatten_tokens %[[H]] : tensor<?x?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: %[[L:.+]] = transformer.logits %[[T]], %[[WT]] : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[L]] like %[[H]] : tensor<?x16xf32>, tensor<?x?x8xf32> -> tensor<?x?x16xf32>
// CHECK-NEXT: return %{{.+}}, %[[Y]]
func.func @qwen2_lm_head(%input_ids: tensor<?x?xi64>, %mul_660: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x16xf32>) {
  %embed_tokens = onnx.Constant {value = dense_resource<model.model.embed_tokens.weight> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %val_514 = onnx.Constant {value = dense_resource<val_514> : tensor<8x16xf32>} : () -> tensor<8x16xf32>
  %embedding = onnx.Gather %embed_tokens, %input_ids : (tensor<16x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  %logits = onnx.MatMul %mul_660, %val_514 : (tensor<?x?x8xf32>, tensor<8x16xf32>) -> tensor<?x?x16xf32>
  return %embedding, %logits : tensor<?x?x8xf32>, tensor<?x?x16xf32>
}

// -----

// gemma_op18: tied embeddings; the lm head reads the embedding table itself
// (one SSA value for both).
// CHECK-LABEL: func @gemma_tied
// CHECK: %[[TABLE:.+]] = onnx.Constant {value = dense_resource<model.lm_head.weight> : tensor<16x8xf32>}
// CHECK: onnx.Gather %[[TABLE]]
// CHECK: %[[L:.+]] = transformer.logits %{{.+}}, %[[TABLE]] : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
// CHECK-NOT: onnx.MatMul
func.func @gemma_tied(%input_ids: tensor<?x?xi64>, %type_as_4: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x16xf32>) {
  %lm_head = onnx.Constant {value = dense_resource<model.lm_head.weight> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %embedding = onnx.Gather %lm_head, %input_ids : (tensor<16x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  %val_530 = onnx.Transpose %lm_head {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %logits = onnx.MatMul %type_as_4, %val_530 : (tensor<?x?x8xf32>, tensor<8x16xf32>) -> tensor<?x?x16xf32>
  return %embedding, %logits : tensor<?x?x8xf32>, tensor<?x?x16xf32>
}

// -----

// gemma2_op18: the final logit softcap, `Mul(Tanh(Div(logits, 30)), 30)`.
// CHECK-LABEL: func @gemma2_softcap
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi64>, %[[H:[^:]+]]: tensor<?x?x8xf32>)
// CHECK: %[[TABLE:.+]] = onnx.Constant
// CHECK: %[[T:.+]] = transformer.flatten_tokens %[[H]]
// CHECK-NEXT: %[[L:.+]] = transformer.logits %[[T]], %[[TABLE]] {softcap = 3.000000e+01 : f64}
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[L]] like %[[H]]
// CHECK-NEXT: return %{{.+}}, %[[Y]]
// CHECK-NOT: onnx.Tanh
func.func @gemma2_softcap(%input_ids: tensor<?x?xi64>, %type_as_8: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x16xf32>) {
  %lm_head = onnx.Constant {value = dense_resource<model.lm_head.weight> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %val_609 = onnx.Constant {value = dense<3.000000e+01> : tensor<f32>} : () -> tensor<f32>
  %embedding = onnx.Gather %lm_head, %input_ids : (tensor<16x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  %val_608 = onnx.Transpose %lm_head {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %linear_14 = onnx.MatMul %type_as_8, %val_608 : (tensor<?x?x8xf32>, tensor<8x16xf32>) -> tensor<?x?x16xf32>
  %div_2 = onnx.Div %linear_14, %val_609 : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  %tanh_2 = onnx.Tanh %div_2 : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %logits = onnx.Mul %tanh_2, %val_609 : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  return %embedding, %logits : tensor<?x?x8xf32>, tensor<?x?x16xf32>
}

// -----

// Tied weights stored twice (an exporter that does not share initializers):
// the [hidden, vocab] weight is the table transposed, byte for byte, so the
// lm head is the table. With detect-tied=false it is a transposed copy.
// CHECK-LABEL: func @duplicated_tied
// CHECK: %[[TABLE:.+]] = onnx.Constant {value = dense_resource<embed> : tensor<3x2xf32>}
// CHECK: transformer.logits %{{.+}}, %[[TABLE]] : (tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<?x3xf32>
// NOTIED-LABEL: func @duplicated_tied
// NOTIED: %[[WT:.+]] = onnx.Constant {value = dense_resource<head.T> : tensor<3x2xf32>}
// NOTIED: transformer.logits %{{.+}}, %[[WT]] : (tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<?x3xf32>
func.func @duplicated_tied(%ids: tensor<?x?xi64>, %h: tensor<?x?x2xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x3xf32>) {
  %embed = onnx.Constant {value = dense_resource<embed> : tensor<3x2xf32>} : () -> tensor<3x2xf32>
  %head = onnx.Constant {value = dense_resource<head> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %e = onnx.Gather %embed, %ids : (tensor<3x2xf32>, tensor<?x?xi64>) -> tensor<?x?x2xf32>
  %logits = onnx.MatMul %h, %head : (tensor<?x?x2xf32>, tensor<2x3xf32>) -> tensor<?x?x3xf32>
  return %e, %logits : tensor<?x?x2xf32>, tensor<?x?x3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      embed: "0x040000000000803F0000004000004040000080400000A0400000C040",
      head: "0x040000000000803F000040400000A04000000040000080400000C040"
    }
  }
#-}

// -----

// A bf16 model returning f32 logits: the Cast sets the logits' type.
// CHECK-LABEL: func @f32_logits
// CHECK: %[[L:.+]] = transformer.logits %{{.+}}, %{{.+}} : (tensor<?x8xbf16>, tensor<16x8xbf16>) -> tensor<?x16xf32>
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[L]] like %{{.+}} : tensor<?x16xf32>, tensor<?x?x8xbf16> -> tensor<?x?x16xf32>
// CHECK-NEXT: return %{{.+}}, %[[Y]]
func.func @f32_logits(%ids: tensor<?x?xi64>, %h: tensor<?x?x8xbf16>) -> (tensor<?x?x8xbf16>, tensor<?x?x16xf32>) {
  %embed = onnx.Constant {value = dense_resource<embed> : tensor<16x8xbf16>} : () -> tensor<16x8xbf16>
  %e = onnx.Gather %embed, %ids : (tensor<16x8xbf16>, tensor<?x?xi64>) -> tensor<?x?x8xbf16>
  %t = onnx.Transpose %embed {perm = array<i64: 1, 0>} : (tensor<16x8xbf16>) -> tensor<8x16xbf16>
  %l = onnx.MatMul %h, %t : (tensor<?x?x8xbf16>, tensor<8x16xbf16>) -> tensor<?x?x16xbf16>
  %logits = onnx.Cast %l {to = 1 : i64} : (tensor<?x?x16xbf16>) -> tensor<?x?x16xf32>
  return %e, %logits : tensor<?x?x8xbf16>, tensor<?x?x16xf32>
}

// -----

// A token-major function (after accel-raise-attention) returns the logits
// reshaped to [-1, vocab]: that Reshape is the logits' own [T, V].
// CHECK-LABEL: func @token_major_output
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi64>, %[[H:[^:]+]]: tensor<?x?x8xf32>)
// CHECK: %[[T:.+]] = transformer.flatten_tokens %[[H]]
// CHECK-NEXT: %[[L:.+]] = transformer.logits %[[T]], %{{.+}} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
// CHECK-NEXT: return %{{.+}}, %[[L]] : tensor<?x?x8xf32>, tensor<?x16xf32>
func.func @token_major_output(%ids: tensor<?x?xi64>, %h: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x16xf32>) {
  %embed = onnx.Constant {value = dense_resource<embed> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %flat = onnx.Constant {value = dense<[-1, 16]> : tensor<2xi64>} : () -> tensor<2xi64>
  %e = onnx.Gather %embed, %ids : (tensor<16x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  %t = onnx.Transpose %embed {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %l = onnx.MatMul %h, %t : (tensor<?x?x8xf32>, tensor<8x16xf32>) -> tensor<?x?x16xf32>
  %logits = onnx.Reshape %l, %flat : (tensor<?x?x16xf32>, tensor<2xi64>) -> tensor<?x16xf32>
  return %e, %logits : tensor<?x?x8xf32>, tensor<?x16xf32>
}

// -----

// Negative: the returned projection has 12 out features, not the
// vocabulary (16) of the embedding table.
// CHECK-LABEL: func @not_vocab
// CHECK-NOT: transformer.logits
// CHECK: onnx.MatMul
func.func @not_vocab(%ids: tensor<?x?xi64>, %h: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x12xf32>) {
  %embed = onnx.Constant {value = dense_resource<embed> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %w = onnx.Constant {value = dense_resource<w> : tensor<8x12xf32>} : () -> tensor<8x12xf32>
  %e = onnx.Gather %embed, %ids : (tensor<16x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  %y = onnx.MatMul %h, %w : (tensor<?x?x8xf32>, tensor<8x12xf32>) -> tensor<?x?x12xf32>
  return %e, %y : tensor<?x?x8xf32>, tensor<?x?x12xf32>
}

// -----

// Negative: a vocabulary-sized projection that is not the graph output (a
// Softmax follows: the graph returns probabilities, not logits).
// CHECK-LABEL: func @not_output
// CHECK-NOT: transformer.logits
// CHECK: onnx.MatMul
func.func @not_output(%ids: tensor<?x?xi64>, %h: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x16xf32>) {
  %embed = onnx.Constant {value = dense_resource<embed> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %e = onnx.Gather %embed, %ids : (tensor<16x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  %t = onnx.Transpose %embed {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %l = onnx.MatMul %h, %t : (tensor<?x?x8xf32>, tensor<8x16xf32>) -> tensor<?x?x16xf32>
  %p = onnx.Softmax %l {axis = -1 : i64} : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  return %e, %p : tensor<?x?x8xf32>, tensor<?x?x16xf32>
}

// -----

// Negative: Tanh(x / 30) * 50 is not a softcap (softcap * tanh(x /
// softcap)), so the MatMul does not produce the graph logits: nothing is
// raised.
// CHECK-LABEL: func @softcap_mismatch
// CHECK-NOT: transformer.logits
// CHECK: onnx.Tanh
func.func @softcap_mismatch(%ids: tensor<?x?xi64>, %h: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x16xf32>) {
  %embed = onnx.Constant {value = dense_resource<embed> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %c30 = onnx.Constant {value = dense<3.000000e+01> : tensor<f32>} : () -> tensor<f32>
  %c50 = onnx.Constant {value = dense<5.000000e+01> : tensor<f32>} : () -> tensor<f32>
  %e = onnx.Gather %embed, %ids : (tensor<16x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  %t = onnx.Transpose %embed {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %l = onnx.MatMul %h, %t : (tensor<?x?x8xf32>, tensor<8x16xf32>) -> tensor<?x?x16xf32>
  %d = onnx.Div %l, %c30 : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  %th = onnx.Tanh %d : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %y = onnx.Mul %th, %c50 : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  return %e, %y : tensor<?x?x8xf32>, tensor<?x?x16xf32>
}
