// RUN: accel-opt %s -split-input-file -accel-lower-to-exec | FileCheck %s
//
// Embedding/ lowering: token ids and positions are step inputs; embedding
// reads its table as a weight; vocabulary-parallel attributes carry over.

// CHECK-LABEL: exec.schedule @main mixed
// CHECK-NEXT: %[[T:.+]] = exec.step_size tokens
// CHECK-NEXT: %[[IDS:.+]] = exec.step_input token_ids : !exec.view<?xi64>
// CHECK-NEXT: %[[POS:.+]] = exec.step_input positions : !exec.view<?xi64>
// CHECK: %[[TOK:.+]] = exec.weight "{{.*}}" @weights[0] {{.*}} : !exec.view<16x8xf32>
// CHECK-NEXT: %[[X:.+]] = exec.alloc sizes(%[[T]]) : !exec.view<?x8xf32>
// CHECK-NEXT: exec.embedding %[[TOK]][%[[IDS]]] -> %[[X]] {scale = 2.000000e+00 : f64, vocab_shards = 2 : i64, vocab_size = 30 : i64}
// GPT-2's learned positions: an embedding read with the positions.
// CHECK: %[[WPE:.+]] = exec.weight "{{.*}}" @weights[512] {{.*}} : !exec.view<32x8xf32>
// CHECK-NEXT: %[[P:.+]] = exec.alloc sizes(%[[T]]) : !exec.view<?x8xf32>
// CHECK-NEXT: exec.embedding %[[WPE]][%[[POS]]] -> %[[P]] : !exec.view<32x8xf32>, !exec.view<?xi64> -> !exec.view<?x8xf32>
func.func @embeddings(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x8xf32> {
  %pos = transformer.positions %b : tensor<?xi64>
  %table = onnx.Constant {value = dense<0.25> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %x = transformer.embedding %table[%ids] {scale = 2.0 : f64, vocab_shards = 2 : i64, vocab_size = 30 : i64} : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %wpe = onnx.Constant {value = dense<0.5> : tensor<32x8xf32>} : () -> tensor<32x8xf32>
  %p = transformer.embedding %wpe[%pos] : (tensor<32x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %s = transformer.residual_add %x, %p : tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}

// -----

// Ids an exporter reshaped to [1, T] (the `?` batch is 1: TokenShapes) are
// views of the step input; a weight read twice is one exec.weight.
// CHECK-LABEL: exec.schedule @main mixed
// CHECK: %[[IDS:.+]] = exec.step_input token_ids : !exec.view<?xi64>
// CHECK: %[[V:.+]] = exec.view %[[IDS]] : !exec.view<?xi64> -> !exec.view<1x?xi64>
// CHECK: %[[FLAT:.+]] = exec.view %[[V]] : !exec.view<1x?xi64> -> !exec.view<?xi64>
// CHECK: %[[TABLE:.+]] = exec.weight
// CHECK: exec.embedding %[[TABLE]][%[[FLAT]]]
// CHECK-NOT: exec.weight
// CHECK: exec.embedding %[[TABLE]][%[[FLAT]]]
func.func @batch_major_ids(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x8xf32> {
  %shape = onnx.Constant {value = dense<[1, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %bi = onnx.Reshape %ids, %shape : (tensor<?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
  %flat = transformer.flatten_tokens %bi : tensor<?x?xi64> -> tensor<?xi64>
  %table = onnx.Constant {value = dense<0.25> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %x = transformer.embedding %table[%flat] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %y = transformer.embedding %table[%flat] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %s = transformer.residual_add %x, %y : tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}
