// RUN: accel-opt %s -split-input-file -accel-raise-attention 2>/dev/null | FileCheck %s
// RUN: accel-opt %s -split-input-file -accel-raise-attention 2>&1 >/dev/null | FileCheck %s --check-prefix=DIAG

// The smallest causal self-attention an exporter writes: q, k, v are heads
// of the embedding, scores scaled by 0.5, a causal mask built from
// Range/LessOrEqual/Where, softmax, then back to [batch, seq, hidden].
// CHECK-LABEL: func.func @main_graph
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?xi64>, %[[BATCH:[^:]+]]: !transformer.batch, %[[CACHE:[^:]+]]: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 4, block_size = 16, f32>)
// CHECK-SAME: -> (tensor<?x8xf32> {onnx.name = "logits"})
// CHECK: transformer.attention %{{.+}}, %{{.+}}, %{{.+}}, %[[CACHE]][0], %[[BATCH]] {causal, head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 2 : i64, scale = 5.000000e-01 : f64}
// The mask and its Range die with the softmax.
// CHECK-NOT: onnx.Softmax
// CHECK-NOT: onnx.Range
// CHECK-NOT: onnx.LessOrEqual
func.func @main_graph(%ids: tensor<?x?xi64> {onnx.name = "input_ids"}) -> (tensor<?x?x8xf32> {onnx.name = "logits"}) {
  %table = onnx.Constant {value = dense<0.5> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %x = onnx.Gather %table, %ids : (tensor<16x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  %heads = onnx.Constant {value = dense<[0, 0, 2, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
  %xh = onnx.Reshape %x, %heads : (tensor<?x?x8xf32>, tensor<4xi64>) -> tensor<?x?x2x4xf32>
  %q = onnx.Transpose %xh {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x4xf32>) -> tensor<?x2x?x4xf32>
  %k = onnx.Transpose %xh {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x4xf32>) -> tensor<?x2x?x4xf32>
  %kt = onnx.Transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<?x2x?x4xf32>) -> tensor<?x2x4x?xf32>
  %s = onnx.MatMul %q, %kt : (tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32>) -> tensor<?x2x?x?xf32>
  %half = onnx.Constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %ss = onnx.Mul %s, %half : (tensor<?x2x?x?xf32>, tensor<f32>) -> tensor<?x2x?x?xf32>
  %shape = onnx.Shape %ids {start = 1 : i64, end = 2 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %zero = onnx.Constant {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %one = onnx.Constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %axes0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %axes1 = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %len = onnx.Squeeze %shape axes(%axes0) : (tensor<1xi64>, tensor<1xi64>) -> tensor<i64>
  %r = onnx.Range %zero, %len, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %rq = onnx.Unsqueeze %r axes(%axes1) : (tensor<?xi64>, tensor<1xi64>) -> tensor<?x1xi64>
  %rk = onnx.Unsqueeze %r axes(%axes0) : (tensor<?xi64>, tensor<1xi64>) -> tensor<1x?xi64>
  %le = onnx.LessOrEqual %rk, %rq : (tensor<1x?xi64>, tensor<?x1xi64>) -> tensor<?x?xi1>
  %fzero = onnx.Constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %ninf = onnx.Constant {value = dense<-3.40282347E+38> : tensor<f32>} : () -> tensor<f32>
  %mask = onnx.Where %le, %fzero, %ninf : (tensor<?x?xi1>, tensor<f32>, tensor<f32>) -> tensor<?x?xf32>
  %sm = onnx.Add %ss, %mask : (tensor<?x2x?x?xf32>, tensor<?x?xf32>) -> tensor<?x2x?x?xf32>
  %p = onnx.Softmax %sm : (tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  %o = onnx.MatMul %p, %q : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %ot = onnx.Transpose %o {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x2x?x4xf32>) -> tensor<?x?x2x4xf32>
  %flat = onnx.Constant {value = dense<[0, 0, 8]> : tensor<3xi64>} : () -> tensor<3xi64>
  %y = onnx.Reshape %ot, %flat : (tensor<?x?x2x4xf32>, tensor<3xi64>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Not raised: without a mask the attention sees the future (an encoder, or
// a bidirectional block); the paged runtime only serves causal attention.
// DIAG: warning: attention subgraph could not be raised: its mask is neither causal nor a causal sliding window
// CHECK-LABEL: func.func @main_graph
// CHECK-SAME: (%{{[^:]+}}: tensor<?x?xi64> {onnx.name = "input_ids"})
// CHECK: onnx.Softmax
// CHECK-NOT: transformer.attention
func.func @main_graph(%ids: tensor<?x?xi64> {onnx.name = "input_ids"}) -> (tensor<?x?x8xf32> {onnx.name = "logits"}) {
  %table = onnx.Constant {value = dense<0.5> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %x = onnx.Gather %table, %ids : (tensor<16x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  %heads = onnx.Constant {value = dense<[0, 0, 2, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
  %xh = onnx.Reshape %x, %heads : (tensor<?x?x8xf32>, tensor<4xi64>) -> tensor<?x?x2x4xf32>
  %q = onnx.Transpose %xh {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x4xf32>) -> tensor<?x2x?x4xf32>
  %k = onnx.Transpose %xh {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x4xf32>) -> tensor<?x2x?x4xf32>
  %kt = onnx.Transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<?x2x?x4xf32>) -> tensor<?x2x4x?xf32>
  %s = onnx.MatMul %q, %kt : (tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32>) -> tensor<?x2x?x?xf32>
  %p = onnx.Softmax %s : (tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  %o = onnx.MatMul %p, %q : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %ot = onnx.Transpose %o {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x2x?x4xf32>) -> tensor<?x?x2x4xf32>
  %flat = onnx.Constant {value = dense<[0, 0, 8]> : tensor<3xi64>} : () -> tensor<3xi64>
  %y = onnx.Reshape %ot, %flat : (tensor<?x?x2x4xf32>, tensor<3xi64>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Not raised: a softmax over a rank-2 tensor is not attention (a router, a
// classifier head); the graph keeps it and gets no KV cache.
// DIAG: warning: no attention subgraph was recognised; the model keeps whole-sequence attention and gets no KV cache
// CHECK-LABEL: func.func @main_graph
// CHECK: onnx.Softmax
func.func @main_graph(%x: tensor<?x8xf32> {onnx.name = "input_ids"}) -> (tensor<?x8xf32> {onnx.name = "logits"}) {
  %p = onnx.Softmax %x : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %p : tensor<?x8xf32>
}
