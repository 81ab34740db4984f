// RUN: accel-opt %s -pass-pipeline='builtin.module(func.func(accel-narrow-weights{dtype=f16}))' -verify-diagnostics | FileCheck %s
//
// f16 has no room above 65504: weights beyond it become infinite (IEEE
// rounding), and the pass says how many and what to use instead.

// CHECK-LABEL: func @big
// CHECK: onnx.Constant {value = dense<{{\[}}[0x7C00, 1.000000e+00], [2.000000e+00, 0xFC00]]> : tensor<2x2xf16>}
func.func @big(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-warning @+1 {{2 weight values beyond the f16 range (65504) became infinite; -precision=bf16 keeps f32's range}}
  %w = onnx.Constant {value = dense<[[1.0e5, 1.0], [2.0, -7.0e4]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %y = transformer.linear %x, %w : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}
