// RUN: accel-opt %s -split-input-file -accel-fuse-qkv-rotary | FileCheck %s
//
// One attention layer between its fused QKV projection %qkv and
// transformer.attention, in the forms raising leaves it: 2 query heads and
// 1 kv head of head_dim 4 (GQA: 16 columns, q 8 | k 4 | v 4) unless a case
// says otherwise.

// split_heads views of the split (what raising makes of a hand-written
// Llama): one qkv_rotary at the attention, nothing of the chain left.
// CHECK-LABEL: func @split_heads_gqa
// CHECK-SAME: (%[[QKV:[^:]+]]: tensor<?x16xf32>, %[[POS:[^:]+]]: tensor<?xi64>, %[[C:[^:]+]]: !transformer.kv_cache
// CHECK-NEXT: %[[Q:.+]], %[[K:.+]], %[[V:.+]] = transformer.qkv_rotary %[[QKV]], %[[POS]] style = half_split {head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, rotary_dim = 4 : i64, theta = 1.000000e+04 : f64} : (tensor<?x16xf32>, tensor<?xi64>) -> (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>)
// CHECK-NEXT: %[[O:.+]] = transformer.attention %[[Q]], %[[K]], %[[V]], %[[C]][0], %{{.+}} {causal, head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 5.000000e-01 : f64}
// CHECK-NEXT: return %[[O]]
func.func @split_heads_gqa(%qkv: tensor<?x16xf32>, %pos: tensor<?xi64>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, block_size = 16, f32>, %batch: !transformer.batch) -> tensor<?x2x4xf32> {
  %s:3 = transformer.split %qkv : tensor<?x16xf32> -> tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>
  %q0 = transformer.split_heads %s#0 : tensor<?x8xf32> -> tensor<?x2x4xf32>
  %k0 = transformer.split_heads %s#1 : tensor<?x4xf32> -> tensor<?x1x4xf32>
  %v = transformer.split_heads %s#2 : tensor<?x4xf32> -> tensor<?x1x4xf32>
  %q = transformer.rotary %q0, %pos style = half_split {rotary_dim = 4 : i64, theta = 1.0e+04 : f64} : (tensor<?x2x4xf32>, tensor<?xi64>) -> tensor<?x2x4xf32>
  %k = transformer.rotary %k0, %pos style = half_split {rotary_dim = 4 : i64, theta = 1.0e+04 : f64} : (tensor<?x1x4xf32>, tensor<?xi64>) -> tensor<?x1x4xf32>
  %o = transformer.attention %q, %k, %v, %cache[0], %batch {causal, head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 0.5 : f64} : tensor<?x2x4xf32>, tensor<?x1x4xf32>, !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, block_size = 16, f32>
  return %o : tensor<?x2x4xf32>
}

// -----

// The exported form (HF's view(bsz, q_len, heads, head_dim) after raising):
// unflatten_tokens and onnx.Reshape to [-1, H, D], one shape constant shared
// by k and v; multi-head (2 kv heads), partial rotary (2 of 4 channels,
// Phi-2), interleaved. The shape constants go with the chain.
// CHECK-LABEL: func @unflatten_reshape_partial
// CHECK-SAME: (%[[QKV:[^:]+]]: tensor<?x24xf32>, %[[IDS:[^:]+]]: tensor<?x?xi64>, %[[POS:[^:]+]]: tensor<?xi64>
// CHECK-NEXT: %[[Q:.+]], %[[K:.+]], %[[V:.+]] = transformer.qkv_rotary %[[QKV]], %[[POS]] style = interleaved {head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 2 : i64, rotary_dim = 2 : i64, theta = 1.000000e+04 : f64} : (tensor<?x24xf32>, tensor<?xi64>) -> (tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?x2x4xf32>)
// CHECK-NEXT: transformer.attention %[[Q]], %[[K]], %[[V]]
// CHECK-NOT: onnx.
// CHECK-NOT: transformer.unflatten_tokens
func.func @unflatten_reshape_partial(%qkv: tensor<?x24xf32>, %ids: tensor<?x?xi64>, %pos: tensor<?xi64>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 4, block_size = 16, f32>, %batch: !transformer.batch) -> tensor<?x2x4xf32> {
  %s:3 = transformer.split %qkv : tensor<?x24xf32> -> tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
  %uq = transformer.unflatten_tokens %s#0 like %ids : tensor<?x8xf32>, tensor<?x?xi64> -> tensor<?x?x8xf32>
  %uk = transformer.unflatten_tokens %s#1 like %ids : tensor<?x8xf32>, tensor<?x?xi64> -> tensor<?x?x8xf32>
  %uv = transformer.unflatten_tokens %s#2 like %ids : tensor<?x8xf32>, tensor<?x?xi64> -> tensor<?x?x8xf32>
  %shape = onnx.Constant {value = dense<[-1, 2, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
  %q0 = onnx.Reshape %uq, %shape : (tensor<?x?x8xf32>, tensor<3xi64>) -> tensor<?x2x4xf32>
  %q = transformer.rotary %q0, %pos style = interleaved {rotary_dim = 2 : i64, theta = 1.0e+04 : f64} : (tensor<?x2x4xf32>, tensor<?xi64>) -> tensor<?x2x4xf32>
  %k0 = onnx.Reshape %uk, %shape : (tensor<?x?x8xf32>, tensor<3xi64>) -> tensor<?x2x4xf32>
  %k = transformer.rotary %k0, %pos style = interleaved {rotary_dim = 2 : i64, theta = 1.0e+04 : f64} : (tensor<?x2x4xf32>, tensor<?xi64>) -> tensor<?x2x4xf32>
  %v = onnx.Reshape %uv, %shape : (tensor<?x?x8xf32>, tensor<3xi64>) -> tensor<?x2x4xf32>
  %o = transformer.attention %q, %k, %v, %cache[0], %batch {causal, head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 2 : i64, scale = 0.5 : f64} : tensor<?x2x4xf32>, tensor<?x2x4xf32>, !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 4, block_size = 16, f32>
  return %o : tensor<?x2x4xf32>
}

// -----

// onnxruntime-genai's GroupQueryAttention (llama_genai): onnx.Reshape of the
// split parts themselves, rotation from cos/sin tables (no theta).
// CHECK-LABEL: func @tables
// CHECK-SAME: (%[[QKV:[^:]+]]: tensor<?x16xf32>, %[[POS:[^:]+]]: tensor<?xi64>, %[[COS:[^:]+]]: tensor<32x2xf32>, %[[SIN:[^:]+]]: tensor<32x2xf32>
// CHECK-NEXT: %[[Q:.+]], %[[K:.+]], %[[V:.+]] = transformer.qkv_rotary %[[QKV]], %[[POS]] cos_sin(%[[COS]], %[[SIN]]) style = half_split {head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, rotary_dim = 4 : i64} : (tensor<?x16xf32>, tensor<?xi64>, tensor<32x2xf32>, tensor<32x2xf32>) -> (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>)
// CHECK-NEXT: transformer.attention %[[Q]], %[[K]], %[[V]]
// CHECK-NEXT: return
func.func @tables(%qkv: tensor<?x16xf32>, %pos: tensor<?xi64>, %cos: tensor<32x2xf32>, %sin: tensor<32x2xf32>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, block_size = 16, f32>, %batch: !transformer.batch) -> tensor<?x2x4xf32> {
  %s:3 = transformer.split %qkv : tensor<?x16xf32> -> tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>
  %sq = onnx.Constant {value = dense<[-1, 2, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
  %q0 = onnx.Reshape %s#0, %sq : (tensor<?x8xf32>, tensor<3xi64>) -> tensor<?x2x4xf32>
  %skv = onnx.Constant {value = dense<[-1, 1, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
  %k0 = onnx.Reshape %s#1, %skv : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<?x1x4xf32>
  %v = onnx.Reshape %s#2, %skv : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<?x1x4xf32>
  %q = transformer.rotary %q0, %pos cos_sin(%cos, %sin) style = half_split {rotary_dim = 4 : i64} : (tensor<?x2x4xf32>, tensor<?xi64>, tensor<32x2xf32>, tensor<32x2xf32>) -> tensor<?x2x4xf32>
  %k = transformer.rotary %k0, %pos cos_sin(%cos, %sin) style = half_split {rotary_dim = 4 : i64} : (tensor<?x1x4xf32>, tensor<?xi64>, tensor<32x2xf32>, tensor<32x2xf32>) -> tensor<?x1x4xf32>
  %o = transformer.attention %q, %k, %v, %cache[0], %batch {causal, head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 0.5 : f64} : tensor<?x2x4xf32>, tensor<?x1x4xf32>, !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, block_size = 16, f32>
  return %o : tensor<?x2x4xf32>
}

// -----

// Phi3's qkv_proj: the model slices the unflattened projection itself (last
// axis, q then k then v); llama3 scaling goes over unchanged.
// CHECK-LABEL: func @phi3_slices
// CHECK-SAME: (%[[QKV:[^:]+]]: tensor<?x16xf32>, %[[IDS:[^:]+]]: tensor<?x?xi64>, %[[POS:[^:]+]]: tensor<?xi64>
// CHECK-NEXT: %[[Q:.+]], %[[K:.+]], %[[V:.+]] = transformer.qkv_rotary %[[QKV]], %[[POS]] style = half_split {head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, rotary_dim = 4 : i64, scaling = #transformer.rope_scaling<llama3, factor = 8.000000e+00, original_max_position = 8192, low_freq_factor = 1.000000e+00, high_freq_factor = 4.000000e+00>, theta = 5.000000e+05 : f64}
// CHECK-NEXT: transformer.attention %[[Q]], %[[K]], %[[V]]
// CHECK-NEXT: return
func.func @phi3_slices(%qkv: tensor<?x16xf32>, %ids: tensor<?x?xi64>, %pos: tensor<?xi64>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, block_size = 16, f32>, %batch: !transformer.batch) -> tensor<?x2x4xf32> {
  %u = transformer.unflatten_tokens %qkv like %ids : tensor<?x16xf32>, tensor<?x?xi64> -> tensor<?x?x16xf32>
  %c0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %c8 = onnx.Constant {value = dense<8> : tensor<1xi64>} : () -> tensor<1xi64>
  %c12 = onnx.Constant {value = dense<12> : tensor<1xi64>} : () -> tensor<1xi64>
  %c16 = onnx.Constant {value = dense<16> : tensor<1xi64>} : () -> tensor<1xi64>
  %axis = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %one = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %uq = onnx.Slice %u, %c0, %c8 axes(%axis) steps(%one) : (tensor<?x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x8xf32>
  %uk = onnx.Slice %u, %c8, %c12 axes(%axis) steps(%one) : (tensor<?x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x4xf32>
  %uv = onnx.Slice %u, %c12, %c16 axes(%axis) steps(%one) : (tensor<?x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x4xf32>
  %sq = onnx.Constant {value = dense<[-1, 2, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
  %q0 = onnx.Reshape %uq, %sq : (tensor<?x?x8xf32>, tensor<3xi64>) -> tensor<?x2x4xf32>
  %q = transformer.rotary %q0, %pos style = half_split {rotary_dim = 4 : i64, theta = 5.0e+05 : f64, scaling = #transformer.rope_scaling<llama3, factor = 8.0, original_max_position = 8192, low_freq_factor = 1.0, high_freq_factor = 4.0>} : (tensor<?x2x4xf32>, tensor<?xi64>) -> tensor<?x2x4xf32>
  %skv = onnx.Constant {value = dense<[-1, 1, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
  %k0 = onnx.Reshape %uk, %skv : (tensor<?x?x4xf32>, tensor<3xi64>) -> tensor<?x1x4xf32>
  %k = transformer.rotary %k0, %pos style = half_split {rotary_dim = 4 : i64, theta = 5.0e+05 : f64, scaling = #transformer.rope_scaling<llama3, factor = 8.0, original_max_position = 8192, low_freq_factor = 1.0, high_freq_factor = 4.0>} : (tensor<?x1x4xf32>, tensor<?xi64>) -> tensor<?x1x4xf32>
  %v = onnx.Reshape %uv, %skv : (tensor<?x?x4xf32>, tensor<3xi64>) -> tensor<?x1x4xf32>
  %o = transformer.attention %q, %k, %v, %cache[0], %batch {causal, head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 0.5 : f64} : tensor<?x2x4xf32>, tensor<?x1x4xf32>, !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, block_size = 16, f32>
  return %o : tensor<?x2x4xf32>
}

// -----

// Not fused: the rotated q is also returned, so the rotary must stay (and
// with it the chain).
// CHECK-LABEL: func @rotary_second_user
// CHECK-NOT: qkv_rotary
// CHECK: transformer.split
// CHECK-COUNT-2: transformer.rotary
func.func @rotary_second_user(%qkv: tensor<?x16xf32>, %pos: tensor<?xi64>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, block_size = 16, f32>, %batch: !transformer.batch) -> (tensor<?x2x4xf32>, tensor<?x2x4xf32>) {
  %s:3 = transformer.split %qkv : tensor<?x16xf32> -> tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>
  %q0 = transformer.split_heads %s#0 : tensor<?x8xf32> -> tensor<?x2x4xf32>
  %k0 = transformer.split_heads %s#1 : tensor<?x4xf32> -> tensor<?x1x4xf32>
  %v = transformer.split_heads %s#2 : tensor<?x4xf32> -> tensor<?x1x4xf32>
  %q = transformer.rotary %q0, %pos style = half_split {rotary_dim = 4 : i64, theta = 1.0e+04 : f64} : (tensor<?x2x4xf32>, tensor<?xi64>) -> tensor<?x2x4xf32>
  %k = transformer.rotary %k0, %pos style = half_split {rotary_dim = 4 : i64, theta = 1.0e+04 : f64} : (tensor<?x1x4xf32>, tensor<?xi64>) -> tensor<?x1x4xf32>
  %o = transformer.attention %q, %k, %v, %cache[0], %batch {causal, head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 0.5 : f64} : tensor<?x2x4xf32>, tensor<?x1x4xf32>, !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, block_size = 16, f32>
  return %o, %q : tensor<?x2x4xf32>, tensor<?x2x4xf32>
}

// -----

// Not fused: a view on the way has a second user (v's split part is also
// returned), so the split would have to stay.
// CHECK-LABEL: func @view_second_user
// CHECK-NOT: qkv_rotary
// CHECK: transformer.split
func.func @view_second_user(%qkv: tensor<?x16xf32>, %pos: tensor<?xi64>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, block_size = 16, f32>, %batch: !transformer.batch) -> (tensor<?x2x4xf32>, tensor<?x4xf32>) {
  %s:3 = transformer.split %qkv : tensor<?x16xf32> -> tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>
  %q0 = transformer.split_heads %s#0 : tensor<?x8xf32> -> tensor<?x2x4xf32>
  %k0 = transformer.split_heads %s#1 : tensor<?x4xf32> -> tensor<?x1x4xf32>
  %v = transformer.split_heads %s#2 : tensor<?x4xf32> -> tensor<?x1x4xf32>
  %q = transformer.rotary %q0, %pos style = half_split {rotary_dim = 4 : i64, theta = 1.0e+04 : f64} : (tensor<?x2x4xf32>, tensor<?xi64>) -> tensor<?x2x4xf32>
  %k = transformer.rotary %k0, %pos style = half_split {rotary_dim = 4 : i64, theta = 1.0e+04 : f64} : (tensor<?x1x4xf32>, tensor<?xi64>) -> tensor<?x1x4xf32>
  %o = transformer.attention %q, %k, %v, %cache[0], %batch {causal, head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 0.5 : f64} : tensor<?x2x4xf32>, tensor<?x1x4xf32>, !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, block_size = 16, f32>
  return %o, %s#2 : tensor<?x2x4xf32>, tensor<?x4xf32>
}

// -----

// Not fused: q and k rotate with different thetas, which one op cannot
// carry.
// CHECK-LABEL: func @mismatched_theta
// CHECK-NOT: qkv_rotary
// CHECK: transformer.rotary {{.+}}theta = 1.000000e+04
// CHECK: transformer.rotary {{.+}}theta = 5.000000e+05
func.func @mismatched_theta(%qkv: tensor<?x16xf32>, %pos: tensor<?xi64>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, block_size = 16, f32>, %batch: !transformer.batch) -> tensor<?x2x4xf32> {
  %s:3 = transformer.split %qkv : tensor<?x16xf32> -> tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>
  %q0 = transformer.split_heads %s#0 : tensor<?x8xf32> -> tensor<?x2x4xf32>
  %k0 = transformer.split_heads %s#1 : tensor<?x4xf32> -> tensor<?x1x4xf32>
  %v = transformer.split_heads %s#2 : tensor<?x4xf32> -> tensor<?x1x4xf32>
  %q = transformer.rotary %q0, %pos style = half_split {rotary_dim = 4 : i64, theta = 1.0e+04 : f64} : (tensor<?x2x4xf32>, tensor<?xi64>) -> tensor<?x2x4xf32>
  %k = transformer.rotary %k0, %pos style = half_split {rotary_dim = 4 : i64, theta = 5.0e+05 : f64} : (tensor<?x1x4xf32>, tensor<?xi64>) -> tensor<?x1x4xf32>
  %o = transformer.attention %q, %k, %v, %cache[0], %batch {causal, head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 0.5 : f64} : tensor<?x2x4xf32>, tensor<?x1x4xf32>, !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, block_size = 16, f32>
  return %o : tensor<?x2x4xf32>
}

// -----

// Not fused: q and k rotate by different positions.
// CHECK-LABEL: func @mismatched_positions
// CHECK-NOT: qkv_rotary
// CHECK-COUNT-2: transformer.rotary
func.func @mismatched_positions(%qkv: tensor<?x16xf32>, %pos: tensor<?xi64>, %pos2: tensor<?xi64>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, block_size = 16, f32>, %batch: !transformer.batch) -> tensor<?x2x4xf32> {
  %s:3 = transformer.split %qkv : tensor<?x16xf32> -> tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>
  %q0 = transformer.split_heads %s#0 : tensor<?x8xf32> -> tensor<?x2x4xf32>
  %k0 = transformer.split_heads %s#1 : tensor<?x4xf32> -> tensor<?x1x4xf32>
  %v = transformer.split_heads %s#2 : tensor<?x4xf32> -> tensor<?x1x4xf32>
  %q = transformer.rotary %q0, %pos style = half_split {rotary_dim = 4 : i64, theta = 1.0e+04 : f64} : (tensor<?x2x4xf32>, tensor<?xi64>) -> tensor<?x2x4xf32>
  %k = transformer.rotary %k0, %pos2 style = half_split {rotary_dim = 4 : i64, theta = 1.0e+04 : f64} : (tensor<?x1x4xf32>, tensor<?xi64>) -> tensor<?x1x4xf32>
  %o = transformer.attention %q, %k, %v, %cache[0], %batch {causal, head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 0.5 : f64} : tensor<?x2x4xf32>, tensor<?x1x4xf32>, !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, block_size = 16, f32>
  return %o : tensor<?x2x4xf32>
}

// -----

// Not fused: the split gives v, k, q (in this order), not q, k, v: the
// columns of the fused op would be in the wrong places. (MHA, so that the
// types allow any order.)
// CHECK-LABEL: func @split_order_vkq
// CHECK-NOT: qkv_rotary
// CHECK: transformer.split
// CHECK-COUNT-2: transformer.rotary
func.func @split_order_vkq(%qkv: tensor<?x24xf32>, %pos: tensor<?xi64>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 4, block_size = 16, f32>, %batch: !transformer.batch) -> tensor<?x2x4xf32> {
  %s:3 = transformer.split %qkv : tensor<?x24xf32> -> tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
  %v = transformer.split_heads %s#0 : tensor<?x8xf32> -> tensor<?x2x4xf32>
  %k0 = transformer.split_heads %s#1 : tensor<?x8xf32> -> tensor<?x2x4xf32>
  %q0 = transformer.split_heads %s#2 : tensor<?x8xf32> -> tensor<?x2x4xf32>
  %q = transformer.rotary %q0, %pos style = half_split {rotary_dim = 4 : i64, theta = 1.0e+04 : f64} : (tensor<?x2x4xf32>, tensor<?xi64>) -> tensor<?x2x4xf32>
  %k = transformer.rotary %k0, %pos style = half_split {rotary_dim = 4 : i64, theta = 1.0e+04 : f64} : (tensor<?x2x4xf32>, tensor<?xi64>) -> tensor<?x2x4xf32>
  %o = transformer.attention %q, %k, %v, %cache[0], %batch {causal, head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 2 : i64, scale = 0.5 : f64} : tensor<?x2x4xf32>, tensor<?x2x4xf32>, !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 4, block_size = 16, f32>
  return %o : tensor<?x2x4xf32>
}

// -----

// Not fused: the reshape is to [0, H, D] (0 copies the batch dimension),
// not [-1, H, D], so it is not a per-token split of heads.
// CHECK-LABEL: func @reshape_not_per_token
// CHECK-NOT: qkv_rotary
// CHECK: onnx.Reshape
func.func @reshape_not_per_token(%qkv: tensor<?x16xf32>, %ids: tensor<?x?xi64>, %pos: tensor<?xi64>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, block_size = 16, f32>, %batch: !transformer.batch) -> tensor<?x2x4xf32> {
  %s:3 = transformer.split %qkv : tensor<?x16xf32> -> tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>
  %uq = transformer.unflatten_tokens %s#0 like %ids : tensor<?x8xf32>, tensor<?x?xi64> -> tensor<?x?x8xf32>
  %sq = onnx.Constant {value = dense<[0, 2, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
  %q0 = onnx.Reshape %uq, %sq : (tensor<?x?x8xf32>, tensor<3xi64>) -> tensor<?x2x4xf32>
  %k0 = transformer.split_heads %s#1 : tensor<?x4xf32> -> tensor<?x1x4xf32>
  %v = transformer.split_heads %s#2 : tensor<?x4xf32> -> tensor<?x1x4xf32>
  %q = transformer.rotary %q0, %pos style = half_split {rotary_dim = 4 : i64, theta = 1.0e+04 : f64} : (tensor<?x2x4xf32>, tensor<?xi64>) -> tensor<?x2x4xf32>
  %k = transformer.rotary %k0, %pos style = half_split {rotary_dim = 4 : i64, theta = 1.0e+04 : f64} : (tensor<?x1x4xf32>, tensor<?xi64>) -> tensor<?x1x4xf32>
  %o = transformer.attention %q, %k, %v, %cache[0], %batch {causal, head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 0.5 : f64} : tensor<?x2x4xf32>, tensor<?x1x4xf32>, !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, block_size = 16, f32>
  return %o : tensor<?x2x4xf32>
}
