// RUN: accel-opt %s -split-input-file -accel-partition=tp-size=2 | FileCheck %s
//
// The lm head, vocabulary-parallel: rank r projects onto vocabulary rows
// [r*V/2, (r+1)*V/2) and an all_gather along the vocabulary axis gives every
// rank the whole logits row. Row i of the tables holds i.

// Tied embeddings (GPT-2, Gemma): the vocabulary-parallel lookup
// (partition-embedding.mlir) and the head read one sharded table, the whole
// one is gone. Gemma 2's final softcap is elementwise and stays on each
// slice; a bias is split with the rows.
// CHECK-LABEL: func.func @tied_softcap_bias
// CHECK: %[[H:.+]] = onnx.Constant {accel.tp_shards = [dense<{{\[}}[0.0{{.*}}, [1.0{{.*}}]]> : tensor<2x2xf32>, dense<{{\[}}[2.0{{.*}}, [3.0{{.*}}]]> : tensor<2x2xf32>]
// CHECK: %[[E:.+]] = transformer.embedding %[[H]][%{{.+}}] {vocab_shards = 2 : i64} : (tensor<2x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
// CHECK: %[[R:.+]] = transformer.all_reduce %[[E]] kind = sum {group_size = 2 : i64}
// CHECK: %[[B:.+]] = onnx.Constant {accel.tp_shards = [dense<[5.0{{.*}}, 6.0{{.*}}]> : tensor<2xf32>, dense<[7.0{{.*}}, 8.0{{.*}}]> : tensor<2xf32>]
// CHECK: %[[L:.+]] = transformer.logits %[[R]], %[[H]] bias(%[[B]]) {softcap = 3.0{{.*}}} : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
// CHECK: %[[G:.+]] = transformer.all_gather %[[L]] {axis = 1 : i64, group_size = 2 : i64} : tensor<?x2xf32> -> tensor<?x4xf32>
// CHECK: return %[[G]]
func.func @tied_softcap_bias(%ids: tensor<?xi64>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x4xf32> {
  %t = onnx.Constant {value = dense<[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %b = onnx.Constant {value = dense<[5.0, 6.0, 7.0, 8.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %e = transformer.embedding %t[%ids] : (tensor<4x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
  %l = transformer.logits %e, %t bias(%b) {softcap = 3.0 : f64} : (tensor<?x2xf32>, tensor<4x2xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %l : tensor<?x4xf32>
}

// -----

// select_last (each sequence's last token): the gather is the same, on
// [sequences, vocab/2].
// CHECK-LABEL: func.func @select_last
// CHECK: %[[L:.+]] = transformer.logits %{{.+}}, %{{.+}} select_last(%{{.+}}) : (tensor<?x2xf32>, tensor<2x2xf32>, !transformer.batch) -> tensor<?x2xf32>
// CHECK: transformer.all_gather %[[L]] {axis = 1 : i64, group_size = 2 : i64} : tensor<?x2xf32> -> tensor<?x4xf32>
func.func @select_last(%h: tensor<?x2xf32>, %batch: !transformer.batch, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x4xf32> {
  %w = onnx.Constant {value = dense<1.0> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %l = transformer.logits %h, %w select_last(%batch) : (tensor<?x2xf32>, tensor<4x2xf32>, !transformer.batch) -> tensor<?x4xf32>
  return %l : tensor<?x4xf32>
}

// -----

// A vocabulary of 5 at 2 ranks, untied, with a bias: the head and the bias
// are padded with a zero row and a zero to 6, each rank projects onto 3
// entries (rank 1's last one the padding), and after the all_gather a split
// keeps the 5 real logits: the padding column never reaches the result.
// CHECK-LABEL: func.func @vocabulary_padded_bias
// CHECK-DAG: %[[H:.+]] = onnx.Constant {accel.tp_shards = [dense<{{\[}}[0.0{{.*}}, [1.0{{.*}}, [2.0{{.*}}]]> : tensor<3x2xf32>, dense<{{\[}}[3.0{{.*}}, [4.0{{.*}}, [0.0{{.*}}]]> : tensor<3x2xf32>]
// CHECK-DAG: %[[B:.+]] = onnx.Constant {accel.tp_shards = [dense<[5.0{{.*}}, 6.0{{.*}}, 7.0{{.*}}]> : tensor<3xf32>, dense<[8.0{{.*}}, 9.0{{.*}}, 0.0{{.*}}]> : tensor<3xf32>]
// CHECK: %[[L:.+]] = transformer.logits %{{.+}}, %[[H]] bias(%[[B]]) : (tensor<?x2xf32>, tensor<3x2xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: %[[G:.+]] = transformer.all_gather %[[L]] {axis = 1 : i64, group_size = 2 : i64} : tensor<?x3xf32> -> tensor<?x6xf32>
// CHECK-NEXT: %[[V:.+]]:2 = transformer.split %[[G]] : tensor<?x6xf32> -> tensor<?x5xf32>, tensor<?x1xf32>
// CHECK-NEXT: return %[[V]]#0 : tensor<?x5xf32>
func.func @vocabulary_padded_bias(%h: tensor<?x2xf32>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x5xf32> {
  %w = onnx.Constant {value = dense<[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0]]> : tensor<5x2xf32>} : () -> tensor<5x2xf32>
  %b = onnx.Constant {value = dense<[5.0, 6.0, 7.0, 8.0, 9.0]> : tensor<5xf32>} : () -> tensor<5xf32>
  %l = transformer.logits %h, %w bias(%b) : (tensor<?x2xf32>, tensor<5x2xf32>, tensor<5xf32>) -> tensor<?x5xf32>
  return %l : tensor<?x5xf32>
}
