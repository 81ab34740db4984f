// RUN: accel-opt %s -split-input-file -verify-diagnostics

func.func @add_not_broadcastable(%a: tensor<4x64xf32>, %b: tensor<32xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{operand shapes 'tensor<4x64xf32>' and 'tensor<32xf32>' are not broadcastable}}
  %c = onnx.Add %a, %b : (tensor<4x64xf32>, tensor<32xf32>) -> tensor<4x64xf32>
  return %c : tensor<4x64xf32>
}
