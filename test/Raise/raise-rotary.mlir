// RUN: accel-opt %s -split-input-file -accel-raise-rotary 2>/dev/null | FileCheck %s
// RUN: accel-opt %s -split-input-file -accel-raise-rotary 2>&1 >/dev/null | FileCheck %s --check-prefix=DIAG

// Llama's rotary as torch dynamo writes it, on a token-major graph: cos/sin
// from positions × inv_freq (theta 1e4, head_dim 4), rotate_half by
// Slice/Neg/Concat, x·cos + rotate_half(x)·sin.
// CHECK-LABEL: func.func @half_split
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x2x?x4xf32>, %[[B:[^:]+]]: !transformer.batch)
// CHECK: %[[P:.+]] = transformer.positions %[[B]]
// CHECK: transformer.rotary %{{.+}}, %[[P]] style = half_split {rotary_dim = 4 : i64, theta = 1.000000e+04 : f64} : (tensor<?x2x4xf32>, tensor<?xi64>) -> tensor<?x2x4xf32>
// CHECK-NOT: onnx.Cos
// CHECK-NOT: onnx.Neg
func.func @half_split(%x: tensor<?x2x?x4xf32>, %batch: !transformer.batch) -> tensor<?x2x?x4xf32> {
  %pos = transformer.positions %batch : tensor<?xi64>
  %ax0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax1 = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %p2 = onnx.Unsqueeze %pos axes(%ax1) : (tensor<?xi64>, tensor<1xi64>) -> tensor<?x1xi64>
  %pf = onnx.Cast %p2 {to = 1 : i64} : (tensor<?x1xi64>) -> tensor<?x1xf32>
  %invf = onnx.Constant {value = dense<[[1.0, 0.00999999977]]> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %f = onnx.MatMul %pf, %invf : (tensor<?x1xf32>, tensor<1x2xf32>) -> tensor<?x2xf32>
  %ff = onnx.Concat %f, %f {axis = -1 : i64} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x4xf32>
  %cos = onnx.Cos %ff : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %sin = onnx.Sin %ff : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %c4 = onnx.Unsqueeze %cos axes(%ax0) : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<1x?x4xf32>
  %s4 = onnx.Unsqueeze %sin axes(%ax0) : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<1x?x4xf32>
  %zero = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %two = onnx.Constant {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %end = onnx.Constant {value = dense<9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %axis = onnx.Constant {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
  %lo = onnx.Slice %x, %zero, %two axes(%axis) : (tensor<?x2x?x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x2xf32>
  %hi = onnx.Slice %x, %two, %end axes(%axis) : (tensor<?x2x?x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x2xf32>
  %nhi = onnx.Neg %hi : (tensor<?x2x?x2xf32>) -> tensor<?x2x?x2xf32>
  %rot = onnx.Concat %nhi, %lo {axis = -1 : i64} : (tensor<?x2x?x2xf32>, tensor<?x2x?x2xf32>) -> tensor<?x2x?x4xf32>
  %a = onnx.Mul %x, %c4 : (tensor<?x2x?x4xf32>, tensor<1x?x4xf32>) -> tensor<?x2x?x4xf32>
  %b = onnx.Mul %rot, %s4 : (tensor<?x2x?x4xf32>, tensor<1x?x4xf32>) -> tensor<?x2x?x4xf32>
  %y = onnx.Add %a, %b : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  return %y : tensor<?x2x?x4xf32>
}

// -----

// Not raised: without the Neg the "rotation" is x·cos + swap(x)·sin, which
// no rotary embedding computes; the proof by evaluation rejects it.
// DIAG: warning: rotary embedding could not be raised: it is not x·cos + rotate(x)·sin
// CHECK-LABEL: func.func @no_negation
// CHECK-NOT: transformer.rotary
// CHECK: onnx.Cos
func.func @no_negation(%x: tensor<?x2x?x4xf32>, %batch: !transformer.batch) -> tensor<?x2x?x4xf32> {
  %pos = transformer.positions %batch : tensor<?xi64>
  %ax0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax1 = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %p2 = onnx.Unsqueeze %pos axes(%ax1) : (tensor<?xi64>, tensor<1xi64>) -> tensor<?x1xi64>
  %pf = onnx.Cast %p2 {to = 1 : i64} : (tensor<?x1xi64>) -> tensor<?x1xf32>
  %invf = onnx.Constant {value = dense<[[1.0, 0.00999999977]]> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %f = onnx.MatMul %pf, %invf : (tensor<?x1xf32>, tensor<1x2xf32>) -> tensor<?x2xf32>
  %ff = onnx.Concat %f, %f {axis = -1 : i64} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x4xf32>
  %cos = onnx.Cos %ff : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %sin = onnx.Sin %ff : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %c4 = onnx.Unsqueeze %cos axes(%ax0) : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<1x?x4xf32>
  %s4 = onnx.Unsqueeze %sin axes(%ax0) : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<1x?x4xf32>
  %zero = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %two = onnx.Constant {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %end = onnx.Constant {value = dense<9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %axis = onnx.Constant {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
  %lo = onnx.Slice %x, %zero, %two axes(%axis) : (tensor<?x2x?x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x2xf32>
  %hi = onnx.Slice %x, %two, %end axes(%axis) : (tensor<?x2x?x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x2xf32>
  %rot = onnx.Concat %hi, %lo {axis = -1 : i64} : (tensor<?x2x?x2xf32>, tensor<?x2x?x2xf32>) -> tensor<?x2x?x4xf32>
  %a = onnx.Mul %x, %c4 : (tensor<?x2x?x4xf32>, tensor<1x?x4xf32>) -> tensor<?x2x?x4xf32>
  %b = onnx.Mul %rot, %s4 : (tensor<?x2x?x4xf32>, tensor<1x?x4xf32>) -> tensor<?x2x?x4xf32>
  %y = onnx.Add %a, %b : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  return %y : tensor<?x2x?x4xf32>
}
