// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-quantize-activations))' | FileCheck %s
//
// W8A8, docs/precision.md: an i8-weight linear with calibration statistics
// reads x quantised to i8 with the static per-tensor scale max|x| / 127.

// max of [2.54, -0.5 → 0.5] is 2.54: scale 2.54 / 127 = 0.02. The bias and
// weight scale stay; the statistics are dropped.
// CHECK-LABEL: func @static_per_tensor
// CHECK: %[[S:.+]] = onnx.Constant {value = dense<2.000000e-02> : tensor<f32>}
// CHECK: %[[XQ:.+]] = transformer.quantize %arg0, %[[S]] : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xi8>
// CHECK: transformer.linear %[[XQ]], %{{.+}} bias(%{{.+}}) weight_scale(%{{.+}}) input_scale(%[[S]]) granularity = per_channel : (tensor<?x2xi8>, tensor<4x2xi8>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> tensor<?x4xf32>
// CHECK-NOT: accel.calib_absmax
func.func @static_per_tensor(%x: tensor<?x2xf32>) -> tensor<?x4xf32> {
  %q = onnx.Constant {value = dense<[[127, 1], [2, 3], [4, 5], [6, -127]]> : tensor<4x2xi8>} : () -> tensor<4x2xi8>
  %ws = onnx.Constant {value = dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>} : () -> tensor<4xf32>
  %b = onnx.Constant {value = dense<0.5> : tensor<4xf32>} : () -> tensor<4xf32>
  %y = transformer.linear %x, %q bias(%b) weight_scale(%ws) granularity = per_channel {accel.calib_absmax = dense<[2.54, 0.5]> : tensor<2xf32>} : (tensor<?x2xf32>, tensor<4x2xi8>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// GPT-2's c_fc with its gelu epilogue: a W8A8 linear takes none, so the gelu
// becomes a transformer.activation after it. All-zero statistics give scale 1.
// CHECK-LABEL: func @epilogue_split
// CHECK: %[[S:.+]] = onnx.Constant {value = dense<1.000000e+00> : tensor<f32>}
// CHECK: %[[XQ:.+]] = transformer.quantize %arg0, %[[S]]
// CHECK: %[[Y:.+]] = transformer.linear %[[XQ]], %{{.+}} weight_scale(%{{.+}}) input_scale(%[[S]]) granularity = per_channel : (tensor<?x2xi8>, tensor<4x2xi8>, tensor<4xf32>, tensor<f32>) -> tensor<?x4xf32>
// CHECK: %[[A:.+]] = transformer.activation %[[Y]] kind = gelu_tanh : tensor<?x4xf32>
// CHECK: return %[[A]]
func.func @epilogue_split(%x: tensor<?x2xf32>) -> tensor<?x4xf32> {
  %q = onnx.Constant {value = dense<1> : tensor<4x2xi8>} : () -> tensor<4x2xi8>
  %ws = onnx.Constant {value = dense<0.1> : tensor<4xf32>} : () -> tensor<4xf32>
  %y = transformer.linear %x, %q weight_scale(%ws) granularity = per_channel activation = gelu_tanh {accel.calib_absmax = dense<0.0> : tensor<2xf32>} : (tensor<?x2xf32>, tensor<4x2xi8>, tensor<4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// Not quantised, statistics dropped: an f32 weight (accel-quantize-weights
// did not run on it) and a linear without statistics.
// CHECK-LABEL: func @untouched
// CHECK-NOT: transformer.quantize
// CHECK-NOT: accel.calib_absmax
// CHECK: transformer.linear %arg0, %{{.+}} : (tensor<?x2xf32>, tensor<4x2xf32>) -> tensor<?x4xf32>
// CHECK: transformer.linear %arg0, %{{.+}} weight_scale(%{{.+}}) granularity = per_channel : (tensor<?x2xf32>, tensor<4x2xi8>, tensor<4xf32>) -> tensor<?x4xf32>
func.func @untouched(%x: tensor<?x2xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %w = onnx.Constant {value = dense<1.0> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %q = onnx.Constant {value = dense<1> : tensor<4x2xi8>} : () -> tensor<4x2xi8>
  %ws = onnx.Constant {value = dense<0.1> : tensor<4xf32>} : () -> tensor<4xf32>
  %y = transformer.linear %x, %w {accel.calib_absmax = dense<1.0> : tensor<2xf32>} : (tensor<?x2xf32>, tensor<4x2xf32>) -> tensor<?x4xf32>
  %z = transformer.linear %x, %q weight_scale(%ws) granularity = per_channel : (tensor<?x2xf32>, tensor<4x2xi8>, tensor<4xf32>) -> tensor<?x4xf32>
  return %y, %z : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-quantize-activations{dtype=f8E4M3FN}))' | FileCheck %s --check-prefix=FP8
// RUN: not accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-quantize-activations{dtype=i4}))' 2>&1 | FileCheck %s --check-prefix=BADTYPE
// BADTYPE: accel-quantize-activations: dtype must be i8 or f8E4M3FN, not 'i4'
//
// -precision=w8a8-fp8: an f8E4M3FN-weight linear reads x quantised to e4m3
// with the scale max|x| / 448 (4.48 / 448 = 0.01); with dtype=f8E4M3FN the
// i8-weight linears above are left alone (and lose their statistics).
// FP8-LABEL: func @static_per_tensor
// FP8-NOT: transformer.quantize
// FP8-LABEL: func @fp8_static_per_tensor
// FP8: %[[S:.+]] = onnx.Constant {value = dense<0.00999999977> : tensor<f32>}
// FP8: %[[XQ:.+]] = transformer.quantize %arg0, %[[S]] : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xf8E4M3FN>
// FP8: transformer.linear %[[XQ]], %{{.+}} weight_scale(%{{.+}}) input_scale(%[[S]]) granularity = per_channel : (tensor<?x2xf8E4M3FN>, tensor<3x2xf8E4M3FN>, tensor<3xf32>, tensor<f32>) -> tensor<?x3xf32>
// FP8-NOT: accel.calib_absmax
// The i8 pass leaves the e4m3-weight linear alone.
// CHECK-LABEL: func @fp8_static_per_tensor
// CHECK-NOT: transformer.quantize
func.func @fp8_static_per_tensor(%x: tensor<?x2xf32>) -> tensor<?x3xf32> {
  %q = onnx.Constant {value = dense<[[1.0, 2.0], [4.0, -8.0], [0.5, 448.0]]> : tensor<3x2xf8E4M3FN>} : () -> tensor<3x2xf8E4M3FN>
  %ws = onnx.Constant {value = dense<[0.1, 0.2, 0.3]> : tensor<3xf32>} : () -> tensor<3xf32>
  %y = transformer.linear %x, %q weight_scale(%ws) granularity = per_channel {accel.calib_absmax = dense<[4.48, -1.0]> : tensor<2xf32>} : (tensor<?x2xf32>, tensor<3x2xf8E4M3FN>, tensor<3xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

// -----

// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-quantize-activations{dtype=f8E4M3FN dynamic=true}))' | FileCheck %s --check-prefix=DYN
//
// Dynamic per-token scales (-precision=w8a8-fp8 without -calibration):
// every e4m3-weight linear, statistics or not, reads dynamic_quantize's
// results; its epilogue becomes an activation after it.
// DYN-LABEL: func @fp8_dynamic
// DYN: %[[Q:.+]], %[[S:.+]] = transformer.dynamic_quantize %arg0 : tensor<?x2xf32> -> tensor<?x2xf8E4M3FN>, tensor<?xf32>
// DYN: %[[Y:.+]] = transformer.linear %[[Q]], %{{.+}} weight_scale(%{{.+}}) input_scale(%[[S]]) granularity = per_channel : (tensor<?x2xf8E4M3FN>, tensor<3x2xf8E4M3FN>, tensor<3xf32>, tensor<?xf32>) -> tensor<?x3xf32>
// DYN: transformer.activation %[[Y]] kind = silu
// CHECK-LABEL: func @fp8_dynamic
func.func @fp8_dynamic(%x: tensor<?x2xf32>) -> tensor<?x3xf32> {
  %q = onnx.Constant {value = dense<[[1.0, 2.0], [4.0, -8.0], [0.5, 448.0]]> : tensor<3x2xf8E4M3FN>} : () -> tensor<3x2xf8E4M3FN>
  %ws = onnx.Constant {value = dense<[0.1, 0.2, 0.3]> : tensor<3xf32>} : () -> tensor<3xf32>
  %y = transformer.linear %x, %q weight_scale(%ws) granularity = per_channel activation = silu : (tensor<?x2xf32>, tensor<3x2xf8E4M3FN>, tensor<3xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}
