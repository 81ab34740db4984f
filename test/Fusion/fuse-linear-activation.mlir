// RUN: accel-opt %s -split-input-file -accel-fuse-linear-activation | FileCheck %s
//
// MLPs as raising leaves them (GPT-2's c_fc, hidden 64 → 8, intermediate
// 256 → 32 here).

// GPT-2's c_fc with its bias and gelu_tanh: the gelu becomes the linear's
// epilogue; c_proj reads the linear.
// CHECK-LABEL: func @gpt2_mlp
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x8xf32>, %[[WFC:[^:]+]]: tensor<32x8xf32>, %[[BFC:[^:]+]]: tensor<32xf32>, %[[WP:[^:]+]]: tensor<8x32xf32>)
// CHECK-NEXT: %[[H:.+]] = transformer.linear %[[X]], %[[WFC]] bias(%[[BFC]]) activation = gelu_tanh : (tensor<?x8xf32>, tensor<32x8xf32>, tensor<32xf32>) -> tensor<?x32xf32>
// CHECK-NEXT: %[[Y:.+]] = transformer.linear %[[H]], %[[WP]] : (tensor<?x32xf32>, tensor<8x32xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: return %[[Y]]
// CHECK-NOT: transformer.activation
func.func @gpt2_mlp(%x: tensor<?x8xf32>, %wfc: tensor<32x8xf32>, %bfc: tensor<32xf32>,
                    %wp: tensor<8x32xf32>) -> tensor<?x8xf32> {
  %h = transformer.linear %x, %wfc bias(%bfc) : (tensor<?x8xf32>, tensor<32x8xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  %a = transformer.activation %h kind = gelu_tanh : tensor<?x32xf32>
  %y = transformer.linear %a, %wp : (tensor<?x32xf32>, tensor<8x32xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// silu without a bias, on a bf16 linear.
// CHECK-LABEL: func @silu_no_bias
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x8xbf16>, %[[W:[^:]+]]: tensor<32x8xbf16>)
// CHECK-NEXT: %[[H:.+]] = transformer.linear %[[X]], %[[W]] activation = silu : (tensor<?x8xbf16>, tensor<32x8xbf16>) -> tensor<?x32xbf16>
// CHECK-NEXT: return %[[H]]
func.func @silu_no_bias(%x: tensor<?x8xbf16>, %w: tensor<32x8xbf16>) -> tensor<?x32xbf16> {
  %h = transformer.linear %x, %w : (tensor<?x8xbf16>, tensor<32x8xbf16>) -> tensor<?x32xbf16>
  %a = transformer.activation %h kind = silu : tensor<?x32xbf16>
  return %a : tensor<?x32xbf16>
}

// -----

// A weight-only quantised linear takes the epilogue too.
// CHECK-LABEL: func @int8_weight
// CHECK: transformer.linear %{{.+}}, %{{.+}} weight_scale(%{{.+}}) granularity = per_channel activation = relu
// CHECK-NOT: transformer.activation
func.func @int8_weight(%x: tensor<?x8xf32>, %w: tensor<32x8xi8>, %s: tensor<32xf32>) -> tensor<?x32xf32> {
  %h = transformer.linear %x, %w weight_scale(%s) granularity = per_channel
         : (tensor<?x8xf32>, tensor<32x8xi8>, tensor<32xf32>) -> tensor<?x32xf32>
  %a = transformer.activation %h kind = relu : tensor<?x32xf32>
  return %a : tensor<?x32xf32>
}

// -----

// Not fused: the linear's result is also returned, so the unactivated
// values are still needed.
// CHECK-LABEL: func @two_uses
// CHECK: %[[H:.+]] = transformer.linear %{{.+}}, %{{.+}} : (tensor<?x8xf32>, tensor<32x8xf32>) -> tensor<?x32xf32>
// CHECK-NEXT: %[[A:.+]] = transformer.activation %[[H]] kind = gelu_tanh
// CHECK-NEXT: return %[[A]], %[[H]]
func.func @two_uses(%x: tensor<?x8xf32>, %w: tensor<32x8xf32>) -> (tensor<?x32xf32>, tensor<?x32xf32>) {
  %h = transformer.linear %x, %w : (tensor<?x8xf32>, tensor<32x8xf32>) -> tensor<?x32xf32>
  %a = transformer.activation %h kind = gelu_tanh : tensor<?x32xf32>
  return %a, %h : tensor<?x32xf32>, tensor<?x32xf32>
}

// -----

// Not fused: the activation reads a norm, not a linear.
// CHECK-LABEL: func @not_a_linear
// CHECK: %[[N:.+]] = transformer.rms_norm
// CHECK-NEXT: transformer.activation %[[N]] kind = silu
func.func @not_a_linear(%x: tensor<?x8xf32>, %w: tensor<8xf32>) -> tensor<?x8xf32> {
  %n = transformer.rms_norm %x, %w {epsilon = 1.0e-05 : f64} : tensor<?x8xf32>, tensor<8xf32>
  %a = transformer.activation %n kind = silu : tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// -----

// Not fused: the linear has an epilogue already (tanh of gelu stays two
// activations, the second a separate op).
// CHECK-LABEL: func @already_fused
// CHECK: %[[H:.+]] = transformer.linear %{{.+}}, %{{.+}} activation = gelu
// CHECK-NEXT: %[[A:.+]] = transformer.activation %[[H]] kind = tanh
// CHECK-NEXT: return %[[A]]
func.func @already_fused(%x: tensor<?x8xf32>, %w: tensor<32x8xf32>) -> tensor<?x32xf32> {
  %h = transformer.linear %x, %w activation = gelu : (tensor<?x8xf32>, tensor<32x8xf32>) -> tensor<?x32xf32>
  %a = transformer.activation %h kind = tanh : tensor<?x32xf32>
  return %a : tensor<?x32xf32>
}

// -----

// Not fused: a linear with quantised activations (W8A8) takes no epilogue.
// CHECK-LABEL: func @w8a8
// CHECK: %[[H:.+]] = transformer.linear %{{.+}}, %{{.+}} weight_scale(%{{.+}}) input_scale(%{{.+}}) granularity = per_tensor :
// CHECK-NEXT: transformer.activation %[[H]] kind = silu
func.func @w8a8(%x: tensor<?x8xf8E4M3FN>, %w: tensor<32x8xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x32xbf16> {
  %h = transformer.linear %x, %w weight_scale(%s) input_scale(%s) granularity = per_tensor
         : (tensor<?x8xf8E4M3FN>, tensor<32x8xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x32xbf16>
  %a = transformer.activation %h kind = silu : tensor<?x32xbf16>
  return %a : tensor<?x32xbf16>
}
