// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-quantize-weights{dtype=i4 granularity=per_group group-size=2 search-scales=false}))' | FileCheck %s
// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-quantize-weights{dtype=i4 granularity=per_group group-size=2}))' | FileCheck %s --check-prefix=SEARCH
// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-quantize-weights{dtype=i4 granularity=per_group group-size=2 zero-points=true}))' | FileCheck %s --check-prefix=ZP
// RUN: not accel-opt %s -pass-pipeline='builtin.module(func.func(accel-quantize-weights{dtype=i4 granularity=per_group group-size=0}))' 2>&1 | FileCheck %s --check-prefix=BAD
//
// -precision=int4-weight's pass (docs/precision.md): symmetric i4, one scale
// per output feature and group of group-size input features, scale = absmax
// / 7, rounded to nearest even, clamped to ±7, one value per byte. The first
// RUN turns the scale search off (scale = absmax / 7 exactly); SEARCH and ZP
// check @search's hand-worked groups with it (the default), ZP with zero
// points (-int4-zero-points).

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

// -----

// The scale search (r in 1.0, 0.98, .., 0.70 of the extremes; the least
// squared error of the rounded group wins, the first of equals):
// group [7, -3.5]: r = 1 → scale 1, codes [7, -4], error 0.5^2 = 0.25;
// r = 0.98 → 7/0.98 = 7.14 → 7 (6.86), -3.57 → -4 (-3.92): 0.0196 + 0.1764
// = 0.196; r = 0.96 → 7.29 → 7 (6.72), -3.65 → -4 (-3.84): 0.0784 + 0.1156 =
// 0.194; r = 0.94 → 0.244: scale 0.96. Group [-1.75, 1]: r = 1 is exact
// (scale 0.25, codes [-7, 4]).
// SEARCH-LABEL: func @search
// SEARCH-DAG: onnx.Constant {value = dense<{{\[}}[7, -4, -7, 4]]> : tensor<1x4xi4>}
// SEARCH-DAG: onnx.Constant {value = dense<{{\[}}[0.95999{{[0-9]*}}, 2.500000e-01]]> : tensor<1x2xf32>}
// Zero points: group [7, -3.5]: range [-3.5, 7], scale 10.5 / 15 = 0.7, zp =
// round(3.5 / 0.7) - 8 = -3, codes 10 - 3 = 7 and -5 - 3 = -8: exact, so r
// = 1. Group [-1.75, 1]: r = 1: scale 2.75 / 15 = 0.18333, zp = round(9.545)
// - 8 = 2, codes -10 + 2 = -8 (-1.8333) and 5 + 2 = 7 (0.9167): error
// 0.00694 + 0.00694 = 0.01389; r = 0.98: scale 2.695 / 15 = 0.179667, zp 2,
// -9.74 → -10 + 2 = -8 (-1.7967), 5.57 → 6 + 2 = 8 → 7 (0.8983): 0.00218 +
// 0.01034 = 0.01252, less; r = 0.96: scale 0.176, zp round(9.545) - 8 = 2,
// -9.94 → -8 (-1.76), 5.68 → 7 (0.88): 0.0001 + 0.0144 = 0.0145, more (and
// further shrinkings clip 1 further): scale 0.179667.
// ZP-LABEL: func @search
// ZP-DAG: %[[Q:.+]] = onnx.Constant {value = dense<{{\[}}[7, -8, -8, 7]]> : tensor<1x4xi4>}
// ZP-DAG: %[[S:.+]] = onnx.Constant {value = dense<{{\[}}[0.69999{{[0-9]*}}, 0.17966{{[0-9]*}}]]> : tensor<1x2xf32>}
// ZP-DAG: %[[Z:.+]] = onnx.Constant {value = dense<{{\[}}[-3, 2]]> : tensor<1x2xi4>}
// ZP: transformer.linear %{{.+}}, %[[Q]] weight_scale(%[[S]]) zero_point(%[[Z]]) granularity = per_group {group_size = 2 : i64}
func.func @search(%x: tensor<?x4xf32>) -> tensor<?x1xf32> {
  %w = onnx.Constant {value = dense<[[7.0, -3.5, -1.75, 1.0]]> : tensor<1x4xf32>} : () -> tensor<1x4xf32>
  %y = transformer.linear %x, %w : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x1xf32>
  return %y : tensor<?x1xf32>
}
