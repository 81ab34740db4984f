// RUN: accel-opt %s -split-input-file -accel-lower-to-exec -verify-diagnostics | FileCheck %s
//
// Linear/ lowering: transformer.linear becomes exec.gemm (float, weight-only
// quantised, W8A8 with its quantize folded in), transformer.logits
// exec.logits (one row per sequence with select_last).

// CHECK-LABEL: exec.kv_pool @kv layers 1
// One logits row per sequence: the `seqs` step size sizes its buffer.
// CHECK: %[[SEQS:.+]] = exec.step_size seqs
// CHECK: exec.gemm %[[X:.+]], %[[W:.+]] bias(%[[B:.+]] : !exec.view<4xf32>) -> %{{.+}} {activation = #transformer<activation_kind gelu_tanh>} : !exec.view<?x8xf32>, !exec.view<4x8xf32> -> !exec.view<?x4xf32>
// CHECK: exec.gemm %[[X]], %[[Q:.+]] weight_scale(%[[S:.+]] : !exec.view<4x2xf32>) zero_point(%[[Z:.+]] : !exec.view<4x2xi8>) -> %{{.+}} {granularity = #transformer<granularity per_group>, group_size = 4 : i64} : !exec.view<?x8xf32>, !exec.view<4x8xi8> -> !exec.view<?x4xf32>
// CHECK: %[[L:.+]] = exec.alloc sizes(%[[SEQS]]) : !exec.view<?x16xf32>
// CHECK-NEXT: exec.logits %{{.+}}, %{{.+}} -> %[[L]] {select_last, softcap = 3.000000e+01 : f64} : !exec.view<?x4xf32>, !exec.view<16x4xf32> -> !exec.view<?x16xf32>
func.func @linears(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x16xf32> {
  %table = onnx.Constant {value = dense<0.25> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %x = transformer.embedding %table[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %w = onnx.Constant {value = dense<0.1> : tensor<4x8xf32>} : () -> tensor<4x8xf32>
  %bias = onnx.Constant {value = dense<0.5> : tensor<4xf32>} : () -> tensor<4xf32>
  %y = transformer.linear %x, %w bias(%bias) activation = gelu_tanh : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %q = onnx.Constant {value = dense<3> : tensor<4x8xi8>} : () -> tensor<4x8xi8>
  %s = onnx.Constant {value = dense<0.01> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %z = onnx.Constant {value = dense<1> : tensor<4x2xi8>} : () -> tensor<4x2xi8>
  %yq = transformer.linear %x, %q weight_scale(%s) zero_point(%z) granularity = per_group {group_size = 4} : (tensor<?x8xf32>, tensor<4x8xi8>, tensor<4x2xf32>, tensor<4x2xi8>) -> tensor<?x4xf32>
  %h = transformer.residual_add %y, %yq : tensor<?x4xf32>
  %lm = onnx.Constant {value = dense<0.2> : tensor<16x4xf32>} : () -> tensor<16x4xf32>
  %l = transformer.logits %h, %lm select_last(%b) {softcap = 30.0} : (tensor<?x4xf32>, tensor<16x4xf32>, !transformer.batch) -> tensor<?x16xf32>
  return %l : tensor<?x16xf32>
}

// -----

// W8A8: a static per-tensor quantize of an f32 x and a dynamic per-token one
// lower to nothing; the gemms read the f32 x and quantise it themselves.
// CHECK-LABEL: exec.kv_pool @kv layers 2
// CHECK-NOT: quantize
// CHECK: exec.gemm %[[X:.+]], %{{.+}} weight_scale(%{{.+}} : !exec.view<4xf32>) input_scale(%{{.+}} : !exec.view<f32>) -> %{{.+}} {granularity = #transformer<granularity per_channel>, quantize_to = i8} : !exec.view<?x8xf32>, !exec.view<4x8xi8> -> !exec.view<?x4xbf16>
// CHECK: exec.gemm %[[X]], %{{.+}} weight_scale(%{{.+}} : !exec.view<4xf32>) -> %{{.+}} {dynamic_input, granularity = #transformer<granularity per_channel>, quantize_to = f8E4M3FN} : !exec.view<?x8xf32>, !exec.view<4x8xf8E4M3FN> -> !exec.view<?x4xbf16>
func.func @w8a8(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 2, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x4xbf16> {
  %table = onnx.Constant {value = dense<0.25> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %x = transformer.embedding %table[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %xs = onnx.Constant {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %x8 = transformer.quantize %x, %xs : (tensor<?x8xf32>, tensor<f32>) -> tensor<?x8xi8>
  %w8 = onnx.Constant {value = dense<3> : tensor<4x8xi8>} : () -> tensor<4x8xi8>
  %ws = onnx.Constant {value = dense<0.01> : tensor<4xf32>} : () -> tensor<4xf32>
  %y = transformer.linear %x8, %w8 weight_scale(%ws) input_scale(%xs) granularity = per_channel : (tensor<?x8xi8>, tensor<4x8xi8>, tensor<4xf32>, tensor<f32>) -> tensor<?x4xbf16>
  %xf, %ds = transformer.dynamic_quantize %x : tensor<?x8xf32> -> tensor<?x8xf8E4M3FN>, tensor<?xf32>
  %wf = onnx.Constant {value = dense<1.0> : tensor<4x8xf8E4M3FN>} : () -> tensor<4x8xf8E4M3FN>
  %z = transformer.linear %xf, %wf weight_scale(%ws) input_scale(%ds) granularity = per_channel : (tensor<?x8xf8E4M3FN>, tensor<4x8xf8E4M3FN>, tensor<4xf32>, tensor<?xf32>) -> tensor<?x4xbf16>
  %s = transformer.residual_add %y, %z : tensor<?x4xbf16>
  return %s : tensor<?x4xbf16>
}

// -----

// A quantize some other op reads cannot fold into a gemm.
func.func @unfolded_quantize(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x8xf32> {
  %table = onnx.Constant {value = dense<0.25> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %x = transformer.embedding %table[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %xs = onnx.Constant {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  // expected-error @+1 {{a transformer.quantize is lowered only into the W8A8 linears it feeds}}
  %x8 = transformer.quantize %x, %xs : (tensor<?x8xf32>, tensor<f32>) -> tensor<?x8xi8>
  %d = transformer.dequantize %x8, %xs : (tensor<?x8xi8>, tensor<f32>) -> tensor<?x8xf32>
  return %d : tensor<?x8xf32>
}
