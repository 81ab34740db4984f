// RUN: accel-opt %s -split-input-file -accel-partition=tp-size=2 | FileCheck %s --check-prefix=TP2
// RUN: accel-opt %s -split-input-file -accel-partition=tp-size=4 | FileCheck %s --check-prefix=TP4
// RUN: accel-opt %s -split-input-file -accel-partition=tp-size=1 | FileCheck %s --check-prefix=TP1
//
// Attention, Megatron-style. 4 query heads and 2 KV heads of head_dim 2; the
// fused QKV weight's row i holds the value i, the o_proj weight's column j
// holds j (row 0) and 10 + j (row 1), so that each shard shows which rows and
// columns a rank got.

// TP=2: rank r gets query heads 2r, 2r+1 (rows 4r..4r+3), KV head r (K rows
// 8+2r, 9+2r; V rows 12+2r, 13+2r): [Q_r; K_r; V_r], not a contiguous block.
// o_proj: its heads' columns; all_reduce after it; the cache keeps 1 KV head.
// TP=4: KV heads (2) fewer than ranks: replicated, rank r keeps KV head r/2,
// the one its query head r reads.
// TP=1: nothing changes (no attribute, no collective).

// TP2-LABEL: func.func @fused_qkv
// TP2-SAME: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 2, block_size = 16, f32>
// TP2-SAME: attributes {accel.tp_size = 2 : i64}
// TP2: %[[W:.+]] = onnx.Constant {accel.tp_shards = [dense<{{\[}}[0.0{{.*}}, [1.0{{.*}}, [2.0{{.*}}, [3.0{{.*}}, [8.0{{.*}}, [9.0{{.*}}, [1.2{{.*}}, [1.3{{.*}}]]> : tensor<8x2xf32>, dense<{{\[}}[4.0{{.*}}, [5.0{{.*}}, [6.0{{.*}}, [7.0{{.*}}, [1.0{{0*}}e+01{{.*}}, [1.1{{.*}}, [1.4{{.*}}, [1.5{{.*}}]]> : tensor<8x2xf32>]
// TP2: %[[QKV:.+]] = transformer.linear %{{.+}}, %[[W]] : (tensor<?x2xf32>, tensor<8x2xf32>) -> tensor<?x8xf32>
// TP2: %[[S:.+]]:3 = transformer.split %[[QKV]] : tensor<?x8xf32> -> tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x2xf32>
// TP2-DAG: %[[V:.+]] = transformer.split_heads %[[S]]#2 : tensor<?x2xf32> -> tensor<?x1x2xf32>
// TP2-DAG: %[[K:.+]] = transformer.split_heads %[[S]]#1 : tensor<?x2xf32> -> tensor<?x1x2xf32>
// TP2-DAG: %[[Q:.+]] = transformer.split_heads %[[S]]#0 : tensor<?x4xf32> -> tensor<?x2x2xf32>
// TP2: %[[O:.+]] = transformer.attention %[[Q]], %[[K]], %[[V]], %{{.+}}[0], %{{.+}} {causal, head_dim = 2 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64
// TP2: %[[M:.+]] = transformer.merge_heads %[[O]] : tensor<?x2x2xf32> -> tensor<?x4xf32>
// TP2: %[[WO:.+]] = onnx.Constant {accel.tp_shards = [dense<{{\[}}[0.0{{[^]]*}}, 1.0{{[^]]*}}, 2.0{{[^]]*}}, 3.0{{[^]]*}}], [1.0{{[^]]*}}e+01, 1.1{{[^]]*}}, 1.2{{[^]]*}}, 1.3{{[^]]*}}]]> : tensor<2x4xf32>, dense<{{\[}}[4.0{{[^]]*}}, 5.0{{[^]]*}}, 6.0{{[^]]*}}, 7.0{{[^]]*}}], [1.4{{[^]]*}}, 1.5{{[^]]*}}, 1.6{{[^]]*}}, 1.7{{[^]]*}}]]> : tensor<2x4xf32>]
// TP2: %[[P:.+]] = transformer.linear %[[M]], %[[WO]] : (tensor<?x4xf32>, tensor<2x4xf32>) -> tensor<?x2xf32>
// TP2: %[[R:.+]] = transformer.all_reduce %[[P]] kind = sum {group_size = 2 : i64} : tensor<?x2xf32>
// TP2: return %[[R]]

// TP4-LABEL: func.func @fused_qkv
// TP4-SAME: kv_heads = 1
// TP4: onnx.Constant {accel.tp_shards = [dense<{{\[}}[0.0{{.*}}, [1.0{{.*}}, [8.0{{.*}}, [9.0{{.*}}, [1.2{{.*}}, [1.3{{.*}}]]> : tensor<6x2xf32>, dense<{{\[}}[2.0{{.*}}, [3.0{{.*}}, [8.0{{.*}}, [9.0{{.*}}, [1.2{{.*}}, [1.3{{.*}}]]> : tensor<6x2xf32>, dense<{{\[}}[4.0{{.*}}, [5.0{{.*}}, [1.0{{0*}}e+01{{.*}}, [1.1{{.*}}, [1.4{{.*}}, [1.5{{.*}}]]> : tensor<6x2xf32>, dense<{{\[}}[6.0{{.*}}, [7.0{{.*}}, [1.0{{0*}}e+01{{.*}}, [1.1{{.*}}, [1.4{{.*}}, [1.5{{.*}}]]> : tensor<6x2xf32>]
// TP4: transformer.attention {{.*}}num_heads = 1 : i64, num_kv_heads = 1 : i64
// TP4: transformer.all_reduce %{{.+}} kind = sum {group_size = 4 : i64}

// TP1-LABEL: func.func @fused_qkv
// TP1-SAME: kv_heads = 2
// TP1-NOT: accel.tp
// TP1-NOT: all_reduce
// TP1: transformer.attention {{.*}}num_heads = 4 : i64, num_kv_heads = 2 : i64
func.func @fused_qkv(%x: tensor<?x2xf32>, %batch: !transformer.batch, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x2xf32> {
  %w = onnx.Constant {value = dense<[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0], [5.0, 5.0], [6.0, 6.0], [7.0, 7.0], [8.0, 8.0], [9.0, 9.0], [10.0, 10.0], [11.0, 11.0], [12.0, 12.0], [13.0, 13.0], [14.0, 14.0], [15.0, 15.0]]> : tensor<16x2xf32>} : () -> tensor<16x2xf32>
  %wo = onnx.Constant {value = dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0]]> : tensor<2x8xf32>} : () -> tensor<2x8xf32>
  %qkv = transformer.linear %x, %w : (tensor<?x2xf32>, tensor<16x2xf32>) -> tensor<?x16xf32>
  %q, %k, %v = transformer.split %qkv : tensor<?x16xf32> -> tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>
  %q3 = transformer.split_heads %q : tensor<?x8xf32> -> tensor<?x4x2xf32>
  %k3 = transformer.split_heads %k : tensor<?x4xf32> -> tensor<?x2x2xf32>
  %v3 = transformer.split_heads %v : tensor<?x4xf32> -> tensor<?x2x2xf32>
  %o = transformer.attention %q3, %k3, %v3, %cache[0], %batch {causal, head_dim = 2 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.5 : f64} : tensor<?x4x2xf32>, tensor<?x2x2xf32>, !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>
  %m = transformer.merge_heads %o : tensor<?x4x2xf32> -> tensor<?x8xf32>
  %y = transformer.linear %m, %wo : (tensor<?x8xf32>, tensor<2x8xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// Separate q, k, v linears with biases (Qwen2 before fusion), rotary and a
// per-head rms_norm on the way (Qwen3/Gemma3 q/k norms): each projection is
// column-parallel with its bias; the head-wise ops take the rank's heads; the
// o_proj bias stays on rank 0 (zeros on rank 1), so the all_reduce adds it
// once.

// TP2-LABEL: func.func @separate_qkv_with_bias
// TP2: %[[BQ:.+]] = onnx.Constant {accel.tp_shards = [dense<[0.0{{.*}}, 1.0{{.*}}, 2.0{{.*}}, 3.0{{.*}}]> : tensor<4xf32>, dense<[4.0{{.*}}, 5.0{{.*}}, 6.0{{.*}}, 7.0{{.*}}]> : tensor<4xf32>]
// TP2: %[[Q:.+]] = transformer.linear %{{.+}}, %{{.+}} bias(%[[BQ]]) : (tensor<?x2xf32>, tensor<4x2xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// TP2: %[[BK:.+]] = onnx.Constant {accel.tp_shards = [dense<[0.0{{.*}}, 1.0{{.*}}]> : tensor<2xf32>, dense<[2.0{{.*}}, 3.0{{.*}}]> : tensor<2xf32>]
// TP2: transformer.linear %{{.+}}, %{{.+}} bias(%[[BK]]) : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
// TP2: transformer.linear %{{.+}}, %{{.+}} bias(%{{.+}}) : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
// TP2: %[[Q3:.+]] = transformer.split_heads %[[Q]] : tensor<?x4xf32> -> tensor<?x2x2xf32>
// TP2: %[[QN:.+]] = transformer.rms_norm %[[Q3]], %{{.+}} {epsilon = {{.*}}} : tensor<?x2x2xf32>, tensor<2xf32>
// TP2: transformer.rotary %[[QN]], %{{.+}} style = half_split {{.*}} : (tensor<?x2x2xf32>, tensor<?xi64>) -> tensor<?x2x2xf32>
// TP2: %[[BO:.+]] = onnx.Constant {accel.tp_shards = [dense<[5.0{{.*}}, 6.0{{.*}}]> : tensor<2xf32>, dense<0.0{{.*}}> : tensor<2xf32>]
// TP2: %[[P:.+]] = transformer.linear %{{.+}}, %{{.+}} bias(%[[BO]]) : (tensor<?x4xf32>, tensor<2x4xf32>, tensor<2xf32>) -> tensor<?x2xf32>
// TP2: transformer.all_reduce %[[P]] kind = sum {group_size = 2 : i64}
func.func @separate_qkv_with_bias(%x: tensor<?x2xf32>, %pos: tensor<?xi64>, %batch: !transformer.batch, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x2xf32> {
  %wq = onnx.Constant {value = dense<1.0> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %wk = onnx.Constant {value = dense<2.0> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %wv = onnx.Constant {value = dense<3.0> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %bq = onnx.Constant {value = dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]> : tensor<8xf32>} : () -> tensor<8xf32>
  %bk = onnx.Constant {value = dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %bv = onnx.Constant {value = dense<[4.0, 5.0, 6.0, 7.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %nw = onnx.Constant {value = dense<1.5> : tensor<2xf32>} : () -> tensor<2xf32>
  %wo = onnx.Constant {value = dense<0.5> : tensor<2x8xf32>} : () -> tensor<2x8xf32>
  %bo = onnx.Constant {value = dense<[5.0, 6.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %q = transformer.linear %x, %wq bias(%bq) : (tensor<?x2xf32>, tensor<8x2xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %k = transformer.linear %x, %wk bias(%bk) : (tensor<?x2xf32>, tensor<4x2xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %v = transformer.linear %x, %wv bias(%bv) : (tensor<?x2xf32>, tensor<4x2xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %q3 = transformer.split_heads %q : tensor<?x8xf32> -> tensor<?x4x2xf32>
  %qn = transformer.rms_norm %q3, %nw {epsilon = 1.0e-06 : f64} : tensor<?x4x2xf32>, tensor<2xf32>
  %qr = transformer.rotary %qn, %pos style = half_split {rotary_dim = 2 : i64, theta = 1.0e+04 : f64} : (tensor<?x4x2xf32>, tensor<?xi64>) -> tensor<?x4x2xf32>
  %k3 = transformer.split_heads %k : tensor<?x4xf32> -> tensor<?x2x2xf32>
  %kr = transformer.rotary %k3, %pos style = half_split {rotary_dim = 2 : i64, theta = 1.0e+04 : f64} : (tensor<?x2x2xf32>, tensor<?xi64>) -> tensor<?x2x2xf32>
  %v3 = transformer.split_heads %v : tensor<?x4xf32> -> tensor<?x2x2xf32>
  %o = transformer.attention %qr, %kr, %v3, %cache[0], %batch {causal, head_dim = 2 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.5 : f64} : tensor<?x4x2xf32>, tensor<?x2x2xf32>, !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>
  %m = transformer.merge_heads %o : tensor<?x4x2xf32> -> tensor<?x8xf32>
  %y = transformer.linear %m, %wo bias(%bo) : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// Per-KV-head FP8 cache scales (-kv-cache-dtype=fp8 -calibration): one
// attribute serves every rank, so it lists every rank's KV heads, rank-major:
// TP=2 rank r's head r; TP=4 replicates head r/2, and its scales with it.

// TP2-LABEL: func.func @per_head_kv_scales
// TP2: transformer.attention {{.*}}k_head_scales = array<f64: 5.000000e-01, 2.500000e-01>, {{.*}}num_kv_heads = 1 : i64{{.*}}v_head_scales = array<f64: 2.000000e+00, 4.000000e+00>
// TP4-LABEL: func.func @per_head_kv_scales
// TP4: transformer.attention {{.*}}k_head_scales = array<f64: 5.000000e-01, 5.000000e-01, 2.500000e-01, 2.500000e-01>, {{.*}}num_kv_heads = 1 : i64{{.*}}v_head_scales = array<f64: 2.000000e+00, 2.000000e+00, 4.000000e+00, 4.000000e+00>
// TP1-LABEL: func.func @per_head_kv_scales
// TP1: transformer.attention {{.*}}k_head_scales = array<f64: 5.000000e-01, 2.500000e-01>, {{.*}}num_kv_heads = 2 : i64{{.*}}v_head_scales = array<f64: 2.000000e+00, 4.000000e+00>
func.func @per_head_kv_scales(%x: tensor<?x2xf32>, %batch: !transformer.batch, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f8E4M3FN>) -> tensor<?x2xf32> {
  %w = onnx.Constant {value = dense<1.0> : tensor<16x2xf32>} : () -> tensor<16x2xf32>
  %wo = onnx.Constant {value = dense<1.0> : tensor<2x8xf32>} : () -> tensor<2x8xf32>
  %qkv = transformer.linear %x, %w : (tensor<?x2xf32>, tensor<16x2xf32>) -> tensor<?x16xf32>
  %q, %k, %v = transformer.split %qkv : tensor<?x16xf32> -> tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>
  %q3 = transformer.split_heads %q : tensor<?x8xf32> -> tensor<?x4x2xf32>
  %k3 = transformer.split_heads %k : tensor<?x4xf32> -> tensor<?x2x2xf32>
  %v3 = transformer.split_heads %v : tensor<?x4xf32> -> tensor<?x2x2xf32>
  %o = transformer.attention %q3, %k3, %v3, %cache[0], %batch {causal, head_dim = 2 : i64, k_head_scales = array<f64: 0.5, 0.25>, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.5 : f64, v_head_scales = array<f64: 2.0, 4.0>} : tensor<?x4x2xf32>, tensor<?x2x2xf32>, !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f8E4M3FN>
  %m = transformer.merge_heads %o : tensor<?x4x2xf32> -> tensor<?x8xf32>
  %y = transformer.linear %m, %wo : (tensor<?x8xf32>, tensor<2x8xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}
