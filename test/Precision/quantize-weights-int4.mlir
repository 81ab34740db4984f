// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-quantize-weights{dtype=i4 granularity=per_group group-size=2}))' | FileCheck %s
// RUN: not accel-opt %s -pass-pipeline='builtin.module(func.func(accel-quantize-weights{dtype=i4 granularity=per_group group-size=0}))' 2>&1 | FileCheck %s --check-prefix=BAD
//
// -precision=int4-weight's pass (docs/precision.md): symmetric i4, one scale
// per output feature and group of group-size input features, scale = absmax
// / 7, rounded to nearest even, clamped to ±7, one value per byte.

// BAD: accel-quantize-weights: group-size must be at least 1, got 0

// Row 0 [7, -3.5 | 3.5, 0.25]: group 0 absmax 7, scale 1 → [7, -3.5 → -4 (ties to
// even)]; group 1 absmax 3.5, scale 0.5 → [7, 0.5 → 0]. Row 1 [0, 0 | -1.75, 1]:
// group 0 all zero, scale 1 → [0, 0]; group 1 absmax 1.75, scale 0.25 → [-7, 4].
// The lazily quantised blob holds the same values, one byte each (F9 = -7).
// CHECK-LABEL: func @groups
// CHECK-DAG: %[[Q:.+]] = onnx.Constant {value = dense<{{\[}}[7, -4, 7, 0], [0, 0, -7, 4]]> : tensor<2x4xi4>}
// CHECK-DAG: %[[S:.+]] = onnx.Constant {value = dense<{{\[}}[1.000000e+00, 5.000000e-01], [1.000000e+00, 2.500000e-01]]> : tensor<2x2xf32>}
// CHECK-DAG: %[[R:.+]] = onnx.Constant {value = dense_resource<r.i4> : tensor<2x4xi4>}
// CHECK: transformer.linear %{{.+}}, %[[Q]] weight_scale(%[[S]]) granularity = per_group {group_size = 2 : i64} : (tensor<?x4xf32>, tensor<2x4xi4>, tensor<2x2xf32>) -> tensor<?x2xf32>
// CHECK: transformer.linear %{{.+}}, %[[R]] weight_scale(%{{.+}}) granularity = per_group {group_size = 2 : i64}
// CHECK: r.i4: "0x4000000007FC07000000F904"
func.func @groups(%x: tensor<?x4xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>) {
  %w = onnx.Constant {value = dense<[[7.0, -3.5, 3.5, 0.25], [0.0, 0.0, -1.75, 1.0]]> : tensor<2x4xf32>} : () -> tensor<2x4xf32>
  %r = onnx.Constant {value = dense_resource<r> : tensor<2x4xf32>} : () -> tensor<2x4xf32>
  %y = transformer.linear %x, %w : (tensor<?x4xf32>, tensor<2x4xf32>) -> tensor<?x2xf32>
  %z = transformer.linear %x, %r : (tensor<?x4xf32>, tensor<2x4xf32>) -> tensor<?x2xf32>
  return %y, %z : tensor<?x2xf32>, tensor<?x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      r: "0x040000000000E040000060C0000060400000803E00000000000000000000E0BF0000803F"
    }
  }
#-}

// -----

// in_features 3, which group-size 2 does not divide: one group per row
// (per_channel): row [7, 1, -7] scale 1 → [7, 1, -7].
// CHECK-LABEL: func @odd_width
// CHECK: transformer.linear %{{.+}}, %{{.+}} weight_scale(%{{.+}}) granularity = per_channel : (tensor<?x3xf32>, tensor<1x3xi4>, tensor<1xf32>) -> tensor<?x1xf32>
func.func @odd_width(%x: tensor<?x3xf32>) -> tensor<?x1xf32> {
  %w = onnx.Constant {value = dense<[[7.0, 1.0, -7.0]]> : tensor<1x3xf32>} : () -> tensor<1x3xf32>
  %y = transformer.linear %x, %w : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x1xf32>
  return %y : tensor<?x1xf32>
}
