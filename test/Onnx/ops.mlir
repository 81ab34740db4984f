// RUN: accel-opt %s -split-input-file | accel-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func @add
func.func @add(%a: tensor<?x64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  // CHECK: onnx.Add %{{.*}}, %{{.*}} : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %c = onnx.Add %a, %b : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return %c : tensor<?x64xf32>
}
