// RUN: accel-opt %s -split-input-file -accel-raise-embedding | FileCheck %s
//
// Embedding lookups as the fixtures spell them (vocab 256 → 16, hidden
// 64 → 8): `Gather(embed_tokens.weight, input_ids)`, Gemma's scaled
// embedding, GPT-2's learned position embedding.

// llama_op18, model.model.embed_tokens.
// CHECK-LABEL: func @llama_embed_tokens
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi64>)
// CHECK-NEXT: %[[TABLE:.+]] = onnx.Constant {value = dense_resource<model.model.embed_tokens.weight> : tensor<16x8xf32>}
// CHECK-NEXT: %[[I:.+]] = transformer.flatten_tokens %[[IDS]] : tensor<?x?xi64> -> tensor<?xi64>
// CHECK-NEXT: %[[E:.+]] = transformer.embedding %[[TABLE]][%[[I]]] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
// CHECK-NEXT: %[[H:.+]] = transformer.unflatten_tokens %[[E]] like %[[IDS]] : tensor<?x8xf32>, tensor<?x?xi64> -> tensor<?x?x8xf32>
// CHECK-NEXT: return %[[H]]
func.func @llama_embed_tokens(%input_ids: tensor<?x?xi64>) -> tensor<?x?x8xf32> {
  %weight = onnx.Constant {value = dense_resource<model.model.embed_tokens.weight> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %embedding = onnx.Gather %weight, %input_ids {axis = 0 : i64} : (tensor<16x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  return %embedding : tensor<?x?x8xf32>
}

// -----

// gemma_op18: the embedding scaled by embed_scale = sqrt(hidden).
// CHECK-LABEL: func @gemma_embed_scale
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi64>)
// CHECK: %[[I:.+]] = transformer.flatten_tokens %[[IDS]]
// CHECK-NEXT: %[[E:.+]] = transformer.embedding %{{.+}}[%[[I]]] {scale = 8.000000e+00 : f64} : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
// CHECK-NEXT: %[[H:.+]] = transformer.unflatten_tokens %[[E]] like %[[IDS]]
// CHECK-NEXT: return %[[H]]
// CHECK-NOT: onnx.Mul
func.func @gemma_embed_scale(%input_ids: tensor<?x?xi64>) -> tensor<?x?x8xf32> {
  %lm_head = onnx.Constant {value = dense_resource<model.lm_head.weight> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %embed_scale = onnx.Constant {value = dense<8.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %embedding = onnx.Gather %lm_head, %input_ids : (tensor<16x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  %mul_3 = onnx.Mul %embedding, %embed_scale : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  return %mul_3 : tensor<?x?x8xf32>
}

// -----

// gpt2_op18, model.transformer.wpe: positions `Unsqueeze(Range(0, S))`,
// [1, S] ids; the rows come back [1, S, hidden].
// CHECK-LABEL: func @gpt2_wpe
// CHECK: %[[POS:.+]] = onnx.Unsqueeze
// CHECK-NEXT: %[[I:.+]] = transformer.flatten_tokens %[[POS]] : tensor<1x?xi64> -> tensor<?xi64>
// CHECK-NEXT: %[[E:.+]] = transformer.embedding %{{.+}}[%[[I]]] : (tensor<12x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
// CHECK-NEXT: %[[H:.+]] = transformer.unflatten_tokens %[[E]] like %[[POS]] : tensor<?x8xf32>, tensor<1x?xi64> -> tensor<1x?x8xf32>
// CHECK-NEXT: return %[[H]]
func.func @gpt2_wpe(%sym_size_int_25: tensor<i64>) -> tensor<1x?x8xf32> {
  %wpe = onnx.Constant {value = dense_resource<model.transformer.wpe.weight> : tensor<12x8xf32>} : () -> tensor<12x8xf32>
  %val_8 = onnx.Constant {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %val_10 = onnx.Constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %val_30 = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %arange = onnx.Range %val_8, %sym_size_int_25, %val_10 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %unsqueeze = onnx.Unsqueeze %arange axes(%val_30) : (tensor<?xi64>, tensor<1xi64>) -> tensor<1x?xi64>
  %embedding_1 = onnx.Gather %wpe, %unsqueeze : (tensor<12x8xf32>, tensor<1x?xi64>) -> tensor<1x?x8xf32>
  return %embedding_1 : tensor<1x?x8xf32>
}

// -----

// Token-major i32 ids need no views.
// CHECK-LABEL: func @flat_ids
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?xi32>)
// CHECK-NEXT: %[[TABLE:.+]] = onnx.Constant
// CHECK-NEXT: %[[E:.+]] = transformer.embedding %[[TABLE]][%[[IDS]]] : (tensor<16x8xbf16>, tensor<?xi32>) -> tensor<?x8xbf16>
// CHECK-NEXT: return %[[E]]
func.func @flat_ids(%ids: tensor<?xi32>) -> tensor<?x8xbf16> {
  %table = onnx.Constant {value = dense_resource<table> : tensor<16x8xbf16>} : () -> tensor<16x8xbf16>
  %e = onnx.Gather %table, %ids : (tensor<16x8xbf16>, tensor<?xi32>) -> tensor<?x8xbf16>
  return %e : tensor<?x8xbf16>
}

// -----

// Negative: a Gather on axis 1 picks columns, not rows.
// CHECK-LABEL: func @gather_axis_1
// CHECK-NOT: transformer.
// CHECK: onnx.Gather
func.func @gather_axis_1(%idx: tensor<?xi64>) -> tensor<16x?xf32> {
  %table = onnx.Constant {value = dense_resource<table> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %g = onnx.Gather %table, %idx {axis = 1 : i64} : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<16x?xf32>
  return %g : tensor<16x?xf32>
}

// -----

// Negative: the gathered tensor is an activation (rotary's cos cache
// indexed by positions, say), not a constant table.
// CHECK-LABEL: func @gather_activation
// CHECK-NOT: transformer.
// CHECK: onnx.Gather
func.func @gather_activation(%cos: tensor<?x8xf32>, %pos: tensor<?x?xi64>) -> tensor<?x?x8xf32> {
  %g = onnx.Gather %cos, %pos : (tensor<?x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  return %g : tensor<?x?x8xf32>
}

// -----

// Negative: a scalar index takes one row, with no token dimension.
// CHECK-LABEL: func @gather_scalar
// CHECK-NOT: transformer.
// CHECK: onnx.Gather
func.func @gather_scalar(%i: tensor<i64>) -> tensor<8xf32> {
  %table = onnx.Constant {value = dense_resource<table> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %g = onnx.Gather %table, %i : (tensor<16x8xf32>, tensor<i64>) -> tensor<8xf32>
  return %g : tensor<8xf32>
}

// -----

// Negative for the scale: a per-channel (1-D) factor is not a scalar scale,
// and a negative one is not a valid embedding scale; both Muls stay.
// CHECK-LABEL: func @not_a_scale
// CHECK: transformer.embedding %{{.+}}[%{{.+}}] : (tensor<16x8xf32>, tensor<?xi64>)
// CHECK-COUNT-2: onnx.Mul
func.func @not_a_scale(%ids: tensor<?x?xi64>, %v: tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %table = onnx.Constant {value = dense_resource<table> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %neg = onnx.Constant {value = dense<-2.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %e = onnx.Gather %table, %ids : (tensor<16x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  %a = onnx.Mul %e, %v : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %b = onnx.Mul %e, %neg : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  return %a, %b : tensor<?x?x8xf32>, tensor<?x?x8xf32>
}
