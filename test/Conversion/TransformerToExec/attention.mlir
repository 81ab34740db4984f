// RUN: accel-opt %s -split-input-file -accel-lower-to-exec | FileCheck %s
//
// Rotary/ and Attention/ lowering: a transformer.attention writes its k and
// v (exec.kv_write) and attends (exec.attention) over the KV pool, unless
// the qkv_rotary that made k and v writes them itself
// (exec.qkv_rotary_kv_write).

// A qkv_rotary whose k and v feed one attention alone: one fused step, no
// kv_write, and only q gets a buffer.
// CHECK-LABEL: exec.kv_pool @kv layers 2 block_size 16 kv_heads 2 head_dim 8 : f32
// CHECK: exec.schedule @main mixed
// CHECK: %[[POS:.+]] = exec.step_input positions : !exec.view<?xi64>
// CHECK: exec.gemm %{{.+}}, %{{.+}} -> %[[QKV:.+]] :
// CHECK: %[[Q:.+]] = exec.alloc sizes(%{{.+}}) : !exec.view<?x4x8xf32>
// CHECK-NEXT: exec.qkv_rotary_kv_write %[[QKV]], %[[POS]] -> %[[Q]], @kv[1] {head_dim = 8 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, rotary_dim = 8 : i64, style = #transformer<rotary_style half_split>, theta = 1.000000e+04 : f64}
// CHECK-NOT: exec.kv_write
// CHECK: %[[O:.+]] = exec.alloc sizes(%{{.+}}) : !exec.view<?x4x8xf32>
// CHECK-NEXT: exec.attention %[[Q]], @kv[1] -> %[[O]] {causal, num_kv_heads = 2 : i64, scale = 3.535500e-01 : f64, sliding_window = 8 : i64, softcap = 5.000000e+01 : f64} : !exec.view<?x4x8xf32>
// CHECK: exec.view %[[O]] : !exec.view<?x4x8xf32> -> !exec.view<?x32xf32>
func.func @fused(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 2, kv_heads = 2, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x32xf32> {
  %pos = transformer.positions %b : tensor<?xi64>
  %table = onnx.Constant {value = dense<0.25> : tensor<16x16xf32>} : () -> tensor<16x16xf32>
  %x = transformer.embedding %table[%ids] : (tensor<16x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
  %w = onnx.Constant {value = dense<0.1> : tensor<64x16xf32>} : () -> tensor<64x16xf32>
  %qkv = transformer.linear %x, %w : (tensor<?x16xf32>, tensor<64x16xf32>) -> tensor<?x64xf32>
  %q, %k, %v = transformer.qkv_rotary %qkv, %pos style = half_split {head_dim = 8 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, rotary_dim = 8 : i64, theta = 1.0e+04 : f64} : (tensor<?x64xf32>, tensor<?xi64>) -> (tensor<?x4x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>)
  %o = transformer.attention %q, %k, %v, %kv[1], %b {causal, head_dim = 8 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.35355 : f64, sliding_window = 8 : i64, softcap = 50.0 : f64} : tensor<?x4x8xf32>, tensor<?x2x8xf32>, !transformer.kv_cache<layers = 2, kv_heads = 2, head_dim = 8, block_size = 16, f32>
  %m = transformer.merge_heads %o : tensor<?x4x8xf32> -> tensor<?x32xf32>
  return %m : tensor<?x32xf32>
}

// -----

// k is read by another op too: exec.qkv_rotary gives q, k and v buffers,
// and the attention writes the cache itself, with an FP8 pool's scales.
// CHECK-LABEL: exec.kv_pool @kv layers 1 block_size 16 kv_heads 2 head_dim 8 : f8E4M3FN
// CHECK: exec.qkv_rotary %[[QKV:.+]], %{{.+}} -> %[[Q:.+]], %[[K:.+]], %[[V:.+]] {head_dim = 8 : i64
// CHECK-SAME: : !exec.view<?x64xf32>, !exec.view<?xi64> -> !exec.view<?x4x8xf32>, !exec.view<?x2x8xf32>, !exec.view<?x2x8xf32>
// CHECK-NEXT: exec.kv_write %[[K]], %[[V]] -> @kv[0] {k_scale = 5.000000e-01 : f64, v_scale = 2.500000e-01 : f64} : !exec.view<?x2x8xf32>
// CHECK: exec.attention %[[Q]], @kv[0] -> %{{.+}} {causal, k_scale = 5.000000e-01 : f64, num_kv_heads = 2 : i64, scale = 3.535500e-01 : f64, v_scale = 2.500000e-01 : f64}
func.func @unfused(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 8, block_size = 16, f8E4M3FN>)
    -> tensor<?x16xf32> {
  %pos = transformer.positions %b : tensor<?xi64>
  %table = onnx.Constant {value = dense<0.25> : tensor<16x64xf32>} : () -> tensor<16x64xf32>
  %qkv = transformer.embedding %table[%ids] : (tensor<16x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
  %q, %k, %v = transformer.qkv_rotary %qkv, %pos style = half_split {head_dim = 8 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, rotary_dim = 8 : i64, theta = 1.0e+04 : f64} : (tensor<?x64xf32>, tensor<?xi64>) -> (tensor<?x4x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>)
  %o = transformer.attention %q, %k, %v, %kv[0], %b {causal, head_dim = 8 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.35355 : f64, k_scale = 0.5 : f64, v_scale = 0.25 : f64} : tensor<?x4x8xf32>, tensor<?x2x8xf32>, !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 8, block_size = 16, f8E4M3FN>
  %s = transformer.merge_heads %k : tensor<?x2x8xf32> -> tensor<?x16xf32>
  return %s : tensor<?x16xf32>
}

// -----

// A standalone rotary with cos/sin tables and llama3 scaling.
// CHECK-LABEL: exec.kv_pool @kv layers 3 block_size 16 kv_heads 2 head_dim 8 : f32
// CHECK: exec.rotary %[[X:.+]], %[[P:.+]] cos_sin(%[[C:.+]], %[[S:.+]] : !exec.view<32x4xf32>, !exec.view<32x4xf32>) -> %{{.+}} {rotary_dim = 8 : i64, style = #transformer<rotary_style interleaved>}
// CHECK: exec.rotary %[[X]], %[[P]] -> %{{.+}} {rotary_dim = 4 : i64, scaling = #transformer.rope_scaling<llama3, factor = 8.000000e+00, original_max_position = 32, low_freq_factor = 1.000000e+00, high_freq_factor = 4.000000e+00>, style = #transformer<rotary_style half_split>, theta = 5.000000e+05 : f64}
func.func @rotary(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 3, kv_heads = 2, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x16xf32> {
  %pos = transformer.positions %b : tensor<?xi64>
  %table = onnx.Constant {value = dense<0.25> : tensor<16x16xf32>} : () -> tensor<16x16xf32>
  %e = transformer.embedding %table[%ids] : (tensor<16x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
  %x = transformer.split_heads %e : tensor<?x16xf32> -> tensor<?x2x8xf32>
  %cos = onnx.Constant {value = dense<1.0> : tensor<32x4xf32>} : () -> tensor<32x4xf32>
  %sin = onnx.Constant {value = dense<0.0> : tensor<32x4xf32>} : () -> tensor<32x4xf32>
  %r = transformer.rotary %x, %pos cos_sin(%cos, %sin) style = interleaved {rotary_dim = 8 : i64} : (tensor<?x2x8xf32>, tensor<?xi64>, tensor<32x4xf32>, tensor<32x4xf32>) -> tensor<?x2x8xf32>
  %s = transformer.rotary %x, %pos style = half_split {rotary_dim = 4 : i64, theta = 5.0e+05 : f64, scaling = #transformer.rope_scaling<llama3, factor = 8.0, original_max_position = 32, low_freq_factor = 1.0, high_freq_factor = 4.0>} : (tensor<?x2x8xf32>, tensor<?xi64>) -> tensor<?x2x8xf32>
  %rm = transformer.merge_heads %r : tensor<?x2x8xf32> -> tensor<?x16xf32>
  %sm = transformer.merge_heads %s : tensor<?x2x8xf32> -> tensor<?x16xf32>
  %y = transformer.residual_add %rm, %sm : tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}
