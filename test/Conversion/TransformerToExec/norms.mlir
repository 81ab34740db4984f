// RUN: accel-opt %s -split-input-file -accel-lower-to-exec | FileCheck %s
//
// Norms/ lowering: rms_norm, add_rms_norm and layer_norm become one step
// each, reading the views of their operands and writing new buffers.

// CHECK-LABEL: exec.schedule @main mixed
// CHECK: %[[T:.+]] = exec.step_size tokens
// CHECK: %[[IDS:.+]] = exec.step_input token_ids : !exec.view<?xi64>
// CHECK: %[[X:.+]] = exec.alloc sizes(%[[T]]) : !exec.view<?x8xf32>
// CHECK: exec.embedding %{{.+}}[%[[IDS]]] -> %[[X]]
// CHECK: %[[W:.+]] = exec.weight "{{.*}}" @weights[{{[0-9]+}}] {value = dense<1.500000e+00> : tensor<8xf32>} : !exec.view<8xf32>
// CHECK: %[[Y:.+]] = exec.alloc sizes(%[[T]]) : !exec.view<?x8xf32>
// CHECK: exec.rms_norm %[[X]], %[[W]] -> %[[Y]] {epsilon = 1.000000e-05 : f64, weight_offset = 1.000000e+00 : f64}
// CHECK-SAME: : !exec.view<?x8xf32>, !exec.view<8xf32> -> !exec.view<?x8xf32>
// CHECK: exec.step_output logits %[[Y]] : !exec.view<?x8xf32>
func.func @rms_norm(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x8xf32> {
  %table = onnx.Constant {value = dense<0.25> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %x = transformer.embedding %table[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %w = onnx.Constant {value = dense<1.5> : tensor<8xf32>} : () -> tensor<8xf32>
  %y = transformer.rms_norm %x, %w {epsilon = 1.0e-05 : f64, weight_offset = 1.0 : f64} : tensor<?x8xf32>, tensor<8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// add_rms_norm writes two buffers: the normed value and the sum.
// CHECK-LABEL: exec.schedule @main mixed
// CHECK: %[[X:.+]] = exec.alloc sizes(%{{.+}}) : !exec.view<?x8xbf16>
// CHECK: exec.embedding
// CHECK: %[[OUT:.+]] = exec.alloc sizes(%{{.+}}) : !exec.view<?x8xbf16>
// CHECK-NEXT: %[[SUM:.+]] = exec.alloc sizes(%{{.+}}) : !exec.view<?x8xbf16>
// CHECK-NEXT: exec.add_rms_norm %[[X]], %[[X]], %{{.+}} -> %[[OUT]], %[[SUM]] {epsilon = 9.9999999999999995E-7 : f64}
// CHECK: exec.step_output logits %[[SUM]]
func.func @add_rms_norm(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 8, block_size = 16, bf16>)
    -> tensor<?x8xbf16> {
  %table = onnx.Constant {value = dense<0.25> : tensor<16x8xbf16>} : () -> tensor<16x8xbf16>
  %x = transformer.embedding %table[%ids] : (tensor<16x8xbf16>, tensor<?xi64>) -> tensor<?x8xbf16>
  %w = onnx.Constant {value = dense<1.0> : tensor<8xbf16>} : () -> tensor<8xbf16>
  %n, %s = transformer.add_rms_norm %x, %x, %w {epsilon = 1.0e-06 : f64} : tensor<?x8xbf16>, tensor<8xbf16>
  return %s : tensor<?x8xbf16>
}

// -----

// layer_norm with and without a bias.
// CHECK-LABEL: exec.schedule @main mixed
// CHECK: exec.layer_norm %[[X:.+]], %[[W:.+]] bias(%[[B:.+]] : !exec.view<8xf32>) -> %[[Y:.+]] {epsilon = 1.000000e-05 : f64}
// CHECK: exec.layer_norm %[[Y]], %[[W]] -> %{{.+}} {epsilon = 1.000000e-05 : f64} : !exec.view<?x8xf32>, !exec.view<8xf32> -> !exec.view<?x8xf32>
func.func @layer_norm(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x8xf32> {
  %table = onnx.Constant {value = dense<0.25> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %x = transformer.embedding %table[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %w = onnx.Constant {value = dense<1.0> : tensor<8xf32>} : () -> tensor<8xf32>
  %bias = onnx.Constant {value = dense<0.5> : tensor<8xf32>} : () -> tensor<8xf32>
  %y = transformer.layer_norm %x, %w bias(%bias) {epsilon = 1.0e-05 : f64} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %z = transformer.layer_norm %y, %w {epsilon = 1.0e-05 : f64} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %z : tensor<?x8xf32>
}
