// RUN: accel-opt %s -split-input-file -accel-raise-residual-add | FileCheck %s
//
// The adds of the residual stream, which starts at the embedding (hidden
// 64 → 8 here), and the adds that are not on it (attention's).

// llama_op18, model.model.layers.0: `add_370 = Add(embedding, o_proj)` and
// `add_420 = Add(add_370, down_proj)`, on a raised embedding.
// CHECK-LABEL: func @llama_layer
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi64>, %[[ATTN:[^:]+]]: tensor<?x?x8xf32>, %[[MLP:[^:]+]]: tensor<?x?x8xf32>)
// CHECK: %[[E:.+]] = transformer.embedding
// CHECK-NEXT: %[[B0:.+]] = transformer.flatten_tokens %[[ATTN]] : tensor<?x?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: %[[S0:.+]] = transformer.residual_add %[[E]], %[[B0]] : tensor<?x8xf32>
// CHECK-NEXT: %[[B1:.+]] = transformer.flatten_tokens %[[MLP]] : tensor<?x?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: %[[S1:.+]] = transformer.residual_add %[[S0]], %[[B1]] : tensor<?x8xf32>
// CHECK-NEXT: %[[H:.+]] = transformer.unflatten_tokens %[[S1]] like %[[IDS]] : tensor<?x8xf32>, tensor<?x?xi64> -> tensor<?x?x8xf32>
// CHECK-NEXT: return %[[H]]
func.func @llama_layer(%input_ids: tensor<?x?xi64>, %linear_3: tensor<?x?x8xf32>, %linear_6: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %weight = onnx.Constant {value = dense_resource<model.model.embed_tokens.weight> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %ids = transformer.flatten_tokens %input_ids : tensor<?x?xi64> -> tensor<?xi64>
  %rows = transformer.embedding %weight[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %embedding = transformer.unflatten_tokens %rows like %input_ids : tensor<?x8xf32>, tensor<?x?xi64> -> tensor<?x?x8xf32>
  %add_370 = onnx.Add %embedding, %linear_3 : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %add_420 = onnx.Add %add_370, %linear_6 : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %add_420 : tensor<?x?x8xf32>
}

// -----

// gpt2_op18: the stream starts at token + position embeddings (a
// broadcasting Add, itself not a residual add), and the residual is the
// second operand of `add_211 = Add(view_8, add_17)`.
// CHECK-LABEL: func @gpt2_stream
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi64>, %[[POS:[^:]+]]: tensor<1x?xi64>, %[[ATTN:[^:]+]]: tensor<?x?x8xf32>)
// CHECK: %[[ADD17:.+]] = onnx.Add %{{.+}}, %{{.+}} : (tensor<?x?x8xf32>, tensor<1x?x8xf32>) -> tensor<?x?x8xf32>
// CHECK-NEXT: %[[R:.+]] = transformer.flatten_tokens %[[ADD17]]
// CHECK-NEXT: %[[B:.+]] = transformer.flatten_tokens %[[ATTN]]
// CHECK-NEXT: %[[S:.+]] = transformer.residual_add %[[R]], %[[B]] : tensor<?x8xf32>
// CHECK-NEXT: transformer.unflatten_tokens %[[S]] like %[[ADD17]]
func.func @gpt2_stream(%input_ids: tensor<?x?xi64>, %unsqueeze: tensor<1x?xi64>, %view_8: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %wte = onnx.Constant {value = dense_resource<model.lm_head.weight> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %wpe = onnx.Constant {value = dense_resource<model.transformer.wpe.weight> : tensor<12x8xf32>} : () -> tensor<12x8xf32>
  %embedding = onnx.Gather %wte, %input_ids : (tensor<16x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  %embedding_1 = onnx.Gather %wpe, %unsqueeze : (tensor<12x8xf32>, tensor<1x?xi64>) -> tensor<1x?x8xf32>
  %add_17 = onnx.Add %embedding, %embedding_1 : (tensor<?x?x8xf32>, tensor<1x?x8xf32>) -> tensor<?x?x8xf32>
  %add_211 = onnx.Add %view_8, %add_17 : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %add_211 : tensor<?x?x8xf32>
}

// -----

// gemma2_op18, model.model.layers.0: the stream is the scaled embedding
// (`mul_3`), the branch the post-attention norm's output.
// CHECK-LABEL: func @gemma2_scaled_stream
// CHECK: %[[MUL3:.+]] = onnx.Mul
// CHECK-NEXT: %[[R:.+]] = transformer.flatten_tokens %[[MUL3]]
// CHECK-NEXT: %[[B:.+]] = transformer.flatten_tokens
// CHECK-NEXT: transformer.residual_add %[[R]], %[[B]] : tensor<?x8xbf16>
func.func @gemma2_scaled_stream(%input_ids: tensor<?x?xi64>, %type_as_1: tensor<?x?x8xbf16>) -> tensor<?x?x8xbf16> {
  %lm_head = onnx.Constant {value = dense_resource<model.lm_head.weight> : tensor<16x8xbf16>} : () -> tensor<16x8xbf16>
  %embed_scale = onnx.Constant {value = dense<8.000000e+00> : tensor<bf16>} : () -> tensor<bf16>
  %embedding = onnx.Gather %lm_head, %input_ids : (tensor<16x8xbf16>, tensor<?x?xi64>) -> tensor<?x?x8xbf16>
  %mul_3 = onnx.Mul %embedding, %embed_scale : (tensor<?x?x8xbf16>, tensor<bf16>) -> tensor<?x?x8xbf16>
  %add_583 = onnx.Add %mul_3, %type_as_1 : (tensor<?x?x8xbf16>, tensor<?x?x8xbf16>) -> tensor<?x?x8xbf16>
  return %add_583 : tensor<?x?x8xbf16>
}

// -----

// gptneox_op18, model.gpt_neox.layers.1 (use_parallel_residual): `add_529 =
// Add(linear_7, linear_5)` sums the MLP and attention branches, neither on
// the stream, and `add_534 = Add(add_529, add_336)` adds the sum to the
// stream. Both become residual adds; the stream stays the residual of the
// outer one, whichever add is raised first.
// CHECK-LABEL: func @parallel_residual
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi64>, %[[ATTN:[^:]+]]: tensor<?x?x8xf32>, %[[MLP:[^:]+]]: tensor<?x?x8xf32>)
// CHECK: %[[E:.+]] = transformer.embedding
// CHECK-DAG: %[[M:.+]] = transformer.flatten_tokens %[[MLP]] : tensor<?x?x8xf32> -> tensor<?x8xf32>
// CHECK-DAG: %[[A:.+]] = transformer.flatten_tokens %[[ATTN]] : tensor<?x?x8xf32> -> tensor<?x8xf32>
// CHECK: %[[B:.+]] = transformer.residual_add %[[M]], %[[A]] : tensor<?x8xf32>
// CHECK: %[[S:.+]] = transformer.residual_add %[[E]], %[[B]] : tensor<?x8xf32>
// CHECK-NEXT: %[[H:.+]] = transformer.unflatten_tokens %[[S]] like %[[IDS]]
// CHECK-NEXT: return %[[H]]
// CHECK-NOT: onnx.Add
func.func @parallel_residual(%input_ids: tensor<?x?xi64>, %linear_5: tensor<?x?x8xf32>, %linear_7: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %weight = onnx.Constant {value = dense_resource<model.gpt_neox.embed_in.weight> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %ids = transformer.flatten_tokens %input_ids : tensor<?x?xi64> -> tensor<?xi64>
  %rows = transformer.embedding %weight[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %add_336 = transformer.unflatten_tokens %rows like %input_ids : tensor<?x8xf32>, tensor<?x?xi64> -> tensor<?x?x8xf32>
  %add_529 = onnx.Add %linear_7, %linear_5 : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %add_534 = onnx.Add %add_529, %add_336 : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %add_534 : tensor<?x?x8xf32>
}

// -----

// falcon_op18, model.transformer.h.1 (parallel_attn), with the outer add
// raised already: `add_469 = Add(matmul_8, matmul_6)` is the branch of a
// residual_add.
// CHECK-LABEL: func @parallel_branch_of_residual_add
// CHECK: %[[B:.+]] = transformer.residual_add %{{.+}}, %{{.+}} : tensor<?x8xf32>
// CHECK-NEXT: transformer.residual_add %{{.+}}, %[[B]] : tensor<?x8xf32>
// CHECK-NOT: onnx.Add
func.func @parallel_branch_of_residual_add(%input_ids: tensor<?x?xi64>, %matmul_6: tensor<?x?x8xf32>, %matmul_8: tensor<?x?x8xf32>) -> tensor<?x8xf32> {
  %weight = onnx.Constant {value = dense_resource<model.transformer.word_embeddings.weight> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %ids = transformer.flatten_tokens %input_ids : tensor<?x?xi64> -> tensor<?xi64>
  %rows = transformer.embedding %weight[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %add_469 = onnx.Add %matmul_8, %matmul_6 : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %b = transformer.flatten_tokens %add_469 : tensor<?x?x8xf32> -> tensor<?x8xf32>
  %add_478 = transformer.residual_add %rows, %b : tensor<?x8xf32>
  return %add_478 : tensor<?x8xf32>
}

// -----

// Negative: a sum of two branches that is not added to the stream (read by
// the function's result) is no branch of it.
// CHECK-LABEL: func @branch_sum_elsewhere
// CHECK-NOT: transformer.residual_add
// CHECK: onnx.Add
func.func @branch_sum_elsewhere(%a: tensor<?x?x8xf32>, %b: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %s = onnx.Add %a, %b : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %s : tensor<?x?x8xf32>
}

// -----

// Negative: rotary's `q * cos + rotate_half(q) * sin` (qwen2_op18,
// add_242), per-head values that are not on the residual stream.
// CHECK-LABEL: func @rotary_add
// CHECK-NOT: transformer.
// CHECK: onnx.Add
func.func @rotary_add(%mul_163: tensor<?x4x?x16xf32>, %mul_180: tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %add_242 = onnx.Add %mul_163, %mul_180 : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %add_242 : tensor<?x4x?x16xf32>
}

// -----

// Negative: scores + causal mask (qwen2_op18, val_299), with an embedding in
// the function: neither operand is on the stream.
// CHECK-LABEL: func @scores_plus_mask
// CHECK-NOT: transformer.residual_add
// CHECK: onnx.Add %{{.+}}, %{{.+}} : (tensor<?x4x?x?xf32>, tensor<?x1x?x?xf32>)
func.func @scores_plus_mask(%ids: tensor<?x?xi64>, %val_298: tensor<?x4x?x?xf32>, %val_297: tensor<?x1x?x?xf32>) -> (tensor<?x?x8xf32>, tensor<?x4x?x?xf32>) {
  %table = onnx.Constant {value = dense_resource<table> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %e = onnx.Gather %table, %ids : (tensor<16x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  %val_299 = onnx.Add %val_298, %val_297 : (tensor<?x4x?x?xf32>, tensor<?x1x?x?xf32>) -> tensor<?x4x?x?xf32>
  return %e, %val_299 : tensor<?x?x8xf32>, tensor<?x4x?x?xf32>
}

// -----

// Negative: the stream plus a same-shape constant is a bias, not a
// branch; plus a broadcast [1, S, H] tensor is not a same-shape add.
// CHECK-LABEL: func @stream_plus_constant_or_broadcast
// CHECK-NOT: transformer.residual_add
// CHECK-COUNT-2: onnx.Add
func.func @stream_plus_constant_or_broadcast(%ids: tensor<2x3xi64>, %p: tensor<1x3x8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
  %table = onnx.Constant {value = dense_resource<table> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %c = onnx.Constant {value = dense<1.0> : tensor<2x3x8xf32>} : () -> tensor<2x3x8xf32>
  %e = onnx.Gather %table, %ids : (tensor<16x8xf32>, tensor<2x3xi64>) -> tensor<2x3x8xf32>
  %biased = onnx.Add %e, %c : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %a = onnx.Add %p, %e : (tensor<1x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  return %biased, %a : tensor<2x3x8xf32>, tensor<2x3x8xf32>
}

// -----

// Negative: two activations of the same type, neither reached from an
// embedding (the function has none): not known to be the residual stream.
// CHECK-LABEL: func @no_stream
// CHECK-NOT: transformer.
// CHECK: onnx.Add
func.func @no_stream(%a: tensor<?x?x8xf32>, %b: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %s = onnx.Add %a, %b : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %s : tensor<?x?x8xf32>
}

// -----

// In a token-major function (it takes !transformer.batch) the batch is one
// row of tokens, so GPT-2's token embeddings [?, ?, 8] and position
// embeddings [1, ?, 8] hold the same tokens: their sum is a residual add.
// CHECK-LABEL: func.func @token_major_embedding_sum
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?xi64>, %[[POS:[^:]+]]: tensor<?xi64>,
// CHECK: %[[TOK:.+]] = transformer.embedding %{{.+}}[%[[IDS]]]
// CHECK: %[[PE:.+]] = transformer.embedding %{{.+}}[%[[POS]]]
// CHECK: transformer.residual_add %[[TOK]], %[[PE]]
// CHECK-NOT: onnx.Add
func.func @token_major_embedding_sum(%ids: tensor<?xi64>, %pos: tensor<?xi64>, %batch: !transformer.batch, %row: tensor<?x?xi64>, %prow: tensor<1x?xi64>) -> tensor<?x?x8xf32> {
  %wte = onnx.Constant {value = dense<0.5> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %wpe = onnx.Constant {value = dense<0.25> : tensor<32x8xf32>} : () -> tensor<32x8xf32>
  %t = transformer.embedding %wte[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %tu = transformer.unflatten_tokens %t like %row : tensor<?x8xf32>, tensor<?x?xi64> -> tensor<?x?x8xf32>
  %p = transformer.embedding %wpe[%pos] : (tensor<32x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %pu = transformer.unflatten_tokens %p like %prow : tensor<?x8xf32>, tensor<1x?xi64> -> tensor<1x?x8xf32>
  %sum = onnx.Add %tu, %pu : (tensor<?x?x8xf32>, tensor<1x?x8xf32>) -> tensor<?x?x8xf32>
  return %sum : tensor<?x?x8xf32>
}

// -----

// Not raised: outside a token-major function the batch may hold several
// rows, and [1, ?, 8] broadcasts over them; a residual_add of the flattened
// tokens would not.
// CHECK-LABEL: func.func @batch_major_embedding_sum
// CHECK: onnx.Add
// CHECK-NOT: transformer.residual_add
func.func @batch_major_embedding_sum(%ids: tensor<?xi64>, %pos: tensor<?xi64>, %row: tensor<?x?xi64>, %prow: tensor<1x?xi64>) -> tensor<?x?x8xf32> {
  %wte = onnx.Constant {value = dense<0.5> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %wpe = onnx.Constant {value = dense<0.25> : tensor<32x8xf32>} : () -> tensor<32x8xf32>
  %t = transformer.embedding %wte[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %tu = transformer.unflatten_tokens %t like %row : tensor<?x8xf32>, tensor<?x?xi64> -> tensor<?x?x8xf32>
  %p = transformer.embedding %wpe[%pos] : (tensor<32x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %pu = transformer.unflatten_tokens %p like %prow : tensor<?x8xf32>, tensor<1x?xi64> -> tensor<1x?x8xf32>
  %sum = onnx.Add %tu, %pu : (tensor<?x?x8xf32>, tensor<1x?x8xf32>) -> tensor<?x?x8xf32>
  return %sum : tensor<?x?x8xf32>
}
