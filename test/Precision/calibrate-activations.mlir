// RUN: %python -c "import numpy; numpy.save('%t.npy', numpy.array([[0, 1], [2, 0]], dtype=numpy.int64))"
// RUN: accel-opt %s -pass-pipeline='builtin.module(func.func(accel-calibrate-activations{tokens=%t.npy}))' | FileCheck %s
// RUN: not accel-opt %s -pass-pipeline='builtin.module(func.func(accel-calibrate-activations{tokens=%t.missing.npy}))' 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not accel-opt %s -pass-pipeline='builtin.module(func.func(accel-calibrate-activations))' 2>&1 | FileCheck %s --check-prefix=NONE
//
// w8a8's calibration, docs/precision.md: the token-major function runs on
// the CPU evaluator over each sequence of the file ([N, S] ids) and every
// f32 linear records max |x[:, j]| over all of them.

// MISSING: error: accel-calibrate-activations: {{.*}}missing.npy
// NONE: error: accel-calibrate-activations: no calibration tokens (tokens=<file.npy>)

// Sequences [0, 1] and [2, 0] read table rows 0, 1, 2: max |x| per column
// is [3, 4] for the first linear. The second reads the first's output,
// rows x W^T = [1, -2] -> [-1, 2.5], [0.5, 4] -> [4.5, -5], [-3, 0.25]
// -> [-2.75, -0.3125]: [4.5, 5].
// CHECK-LABEL: func @main
// CHECK: %[[H:.+]] = transformer.linear %{{.+}}, %{{.+}} {accel.calib_absmax = dense<[3.000000e+00, 4.000000e+00]> : tensor<2xf32>}
// CHECK: transformer.linear %[[H]], %{{.+}} {accel.calib_absmax = dense<[4.500000e+00, 5.000000e+00]> : tensor<2xf32>}
func.func @main(%ids: tensor<?xi64>, %batch: !transformer.batch) -> tensor<?x3xf32> {
  %table = onnx.Constant {value = dense<[[1.0, -2.0], [0.5, 4.0], [-3.0, 0.25]]> : tensor<3x2xf32>} : () -> tensor<3x2xf32>
  %w = onnx.Constant {value = dense<[[1.0, 1.0], [0.0, -1.25]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %w2 = onnx.Constant {value = dense<[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]> : tensor<3x2xf32>} : () -> tensor<3x2xf32>
  %e = transformer.embedding %table[%ids] : (tensor<3x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
  %h = transformer.linear %e, %w : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  %y = transformer.linear %h, %w2 : (tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}
