// RUN: accel-opt %s -split-input-file -accel-partition=tp-size=2 | FileCheck %s --check-prefix=TP2
// RUN: accel-opt %s -split-input-file -accel-partition=tp-size=4 | FileCheck %s --check-prefix=TP4
//
// The token embedding, vocabulary-parallel: rank r holds rows
// [r*V/N, (r+1)*V/N) of the table, its lookup ({vocab_shards = N}) returns
// zeros for the ids of other ranks, and an all_reduce sum right after the
// lookup gives every rank the whole embedding. Row i of the tables holds i.

// Untied (Llama): the lookup reads its shard; the lm head its own. The
// all_reduce feeds every former reader of the lookup.
// TP2-LABEL: func.func @untied
// TP2-DAG: %[[T:.+]] = onnx.Constant {accel.tp_shards = [dense<{{\[}}[0.0{{.*}}, [1.0{{.*}}]]> : tensor<2x2xf32>, dense<{{\[}}[2.0{{.*}}, [3.0{{.*}}]]> : tensor<2x2xf32>], value = dense<{{\[}}[0.0{{.*}}, [1.0{{.*}}]]> : tensor<2x2xf32>}
// TP2-DAG: %[[H:.+]] = onnx.Constant {accel.tp_shards = [dense<{{\[}}[4.0{{.*}}, [5.0{{.*}}]]> : tensor<2x2xf32>, dense<{{\[}}[6.0{{.*}}, [7.0{{.*}}]]> : tensor<2x2xf32>]
// TP2: %[[E:.+]] = transformer.embedding %[[T]][%{{.+}}] {vocab_shards = 2 : i64} : (tensor<2x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
// TP2-NEXT: %[[R:.+]] = transformer.all_reduce %[[E]] kind = sum {group_size = 2 : i64} : tensor<?x2xf32>
// TP2-NEXT: %[[L:.+]] = transformer.logits %[[R]], %[[H]] : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
// TP2-NEXT: transformer.all_gather %[[L]] {axis = 1 : i64, group_size = 2 : i64} : tensor<?x2xf32> -> tensor<?x4xf32>
// The whole tables are gone.
// TP2-NOT: tensor<4x2xf32>
// TP4-LABEL: func.func @untied
// TP4: %[[T:.+]] = onnx.Constant {accel.tp_shards = [dense<0.0{{.*}}> : tensor<1x2xf32>, dense<1.0{{.*}}> : tensor<1x2xf32>, dense<2.0{{.*}}> : tensor<1x2xf32>, dense<3.0{{.*}}> : tensor<1x2xf32>]
// TP4: %[[E:.+]] = transformer.embedding %[[T]][%{{.+}}] {vocab_shards = 4 : i64} : (tensor<1x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
// TP4-NEXT: transformer.all_reduce %[[E]] kind = sum {group_size = 4 : i64} : tensor<?x2xf32>
func.func @untied(%ids: tensor<?xi64>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 4, head_dim = 1, block_size = 16, f32>) -> tensor<?x4xf32> {
  %t = onnx.Constant {value = dense<[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %w = onnx.Constant {value = dense<[[4.0, 4.0], [5.0, 5.0], [6.0, 6.0], [7.0, 7.0]]> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %e = transformer.embedding %t[%ids] : (tensor<4x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
  %l = transformer.logits %e, %w : (tensor<?x2xf32>, tensor<4x2xf32>) -> tensor<?x4xf32>
  return %l : tensor<?x4xf32>
}

// -----

// Tied and scaled (Gemma): the lookup and the lm head read one sharded
// table (no second copy, the whole table is gone); the scale stays on the
// lookup, applied by each rank to its rows.
// TP2-LABEL: func.func @tied_scaled
// TP2: %[[T:.+]] = onnx.Constant {accel.tp_shards = [dense<{{\[}}[0.0{{.*}}, [1.0{{.*}}]]> : tensor<2x2xf32>, dense<{{\[}}[2.0{{.*}}, [3.0{{.*}}]]> : tensor<2x2xf32>]
// TP2-NOT: onnx.Constant
// TP2: %[[E:.+]] = transformer.embedding %[[T]][%{{.+}}] {scale = 1.5{{.*}} : f64, vocab_shards = 2 : i64} : (tensor<2x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
// TP2-NEXT: %[[R:.+]] = transformer.all_reduce %[[E]] kind = sum {group_size = 2 : i64} : tensor<?x2xf32>
// TP2-NEXT: %[[L:.+]] = transformer.logits %[[R]], %[[T]] : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
// TP2-NEXT: %[[G:.+]] = transformer.all_gather %[[L]] {axis = 1 : i64, group_size = 2 : i64} : tensor<?x2xf32> -> tensor<?x4xf32>
// TP2-NEXT: return %[[G]]
// TP4-LABEL: func.func @tied_scaled
// TP4: %[[T:.+]] = onnx.Constant {accel.tp_shards = [dense<0.0{{.*}}> : tensor<1x2xf32>, dense<1.0{{.*}}> : tensor<1x2xf32>, dense<2.0{{.*}}> : tensor<1x2xf32>, dense<3.0{{.*}}> : tensor<1x2xf32>]
// TP4-NOT: onnx.Constant
// TP4: transformer.embedding %[[T]][%{{.+}}] {scale = 1.5{{.*}} : f64, vocab_shards = 4 : i64}
// TP4: transformer.logits %{{.+}}, %[[T]] : (tensor<?x2xf32>, tensor<1x2xf32>) -> tensor<?x1xf32>
func.func @tied_scaled(%ids: tensor<?xi64>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 4, head_dim = 1, block_size = 16, f32>) -> tensor<?x4xf32> {
  %t = onnx.Constant {value = dense<[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %e = transformer.embedding %t[%ids] {scale = 1.5 : f64} : (tensor<4x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
  %l = transformer.logits %e, %t : (tensor<?x2xf32>, tensor<4x2xf32>) -> tensor<?x4xf32>
  return %l : tensor<?x4xf32>
}

// -----

// A vocabulary the ranks do not divide (6 entries at 4 ranks, GPT-2's 50257
// at 2): the tied table is padded with zero rows to 8, the next multiple of
// 4, and rank r holds rows [2r, 2r+2) of the padded table (the last rank
// only padding). The lookup carries vocab_size = 6, so that ids 6 and 7 are
// refused rather than read as zeros; the head reads the same shard, and a
// split after the all_gather keeps the 6 real logits, dropping the padding
// columns. At 2 ranks 6 divides: nothing is padded.
// TP2-LABEL: func.func @vocabulary_padded_tied
// TP2: transformer.embedding %{{.+}}[%{{.+}}] {scale = 2.0{{.*}} : f64, vocab_shards = 2 : i64} : (tensor<3x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
// TP2: %[[G:.+]] = transformer.all_gather %{{.+}} {axis = 1 : i64, group_size = 2 : i64} : tensor<?x3xf32> -> tensor<?x6xf32>
// TP2-NEXT: return %[[G]]
// TP4-LABEL: func.func @vocabulary_padded_tied
// TP4: %[[T:.+]] = onnx.Constant {accel.tp_shards = [dense<{{\[}}[0.0{{.*}}, [1.0{{.*}}]]> : tensor<2x2xf32>, dense<{{\[}}[2.0{{.*}}, [3.0{{.*}}]]> : tensor<2x2xf32>, dense<{{\[}}[4.0{{.*}}, [5.0{{.*}}]]> : tensor<2x2xf32>, dense<0.0{{[0e+]*}}> : tensor<2x2xf32>]
// TP4-NOT: onnx.Constant
// TP4: %[[E:.+]] = transformer.embedding %[[T]][%{{.+}}] {scale = 2.0{{.*}} : f64, vocab_shards = 4 : i64, vocab_size = 6 : i64} : (tensor<2x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
// TP4-NEXT: %[[R:.+]] = transformer.all_reduce %[[E]] kind = sum {group_size = 4 : i64} : tensor<?x2xf32>
// TP4-NEXT: %[[L:.+]] = transformer.logits %[[R]], %[[T]] : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
// TP4-NEXT: %[[G:.+]] = transformer.all_gather %[[L]] {axis = 1 : i64, group_size = 4 : i64} : tensor<?x2xf32> -> tensor<?x8xf32>
// TP4-NEXT: %[[V:.+]]:2 = transformer.split %[[G]] : tensor<?x8xf32> -> tensor<?x6xf32>, tensor<?x2xf32>
// TP4-NEXT: return %[[V]]#0 : tensor<?x6xf32>
func.func @vocabulary_padded_tied(%ids: tensor<?xi64>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 4, head_dim = 1, block_size = 16, f32>) -> tensor<?x6xf32> {
  %t = onnx.Constant {value = dense<[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0], [5.0, 5.0]]> : tensor<6x2xf32>} : () -> tensor<6x2xf32>
  %e = transformer.embedding %t[%ids] {scale = 2.0 : f64} : (tensor<6x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
  %l = transformer.logits %e, %t : (tensor<?x2xf32>, tensor<6x2xf32>) -> tensor<?x6xf32>
  return %l : tensor<?x6xf32>
}

// -----

// Learned positions (GPT-2's wpe, read with transformer.positions) are not
// vocabulary-sized: that table stays whole and replicated, without
// vocab_shards or an all_reduce, while the token table (ids through an
// exporter's Cast) is split. The tied head reads the token table's shard.
// TP2-LABEL: func.func @learned_positions
// TP2-DAG: %[[P:.+]] = onnx.Constant {value = dense<{{.*}}> : tensor<3x2xf32>}
// TP2-DAG: %[[T:.+]] = onnx.Constant {accel.tp_shards = [{{.*}} : tensor<2x2xf32>, {{.*}} : tensor<2x2xf32>]
// TP2: %[[E:.+]] = transformer.embedding %[[T]][%{{.+}}] {vocab_shards = 2 : i64} : (tensor<2x2xf32>, tensor<?xi32>) -> tensor<?x2xf32>
// TP2-NEXT: %[[R:.+]] = transformer.all_reduce %[[E]] kind = sum {group_size = 2 : i64}
// TP2: %[[Q:.+]] = transformer.embedding %[[P]][%{{.+}}] : (tensor<3x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
// TP2-NOT: all_reduce
// TP2: %[[S:.+]] = onnx.Add %[[R]], %[[Q]]
// TP2: transformer.logits %[[S]], %[[T]]
func.func @learned_positions(%ids: tensor<?xi64>, %batch: !transformer.batch, %cache: !transformer.kv_cache<layers = 1, kv_heads = 4, head_dim = 1, block_size = 16, f32>) -> tensor<?x4xf32> {
  %t = onnx.Constant {value = dense<[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %p = onnx.Constant {value = dense<[[0.5, 0.5], [1.5, 1.5], [2.5, 2.5]]> : tensor<3x2xf32>} : () -> tensor<3x2xf32>
  %i = onnx.Cast %ids {to = 6 : i64} : (tensor<?xi64>) -> tensor<?xi32>
  %e = transformer.embedding %t[%i] : (tensor<4x2xf32>, tensor<?xi32>) -> tensor<?x2xf32>
  %pos = transformer.positions %batch : tensor<?xi64>
  %q = transformer.embedding %p[%pos] : (tensor<3x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
  %s = onnx.Add %e, %q : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  %l = transformer.logits %s, %t : (tensor<?x2xf32>, tensor<4x2xf32>) -> tensor<?x4xf32>
  return %l : tensor<?x4xf32>
}

// -----

// A table that is not a constant cannot be sliced per rank: the lookup
// stays replicated, which is exact (nothing to refuse).
// TP2-LABEL: func.func @table_not_constant
// TP2: transformer.embedding %{{.+}}[%{{.+}}] : (tensor<4x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
// TP2-NOT: vocab_shards
// TP2-NOT: all_reduce
// TP2: return
func.func @table_not_constant(%ids: tensor<?xi64>, %t: tensor<4x2xf32>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 4, head_dim = 1, block_size = 16, f32>) -> tensor<?x2xf32> {
  %e = transformer.embedding %t[%ids] : (tensor<4x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
  return %e : tensor<?x2xf32>
}
