// RUN: accel-opt %s -split-input-file -accel-lower-to-exec | FileCheck %s
//
// Pointwise/ lowering: residual_add, activation, gated_act, gated_mlp.

// CHECK-LABEL: exec.schedule @main mixed
// CHECK: %[[X:.+]] = exec.alloc sizes(%{{.+}}) : !exec.view<?x8xf32>
// CHECK: exec.embedding
// CHECK: %[[A:.+]] = exec.alloc sizes(%{{.+}}) : !exec.view<?x8xf32>
// CHECK-NEXT: exec.activation %[[X]] -> %[[A]] {kind = #transformer<activation_kind gelu_tanh>} : !exec.view<?x8xf32>
// CHECK: %[[R:.+]] = exec.alloc sizes(%{{.+}}) : !exec.view<?x8xf32>
// CHECK-NEXT: exec.residual_add %[[X]], %[[A]] -> %[[R]] : !exec.view<?x8xf32>
func.func @residual(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x8xf32> {
  %table = onnx.Constant {value = dense<0.25> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %x = transformer.embedding %table[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %a = transformer.activation %x kind = gelu_tanh : tensor<?x8xf32>
  %r = transformer.residual_add %x, %a : tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

// gated_act halves the last dimension; gated_mlp takes its weights as
// operands (fused gate_up here, separate gate and up below).
// CHECK-LABEL: exec.schedule @main mixed
// CHECK: %[[G:.+]] = exec.alloc sizes(%{{.+}}) : !exec.view<?x4xf32>
// CHECK-NEXT: exec.gated_act %[[X:.+]] -> %[[G]] {kind = #transformer<activation_kind silu>} : !exec.view<?x8xf32> -> !exec.view<?x4xf32>
// CHECK: exec.gated_mlp %[[X]] gate_up(%{{.+}} : !exec.view<8x8xf32>) down(%{{.+}} : !exec.view<8x4xf32>) -> %{{.+}} {kind = #transformer<activation_kind silu>}
// CHECK: exec.gated_mlp %[[X]] gate(%{{.+}} : !exec.view<4x8xf32>) up(%{{.+}} : !exec.view<4x8xf32>) down(%{{.+}} : !exec.view<8x4xf32>)
func.func @gated(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x8xf32> {
  %table = onnx.Constant {value = dense<0.25> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %x = transformer.embedding %table[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %g = transformer.gated_act %x kind = silu : tensor<?x8xf32> -> tensor<?x4xf32>
  %gu = onnx.Constant {value = dense<0.1> : tensor<8x8xf32>} : () -> tensor<8x8xf32>
  %gate = onnx.Constant {value = dense<0.2> : tensor<4x8xf32>} : () -> tensor<4x8xf32>
  %up = onnx.Constant {value = dense<0.3> : tensor<4x8xf32>} : () -> tensor<4x8xf32>
  %down = onnx.Constant {value = dense<0.4> : tensor<8x4xf32>} : () -> tensor<8x4xf32>
  %m = transformer.gated_mlp %x gate_up(%gu) down(%down) kind = silu : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<?x8xf32>
  %n = transformer.gated_mlp %x gate(%gate) up(%up) down(%down) kind = silu : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<?x8xf32>
  %s = transformer.residual_add %m, %n : tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}
