// RUN: accel-opt %s -split-input-file -canonicalize | FileCheck %s

// A transpose to token-major and back cancels.
// CHECK-LABEL: func @transpose_pair
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x4x16xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_pair(%x: tensor<?x?x4x16xf32>) -> tensor<?x?x4x16xf32> {
  %0 = onnx.Transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
  %1 = onnx.Transpose %0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
  return %1 : tensor<?x?x4x16xf32>
}

// -----

// An inverse pair whose input knows more than the result ([1, ?] for [?, ?],
// as a batch-1 export writes it) still folds when its users are onnx ops.
// CHECK-LABEL: func @transpose_pair_refined
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x?x4x16xf32>
// CHECK-NOT: onnx.Transpose
// CHECK: onnx.Reshape %[[X]]
func.func @transpose_pair_refined(%x: tensor<1x?x4x16xf32>, %s: tensor<3xi64>) -> tensor<?x4x16xf32> {
  %0 = onnx.Transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x?x4x16xf32>) -> tensor<1x4x?x16xf32>
  %1 = onnx.Transpose %0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x?x16xf32>) -> tensor<?x?x4x16xf32>
  %2 = onnx.Reshape %1, %s : (tensor<?x?x4x16xf32>, tensor<3xi64>) -> tensor<?x4x16xf32>
  return %2 : tensor<?x4x16xf32>
}

// -----

// The same pair feeding a non-onnx user keeps its ops: func.return wants
// exactly the result type.
// CHECK-LABEL: func @transpose_pair_refined_return
// CHECK-COUNT-2: onnx.Transpose
func.func @transpose_pair_refined_return(%x: tensor<1x?x4x16xf32>) -> tensor<?x?x4x16xf32> {
  %0 = onnx.Transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x?x4x16xf32>) -> tensor<1x4x?x16xf32>
  %1 = onnx.Transpose %0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x?x16xf32>) -> tensor<?x?x4x16xf32>
  return %1 : tensor<?x?x4x16xf32>
}

// -----

// The attention output of a torch 2.11 Llama export: the pair's input knows
// less than its result ([?, ?] for [1, ?]). Only a reshape reads it, so the
// pair folds; an elementwise user keeps it (its type ties operand and result).
// CHECK-LABEL: func @transpose_pair_less_static_into_reshape
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x4x16xf32>
// CHECK-NOT: onnx.Transpose
// CHECK: onnx.Reshape %[[X]], %{{[^ ]+}} {allowzero = 1 : i64} : (tensor<?x?x4x16xf32>, tensor<3xi64>) -> tensor<1x?x64xf32>
func.func @transpose_pair_less_static_into_reshape(%x: tensor<?x?x4x16xf32>, %s: tensor<3xi64>) -> tensor<1x?x64xf32> {
  %0 = onnx.Transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x16xf32>) -> tensor<1x4x?x16xf32>
  %1 = onnx.Transpose %0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x?x16xf32>) -> tensor<1x?x4x16xf32>
  %2 = onnx.Reshape %1, %s {allowzero = 1 : i64} : (tensor<1x?x4x16xf32>, tensor<3xi64>) -> tensor<1x?x64xf32>
  return %2 : tensor<1x?x64xf32>
}

// -----

// CHECK-LABEL: func @transpose_pair_less_static_into_add
// CHECK-COUNT-2: onnx.Transpose
func.func @transpose_pair_less_static_into_add(%x: tensor<?x?x4x16xf32>, %y: tensor<1x?x4x16xf32>) -> tensor<1x?x4x16xf32> {
  %0 = onnx.Transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x16xf32>) -> tensor<1x4x?x16xf32>
  %1 = onnx.Transpose %0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x?x16xf32>) -> tensor<1x?x4x16xf32>
  %2 = onnx.Add %1, %y : (tensor<1x?x4x16xf32>, tensor<1x?x4x16xf32>) -> tensor<1x?x4x16xf32>
  return %2 : tensor<1x?x4x16xf32>
}

// -----

// Two transposes that are not inverses compose into one.
// CHECK-LABEL: func @transpose_compose
// CHECK: %[[T:.+]] = onnx.Transpose %{{[^ ]+}} {perm = array<i64: 2, 0, 1>}
// CHECK-NEXT: return %[[T]]
func.func @transpose_compose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = onnx.Transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %1 = onnx.Transpose %0 {perm = array<i64: 2, 1, 0>} : (tensor<3x2x4xf32>) -> tensor<4x2x3xf32>
  return %1 : tensor<4x2x3xf32>
}

// -----

// Reshape of a reshape reads the original; a reshape that keeps the shape
// (the one dynamic dim is the -1) disappears.
// CHECK-LABEL: func @reshape_pair
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x4x16xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reshape_pair(%x: tensor<?x4x16xf32>) -> tensor<?x4x16xf32> {
  %s1 = onnx.Constant {value = dense<[1, -1, 4, 16]> : tensor<4xi64>} : () -> tensor<4xi64>
  %s2 = onnx.Constant {value = dense<[-1, 4, 16]> : tensor<3xi64>} : () -> tensor<3xi64>
  %0 = onnx.Reshape %x, %s1 : (tensor<?x4x16xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
  %1 = onnx.Reshape %0, %s2 : (tensor<?x?x4x16xf32>, tensor<3xi64>) -> tensor<?x4x16xf32>
  return %1 : tensor<?x4x16xf32>
}

// -----

// Not folded: a 0 in the outer shape copies a dim of the inner result, which
// the original input does not have.
// CHECK-LABEL: func @reshape_zero_copies
// CHECK: onnx.Reshape
// CHECK: onnx.Reshape
func.func @reshape_zero_copies(%x: tensor<6x4xf32>) -> tensor<3x8xf32> {
  %s1 = onnx.Constant {value = dense<[3, 8]> : tensor<2xi64>} : () -> tensor<2xi64>
  %s2 = onnx.Constant {value = dense<[0, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = onnx.Reshape %x, %s1 : (tensor<6x4xf32>, tensor<2xi64>) -> tensor<3x8xf32>
  %1 = onnx.Reshape %0, %s2 : (tensor<3x8xf32>, tensor<2xi64>) -> tensor<3x8xf32>
  return %1 : tensor<3x8xf32>
}

// -----

// Not folded: the shape is not a constant.
// CHECK-LABEL: func @reshape_dynamic_shape
// CHECK: onnx.Reshape
func.func @reshape_dynamic_shape(%x: tensor<?x4xf32>, %s: tensor<2xi64>) -> tensor<?x4xf32> {
  %0 = onnx.Reshape %x, %s : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
