// RUN: accel-opt %s -split-input-file -accel-raise-activations | FileCheck %s
// RUN: accel-opt %s -split-input-file -accel-raise-activations=tolerance=1e-9 | FileCheck %s --check-prefix=STRICT
//
// Activation formulas as the fixtures spell them (intermediate 128 → 16
// here): SiLU (llama family, phi3), GPT-2's gelu_new written out in Python,
// torch's tanh GELU decomposed by the dynamo exporter in another order
// (gemma, gemma2), the erf GELU, onnx.Gelu, quick GELU and ReLU.

// llama_op18, model.model.layers.0.mlp.act_fn.
// CHECK-LABEL: func @llama_silu
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x16xf32>)
// CHECK-NEXT: %[[T:.+]] = transformer.flatten_tokens %[[X]] : tensor<?x?x16xf32> -> tensor<?x16xf32>
// CHECK-NEXT: %[[A:.+]] = transformer.activation %[[T]] kind = silu : tensor<?x16xf32>
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[A]] like %[[X]] : tensor<?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x16xf32>
// CHECK-NEXT: return %[[Y]]
func.func @llama_silu(%linear_4: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %val_311 = onnx.Sigmoid %linear_4 : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %silu = onnx.Mul %linear_4, %val_311 : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  return %silu : tensor<?x?x16xf32>
}

// -----

// The Sigmoid first, on a token-major value: no flatten needed.
// CHECK-LABEL: func @silu_sigmoid_first
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x16xbf16>)
// CHECK-NEXT: %[[A:.+]] = transformer.activation %[[X]] kind = silu : tensor<?x16xbf16>
// CHECK-NEXT: return %[[A]]
func.func @silu_sigmoid_first(%x: tensor<?x16xbf16>) -> tensor<?x16xbf16> {
  %s = onnx.Sigmoid %x : (tensor<?x16xbf16>) -> tensor<?x16xbf16>
  %y = onnx.Mul %s, %x : (tensor<?x16xbf16>, tensor<?x16xbf16>) -> tensor<?x16xbf16>
  return %y : tensor<?x16xbf16>
}

// -----

// With tolerance=1e-9 the f32-rounded constants of the export
// (0.797884583 for sqrt(2/pi)) no longer match.
// STRICT-LABEL: func @gpt2_gelu_new
// STRICT-NOT: transformer.activation
// STRICT: onnx.Tanh
// gpt2_op18, model.transformer.h.0.mlp.act (HF gelu_new):
// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))).
// CHECK-LABEL: func @gpt2_gelu_new
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x16xf32>)
// CHECK: %[[T:.+]] = transformer.flatten_tokens %[[X]]
// CHECK-NEXT: %[[A:.+]] = transformer.activation %[[T]] kind = gelu_tanh : tensor<?x16xf32>
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[A]] like %[[X]]
// CHECK-NEXT: return %[[Y]]
// CHECK-NOT: onnx.Tanh
func.func @gpt2_gelu_new(%view_10: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %val_174 = onnx.Constant {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %val_212 = onnx.Constant {value = dense<3.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %val_213 = onnx.Constant {value = dense<4.471500e-02> : tensor<f32>} : () -> tensor<f32>
  %val_214 = onnx.Constant {value = dense<0.797884583> : tensor<f32>} : () -> tensor<f32>
  %val_9 = onnx.Constant {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %mul_166 = onnx.Mul %view_10, %val_174 : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  %pow_1 = onnx.Pow %view_10, %val_212 : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  %mul_173 = onnx.Mul %pow_1, %val_213 : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  %add_242 = onnx.Add %view_10, %mul_173 : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %mul_180 = onnx.Mul %add_242, %val_214 : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  %tanh = onnx.Tanh %mul_180 : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %add_255 = onnx.Add %tanh, %val_9 : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  %mul_190 = onnx.Mul %mul_166, %add_255 : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  return %mul_190 : tensor<?x?x16xf32>
}

// -----

// gemma_op18, model.model.layers.0.mlp.act_fn (torch gelu, approximate =
// tanh): the constants on the other side and the 0.5 with the (1 + tanh).
// CHECK-LABEL: func @gemma_gelu_tanh
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x16xf32>)
// CHECK: %[[T:.+]] = transformer.flatten_tokens %[[X]]
// CHECK-NEXT: %[[A:.+]] = transformer.activation %[[T]] kind = gelu_tanh : tensor<?x16xf32>
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[A]] like %[[X]]
// CHECK-NEXT: return %[[Y]]
func.func @gemma_gelu_tanh(%linear_4: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %val_288 = onnx.Constant {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %val_311 = onnx.Constant {value = dense<3.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %val_313 = onnx.Constant {value = dense<4.471500e-02> : tensor<f32>} : () -> tensor<f32>
  %val_316 = onnx.Constant {value = dense<0.797884583> : tensor<f32>} : () -> tensor<f32>
  %val_319 = onnx.Constant {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %val_312 = onnx.Pow %linear_4, %val_311 : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  %val_314 = onnx.Mul %val_313, %val_312 : (tensor<f32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %val_315 = onnx.Add %linear_4, %val_314 : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %val_317 = onnx.Mul %val_316, %val_315 : (tensor<f32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %val_318 = onnx.Tanh %val_317 : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %val_320 = onnx.Add %val_318, %val_319 : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  %val_322 = onnx.Mul %val_288, %val_320 : (tensor<f32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %gelu = onnx.Mul %linear_4, %val_322 : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  return %gelu : tensor<?x?x16xf32>
}

// -----

// The expanded polynomial: tanh(c * x + c * 0.044715 * x * x * x).
// CHECK-LABEL: func @gelu_tanh_expanded
// CHECK: transformer.activation %{{.+}} kind = gelu_tanh : tensor<?x16xf32>
// CHECK-NOT: onnx.Tanh
func.func @gelu_tanh_expanded(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %half = onnx.Constant {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %one = onnx.Constant {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %c = onnx.Constant {value = dense<0.797884583> : tensor<f32>} : () -> tensor<f32>
  %ck = onnx.Constant {value = dense<0.0356774069> : tensor<f32>} : () -> tensor<f32>
  %x2 = onnx.Mul %x, %x : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %x3 = onnx.Mul %x2, %x : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %a = onnx.Mul %c, %x : (tensor<f32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %b = onnx.Mul %ck, %x3 : (tensor<f32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %u = onnx.Add %a, %b : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %t = onnx.Tanh %u : (tensor<?x16xf32>) -> tensor<?x16xf32>
  %g = onnx.Add %one, %t : (tensor<f32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %xg = onnx.Mul %x, %g : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %y = onnx.Mul %xg, %half : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// torch's exact GELU as the exporters decompose it:
// x * (1 + erf(x / sqrt(2))) * 0.5.
// CHECK-LABEL: func @gelu_erf
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x16xf32>)
// CHECK: %[[T:.+]] = transformer.flatten_tokens %[[X]]
// CHECK-NEXT: %[[A:.+]] = transformer.activation %[[T]] kind = gelu : tensor<?x16xf32>
// CHECK-NEXT: transformer.unflatten_tokens %[[A]] like %[[X]]
func.func @gelu_erf(%x: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %sqrt2 = onnx.Constant {value = dense<1.41421354> : tensor<f32>} : () -> tensor<f32>
  %one = onnx.Constant {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %half = onnx.Constant {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %d = onnx.Div %x, %sqrt2 : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  %e = onnx.Erf %d : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %g = onnx.Add %e, %one : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  %xg = onnx.Mul %x, %g : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %y = onnx.Mul %xg, %half : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}

// -----

// onnx.Gelu (opset 20), both approximations.
// CHECK-LABEL: func @onnx_gelu
// CHECK: transformer.activation %{{.+}} kind = gelu : tensor<?x16xf16>
// CHECK: transformer.activation %{{.+}} kind = gelu_tanh : tensor<?x16xf16>
// CHECK-NOT: onnx.Gelu
func.func @onnx_gelu(%x: tensor<?x16xf16>) -> (tensor<?x16xf16>, tensor<?x16xf16>) {
  %a = onnx.Gelu %x : (tensor<?x16xf16>) -> tensor<?x16xf16>
  %b = onnx.Gelu %x {approximate = "tanh"} : (tensor<?x16xf16>) -> tensor<?x16xf16>
  return %a, %b : tensor<?x16xf16>, tensor<?x16xf16>
}

// -----

// HF quick_gelu: x * sigmoid(1.702 * x).
// CHECK-LABEL: func @quick_gelu
// CHECK: transformer.activation %{{.+}} kind = quick_gelu : tensor<?x16xf32>
func.func @quick_gelu(%x: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %k = onnx.Constant {value = dense<1.702000e+00> : tensor<f32>} : () -> tensor<f32>
  %kx = onnx.Mul %x, %k : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  %s = onnx.Sigmoid %kx : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %y = onnx.Mul %x, %s : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}

// -----

// Relu, and Relu squared (HF relu2).
// CHECK-LABEL: func @relu
// CHECK: %[[R:.+]] = transformer.activation %{{.+}} kind = relu : tensor<?x16xf32>
// CHECK: %[[R2:.+]] = transformer.activation %{{.+}} kind = relu_squared : tensor<?x16xf32>
// CHECK-NOT: onnx.Relu
// CHECK-NOT: onnx.Pow
func.func @relu(%x: tensor<?x?x16xf32>, %z: tensor<?x?x16xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x16xf32>) {
  %two = onnx.Constant {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %r = onnx.Relu %x : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %rz = onnx.Relu %z : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %r2 = onnx.Pow %rz, %two : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  return %r, %r2 : tensor<?x?x16xf32>, tensor<?x?x16xf32>
}

// -----

// Negative: sigmoid(x) * y with y != x is a gate (GLU), not SiLU.
// CHECK-LABEL: func @sigmoid_times_other
// CHECK-NOT: transformer.
// CHECK: onnx.Sigmoid
func.func @sigmoid_times_other(%x: tensor<?x?x16xf32>, %y: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %s = onnx.Sigmoid %x : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %m = onnx.Mul %y, %s : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  return %m : tensor<?x?x16xf32>
}

// -----

// Negative: x * sigmoid(2x) is neither SiLU (k = 1) nor quick GELU (1.702).
// CHECK-LABEL: func @sigmoid_other_slope
// CHECK-NOT: transformer.
// CHECK: onnx.Sigmoid
func.func @sigmoid_other_slope(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %k = onnx.Constant {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %kx = onnx.Mul %x, %k : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %s = onnx.Sigmoid %kx : (tensor<?x16xf32>) -> tensor<?x16xf32>
  %y = onnx.Mul %x, %s : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// Negative: the cubic coefficient is 0.05, not 0.044715.
// CHECK-LABEL: func @gelu_wrong_constant
// CHECK-NOT: transformer.
// CHECK: onnx.Tanh
func.func @gelu_wrong_constant(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %half = onnx.Constant {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %three = onnx.Constant {value = dense<3.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %k = onnx.Constant {value = dense<5.000000e-02> : tensor<f32>} : () -> tensor<f32>
  %c = onnx.Constant {value = dense<0.797884583> : tensor<f32>} : () -> tensor<f32>
  %one = onnx.Constant {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %hx = onnx.Mul %x, %half : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %x3 = onnx.Pow %x, %three : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %kx3 = onnx.Mul %x3, %k : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %p = onnx.Add %x, %kx3 : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %u = onnx.Mul %p, %c : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %t = onnx.Tanh %u : (tensor<?x16xf32>) -> tensor<?x16xf32>
  %g = onnx.Add %t, %one : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %y = onnx.Mul %hx, %g : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// Negative: the tanh's argument is a polynomial in another tensor (%z).
// CHECK-LABEL: func @gelu_other_tensor
// CHECK-NOT: transformer.
// CHECK: onnx.Tanh
func.func @gelu_other_tensor(%x: tensor<?x16xf32>, %z: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %half = onnx.Constant {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %three = onnx.Constant {value = dense<3.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %k = onnx.Constant {value = dense<4.471500e-02> : tensor<f32>} : () -> tensor<f32>
  %c = onnx.Constant {value = dense<0.797884583> : tensor<f32>} : () -> tensor<f32>
  %one = onnx.Constant {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %hx = onnx.Mul %x, %half : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %z3 = onnx.Pow %z, %three : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %kz3 = onnx.Mul %z3, %k : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %p = onnx.Add %z, %kz3 : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %u = onnx.Mul %p, %c : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %t = onnx.Tanh %u : (tensor<?x16xf32>) -> tensor<?x16xf32>
  %g = onnx.Add %t, %one : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %y = onnx.Mul %hx, %g : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}
