// RUN: accel-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of the onnx dialect: each op below breaks exactly
// one rule, named in the comment above it, and must be rejected with the
// exact error given.

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// Not takes booleans.
func.func @not_float(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand 'X' must have element type 'i1', got 'f32'}}
  %y = onnx.Not %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Gelu's approximate is "none" or "tanh".
func.func @gelu_approximate(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'approximate' must be "none" or "tanh", got "erf"}}
  %y = onnx.Gelu %x {approximate = "erf"} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// IsNaN tests floats.
func.func @isnan_int(%x: tensor<4xi32>) -> tensor<4xi1> {
  // expected-error @+1 {{operand 'X' must have a floating-point element type, got 'i32'}}
  %y = onnx.IsNaN %x : (tensor<4xi32>) -> tensor<4xi1>
  return %y : tensor<4xi1>
}

// -----

// IsNaN returns booleans.
func.func @isnan_result(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result 'Y' must have element type 'i1', got 'f32'}}
  %y = onnx.IsNaN %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Unary ops keep the shape.
func.func @unary_shape(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{requires the same shape for all operands and results}}
  %y = onnx.Sqrt %x : (tensor<4xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// Unary ops keep the element type.
func.func @unary_element_type(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %y = onnx.Exp %x : (tensor<4xf32>) -> tensor<4xf16>
  return %y : tensor<4xf16>
}

// -----

// Binary arithmetic needs one element type.
func.func @add_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{operands 'A' and 'B' have different element types 'f32' and 'f16'}}
  %c = onnx.Add %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// The result has the operands' element type.
func.func @sub_result_type(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{result 'C' must have element type 'f32', got 'f16'}}
  %c = onnx.Sub %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf16>
  return %c : tensor<4xf16>
}

// -----

// 64 and 32 do not broadcast.
func.func @add_not_broadcastable(%a: tensor<4x64xf32>, %b: tensor<32xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{operand shapes 'tensor<4x64xf32>' and 'tensor<32xf32>' are not broadcastable}}
  %c = onnx.Add %a, %b : (tensor<4x64xf32>, tensor<32xf32>) -> tensor<4x64xf32>
  return %c : tensor<4x64xf32>
}

// -----

// The result has the broadcast shape [4, 64].
func.func @mul_result_shape(%a: tensor<4x1xf32>, %b: tensor<64xf32>) -> tensor<4x32xf32> {
  // expected-error @+1 {{result type 'tensor<4x32xf32>' does not agree with the inferred shape [4, 64]}}
  %c = onnx.Mul %a, %b : (tensor<4x1xf32>, tensor<64xf32>) -> tensor<4x32xf32>
  return %c : tensor<4x32xf32>
}

// -----

// Comparisons return booleans.
func.func @equal_result(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{result 'C' must have element type 'i1', got 'i64'}}
  %c = onnx.Equal %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %c : tensor<4xi64>
}

// -----

// Logical ops take booleans.
func.func @and_int(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi1> {
  // expected-error @+1 {{operand 'A' must have element type 'i1', got 'i32'}}
  %c = onnx.And %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  return %c : tensor<4xi1>
}

// -----

// fmod is a flag.
func.func @mod_flag(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{attribute 'fmod' must be 0 or 1, got 2}}
  %c = onnx.Mod %a, %b {fmod = 2 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %c : tensor<4xi32>
}

// -----

// Float Mod is C's fmod only.
func.func @mod_float(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'fmod' must be 1 for floating-point operands}}
  %c = onnx.Mod %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// Pow's result has the base's element type.
func.func @pow_result(%x: tensor<4xf32>, %y: tensor<i64>) -> tensor<4xi64> {
  // expected-error @+1 {{result 'Z' must have element type 'f32', got 'i64'}}
  %z = onnx.Pow %x, %y : (tensor<4xf32>, tensor<i64>) -> tensor<4xi64>
  return %z : tensor<4xi64>
}

// -----

// Pow broadcasts base and exponent.
func.func @pow_broadcast(%x: tensor<4xf32>, %y: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand shapes 'tensor<4xf32>' and 'tensor<3xf32>' are not broadcastable}}
  %z = onnx.Pow %x, %y : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  return %z : tensor<4xf32>
}

// -----

// Where's condition is boolean.
func.func @where_condition(%c: tensor<4xi32>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand 'condition' must have element type 'i1', got 'i32'}}
  %r = onnx.Where %c, %x, %y : (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Where's branches share an element type.
func.func @where_branches(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{operands 'X' and 'Y' have different element types 'f32' and 'f16'}}
  %r = onnx.Where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Where's result has the branches' element type.
func.func @where_result(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{result 'output' must have element type 'f32', got 'f16'}}
  %r = onnx.Where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf16>
  return %r : tensor<4xf16>
}

// -----

// All three inputs of Where broadcast together.
func.func @where_broadcast(%c: tensor<3xi1>, %x: tensor<4xf32>, %y: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand shapes 'tensor<3xi1>' and 'tensor<4xf32>' are not broadcastable}}
  %r = onnx.Where %c, %x, %y : (tensor<3xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Max needs an input.
func.func @max_empty() -> tensor<4xf32> {
  // expected-error @+1 {{requires at least one operand}}
  %m = onnx.Max : () -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// Min's inputs share an element type.
func.func @min_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #1 has element type 'f16', expected 'f32'}}
  %m = onnx.Min %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// Sum's result has the inputs' element type.
func.func @sum_result(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{result must have element type 'f32', got 'f16'}}
  %s = onnx.Sum %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf16>
  return %s : tensor<4xf16>
}

// -----

// Sum broadcasts all inputs.
func.func @sum_broadcast(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<5xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand shapes 'tensor<4xf32>' and 'tensor<5xf32>' are not broadcastable}}
  %s = onnx.Sum %a, %b, %c : (tensor<4xf32>, tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// Clip's bounds are scalars.
func.func @clip_min_scalar(%x: tensor<4xf32>, %lo: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand 'min' must be a scalar, got 'tensor<2xf32>'}}
  %y = onnx.Clip %x min(%lo) : (tensor<4xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Clip's bounds have the input's element type.
func.func @clip_max_type(%x: tensor<4xf32>, %hi: tensor<f16>) -> tensor<4xf32> {
  // expected-error @+1 {{operands 'input' and 'max' have different element types 'f32' and 'f16'}}
  %y = onnx.Clip %x max(%hi) : (tensor<4xf32>, tensor<f16>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Clip keeps the input's type.
func.func @clip_result(%x: tensor<?xf32>) -> tensor<?xf16> {
  // expected-error @+1 {{result type 'tensor<?xf16>' does not match operand 'input' type 'tensor<?xf32>'}}
  %y = onnx.Clip %x : (tensor<?xf32>) -> tensor<?xf16>
  return %y : tensor<?xf16>
}

// -----

// 8 is STRING, which accel has no type for.
func.func @cast_to_string(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'to' = 8 is not a supported ONNX data type}}
  %y = onnx.Cast %x {to = 8 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// saturate is a flag.
func.func @cast_saturate(%x: tensor<4xf32>) -> tensor<4xf8E4M3FN> {
  // expected-error @+1 {{attribute 'saturate' must be 0 or 1, got 2}}
  %y = onnx.Cast %x {saturate = 2 : i64, to = 17 : i64} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
  return %y : tensor<4xf8E4M3FN>
}

// -----

// to = 1 is f32, the result is f16.
func.func @cast_mismatch(%x: tensor<4xbf16>) -> tensor<4xf16> {
  // expected-error @+1 {{result element type 'f16' does not match 'to' = 1 ('f32')}}
  %y = onnx.Cast %x {to = 1 : i64} : (tensor<4xbf16>) -> tensor<4xf16>
  return %y : tensor<4xf16>
}

// -----

// Cast keeps the shape.
func.func @cast_shape(%x: tensor<4xbf16>) -> tensor<8xf32> {
  // expected-error @+1 {{requires the same shape for all operands and results}}
  %y = onnx.Cast %x {to = 1 : i64} : (tensor<4xbf16>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// MatMul, Gemm, shape and layout
//===----------------------------------------------------------------------===//

// MatMul's operands share an element type.
func.func @matmul_element_types(%a: tensor<4x8xf32>, %b: tensor<8x2xf16>) -> tensor<4x2xf32> {
  // expected-error @+1 {{operands 'A' and 'B' have different element types 'f32' and 'f16'}}
  %y = onnx.MatMul %a, %b : (tensor<4x8xf32>, tensor<8x2xf16>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// MatMul's result has the operands' element type.
func.func @matmul_result_type(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf16> {
  // expected-error @+1 {{result 'Y' must have element type 'f32', got 'f16'}}
  %y = onnx.MatMul %a, %b : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf16>
  return %y : tensor<4x2xf16>
}

// -----

// numpy.matmul has no scalars.
func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<8x2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{operands must have rank >= 1}}
  %y = onnx.MatMul %a, %b : (tensor<f32>, tensor<8x2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// The contracting dims, 64 and 32, differ.
func.func @matmul_contraction(%a: tensor<?x64xf16>, %b: tensor<32x128xf16>) -> tensor<?x128xf16> {
  // expected-error @+1 {{contracting dim of 'A' (64) does not match that of 'B' (32)}}
  %y = onnx.MatMul %a, %b : (tensor<?x64xf16>, tensor<32x128xf16>) -> tensor<?x128xf16>
  return %y : tensor<?x128xf16>
}

// -----

// Batch dims 2 and 3 do not broadcast.
func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x2xf32>) -> tensor<2x4x2xf32> {
  // expected-error @+1 {{batch dims [2] and [3] are not broadcastable}}
  %y = onnx.MatMul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x2xf32>) -> tensor<2x4x2xf32>
  return %y : tensor<2x4x2xf32>
}

// -----

// A vector B drops the last dim: the result is [4].
func.func @matmul_result_shape(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{result type 'tensor<4x1xf32>' does not agree with the inferred shape [4]}}
  %y = onnx.MatMul %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}

// -----

// transA is a flag.
func.func @gemm_flag(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{attribute 'transA' must be 0 or 1, got 2}}
  %y = onnx.Gemm %a, %b {transA = 2 : i64} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// Gemm multiplies matrices.
func.func @gemm_rank(%a: tensor<1x4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{operand 'A' must have rank 2, got 3}}
  %y = onnx.Gemm %a, %b : (tensor<1x4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// With transB, B is [N, K] = [2, 4]: K is 4, not 8.
func.func @gemm_contraction(%a: tensor<4x8xf32>, %b: tensor<2x4xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{contracting dim of 'A' (8) does not match that of 'B' (4)}}
  %y = onnx.Gemm %a, %b {transB = 1 : i64} : (tensor<4x8xf32>, tensor<2x4xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// C has the element type of A.
func.func @gemm_c_type(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %c: tensor<2xf16>) -> tensor<4x2xf32> {
  // expected-error @+1 {{operands 'A' and 'C' have different element types 'f32' and 'f16'}}
  %y = onnx.Gemm %a, %b C(%c) : (tensor<4x8xf32>, tensor<8x2xf32>, tensor<2xf16>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// C [3] does not broadcast to [4, 2].
func.func @gemm_c_shape(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %c: tensor<3xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{operand 'C' shape [3] does not broadcast to result shape [4, 2]}}
  %y = onnx.Gemm %a, %b C(%c) : (tensor<4x8xf32>, tensor<8x2xf32>, tensor<3xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// The result is [M, N] = [4, 2].
func.func @gemm_result_shape(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{result type 'tensor<2x4xf32>' does not agree with the inferred shape [4, 2]}}
  %y = onnx.Gemm %a, %b : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// allowzero is a flag.
func.func @reshape_allowzero(%x: tensor<2x3xf32>, %s: tensor<2xi64>) -> tensor<3x2xf32> {
  // expected-error @+1 {{attribute 'allowzero' must be 0 or 1, got 3}}
  %y = onnx.Reshape %x, %s {allowzero = 3 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// The shape is i64.
func.func @reshape_shape_type(%x: tensor<2x3xf32>, %s: tensor<2xi32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{operand 'shape' must have element type 'i64', got 'i32'}}
  %y = onnx.Reshape %x, %s : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// The shape is 1-D.
func.func @reshape_shape_rank(%x: tensor<2x3xf32>, %s: tensor<1x2xi64>) -> tensor<3x2xf32> {
  // expected-error @+1 {{operand 'shape' must have rank 1, got 2}}
  %y = onnx.Reshape %x, %s : (tensor<2x3xf32>, tensor<1x2xi64>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// Reshape keeps the element type.
func.func @reshape_result_type(%x: tensor<2x3xf32>, %s: tensor<2xi64>) -> tensor<3x2xf16> {
  // expected-error @+1 {{result must have element type 'f32', got 'f16'}}
  %y = onnx.Reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf16>
  return %y : tensor<3x2xf16>
}

// -----

// A 4-entry shape gives a rank-4 result.
func.func @reshape_rank(%x: tensor<1x?x4096xf16>, %s: tensor<4xi64>) -> tensor<1x?x4096xf16> {
  // expected-error @+1 {{result rank 3 does not match the length of 'shape' (4)}}
  %y = onnx.Reshape %x, %s : (tensor<1x?x4096xf16>, tensor<4xi64>) -> tensor<1x?x4096xf16>
  return %y : tensor<1x?x4096xf16>
}

// -----

// 12 elements do not make 16.
func.func @reshape_count(%x: tensor<3x4xf32>, %s: tensor<2xi64>) -> tensor<4x4xf32> {
  // expected-error @+1 {{result type 'tensor<4x4xf32>' has 16 elements, operand 'data' has 12}}
  %y = onnx.Reshape %x, %s : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// Transpose keeps the element type.
func.func @transpose_type(%x: tensor<2x3xf32>) -> tensor<3x2xf16> {
  // expected-error @+1 {{result must have element type 'f32', got 'f16'}}
  %y = onnx.Transpose %x : (tensor<2x3xf32>) -> tensor<3x2xf16>
  return %y : tensor<3x2xf16>
}

// -----

// perm has one entry per dim.
func.func @transpose_perm_length(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  // expected-error @+1 {{attribute 'perm' has 2 entries for rank 3}}
  %y = onnx.Transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  return %y : tensor<3x2x4xf32>
}

// -----

// perm names every dim once.
func.func @transpose_perm(%x: tensor<2x3x4xf32>) -> tensor<2x2x3xf32> {
  // expected-error @+1 {{attribute 'perm' [0, 0, 1] is not a permutation of [0, 3)}}
  %y = onnx.Transpose %x {perm = array<i64: 0, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<2x2x3xf32>
  return %y : tensor<2x2x3xf32>
}

// -----

// perm = [0, 2, 1] gives [2, 4, 3].
func.func @transpose_result(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{result type 'tensor<2x3x4xf32>' does not agree with the inferred shape [2, 4, 3]}}
  %y = onnx.Transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// An unranked input with a 3-entry perm still gives a rank-3 result.
func.func @transpose_unranked(%x: tensor<*xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{result rank 2 does not match the length of 'perm' (3)}}
  %y = onnx.Transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<*xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// Concat needs an input.
func.func @concat_empty() -> tensor<4xf32> {
  // expected-error @+1 {{requires at least one operand}}
  %y = onnx.Concat {axis = 0 : i64} : () -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Concat's inputs share an element type.
func.func @concat_types(%a: tensor<2xf32>, %b: tensor<2xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #1 has element type 'f16', expected 'f32'}}
  %y = onnx.Concat %a, %b {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf16>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// axis 2 of a rank-2 tensor.
func.func @concat_axis(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{attribute 'axis' 2 is out of range [-2, 1]}}
  %y = onnx.Concat %a, %b {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

// Concat's inputs share a rank.
func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<1x2x3xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{operand #1 has rank 3, operand #0 has rank 2}}
  %y = onnx.Concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<1x2x3xf32>) -> tensor<3x3xf32>
  return %y : tensor<3x3xf32>
}

// -----

// Dims other than axis agree.
func.func @concat_other_dims(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{operand #1 has size 4 in dim 0, which is not the concatenation axis, but 2 before}}
  %y = onnx.Concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// 3 + 5 = 8, not 7.
func.func @concat_result(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x7xf32> {
  // expected-error @+1 {{result type 'tensor<2x7xf32>' does not agree with the inferred shape [2, 8]}}
  %y = onnx.Concat %a, %b {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x7xf32>
  return %y : tensor<2x7xf32>
}

// -----

// Concat keeps the element type.
func.func @concat_result_type(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{result must have element type 'f32', got 'f16'}}
  %y = onnx.Concat %a, %b {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf16>
  return %y : tensor<4xf16>
}

// -----

// Slice's starts are integers.
func.func @slice_starts_type(%x: tensor<8xf32>, %s: tensor<1xf32>, %e: tensor<1xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{operand 'starts' must have element type i32 or i64, got 'f32'}}
  %y = onnx.Slice %x, %s, %e : (tensor<8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

// axes is 1-D.
func.func @slice_axes_rank(%x: tensor<8xf32>, %s: tensor<1xi64>, %e: tensor<1xi64>, %a: tensor<1x1xi64>) -> tensor<?xf32> {
  // expected-error @+1 {{operand 'axes' must have rank 1, got 2}}
  %y = onnx.Slice %x, %s, %e axes(%a) : (tensor<8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1x1xi64>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

// starts and ends share their integer type.
func.func @slice_ends_type(%x: tensor<8xf32>, %s: tensor<1xi64>, %e: tensor<1xi32>) -> tensor<?xf32> {
  // expected-error @+1 {{operands 'starts' and 'ends' have different element types 'i64' and 'i32'}}
  %y = onnx.Slice %x, %s, %e : (tensor<8xf32>, tensor<1xi64>, tensor<1xi32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

// starts and ends have one length.
func.func @slice_lengths(%x: tensor<8x8xf32>, %s: tensor<2xi64>, %e: tensor<1xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{operands 'starts' and 'ends' have different lengths 2 and 1}}
  %y = onnx.Slice %x, %s, %e : (tensor<8x8xf32>, tensor<2xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// Slice keeps the rank.
func.func @slice_result_rank(%x: tensor<8x8xf32>, %s: tensor<1xi64>, %e: tensor<1xi64>) -> tensor<?xf32> {
  // expected-error @+1 {{result rank 1 does not match the rank of 'data' (2)}}
  %y = onnx.Slice %x, %s, %e : (tensor<8x8xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

// Slice keeps the element type.
func.func @slice_result_type(%x: tensor<8xf32>, %s: tensor<1xi64>, %e: tensor<1xi64>) -> tensor<?xf16> {
  // expected-error @+1 {{result must have element type 'f32', got 'f16'}}
  %y = onnx.Slice %x, %s, %e : (tensor<8xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf16>
  return %y : tensor<?xf16>
}

// -----

// Split makes at least one output.
func.func @split_none(%x: tensor<8xf32>) {
  // expected-error @+1 {{requires at least one result}}
  onnx.Split %x : (tensor<8xf32>) -> ()
  return
}

// -----

// The split input replaced the attribute: not both.
func.func @split_both_forms(%x: tensor<8xf32>, %s: tensor<2xi64>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{has both the 'split' input and the 'split' attribute}}
  %a, %b = onnx.Split %x split(%s) {split = array<i64: 4, 4>} : (tensor<8xf32>, tensor<2xi64>) -> (tensor<4xf32>, tensor<4xf32>)
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// Sizes and num_outputs exclude each other.
func.func @split_num_outputs_and_split(%x: tensor<8xf32>, %s: tensor<2xi64>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{has both 'split' and 'num_outputs'}}
  %a, %b = onnx.Split %x split(%s) {num_outputs = 2 : i64} : (tensor<8xf32>, tensor<2xi64>) -> (tensor<4xf32>, tensor<4xf32>)
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// num_outputs counts the results.
func.func @split_num_outputs(%x: tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{attribute 'num_outputs' = 3 does not match the 2 results}}
  %a, %b = onnx.Split %x {num_outputs = 3 : i64} : (tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// The split input is i64.
func.func @split_input_type(%x: tensor<8xf32>, %s: tensor<2xi32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{operand 'split' must have element type 'i64', got 'i32'}}
  %a, %b = onnx.Split %x split(%s) : (tensor<8xf32>, tensor<2xi32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// The split input has one size per result.
func.func @split_input_length(%x: tensor<8xf32>, %s: tensor<3xi64>) -> (tensor<?xf32>, tensor<?xf32>) {
  // expected-error @+1 {{operand 'split' has length 3 for 2 results}}
  %a, %b = onnx.Split %x split(%s) : (tensor<8xf32>, tensor<3xi64>) -> (tensor<?xf32>, tensor<?xf32>)
  return %a, %b : tensor<?xf32>, tensor<?xf32>
}

// -----

// The split attribute has one size per result.
func.func @split_attr_length(%x: tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{attribute 'split' has 3 entries for 2 results}}
  %a, %b = onnx.Split %x {split = array<i64: 4, 2, 2>} : (tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// Sizes are not negative.
func.func @split_attr_negative(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  // expected-error @+1 {{attribute 'split' has a negative size}}
  %a, %b = onnx.Split %x {split = array<i64: -1, 9>} : (tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>)
  return %a, %b : tensor<?xf32>, tensor<?xf32>
}

// -----

// Sizes add up to the split dim.
func.func @split_attr_sum(%x: tensor<8xf32>) -> (tensor<4xf32>, tensor<6xf32>) {
  // expected-error @+1 {{attribute 'split' sums to 10, but the split dim has size 8}}
  %a, %b = onnx.Split %x {split = array<i64: 4, 6>} : (tensor<8xf32>) -> (tensor<4xf32>, tensor<6xf32>)
  return %a, %b : tensor<4xf32>, tensor<6xf32>
}

// -----

// axis 1 of a rank-1 tensor.
func.func @split_axis(%x: tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{attribute 'axis' 1 is out of range [-1, 0]}}
  %a, %b = onnx.Split %x {axis = 1 : i64} : (tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// The second output is [2, 6], not [2, 5].
func.func @split_result_shape(%x: tensor<2x8xf32>) -> (tensor<2x2xf32>, tensor<2x5xf32>) {
  // expected-error @+1 {{result type 'tensor<2x5xf32>' does not agree with the inferred shape [2, 6]}}
  %a, %b = onnx.Split %x {axis = 1 : i64, split = array<i64: 2, 6>} : (tensor<2x8xf32>) -> (tensor<2x2xf32>, tensor<2x5xf32>)
  return %a, %b : tensor<2x2xf32>, tensor<2x5xf32>
}

// -----

// An equal split of 8 in two gives 4s.
func.func @split_equal(%x: tensor<8xf32>) -> (tensor<4xf32>, tensor<2xf32>) {
  // expected-error @+1 {{result type 'tensor<2xf32>' does not agree with the inferred shape [4]}}
  %a, %b = onnx.Split %x : (tensor<8xf32>) -> (tensor<4xf32>, tensor<2xf32>)
  return %a, %b : tensor<4xf32>, tensor<2xf32>
}

// -----

// Split keeps the element type.
func.func @split_result_type(%x: tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf16>) {
  // expected-error @+1 {{result must have element type 'f32', got 'f16'}}
  %a, %b = onnx.Split %x : (tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf16>)
  return %a, %b : tensor<4xf32>, tensor<4xf16>
}

// -----

// The axes input replaced the attribute: not both.
func.func @squeeze_both_forms(%x: tensor<1x4xf32>, %axes: tensor<1xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{has both the 'axes' input and the 'axes' attribute}}
  %y = onnx.Squeeze %x axes(%axes) {axes = array<i64: 0>} : (tensor<1x4xf32>, tensor<1xi64>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// The axes input is i64.
func.func @squeeze_axes_type(%x: tensor<1x4xf32>, %axes: tensor<1xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand 'axes' must have element type 'i64', got 'i32'}}
  %y = onnx.Squeeze %x axes(%axes) : (tensor<1x4xf32>, tensor<1xi32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Axis 2 of a rank-2 tensor.
func.func @squeeze_axis_range(%x: tensor<1x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'axes' entry 2 is out of range [-2, 1]}}
  %y = onnx.Squeeze %x {axes = array<i64: 2>} : (tensor<1x4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// 0 and -2 are the same dim.
func.func @squeeze_axis_repeated(%x: tensor<1x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'axes' entry -2 is repeated}}
  %y = onnx.Squeeze %x {axes = array<i64: 0, -2>} : (tensor<1x4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Only size-1 dims squeeze.
func.func @squeeze_not_one(%x: tensor<1x4xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{cannot squeeze dim 1 of size 4}}
  %y = onnx.Squeeze %x {axes = array<i64: 1>} : (tensor<1x4xf32>) -> tensor<1xf32>
  return %y : tensor<1xf32>
}

// -----

// Squeezing dim 0 of [1, 4, 1] leaves [4, 1].
func.func @squeeze_result(%x: tensor<1x4x1xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result type 'tensor<4xf32>' does not agree with the inferred shape [4, 1]}}
  %y = onnx.Squeeze %x {axes = array<i64: 0>} : (tensor<1x4x1xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Two axes from a rank-3 tensor leave rank 1.
func.func @squeeze_input_rank(%x: tensor<1x?x1xf32>, %axes: tensor<2xi64>) -> tensor<1x?xf32> {
  // expected-error @+1 {{result rank 2 does not match the rank of 'data' minus the number of axes (1)}}
  %y = onnx.Squeeze %x axes(%axes) : (tensor<1x?x1xf32>, tensor<2xi64>) -> tensor<1x?xf32>
  return %y : tensor<1x?xf32>
}

// -----

// Without axes every size-1 dim goes: [1, 4, 1] becomes [4].
func.func @squeeze_all(%x: tensor<1x4x1xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{result type 'tensor<4x1xf32>' does not agree with the inferred shape [4]}}
  %y = onnx.Squeeze %x : (tensor<1x4x1xf32>) -> tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}

// -----

// Squeeze keeps the element type.
func.func @squeeze_type(%x: tensor<1x4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{result must have element type 'f32', got 'f16'}}
  %y = onnx.Squeeze %x {axes = array<i64: 0>} : (tensor<1x4xf32>) -> tensor<4xf16>
  return %y : tensor<4xf16>
}

// -----

// Unsqueeze needs axes, in one form or the other.
func.func @unsqueeze_no_axes(%x: tensor<4xf32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{requires the 'axes' input or the 'axes' attribute}}
  %y = onnx.Unsqueeze %x : (tensor<4xf32>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

// The axes input replaced the attribute: not both.
func.func @unsqueeze_both_forms(%x: tensor<4xf32>, %axes: tensor<1xi64>) -> tensor<1x4xf32> {
  // expected-error @+1 {{has both the 'axes' input and the 'axes' attribute}}
  %y = onnx.Unsqueeze %x axes(%axes) {axes = array<i64: 0>} : (tensor<4xf32>, tensor<1xi64>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

// Axes count in the output's rank, 2 here.
func.func @unsqueeze_axis_range(%x: tensor<4xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{attribute 'axes' entry 2 is out of range [-2, 1]}}
  %y = onnx.Unsqueeze %x {axes = array<i64: 2>} : (tensor<4xf32>) -> tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}

// -----

// Unsqueezing [4] at 1 gives [4, 1].
func.func @unsqueeze_result(%x: tensor<4xf32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{result type 'tensor<1x4xf32>' does not agree with the inferred shape [4, 1]}}
  %y = onnx.Unsqueeze %x {axes = array<i64: 1>} : (tensor<4xf32>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

// Two axes on a rank-2 tensor give rank 4.
func.func @unsqueeze_input_rank(%x: tensor<?x?xi64>, %axes: tensor<2xi64>) -> tensor<?x1x?xi64> {
  // expected-error @+1 {{result rank 3 does not match the rank of 'data' plus the number of axes (4)}}
  %y = onnx.Unsqueeze %x axes(%axes) : (tensor<?x?xi64>, tensor<2xi64>) -> tensor<?x1x?xi64>
  return %y : tensor<?x1x?xi64>
}

// -----

// Expand's shape is i64.
func.func @expand_shape_type(%x: tensor<4x1xf32>, %s: tensor<2xi32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{operand 'shape' must have element type 'i64', got 'i32'}}
  %y = onnx.Expand %x, %s : (tensor<4x1xf32>, tensor<2xi32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// Expand keeps the element type.
func.func @expand_type(%x: tensor<4x1xf32>, %s: tensor<2xi64>) -> tensor<4x3xf16> {
  // expected-error @+1 {{result must have element type 'f32', got 'f16'}}
  %y = onnx.Expand %x, %s : (tensor<4x1xf32>, tensor<2xi64>) -> tensor<4x3xf16>
  return %y : tensor<4x3xf16>
}

// -----

// A 3-entry shape makes a rank-3 result.
func.func @expand_rank(%x: tensor<4x1xf32>, %s: tensor<3xi64>) -> tensor<4x3xf32> {
  // expected-error @+1 {{result rank 2 does not match the larger of the input rank and the length of 'shape' (3)}}
  %y = onnx.Expand %x, %s : (tensor<4x1xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// The input's dim 2 cannot become 3.
func.func @expand_not_broadcast(%x: tensor<4x2xf32>, %s: tensor<2xi64>) -> tensor<4x3xf32> {
  // expected-error @+1 {{result type 'tensor<4x3xf32>' is not a broadcast of operand 'input' 'tensor<4x2xf32>'}}
  %y = onnx.Expand %x, %s : (tensor<4x2xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// Tile's repeats are i64.
func.func @tile_repeats_type(%x: tensor<2x3xf32>, %r: tensor<2xi32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{operand 'repeats' must have element type 'i64', got 'i32'}}
  %y = onnx.Tile %x, %r : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// One repeat per input dim.
func.func @tile_repeats_length(%x: tensor<2x3xf32>, %r: tensor<3xi64>) -> tensor<4x3xf32> {
  // expected-error @+1 {{operand 'repeats' has length 3 for input rank 2}}
  %y = onnx.Tile %x, %r : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// Tile keeps the rank.
func.func @tile_rank(%x: tensor<2x3xf32>, %r: tensor<2xi64>) -> tensor<1x4x3xf32> {
  // expected-error @+1 {{result rank 3 does not match the rank of 'input' (2)}}
  %y = onnx.Tile %x, %r : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<1x4x3xf32>
  return %y : tensor<1x4x3xf32>
}

// -----

// Tile keeps the element type.
func.func @tile_type(%x: tensor<2x3xf32>, %r: tensor<2xi64>) -> tensor<4x3xf16> {
  // expected-error @+1 {{result must have element type 'f32', got 'f16'}}
  %y = onnx.Tile %x, %r : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x3xf16>
  return %y : tensor<4x3xf16>
}

// -----

// Shape returns i64.
func.func @shape_type(%x: tensor<2x3xf32>) -> tensor<2xi32> {
  // expected-error @+1 {{result 'shape' must have element type 'i64', got 'i32'}}
  %s = onnx.Shape %x : (tensor<2x3xf32>) -> tensor<2xi32>
  return %s : tensor<2xi32>
}

// -----

// Shape returns a 1-D tensor.
func.func @shape_rank(%x: tensor<2x3xf32>) -> tensor<1x2xi64> {
  // expected-error @+1 {{result 'shape' must have rank 1, got 2}}
  %s = onnx.Shape %x : (tensor<2x3xf32>) -> tensor<1x2xi64>
  return %s : tensor<1x2xi64>
}

// -----

// start = 1 of a rank-3 tensor leaves 2 dims.
func.func @shape_length(%x: tensor<?x?x4096xf16>) -> tensor<3xi64> {
  // expected-error @+1 {{result type 'tensor<3xi64>' does not agree with the inferred shape [2]}}
  %s = onnx.Shape %x {start = 1 : i64} : (tensor<?x?x4096xf16>) -> tensor<3xi64>
  return %s : tensor<3xi64>
}

// -----

//===----------------------------------------------------------------------===//
// Indexing, constants, reductions
//===----------------------------------------------------------------------===//

// Gather's indices are integers.
func.func @gather_indices_type(%t: tensor<10x4xf32>, %i: tensor<3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{operand 'indices' must have element type i32 or i64, got 'f32'}}
  %y = onnx.Gather %t, %i : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// Gather keeps the data's element type.
func.func @gather_result_type(%t: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf16> {
  // expected-error @+1 {{result must have element type 'f32', got 'f16'}}
  %y = onnx.Gather %t, %i : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf16>
  return %y : tensor<3x4xf16>
}

// -----

// axis 2 of rank-2 data.
func.func @gather_axis(%t: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  // expected-error @+1 {{attribute 'axis' 2 is out of range [-2, 1]}}
  %y = onnx.Gather %t, %i {axis = 2 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// [10, 4] gathered on axis 1 with [2, 3] indices is [10, 2, 3].
func.func @gather_result_shape(%t: tensor<10x4xf32>, %i: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{result type 'tensor<2x3x4xf32>' does not agree with the inferred shape [10, 2, 3]}}
  %y = onnx.Gather %t, %i {axis = 1 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// GatherND's indices are i64.
func.func @gather_nd_indices(%d: tensor<2x3xf32>, %i: tensor<4x1xi32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{operand 'indices' must have element type 'i64', got 'i32'}}
  %y = onnx.GatherND %d, %i : (tensor<2x3xf32>, tensor<4x1xi32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// GatherND keeps the data's element type.
func.func @gather_nd_type(%d: tensor<2x3xf32>, %i: tensor<4x1xi64>) -> tensor<4x3xf16> {
  // expected-error @+1 {{result must have element type 'f32', got 'f16'}}
  %y = onnx.GatherND %d, %i : (tensor<2x3xf32>, tensor<4x1xi64>) -> tensor<4x3xf16>
  return %y : tensor<4x3xf16>
}

// -----

// batch_dims is not negative.
func.func @gather_nd_negative_batch(%d: tensor<2x3xf32>, %i: tensor<4x1xi64>) -> tensor<4x3xf32> {
  // expected-error @+1 {{attribute 'batch_dims' must be >= 0, got -1}}
  %y = onnx.GatherND %d, %i {batch_dims = -1 : i64} : (tensor<2x3xf32>, tensor<4x1xi64>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// batch_dims is below both ranks.
func.func @gather_nd_batch(%d: tensor<2x3xf32>, %i: tensor<2x1xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{attribute 'batch_dims' = 2 must be less than the ranks of 'data' (2) and 'indices' (2)}}
  %y = onnx.GatherND %d, %i {batch_dims = 2 : i64} : (tensor<2x3xf32>, tensor<2x1xi64>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// 3 indices cannot address rank-2 data.
func.func @gather_nd_depth(%d: tensor<2x3xf32>, %i: tensor<4x3xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{the last dim of 'indices' (3) must be in [1, 2], the rank of 'data' minus 'batch_dims'}}
  %y = onnx.GatherND %d, %i : (tensor<2x3xf32>, tensor<4x3xi64>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// indices [4, 1] into [2, 3] give [4, 3].
func.func @gather_nd_result(%d: tensor<2x3xf32>, %i: tensor<4x1xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{result type 'tensor<4xf32>' does not agree with the inferred shape [4, 3]}}
  %y = onnx.GatherND %d, %i : (tensor<2x3xf32>, tensor<4x1xi64>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// reduction names one of five.
func.func @scatter_nd_reduction(%d: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{attribute 'reduction' must be one of "none", "add", "mul", "max", "min", got "sub"}}
  %y = onnx.ScatterND %d, %i, %u {reduction = "sub"} : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// ScatterND's indices are i64.
func.func @scatter_nd_indices(%d: tensor<4x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{operand 'indices' must have element type 'i64', got 'i32'}}
  %y = onnx.ScatterND %d, %i, %u : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// updates have the data's element type.
func.func @scatter_nd_updates_type(%d: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf16>) -> tensor<4x3xf32> {
  // expected-error @+1 {{operands 'data' and 'updates' have different element types 'f32' and 'f16'}}
  %y = onnx.ScatterND %d, %i, %u : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf16>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// The result has the data's type.
func.func @scatter_nd_result(%d: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{result type 'tensor<4x4xf32>' does not match operand 'data' type 'tensor<4x3xf32>'}}
  %y = onnx.ScatterND %d, %i, %u : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// Scalar indices address nothing.
func.func @scatter_nd_scalar_indices(%d: tensor<4x3xf32>, %i: tensor<i64>, %u: tensor<3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{operand 'indices' must have rank >= 1}}
  %y = onnx.ScatterND %d, %i, %u : (tensor<4x3xf32>, tensor<i64>, tensor<3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// 3 indices cannot address rank-2 data.
func.func @scatter_nd_depth(%d: tensor<4x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{the last dim of 'indices' (3) must be in [1, 2], the rank of 'data'}}
  %y = onnx.ScatterND %d, %i, %u : (tensor<4x3xf32>, tensor<2x3xi64>, tensor<2xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// indices [2, 1] into [4, 3] take updates [2, 3].
func.func @scatter_nd_updates_shape(%d: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{operand 'updates' type 'tensor<2x4xf32>' does not agree with the shape [2, 3] = indices.shape[:-1] + data.shape[indices.shape[-1]:]}}
  %y = onnx.ScatterND %d, %i, %u : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// upper is a flag.
func.func @trilu_upper(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{attribute 'upper' must be 0 or 1, got -1}}
  %y = onnx.Trilu %x {upper = -1 : i64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// Trilu works on matrices.
func.func @trilu_rank(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand 'input' must have rank >= 2, got 1}}
  %y = onnx.Trilu %x : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// k is i64.
func.func @trilu_k_type(%x: tensor<4x4xf32>, %k: tensor<i32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{operand 'k' must have element type 'i64', got 'i32'}}
  %y = onnx.Trilu %x k(%k) : (tensor<4x4xf32>, tensor<i32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// k is a scalar.
func.func @trilu_k_scalar(%x: tensor<4x4xf32>, %k: tensor<2xi64>) -> tensor<4x4xf32> {
  // expected-error @+1 {{operand 'k' must be a scalar, got 'tensor<2xi64>'}}
  %y = onnx.Trilu %x k(%k) : (tensor<4x4xf32>, tensor<2xi64>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// Trilu keeps the input's type.
func.func @trilu_result(%x: tensor<4x4xf32>) -> tensor<4x4xf16> {
  // expected-error @+1 {{result type 'tensor<4x4xf16>' does not match operand 'input' type 'tensor<4x4xf32>'}}
  %y = onnx.Trilu %x : (tensor<4x4xf32>) -> tensor<4x4xf16>
  return %y : tensor<4x4xf16>
}

// -----

// Range's start is a scalar.
func.func @range_scalar(%s: tensor<2xi64>, %l: tensor<i64>, %d: tensor<i64>) -> tensor<?xi64> {
  // expected-error @+1 {{operand 'start' must be a scalar, got 'tensor<2xi64>'}}
  %y = onnx.Range %s, %l, %d : (tensor<2xi64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %y : tensor<?xi64>
}

// -----

// Range's inputs share an element type.
func.func @range_types(%s: tensor<i64>, %l: tensor<i32>, %d: tensor<i64>) -> tensor<?xi64> {
  // expected-error @+1 {{operands 'start' and 'limit' have different element types 'i64' and 'i32'}}
  %y = onnx.Range %s, %l, %d : (tensor<i64>, tensor<i32>, tensor<i64>) -> tensor<?xi64>
  return %y : tensor<?xi64>
}

// -----

// Range's result has the inputs' element type.
func.func @range_result_type(%s: tensor<i64>, %l: tensor<i64>, %d: tensor<i64>) -> tensor<?xi32> {
  // expected-error @+1 {{result must have element type 'i64', got 'i32'}}
  %y = onnx.Range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi32>
  return %y : tensor<?xi32>
}

// -----

// Range's result is 1-D.
func.func @range_result_rank(%s: tensor<i64>, %l: tensor<i64>, %d: tensor<i64>) -> tensor<?x1xi64> {
  // expected-error @+1 {{result must have rank 1, got 2}}
  %y = onnx.Range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?x1xi64>
  return %y : tensor<?x1xi64>
}

// -----

// A Constant needs a value.
func.func @constant_none() -> tensor<f32> {
  // expected-error @+1 {{requires exactly one of 'value', 'value_float', 'value_floats', 'value_int', 'value_ints', got 0}}
  %c = onnx.Constant : () -> tensor<f32>
  return %c : tensor<f32>
}

// -----

// A Constant has one value only.
func.func @constant_two() -> tensor<f32> {
  // expected-error @+1 {{requires exactly one of 'value', 'value_float', 'value_floats', 'value_int', 'value_ints', got 2}}
  %c = onnx.Constant {value_float = 1.0 : f32, value_int = 1 : i64} : () -> tensor<f32>
  return %c : tensor<f32>
}

// -----

// The result type is the value's.
func.func @constant_value_type() -> tensor<3xi32> {
  // expected-error @+1 {{result type 'tensor<3xi32>' does not match the type 'tensor<3xi64>' of attribute 'value'}}
  %c = onnx.Constant {value = dense<[1, 2, 3]> : tensor<3xi64>} : () -> tensor<3xi32>
  return %c : tensor<3xi32>
}

// -----

// value_float makes a f32 scalar.
func.func @constant_value_float() -> tensor<1xf32> {
  // expected-error @+1 {{result type 'tensor<1xf32>' does not match the type 'tensor<f32>' of attribute 'value_float'}}
  %c = onnx.Constant {value_float = 1.0 : f32} : () -> tensor<1xf32>
  return %c : tensor<1xf32>
}

// -----

// value_ints makes a 1-D i64 tensor of its length.
func.func @constant_value_ints() -> tensor<3xi64> {
  // expected-error @+1 {{result type 'tensor<3xi64>' does not match the type 'tensor<2xi64>' of attribute 'value_ints'}}
  %c = onnx.Constant {value_ints = array<i64: 1, 2>} : () -> tensor<3xi64>
  return %c : tensor<3xi64>
}

// -----

// ConstantOfShape's shape is i64.
func.func @constant_of_shape_input(%s: tensor<2xi32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{operand 'input' must have element type 'i64', got 'i32'}}
  %c = onnx.ConstantOfShape %s : (tensor<2xi32>) -> tensor<?x?xf32>
  return %c : tensor<?x?xf32>
}

// -----

// The fill value is one element.
func.func @constant_of_shape_value(%s: tensor<2xi64>) -> tensor<?x?xi64> {
  // expected-error @+1 {{attribute 'value' must hold exactly one element, got 2}}
  %c = onnx.ConstantOfShape %s {value = dense<[0, 1]> : tensor<2xi64>} : (tensor<2xi64>) -> tensor<?x?xi64>
  return %c : tensor<?x?xi64>
}

// -----

// Without a value the fill is f32 zero.
func.func @constant_of_shape_default(%s: tensor<2xi64>) -> tensor<?x?xi64> {
  // expected-error @+1 {{result must have element type 'f32', got 'i64'}}
  %c = onnx.ConstantOfShape %s : (tensor<2xi64>) -> tensor<?x?xi64>
  return %c : tensor<?x?xi64>
}

// -----

// A 2-entry shape makes a rank-2 tensor.
func.func @constant_of_shape_rank(%s: tensor<2xi64>) -> tensor<?xf32> {
  // expected-error @+1 {{result rank 1 does not match the length of 'input' (2)}}
  %c = onnx.ConstantOfShape %s : (tensor<2xi64>) -> tensor<?xf32>
  return %c : tensor<?xf32>
}

// -----

// The axes input replaced the attribute: not both.
func.func @reduce_both_forms(%x: tensor<4x8xf32>, %a: tensor<1xi64>) -> tensor<4x1xf32> {
  // expected-error @+1 {{has both the 'axes' input and the 'axes' attribute}}
  %y = onnx.ReduceMean %x axes(%a) {axes = array<i64: 1>} : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}

// -----

// The axes input is i64.
func.func @reduce_axes_type(%x: tensor<4x8xf32>, %a: tensor<1xi32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{operand 'axes' must have element type 'i64', got 'i32'}}
  %y = onnx.ReduceSum %x axes(%a) : (tensor<4x8xf32>, tensor<1xi32>) -> tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}

// -----

// keepdims is a flag.
func.func @reduce_keepdims(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{attribute 'keepdims' must be 0 or 1, got 2}}
  %y = onnx.ReduceMax %x {axes = array<i64: 1>, keepdims = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}

// -----

// noop_with_empty_axes is a flag.
func.func @reduce_noop(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{attribute 'noop_with_empty_axes' must be 0 or 1, got 5}}
  %y = onnx.ReduceMax %x {noop_with_empty_axes = 5 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Reductions keep the element type.
func.func @reduce_type(%x: tensor<4x8xf32>) -> tensor<4x1xf16> {
  // expected-error @+1 {{result must have element type 'f32', got 'f16'}}
  %y = onnx.ReduceMean %x {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf16>
  return %y : tensor<4x1xf16>
}

// -----

// Axis 2 of rank-2 data.
func.func @reduce_axis_range(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{attribute 'axes' entry 2 is out of range [-2, 1]}}
  %y = onnx.ReduceMean %x {axes = array<i64: 2>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}

// -----

// 1 and -1 are the same dim.
func.func @reduce_axis_repeated(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{attribute 'axes' entry -1 is repeated}}
  %y = onnx.ReduceSum %x {axes = array<i64: 1, -1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}

// -----

// keepdims keeps the reduced dim as 1: [4, 1].
func.func @reduce_result(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result type 'tensor<4xf32>' does not agree with the inferred shape [4, 1]}}
  %y = onnx.ReduceSum %x {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// One axis dropped from rank 3 leaves rank 2.
func.func @reduce_input_rank(%x: tensor<?x?x8xf32>, %a: tensor<1xi64>) -> tensor<?x?x1xf32> {
  // expected-error @+1 {{result rank 3 does not match the 2 dims left by the reduction}}
  %y = onnx.ReduceMean %x axes(%a) {keepdims = 0 : i64} : (tensor<?x?x8xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  return %y : tensor<?x?x1xf32>
}

// -----

// With noop_with_empty_axes and no axes the op is the identity.
func.func @reduce_noop_identity(%x: tensor<4x8xf32>) -> tensor<1x1xf32> {
  // expected-error @+1 {{result type 'tensor<1x1xf32>' does not agree with the inferred shape [4, 8]}}
  %y = onnx.ReduceMax %x {noop_with_empty_axes = 1 : i64} : (tensor<4x8xf32>) -> tensor<1x1xf32>
  return %y : tensor<1x1xf32>
}

// -----

// exclusive is a flag.
func.func @cumsum_exclusive(%x: tensor<4xi64>, %a: tensor<i64>) -> tensor<4xi64> {
  // expected-error @+1 {{attribute 'exclusive' must be 0 or 1, got 2}}
  %y = onnx.CumSum %x, %a {exclusive = 2 : i64} : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  return %y : tensor<4xi64>
}

// -----

// reverse is a flag.
func.func @cumsum_reverse(%x: tensor<4xi64>, %a: tensor<i64>) -> tensor<4xi64> {
  // expected-error @+1 {{attribute 'reverse' must be 0 or 1, got 2}}
  %y = onnx.CumSum %x, %a {reverse = 2 : i64} : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  return %y : tensor<4xi64>
}

// -----

// The axis is an integer.
func.func @cumsum_axis_type(%x: tensor<4xi64>, %a: tensor<f32>) -> tensor<4xi64> {
  // expected-error @+1 {{operand 'axis' must have element type i32 or i64, got 'f32'}}
  %y = onnx.CumSum %x, %a : (tensor<4xi64>, tensor<f32>) -> tensor<4xi64>
  return %y : tensor<4xi64>
}

// -----

// The axis is a scalar.
func.func @cumsum_axis_scalar(%x: tensor<4x4xi64>, %a: tensor<2xi64>) -> tensor<4x4xi64> {
  // expected-error @+1 {{operand 'axis' must be a scalar, got 'tensor<2xi64>'}}
  %y = onnx.CumSum %x, %a : (tensor<4x4xi64>, tensor<2xi64>) -> tensor<4x4xi64>
  return %y : tensor<4x4xi64>
}

// -----

// CumSum keeps the type.
func.func @cumsum_result(%x: tensor<4xi64>, %a: tensor<i64>) -> tensor<4xi32> {
  // expected-error @+1 {{result type 'tensor<4xi32>' does not match operand 'x' type 'tensor<4xi64>'}}
  %y = onnx.CumSum %x, %a : (tensor<4xi64>, tensor<i64>) -> tensor<4xi32>
  return %y : tensor<4xi32>
}

// -----

//===----------------------------------------------------------------------===//
// Softmax and norms
//===----------------------------------------------------------------------===//

// axis 4 of a rank-4 tensor.
func.func @softmax_axis(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error @+1 {{attribute 'axis' 4 is out of range [-4, 3]}}
  %y = onnx.Softmax %x {axis = 4 : i64} : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  return %y : tensor<1x2x3x4xf32>
}

// -----

// Softmax keeps the type.
func.func @softmax_type(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %y = onnx.Softmax %x : (tensor<4xf32>) -> tensor<4xf16>
  return %y : tensor<4xf16>
}

// -----

// Scale has X's element type.
func.func @layer_norm_scale_type(%x: tensor<2x768xf32>, %g: tensor<768xf16>) -> tensor<2x768xf32> {
  // expected-error @+1 {{operands 'X' and 'Scale' have different element types 'f32' and 'f16'}}
  %y = onnx.LayerNormalization %x, %g : (tensor<2x768xf32>, tensor<768xf16>) -> tensor<2x768xf32>
  return %y : tensor<2x768xf32>
}

// -----

// Y has X's type.
func.func @layer_norm_result(%x: tensor<2x768xf32>, %g: tensor<768xf32>) -> tensor<2x768xf16> {
  // expected-error @+1 {{result 'Y' type 'tensor<2x768xf16>' does not match operand 'X' type 'tensor<2x768xf32>'}}
  %y = onnx.LayerNormalization %x, %g : (tensor<2x768xf32>, tensor<768xf32>) -> tensor<2x768xf16>
  return %y : tensor<2x768xf16>
}

// -----

// axis 2 of a rank-2 tensor.
func.func @layer_norm_axis(%x: tensor<2x768xf32>, %g: tensor<768xf32>) -> tensor<2x768xf32> {
  // expected-error @+1 {{attribute 'axis' 2 is out of range [-2, 1]}}
  %y = onnx.LayerNormalization %x, %g {axis = 2 : i64} : (tensor<2x768xf32>, tensor<768xf32>) -> tensor<2x768xf32>
  return %y : tensor<2x768xf32>
}

// -----

// Scale [512] does not broadcast to the normalized [768].
func.func @layer_norm_scale_shape(%x: tensor<2x768xf32>, %g: tensor<512xf32>) -> tensor<2x768xf32> {
  // expected-error @+1 {{operand 'Scale' shape [512] does not broadcast to normalized shape [768]}}
  %y = onnx.LayerNormalization %x, %g : (tensor<2x768xf32>, tensor<512xf32>) -> tensor<2x768xf32>
  return %y : tensor<2x768xf32>
}

// -----

// B [2, 768] does not broadcast to the normalized [768].
func.func @layer_norm_bias_shape(%x: tensor<2x768xf32>, %g: tensor<768xf32>, %b: tensor<2x768xf32>) -> tensor<2x768xf32> {
  // expected-error @+1 {{operand 'B' shape [2, 768] does not broadcast to normalized shape [768]}}
  %y = onnx.LayerNormalization %x, %g B(%b) : (tensor<2x768xf32>, tensor<768xf32>, tensor<2x768xf32>) -> tensor<2x768xf32>
  return %y : tensor<2x768xf32>
}

// -----

// The statistics are floats.
func.func @layer_norm_mean_type(%x: tensor<2x768xf32>, %g: tensor<768xf32>) -> tensor<2x1xi32> {
  // expected-error @+1 {{result 'Mean' must have a floating-point element type, got 'i32'}}
  %y, %m = onnx.LayerNormalization %x, %g : (tensor<2x768xf32>, tensor<768xf32>) -> tensor<2x768xf32> Mean(tensor<2x1xi32>)
  return %m : tensor<2x1xi32>
}

// -----

// The statistics keep X's rank with normalized dims 1: [2, 1].
func.func @layer_norm_stat_shape(%x: tensor<2x768xf32>, %g: tensor<768xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{result type 'tensor<2xf32>' does not agree with the inferred shape [2, 1]}}
  %y, %inv = onnx.LayerNormalization %x, %g : (tensor<2x768xf32>, tensor<768xf32>) -> tensor<2x768xf32> InvStdDev(tensor<2xf32>)
  return %inv : tensor<2xf32>
}

// -----

// RMSNormalization's Y takes scale's element type.
func.func @rms_norm_result_type(%x: tensor<2x64xf32>, %w: tensor<64xbf16>) -> tensor<2x64xf32> {
  // expected-error @+1 {{result 'Y' must have element type 'bf16', got 'f32'}}
  %y = onnx.RMSNormalization %x, %w : (tensor<2x64xf32>, tensor<64xbf16>) -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// -----

// Y has X's shape.
func.func @rms_norm_result_shape(%x: tensor<2x64xf32>, %w: tensor<64xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{result 'Y' type 'tensor<4x64xf32>' does not match the shape of operand 'X' 'tensor<2x64xf32>'}}
  %y = onnx.RMSNormalization %x, %w : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// axis -3 of a rank-2 tensor.
func.func @rms_norm_axis(%x: tensor<2x64xf32>, %w: tensor<64xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{attribute 'axis' -3 is out of range [-2, 1]}}
  %y = onnx.RMSNormalization %x, %w {axis = -3 : i64} : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// -----

// scale [32] does not broadcast to the normalized [64].
func.func @rms_norm_scale(%x: tensor<2x64xf32>, %w: tensor<32xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{operand 'scale' shape [32] does not broadcast to normalized shape [64]}}
  %y = onnx.RMSNormalization %x, %w : (tensor<2x64xf32>, tensor<32xf32>) -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// -----

// onnxruntime's RMS norm takes scale of X's element type.
func.func @ms_simplified_scale_type(%x: tensor<2x64xf16>, %w: tensor<64xf32>) -> tensor<2x64xf16> {
  // expected-error @+1 {{operands 'X' and 'scale' have different element types 'f16' and 'f32'}}
  %y = onnx.ms_SimplifiedLayerNormalization %x, %w : (tensor<2x64xf16>, tensor<64xf32>) -> tensor<2x64xf16>
  return %y : tensor<2x64xf16>
}

// -----

// Y has X's type.
func.func @ms_simplified_result(%x: tensor<2x64xf16>, %w: tensor<64xf16>) -> tensor<2x64xf32> {
  // expected-error @+1 {{result 'Y' type 'tensor<2x64xf32>' does not match operand 'X' type 'tensor<2x64xf16>'}}
  %y = onnx.ms_SimplifiedLayerNormalization %x, %w : (tensor<2x64xf16>, tensor<64xf16>) -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// -----

// axis 2 of a rank-2 tensor.
func.func @ms_simplified_axis(%x: tensor<2x64xf16>, %w: tensor<64xf16>) -> tensor<2x64xf16> {
  // expected-error @+1 {{attribute 'axis' 2 is out of range [-2, 1]}}
  %y = onnx.ms_SimplifiedLayerNormalization %x, %w {axis = 2 : i64} : (tensor<2x64xf16>, tensor<64xf16>) -> tensor<2x64xf16>
  return %y : tensor<2x64xf16>
}

// -----

// inv_std_var is [2, 1].
func.func @ms_simplified_stat(%x: tensor<2x64xf16>, %w: tensor<64xf16>) -> tensor<2x64xf32> {
  // expected-error @+1 {{result type 'tensor<2x64xf32>' does not agree with the inferred shape [2, 1]}}
  %y, %inv = onnx.ms_SimplifiedLayerNormalization %x, %w : (tensor<2x64xf16>, tensor<64xf16>) -> tensor<2x64xf16> inv_std_var(tensor<2x64xf32>)
  return %inv : tensor<2x64xf32>
}

// -----

// input is [batch, seq, hidden] or [tokens, hidden].
func.func @skip_ln_rank(%x: tensor<1x2x3x8xf16>, %s: tensor<1x2x3x8xf16>, %g: tensor<8xf16>) -> tensor<1x2x3x8xf16> {
  // expected-error @+1 {{operand 'input' must have rank 2 or 3, got 4}}
  %y = onnx.ms_SkipLayerNormalization %x, %s, %g : (tensor<1x2x3x8xf16>, tensor<1x2x3x8xf16>, tensor<8xf16>) -> tensor<1x2x3x8xf16>
  return %y : tensor<1x2x3x8xf16>
}

// -----

// skip has input's element type.
func.func @skip_ln_skip_type(%x: tensor<2x8xf16>, %s: tensor<2x8xf32>, %g: tensor<8xf16>) -> tensor<2x8xf16> {
  // expected-error @+1 {{operands 'input' and 'skip' have different element types 'f16' and 'f32'}}
  %y = onnx.ms_SkipLayerNormalization %x, %s, %g : (tensor<2x8xf16>, tensor<2x8xf32>, tensor<8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// gamma has input's element type.
func.func @skip_ln_gamma_type(%x: tensor<2x8xf16>, %s: tensor<2x8xf16>, %g: tensor<8xf32>) -> tensor<2x8xf16> {
  // expected-error @+1 {{operands 'input' and 'gamma' have different element types 'f16' and 'f32'}}
  %y = onnx.ms_SkipLayerNormalization %x, %s, %g : (tensor<2x8xf16>, tensor<2x8xf16>, tensor<8xf32>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// output has input's type.
func.func @skip_ln_output(%x: tensor<2x8xf16>, %s: tensor<2x8xf16>, %g: tensor<8xf16>) -> tensor<2x4xf16> {
  // expected-error @+1 {{result 'output' type 'tensor<2x4xf16>' does not match operand 'input' type 'tensor<2x8xf16>'}}
  %y = onnx.ms_SkipLayerNormalization %x, %s, %g : (tensor<2x8xf16>, tensor<2x8xf16>, tensor<8xf16>) -> tensor<2x4xf16>
  return %y : tensor<2x4xf16>
}

// -----

// The residual sum has input's type.
func.func @skip_ln_sum(%x: tensor<2x8xf16>, %s: tensor<2x8xf16>, %g: tensor<8xf16>) -> tensor<2x8xf32> {
  // expected-error @+1 {{result 'input_skip_bias_sum' type 'tensor<2x8xf32>' does not match operand 'input' type 'tensor<2x8xf16>'}}
  %y, %sum = onnx.ms_SkipLayerNormalization %x, %s, %g : (tensor<2x8xf16>, tensor<2x8xf16>, tensor<8xf16>) -> tensor<2x8xf16> input_skip_bias_sum(tensor<2x8xf32>)
  return %sum : tensor<2x8xf32>
}

// -----

// The statistics are floats.
func.func @skip_ln_mean(%x: tensor<2x8xf16>, %s: tensor<2x8xf16>, %g: tensor<8xf16>) -> tensor<2x1xi32> {
  // expected-error @+1 {{result 'mean' must have a floating-point element type, got 'i32'}}
  %y, %m = onnx.ms_SkipLayerNormalization %x, %s, %g : (tensor<2x8xf16>, tensor<2x8xf16>, tensor<8xf16>) -> tensor<2x8xf16> mean(tensor<2x1xi32>)
  return %m : tensor<2x1xi32>
}

// -----

// skip [3, 8] does not broadcast to input [2, 8].
func.func @skip_ln_skip_shape(%x: tensor<2x8xf16>, %s: tensor<3x8xf16>, %g: tensor<8xf16>) -> tensor<2x8xf16> {
  // expected-error @+1 {{operand 'skip' shape [3, 8] does not broadcast to operand 'input' shape [2, 8]}}
  %y = onnx.ms_SkipLayerNormalization %x, %s, %g : (tensor<2x8xf16>, tensor<3x8xf16>, tensor<8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// gamma is 1-D.
func.func @skip_ln_gamma_rank(%x: tensor<2x8xf16>, %s: tensor<2x8xf16>, %g: tensor<1x8xf16>) -> tensor<2x8xf16> {
  // expected-error @+1 {{operand 'gamma' must have rank 1, got 2}}
  %y = onnx.ms_SkipLayerNormalization %x, %s, %g : (tensor<2x8xf16>, tensor<2x8xf16>, tensor<1x8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// beta has the hidden size, 8.
func.func @skip_ln_beta_size(%x: tensor<2x8xf16>, %s: tensor<2x8xf16>, %g: tensor<8xf16>, %b: tensor<4xf16>) -> tensor<2x8xf16> {
  // expected-error @+1 {{operand 'beta' has size 4, expected the hidden size 8}}
  %y = onnx.ms_SkipLayerNormalization %x, %s, %g beta(%b) : (tensor<2x8xf16>, tensor<2x8xf16>, tensor<8xf16>, tensor<4xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// bias has the hidden size, 8.
func.func @skip_simplified_bias_size(%x: tensor<2x8xf16>, %s: tensor<2x8xf16>, %g: tensor<8xf16>, %b: tensor<16xf16>) -> tensor<2x8xf16> {
  // expected-error @+1 {{operand 'bias' has size 16, expected the hidden size 8}}
  %y = onnx.ms_SkipSimplifiedLayerNormalization %x, %s, %g bias(%b) : (tensor<2x8xf16>, tensor<2x8xf16>, tensor<8xf16>, tensor<16xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// The statistics are floats.
func.func @skip_simplified_inv_std(%x: tensor<2x8xf16>, %s: tensor<2x8xf16>, %g: tensor<8xf16>) -> tensor<2x1xi8> {
  // expected-error @+1 {{result 'inv_std_var' must have a floating-point element type, got 'i8'}}
  %y, %inv = onnx.ms_SkipSimplifiedLayerNormalization %x, %s, %g : (tensor<2x8xf16>, tensor<2x8xf16>, tensor<8xf16>) -> tensor<2x8xf16> inv_std_var(tensor<2x1xi8>)
  return %inv : tensor<2x1xi8>
}

// -----

//===----------------------------------------------------------------------===//
// Attention and RotaryEmbedding
//===----------------------------------------------------------------------===//

// is_causal is a flag.
func.func @attention_causal(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{attribute 'is_causal' must be 0 or 1, got 2}}
  %y = onnx.Attention %q, %k, %v {is_causal = 2 : i64} : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// There are four qk output modes.
func.func @attention_mode(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{attribute 'qk_matmul_output_mode' must be in [0, 3], got 4}}
  %y = onnx.Attention %q, %k, %v {qk_matmul_output_mode = 4 : i64} : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// Head counts are positive.
func.func @attention_heads_positive(%q: tensor<1x8x64xf32>, %k: tensor<1x8x64xf32>, %v: tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
  // expected-error @+1 {{attribute 'q_num_heads' must be > 0, got 0}}
  %y = onnx.Attention %q, %k, %v {kv_num_heads = 4 : i64, q_num_heads = 0 : i64} : (tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}

// -----

// 32 query heads do not group over 6 key/value heads.
func.func @attention_groups(%q: tensor<1x8x4096xf32>, %k: tensor<1x8x768xf32>, %v: tensor<1x8x768xf32>) -> tensor<1x8x4096xf32> {
  // expected-error @+1 {{attribute 'q_num_heads' (32) must be a multiple of 'kv_num_heads' (6)}}
  %y = onnx.Attention %q, %k, %v {kv_num_heads = 6 : i64, q_num_heads = 32 : i64} : (tensor<1x8x4096xf32>, tensor<1x8x768xf32>, tensor<1x8x768xf32>) -> tensor<1x8x4096xf32>
  return %y : tensor<1x8x4096xf32>
}

// -----

// The past cache comes in pairs.
func.func @attention_past_pair(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %pk: tensor<1x4x?x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{operands 'past_key' and 'past_value' must be both present or both absent}}
  %y = onnx.Attention %q, %k, %v past_key(%pk) : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x?x16xf32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// The present cache comes in pairs.
func.func @attention_present_pair(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x?x16xf32> {
  // expected-error @+1 {{results 'present_key' and 'present_value' must be both present or both absent}}
  %y, %pv = onnx.Attention %q, %k, %v : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> present_value(tensor<1x4x?x16xf32>)
  return %pv : tensor<1x4x?x16xf32>
}

// -----

// Q is 3-D or 4-D.
func.func @attention_rank(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{operand 'Q' must have rank 3 or 4, got 2}}
  %y = onnx.Attention %q, %k, %v : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// The caches are 4-D.
func.func @attention_past_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %pk: tensor<4x?x16xf32>, %pv: tensor<4x?x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{operand 'past_key' must have rank 4, got 3}}
  %y = onnx.Attention %q, %k, %v past_key(%pk) past_value(%pv) : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<4x?x16xf32>, tensor<4x?x16xf32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// Q and K share an element type.
func.func @attention_qk_type(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf16>, %v: tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{operands 'Q' and 'K' have different element types 'f32' and 'f16'}}
  %y = onnx.Attention %q, %k, %v : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf16>, tensor<1x4x8x16xf16>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// Y has Q's element type.
func.func @attention_result_type(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf16> {
  // expected-error @+1 {{result 'Y' must have element type 'f32', got 'f16'}}
  %y = onnx.Attention %q, %k, %v : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf16>
  return %y : tensor<1x4x8x16xf16>
}

// -----

// The mask is boolean or additive of Q's type.
func.func @attention_mask_type(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %m: tensor<8x8xi32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{operand 'attn_mask' must be boolean or have the element type of 'Q' ('f32'), got 'i32'}}
  %y = onnx.Attention %q, %k, %v attn_mask(%m) : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<8x8xi32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// nonpad_kv_seqlen is a 1-D i64 tensor.
func.func @attention_nonpad(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %n: tensor<1xi32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{operand 'nonpad_kv_seqlen' must have element type 'i64', got 'i32'}}
  %y = onnx.Attention %q, %k, %v nonpad_kv_seqlen(%n) : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1xi32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// Q, K and V are all 3-D or all 4-D.
func.func @attention_mixed_ranks(%q: tensor<1x8x64xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x8x64xf32> {
  // expected-error @+1 {{operands 'Q', 'K' and 'V' must all be 3-D or all be 4-D}}
  %y = onnx.Attention %q, %k, %v : (tensor<1x8x64xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}

// -----

// Y has Q's rank.
func.func @attention_result_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x8x64xf32> {
  // expected-error @+1 {{result 'Y' must have rank 4, got 3}}
  %y = onnx.Attention %q, %k, %v : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}

// -----

// K and V have one sequence length.
func.func @attention_kv_seq(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x9x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{operands 'K' and 'V' have different sequence lengths 8 and 9}}
  %y = onnx.Attention %q, %k, %v : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x9x16xf32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// 3-D inputs say how many heads they hold.
func.func @attention_3d_heads(%q: tensor<1x8x64xf32>, %k: tensor<1x8x64xf32>, %v: tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
  // expected-error @+1 {{3-D inputs require the 'q_num_heads' and 'kv_num_heads' attributes}}
  %y = onnx.Attention %q, %k, %v : (tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}

// -----

// 100 does not split into 32 heads.
func.func @attention_3d_hidden(%q: tensor<1x8x100xf32>, %k: tensor<1x8x64xf32>, %v: tensor<1x8x64xf32>) -> tensor<1x8x100xf32> {
  // expected-error @+1 {{the hidden size of 'Q' (100) is not a multiple of 'q_num_heads' (32)}}
  %y = onnx.Attention %q, %k, %v {kv_num_heads = 8 : i64, q_num_heads = 32 : i64} : (tensor<1x8x100xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32>) -> tensor<1x8x100xf32>
  return %y : tensor<1x8x100xf32>
}

// -----

// Q heads of 4096 / 32 = 128, K heads of 512 / 8 = 64.
func.func @attention_3d_head_size(%q: tensor<1x8x4096xf32>, %k: tensor<1x8x512xf32>, %v: tensor<1x8x512xf32>) -> tensor<1x8x4096xf32> {
  // expected-error @+1 {{operands 'Q' and 'K' have different head sizes 128 and 64}}
  %y = onnx.Attention %q, %k, %v {kv_num_heads = 8 : i64, q_num_heads = 32 : i64} : (tensor<1x8x4096xf32>, tensor<1x8x512xf32>, tensor<1x8x512xf32>) -> tensor<1x8x4096xf32>
  return %y : tensor<1x8x4096xf32>
}

// -----

// Q holds 4 heads, not q_num_heads = 8.
func.func @attention_4d_q_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{operand 'Q' has 4 heads, but 'q_num_heads' is 8}}
  %y = onnx.Attention %q, %k, %v {q_num_heads = 8 : i64} : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// K holds 4 heads, not kv_num_heads = 2.
func.func @attention_4d_kv_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{operand 'K' has 4 heads, but 'kv_num_heads' is 2}}
  %y = onnx.Attention %q, %k, %v {kv_num_heads = 2 : i64} : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// K and V have one head count.
func.func @attention_kv_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{operands 'K' and 'V' have different numbers of heads 4 and 2}}
  %y = onnx.Attention %q, %k, %v : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// 6 query heads do not group over 4 key/value heads.
func.func @attention_4d_groups(%q: tensor<1x6x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x6x8x16xf32> {
  // expected-error @+1 {{the heads of 'Q' (6) must be a multiple of those of 'K' (4)}}
  %y = onnx.Attention %q, %k, %v : (tensor<1x6x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x6x8x16xf32>
  return %y : tensor<1x6x8x16xf32>
}

// -----

// Q and K have one head size.
func.func @attention_4d_head_size(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x32xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{operands 'Q' and 'K' have different head sizes 16 and 32}}
  %y = onnx.Attention %q, %k, %v : (tensor<1x4x8x16xf32>, tensor<1x4x8x32xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// interleaved is a flag.
func.func @rotary_interleaved(%x: tensor<1x4x8x16xf32>, %c: tensor<1x8x8xf32>, %s: tensor<1x8x8xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{attribute 'interleaved' must be 0 or 1, got 2}}
  %y = onnx.RotaryEmbedding %x, %c, %s {interleaved = 2 : i64} : (tensor<1x4x8x16xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// num_heads is positive.
func.func @rotary_heads(%x: tensor<1x8x64xf32>, %c: tensor<1x8x8xf32>, %s: tensor<1x8x8xf32>) -> tensor<1x8x64xf32> {
  // expected-error @+1 {{attribute 'num_heads' must be > 0, got -4}}
  %y = onnx.RotaryEmbedding %x, %c, %s {num_heads = -4 : i64} : (tensor<1x8x64xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}

// -----

// X is 3-D or 4-D.
func.func @rotary_rank(%x: tensor<8x64xf32>, %c: tensor<1x8x8xf32>, %s: tensor<1x8x8xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{operand 'X' must have rank 3 or 4, got 2}}
  %y = onnx.RotaryEmbedding %x, %c, %s : (tensor<8x64xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Y has X's type.
func.func @rotary_result(%x: tensor<1x4x8x16xf32>, %c: tensor<1x8x8xf32>, %s: tensor<1x8x8xf32>) -> tensor<1x4x8x16xf16> {
  // expected-error @+1 {{result 'Y' type 'tensor<1x4x8x16xf16>' does not match operand 'X' type 'tensor<1x4x8x16xf32>'}}
  %y = onnx.RotaryEmbedding %x, %c, %s : (tensor<1x4x8x16xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x4x8x16xf16>
  return %y : tensor<1x4x8x16xf16>
}

// -----

// The sin and cos caches have one type.
func.func @rotary_caches(%x: tensor<1x4x8x16xf32>, %c: tensor<1x8x8xf32>, %s: tensor<1x8x4xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{operand 'sin_cache' type 'tensor<1x8x4xf32>' does not match operand 'cos_cache' type 'tensor<1x8x8xf32>'}}
  %y = onnx.RotaryEmbedding %x, %c, %s : (tensor<1x4x8x16xf32>, tensor<1x8x8xf32>, tensor<1x8x4xf32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// The caches have X's element type.
func.func @rotary_cache_type(%x: tensor<1x4x8x16xf16>, %c: tensor<1x8x8xf32>, %s: tensor<1x8x8xf32>) -> tensor<1x4x8x16xf16> {
  // expected-error @+1 {{operands 'X' and 'cos_cache' have different element types 'f16' and 'f32'}}
  %y = onnx.RotaryEmbedding %x, %c, %s : (tensor<1x4x8x16xf16>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x4x8x16xf16>
  return %y : tensor<1x4x8x16xf16>
}

// -----

// position_ids are i64.
func.func @rotary_position_type(%x: tensor<1x4x8x16xf32>, %c: tensor<64x8xf32>, %s: tensor<64x8xf32>, %p: tensor<1x8xi32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{operand 'position_ids' must have element type 'i64', got 'i32'}}
  %y = onnx.RotaryEmbedding %x, %c, %s position_ids(%p) : (tensor<1x4x8x16xf32>, tensor<64x8xf32>, tensor<64x8xf32>, tensor<1x8xi32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// position_ids are [batch, seq].
func.func @rotary_position_rank(%x: tensor<1x4x8x16xf32>, %c: tensor<64x8xf32>, %s: tensor<64x8xf32>, %p: tensor<8xi64>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{operand 'position_ids' must have rank 2, got 1}}
  %y = onnx.RotaryEmbedding %x, %c, %s position_ids(%p) : (tensor<1x4x8x16xf32>, tensor<64x8xf32>, tensor<64x8xf32>, tensor<8xi64>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// With position_ids the caches are tables.
func.func @rotary_table(%x: tensor<1x4x8x16xf32>, %c: tensor<1x8x8xf32>, %s: tensor<1x8x8xf32>, %p: tensor<1x8xi64>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{operand 'cos_cache' must have rank 2 when 'position_ids' is given, got 3}}
  %y = onnx.RotaryEmbedding %x, %c, %s position_ids(%p) : (tensor<1x4x8x16xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8xi64>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// Without position_ids the caches are already gathered.
func.func @rotary_gathered(%x: tensor<1x4x8x16xf32>, %c: tensor<64x8xf32>, %s: tensor<64x8xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{operand 'cos_cache' must have rank 3 when 'position_ids' is absent, got 2}}
  %y = onnx.RotaryEmbedding %x, %c, %s : (tensor<1x4x8x16xf32>, tensor<64x8xf32>, tensor<64x8xf32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// A 3-D X needs num_heads.
func.func @rotary_3d_heads(%x: tensor<1x8x64xf32>, %c: tensor<1x8x8xf32>, %s: tensor<1x8x8xf32>) -> tensor<1x8x64xf32> {
  // expected-error @+1 {{3-D input requires the 'num_heads' attribute}}
  %y = onnx.RotaryEmbedding %x, %c, %s : (tensor<1x8x64xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}

// -----

// 64 does not split into 3 heads.
func.func @rotary_3d_hidden(%x: tensor<1x8x64xf32>, %c: tensor<1x8x8xf32>, %s: tensor<1x8x8xf32>) -> tensor<1x8x64xf32> {
  // expected-error @+1 {{the hidden size of 'X' (64) is not a multiple of 'num_heads' (3)}}
  %y = onnx.RotaryEmbedding %x, %c, %s {num_heads = 3 : i64} : (tensor<1x8x64xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}

// -----

// X holds 4 heads, not 8.
func.func @rotary_4d_heads(%x: tensor<1x4x8x16xf32>, %c: tensor<1x8x8xf32>, %s: tensor<1x8x8xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{operand 'X' has 4 heads, but 'num_heads' is 8}}
  %y = onnx.RotaryEmbedding %x, %c, %s {num_heads = 8 : i64} : (tensor<1x4x8x16xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// The rotary dim pairs values: it is even.
func.func @rotary_dim_odd(%x: tensor<1x4x8x16xf32>, %c: tensor<1x8x8xf32>, %s: tensor<1x8x8xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{attribute 'rotary_embedding_dim' must be even and >= 0, got 7}}
  %y = onnx.RotaryEmbedding %x, %c, %s {rotary_embedding_dim = 7 : i64} : (tensor<1x4x8x16xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// The rotary dim fits in the head.
func.func @rotary_dim_large(%x: tensor<1x4x8x16xf32>, %c: tensor<1x8x16xf32>, %s: tensor<1x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{attribute 'rotary_embedding_dim' (32) exceeds the head size (16)}}
  %y = onnx.RotaryEmbedding %x, %c, %s {rotary_embedding_dim = 32 : i64} : (tensor<1x4x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

// Caches hold half the rotary dim, 8 for a full rotation of 16.
func.func @rotary_cache_width(%x: tensor<1x4x8x16xf32>, %c: tensor<1x8x16xf32>, %s: tensor<1x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{the last dim of 'cos_cache' (16) must be half the rotary dim (16)}}
  %y = onnx.RotaryEmbedding %x, %c, %s : (tensor<1x4x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %y : tensor<1x4x8x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// ms_GroupQueryAttention and ms_RotaryEmbedding
//===----------------------------------------------------------------------===//

// num_heads is positive.
func.func @gqa_heads(%q: tensor<1x8x64xf16>, %sk: tensor<1xi32>, %t: tensor<i32>) -> (tensor<1x8x64xf16>, tensor<1x1x8x64xf16>, tensor<1x1x8x64xf16>) {
  // expected-error @+1 {{attribute 'num_heads' must be > 0, got 0}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q seqlens_k(%sk) total_sequence_length(%t) {kv_num_heads = 1 : i64, num_heads = 0 : i64} : (tensor<1x8x64xf16>, tensor<1xi32>, tensor<i32>) -> (tensor<1x8x64xf16>, tensor<1x1x8x64xf16>, tensor<1x1x8x64xf16>)
  return %o, %pk, %pv : tensor<1x8x64xf16>, tensor<1x1x8x64xf16>, tensor<1x1x8x64xf16>
}

// -----

// num_heads groups over kv_num_heads.
func.func @gqa_groups(%q: tensor<1x8x64xf16>, %sk: tensor<1xi32>, %t: tensor<i32>) -> (tensor<1x8x64xf16>, tensor<1x3x8x64xf16>, tensor<1x3x8x64xf16>) {
  // expected-error @+1 {{attribute 'num_heads' (4) must be a multiple of 'kv_num_heads' (3)}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q seqlens_k(%sk) total_sequence_length(%t) {kv_num_heads = 3 : i64, num_heads = 4 : i64} : (tensor<1x8x64xf16>, tensor<1xi32>, tensor<i32>) -> (tensor<1x8x64xf16>, tensor<1x3x8x64xf16>, tensor<1x3x8x64xf16>)
  return %o, %pk, %pv : tensor<1x8x64xf16>, tensor<1x3x8x64xf16>, tensor<1x3x8x64xf16>
}

// -----

// do_rotary is a flag.
func.func @gqa_do_rotary_flag(%q: tensor<1x8x96xf16>, %sk: tensor<1xi32>, %t: tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>) {
  // expected-error @+1 {{attribute 'do_rotary' must be 0 or 1, got 3}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q seqlens_k(%sk) total_sequence_length(%t) {do_rotary = 3 : i64, kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x8x96xf16>, tensor<1xi32>, tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>)
  return %o, %pk, %pv : tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>
}

// -----

// key and value come together.
func.func @gqa_key_value(%q: tensor<1x8x64xf16>, %k: tensor<1x8x32xf16>, %sk: tensor<1xi32>, %t: tensor<i32>) -> (tensor<1x8x64xf16>, tensor<1x1x8x32xf16>, tensor<1x1x8x32xf16>) {
  // expected-error @+1 {{operands 'key' and 'value' must be both present or both absent}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q key(%k) seqlens_k(%sk) total_sequence_length(%t) {kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x8x64xf16>, tensor<1x8x32xf16>, tensor<1xi32>, tensor<i32>) -> (tensor<1x8x64xf16>, tensor<1x1x8x32xf16>, tensor<1x1x8x32xf16>)
  return %o, %pk, %pv : tensor<1x8x64xf16>, tensor<1x1x8x32xf16>, tensor<1x1x8x32xf16>
}

// -----

// The past cache comes in pairs.
func.func @gqa_past(%q: tensor<1x8x96xf16>, %pv0: tensor<1x1x?x16xf16>, %sk: tensor<1xi32>, %t: tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x1x?x16xf16>, tensor<1x1x?x16xf16>) {
  // expected-error @+1 {{operands 'past_key' and 'past_value' must be both present or both absent}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q past_value(%pv0) seqlens_k(%sk) total_sequence_length(%t) {kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x8x96xf16>, tensor<1x1x?x16xf16>, tensor<1xi32>, tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x1x?x16xf16>, tensor<1x1x?x16xf16>)
  return %o, %pk, %pv : tensor<1x8x32xf16>, tensor<1x1x?x16xf16>, tensor<1x1x?x16xf16>
}

// -----

// The rotary caches come in pairs.
func.func @gqa_caches(%q: tensor<1x8x96xf16>, %sk: tensor<1xi32>, %t: tensor<i32>, %c: tensor<64x8xf16>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>) {
  // expected-error @+1 {{operands 'cos_cache' and 'sin_cache' must be both present or both absent}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q seqlens_k(%sk) total_sequence_length(%t) cos_cache(%c) {kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x8x96xf16>, tensor<1xi32>, tensor<i32>, tensor<64x8xf16>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>)
  return %o, %pk, %pv : tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>
}

// -----

// Rotary inside GQA needs the caches.
func.func @gqa_do_rotary(%q: tensor<1x8x96xf16>, %sk: tensor<1xi32>, %t: tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>) {
  // expected-error @+1 {{attribute 'do_rotary' = 1 requires 'cos_cache' and 'sin_cache'}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q seqlens_k(%sk) total_sequence_length(%t) {do_rotary = 1 : i64, kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x8x96xf16>, tensor<1xi32>, tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>)
  return %o, %pk, %pv : tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>
}

// -----

// query is [batch, seq, hidden].
func.func @gqa_query_rank(%q: tensor<1x2x8x16xf16>, %sk: tensor<1xi32>, %t: tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>) {
  // expected-error @+1 {{operand 'query' must have rank 3, got 4}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q seqlens_k(%sk) total_sequence_length(%t) {kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x2x8x16xf16>, tensor<1xi32>, tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>)
  return %o, %pk, %pv : tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>
}

// -----

// seqlens_k is i32.
func.func @gqa_seqlens_type(%q: tensor<1x8x96xf16>, %sk: tensor<1xi64>, %t: tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>) {
  // expected-error @+1 {{operand 'seqlens_k' must have element type 'i32', got 'i64'}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q seqlens_k(%sk) total_sequence_length(%t) {kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x8x96xf16>, tensor<1xi64>, tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>)
  return %o, %pk, %pv : tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>
}

// -----

// seqlens_k is [batch].
func.func @gqa_seqlens_rank(%q: tensor<1x8x96xf16>, %sk: tensor<1x1xi32>, %t: tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>) {
  // expected-error @+1 {{operand 'seqlens_k' must have rank 1, got 2}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q seqlens_k(%sk) total_sequence_length(%t) {kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x8x96xf16>, tensor<1x1xi32>, tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>)
  return %o, %pk, %pv : tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>
}

// -----

// total_sequence_length is i32.
func.func @gqa_total_type(%q: tensor<1x8x96xf16>, %sk: tensor<1xi32>, %t: tensor<i64>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>) {
  // expected-error @+1 {{operand 'total_sequence_length' must have element type 'i32', got 'i64'}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q seqlens_k(%sk) total_sequence_length(%t) {kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x8x96xf16>, tensor<1xi32>, tensor<i64>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>)
  return %o, %pk, %pv : tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>
}

// -----

// total_sequence_length is a scalar.
func.func @gqa_total_scalar(%q: tensor<1x8x96xf16>, %sk: tensor<1xi32>, %t: tensor<2xi32>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>) {
  // expected-error @+1 {{operand 'total_sequence_length' must be a scalar, got 'tensor<2xi32>'}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q seqlens_k(%sk) total_sequence_length(%t) {kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x8x96xf16>, tensor<1xi32>, tensor<2xi32>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>)
  return %o, %pk, %pv : tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>
}

// -----

// output has query's element type.
func.func @gqa_output_type(%q: tensor<1x8x96xf16>, %sk: tensor<1xi32>, %t: tensor<i32>) -> (tensor<1x8x32xf32>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>) {
  // expected-error @+1 {{result 'output' must have element type 'f16', got 'f32'}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q seqlens_k(%sk) total_sequence_length(%t) {kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x8x96xf16>, tensor<1xi32>, tensor<i32>) -> (tensor<1x8x32xf32>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>)
  return %o, %pk, %pv : tensor<1x8x32xf32>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>
}

// -----

// key is [batch, seq, kv_hidden].
func.func @gqa_key_rank(%q: tensor<1x8x32xf16>, %k: tensor<1x1x8x16xf16>, %v: tensor<1x1x8x16xf16>, %sk: tensor<1xi32>, %t: tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>) {
  // expected-error @+1 {{operand 'key' must have rank 3, got 4}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q key(%k) value(%v) seqlens_k(%sk) total_sequence_length(%t) {kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>, tensor<1xi32>, tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>)
  return %o, %pk, %pv : tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>
}

// -----

// present_key is [batch, kv_heads, len, head_size].
func.func @gqa_present_rank(%q: tensor<1x8x96xf16>, %sk: tensor<1xi32>, %t: tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x8x16xf16>, tensor<1x1x8x16xf16>) {
  // expected-error @+1 {{result 'present_key' must have rank 4, got 3}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q seqlens_k(%sk) total_sequence_length(%t) {kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x8x96xf16>, tensor<1xi32>, tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x8x16xf16>, tensor<1x1x8x16xf16>)
  return %o, %pk, %pv : tensor<1x8x32xf16>, tensor<1x8x16xf16>, tensor<1x1x8x16xf16>
}

// -----

// The rotary caches have query's element type.
func.func @gqa_cache_type(%q: tensor<1x8x96xf16>, %sk: tensor<1xi32>, %t: tensor<i32>, %c: tensor<64x8xf32>, %s: tensor<64x8xf32>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>) {
  // expected-error @+1 {{operands 'query' and 'cos_cache' have different element types 'f16' and 'f32'}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q seqlens_k(%sk) total_sequence_length(%t) cos_cache(%c) sin_cache(%s) {kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x8x96xf16>, tensor<1xi32>, tensor<i32>, tensor<64x8xf32>, tensor<64x8xf32>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>)
  return %o, %pk, %pv : tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>
}

// -----

// Packed QKV of 2 + 2 * 1 heads: 102 is not a multiple of 4.
func.func @gqa_packed_hidden(%q: tensor<1x8x102xf16>, %sk: tensor<1xi32>, %t: tensor<i32>) -> (tensor<1x8x?xf16>, tensor<1x1x8x?xf16>, tensor<1x1x8x?xf16>) {
  // expected-error @+1 {{the hidden size of the packed QKV 'query' (102) is not a multiple of num_heads + 2 * kv_num_heads (4)}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q seqlens_k(%sk) total_sequence_length(%t) {kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x8x102xf16>, tensor<1xi32>, tensor<i32>) -> (tensor<1x8x?xf16>, tensor<1x1x8x?xf16>, tensor<1x1x8x?xf16>)
  return %o, %pk, %pv : tensor<1x8x?xf16>, tensor<1x1x8x?xf16>, tensor<1x1x8x?xf16>
}

// -----

// 30 does not split into 4 query heads.
func.func @gqa_query_hidden(%q: tensor<1x8x30xf16>, %k: tensor<1x8x16xf16>, %v: tensor<1x8x16xf16>, %sk: tensor<1xi32>, %t: tensor<i32>) -> (tensor<1x8x30xf16>, tensor<1x1x8x?xf16>, tensor<1x1x8x?xf16>) {
  // expected-error @+1 {{the hidden size of 'query' (30) is not a multiple of 'num_heads' (4)}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q key(%k) value(%v) seqlens_k(%sk) total_sequence_length(%t) {kv_num_heads = 1 : i64, num_heads = 4 : i64} : (tensor<1x8x30xf16>, tensor<1x8x16xf16>, tensor<1x8x16xf16>, tensor<1xi32>, tensor<i32>) -> (tensor<1x8x30xf16>, tensor<1x1x8x?xf16>, tensor<1x1x8x?xf16>)
  return %o, %pk, %pv : tensor<1x8x30xf16>, tensor<1x1x8x?xf16>, tensor<1x1x8x?xf16>
}

// -----

// Heads of 32 / 2 = 16: one key/value head makes a key of 16, not 32.
func.func @gqa_key_hidden(%q: tensor<1x8x32xf16>, %k: tensor<1x8x32xf16>, %v: tensor<1x8x32xf16>, %sk: tensor<1xi32>, %t: tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>) {
  // expected-error @+1 {{operand 'key' has hidden size 32, expected kv_num_heads * head_size = 16}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q key(%k) value(%v) seqlens_k(%sk) total_sequence_length(%t) {kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x8x32xf16>, tensor<1x8x32xf16>, tensor<1x8x32xf16>, tensor<1xi32>, tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>)
  return %o, %pk, %pv : tensor<1x8x32xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>
}

// -----

// The past cache holds kv_num_heads = 1 heads, not 2.
func.func @gqa_past_heads(%q: tensor<1x8x96xf16>, %k0: tensor<1x2x?x16xf16>, %v0: tensor<1x2x?x16xf16>, %sk: tensor<1xi32>, %t: tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x2x?x16xf16>, tensor<1x2x?x16xf16>) {
  // expected-error @+1 {{operand 'past_key' has 2 heads, expected 'kv_num_heads' = 1}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q past_key(%k0) past_value(%v0) seqlens_k(%sk) total_sequence_length(%t) {kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x8x96xf16>, tensor<1x2x?x16xf16>, tensor<1x2x?x16xf16>, tensor<1xi32>, tensor<i32>) -> (tensor<1x8x32xf16>, tensor<1x2x?x16xf16>, tensor<1x2x?x16xf16>)
  return %o, %pk, %pv : tensor<1x8x32xf16>, tensor<1x2x?x16xf16>, tensor<1x2x?x16xf16>
}

// -----

// Packed 96 = 4 heads of 24, not 16.
func.func @gqa_past_head_size(%q: tensor<1x8x96xf16>, %k0: tensor<1x1x?x16xf16>, %v0: tensor<1x1x?x16xf16>, %sk: tensor<1xi32>, %t: tensor<i32>) -> (tensor<1x8x48xf16>, tensor<1x1x?x16xf16>, tensor<1x1x?x16xf16>) {
  // expected-error @+1 {{operand 'past_key' has head size 16, expected 24}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q past_key(%k0) past_value(%v0) seqlens_k(%sk) total_sequence_length(%t) {kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x8x96xf16>, tensor<1x1x?x16xf16>, tensor<1x1x?x16xf16>, tensor<1xi32>, tensor<i32>) -> (tensor<1x8x48xf16>, tensor<1x1x?x16xf16>, tensor<1x1x?x16xf16>)
  return %o, %pk, %pv : tensor<1x8x48xf16>, tensor<1x1x?x16xf16>, tensor<1x1x?x16xf16>
}

// -----

// Packed 96 = 4 heads of 24: the output holds 2 of them, 48 wide.
func.func @gqa_output_shape(%q: tensor<1x8x96xf16>, %sk: tensor<1xi32>, %t: tensor<i32>) -> (tensor<1x8x96xf16>, tensor<1x1x8x24xf16>, tensor<1x1x8x24xf16>) {
  // expected-error @+1 {{result type 'tensor<1x8x96xf16>' does not agree with the inferred shape [1, 8, 48]}}
  %o, %pk, %pv = onnx.ms_GroupQueryAttention %q seqlens_k(%sk) total_sequence_length(%t) {kv_num_heads = 1 : i64, num_heads = 2 : i64} : (tensor<1x8x96xf16>, tensor<1xi32>, tensor<i32>) -> (tensor<1x8x96xf16>, tensor<1x1x8x24xf16>, tensor<1x1x8x24xf16>)
  return %o, %pk, %pv : tensor<1x8x96xf16>, tensor<1x1x8x24xf16>, tensor<1x1x8x24xf16>
}

// -----

// interleaved is a flag.
func.func @ms_rotary_interleaved(%x: tensor<1x8x64xf16>, %p: tensor<1x8xi64>, %c: tensor<64x16xf16>, %s: tensor<64x16xf16>) -> tensor<1x8x64xf16> {
  // expected-error @+1 {{attribute 'interleaved' must be 0 or 1, got 2}}
  %y = onnx.ms_RotaryEmbedding %x, %p, %c, %s {interleaved = 2 : i64} : (tensor<1x8x64xf16>, tensor<1x8xi64>, tensor<64x16xf16>, tensor<64x16xf16>) -> tensor<1x8x64xf16>
  return %y : tensor<1x8x64xf16>
}

// -----

// is_packed_batching is a flag.
func.func @ms_rotary_packed(%x: tensor<1x8x64xf16>, %p: tensor<1x8xi64>, %c: tensor<64x16xf16>, %s: tensor<64x16xf16>) -> tensor<1x8x64xf16> {
  // expected-error @+1 {{attribute 'is_packed_batching' must be 0 or 1, got 2}}
  %y = onnx.ms_RotaryEmbedding %x, %p, %c, %s {is_packed_batching = 2 : i64} : (tensor<1x8x64xf16>, tensor<1x8xi64>, tensor<64x16xf16>, tensor<64x16xf16>) -> tensor<1x8x64xf16>
  return %y : tensor<1x8x64xf16>
}

// -----

// input is 3-D or 4-D.
func.func @ms_rotary_rank(%x: tensor<8x64xf16>, %p: tensor<1x8xi64>, %c: tensor<64x16xf16>, %s: tensor<64x16xf16>) -> tensor<8x64xf16> {
  // expected-error @+1 {{operand 'input' must have rank 3 or 4, got 2}}
  %y = onnx.ms_RotaryEmbedding %x, %p, %c, %s : (tensor<8x64xf16>, tensor<1x8xi64>, tensor<64x16xf16>, tensor<64x16xf16>) -> tensor<8x64xf16>
  return %y : tensor<8x64xf16>
}

// -----

// output has input's type.
func.func @ms_rotary_output(%x: tensor<1x8x64xf16>, %p: tensor<1x8xi64>, %c: tensor<64x16xf16>, %s: tensor<64x16xf16>) -> tensor<1x8x64xf32> {
  // expected-error @+1 {{result 'output' type 'tensor<1x8x64xf32>' does not match operand 'input' type 'tensor<1x8x64xf16>'}}
  %y = onnx.ms_RotaryEmbedding %x, %p, %c, %s : (tensor<1x8x64xf16>, tensor<1x8xi64>, tensor<64x16xf16>, tensor<64x16xf16>) -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}

// -----

// position_ids are i64.
func.func @ms_rotary_position_type(%x: tensor<1x8x64xf16>, %p: tensor<1x8xi32>, %c: tensor<64x16xf16>, %s: tensor<64x16xf16>) -> tensor<1x8x64xf16> {
  // expected-error @+1 {{operand 'position_ids' must have element type 'i64', got 'i32'}}
  %y = onnx.ms_RotaryEmbedding %x, %p, %c, %s : (tensor<1x8x64xf16>, tensor<1x8xi32>, tensor<64x16xf16>, tensor<64x16xf16>) -> tensor<1x8x64xf16>
  return %y : tensor<1x8x64xf16>
}

// -----

// position_ids are [batch, seq] or [1].
func.func @ms_rotary_position_rank(%x: tensor<1x8x64xf16>, %p: tensor<1x1x8xi64>, %c: tensor<64x16xf16>, %s: tensor<64x16xf16>) -> tensor<1x8x64xf16> {
  // expected-error @+1 {{operand 'position_ids' must have rank 1 or 2, got 3}}
  %y = onnx.ms_RotaryEmbedding %x, %p, %c, %s : (tensor<1x8x64xf16>, tensor<1x1x8xi64>, tensor<64x16xf16>, tensor<64x16xf16>) -> tensor<1x8x64xf16>
  return %y : tensor<1x8x64xf16>
}

// -----

// The caches are [max_position, rotary_dim / 2] tables.
func.func @ms_rotary_cache_rank(%x: tensor<1x8x64xf16>, %p: tensor<1x8xi64>, %c: tensor<1x64x16xf16>, %s: tensor<1x64x16xf16>) -> tensor<1x8x64xf16> {
  // expected-error @+1 {{operand 'cos_cache' must have rank 2, got 3}}
  %y = onnx.ms_RotaryEmbedding %x, %p, %c, %s : (tensor<1x8x64xf16>, tensor<1x8xi64>, tensor<1x64x16xf16>, tensor<1x64x16xf16>) -> tensor<1x8x64xf16>
  return %y : tensor<1x8x64xf16>
}

// -----

// The caches have input's element type.
func.func @ms_rotary_cache_type(%x: tensor<1x8x64xf16>, %p: tensor<1x8xi64>, %c: tensor<64x16xf32>, %s: tensor<64x16xf32>) -> tensor<1x8x64xf16> {
  // expected-error @+1 {{operands 'input' and 'cos_cache' have different element types 'f16' and 'f32'}}
  %y = onnx.ms_RotaryEmbedding %x, %p, %c, %s : (tensor<1x8x64xf16>, tensor<1x8xi64>, tensor<64x16xf32>, tensor<64x16xf32>) -> tensor<1x8x64xf16>
  return %y : tensor<1x8x64xf16>
}

// -----

// num_heads is not negative.
func.func @ms_rotary_heads(%x: tensor<1x8x64xf16>, %p: tensor<1x8xi64>, %c: tensor<64x16xf16>, %s: tensor<64x16xf16>) -> tensor<1x8x64xf16> {
  // expected-error @+1 {{attribute 'num_heads' must be >= 0, got -1}}
  %y = onnx.ms_RotaryEmbedding %x, %p, %c, %s {num_heads = -1 : i64} : (tensor<1x8x64xf16>, tensor<1x8xi64>, tensor<64x16xf16>, tensor<64x16xf16>) -> tensor<1x8x64xf16>
  return %y : tensor<1x8x64xf16>
}

// -----

// Partial rotation needs num_heads.
func.func @ms_rotary_partial(%x: tensor<1x8x64xf16>, %p: tensor<1x8xi64>, %c: tensor<64x8xf16>, %s: tensor<64x8xf16>) -> tensor<1x8x64xf16> {
  // expected-error @+1 {{attribute 'rotary_embedding_dim' requires 'num_heads'}}
  %y = onnx.ms_RotaryEmbedding %x, %p, %c, %s {rotary_embedding_dim = 16 : i64} : (tensor<1x8x64xf16>, tensor<1x8xi64>, tensor<64x8xf16>, tensor<64x8xf16>) -> tensor<1x8x64xf16>
  return %y : tensor<1x8x64xf16>
}

// -----

// input holds 4 heads, not 2.
func.func @ms_rotary_4d_heads(%x: tensor<1x4x8x32xf16>, %p: tensor<1x8xi64>, %c: tensor<64x16xf16>, %s: tensor<64x16xf16>) -> tensor<1x4x8x32xf16> {
  // expected-error @+1 {{operand 'input' has 4 heads, but 'num_heads' is 2}}
  %y = onnx.ms_RotaryEmbedding %x, %p, %c, %s {num_heads = 2 : i64} : (tensor<1x4x8x32xf16>, tensor<1x8xi64>, tensor<64x16xf16>, tensor<64x16xf16>) -> tensor<1x4x8x32xf16>
  return %y : tensor<1x4x8x32xf16>
}

// -----

// 64 does not split into 3 heads.
func.func @ms_rotary_3d_hidden(%x: tensor<1x8x64xf16>, %p: tensor<1x8xi64>, %c: tensor<64x16xf16>, %s: tensor<64x16xf16>) -> tensor<1x8x64xf16> {
  // expected-error @+1 {{the hidden size of 'input' (64) is not a multiple of 'num_heads' (3)}}
  %y = onnx.ms_RotaryEmbedding %x, %p, %c, %s {num_heads = 3 : i64} : (tensor<1x8x64xf16>, tensor<1x8xi64>, tensor<64x16xf16>, tensor<64x16xf16>) -> tensor<1x8x64xf16>
  return %y : tensor<1x8x64xf16>
}

// -----

// Heads of 64 / 4 = 16 rotate with 8-wide caches, not 16.
func.func @ms_rotary_cache_width(%x: tensor<1x8x64xf16>, %p: tensor<1x8xi64>, %c: tensor<64x16xf16>, %s: tensor<64x16xf16>) -> tensor<1x8x64xf16> {
  // expected-error @+1 {{the last dim of 'cos_cache' (16) must be half the rotary dim (16)}}
  %y = onnx.ms_RotaryEmbedding %x, %p, %c, %s {num_heads = 4 : i64} : (tensor<1x8x64xf16>, tensor<1x8xi64>, tensor<64x16xf16>, tensor<64x16xf16>) -> tensor<1x8x64xf16>
  return %y : tensor<1x8x64xf16>
}

// -----

//===----------------------------------------------------------------------===//
// Quantization, ms_MatMulNBits, function argument attributes
//===----------------------------------------------------------------------===//

// saturate is a flag.
func.func @quantize_saturate(%x: tensor<4xf32>, %s: tensor<f32>, %zp: tensor<f8E4M3FN>) -> tensor<4xf8E4M3FN> {
  // expected-error @+1 {{attribute 'saturate' must be 0 or 1, got 2}}
  %y = onnx.QuantizeLinear %x, %s y_zero_point(%zp) {saturate = 2 : i64} : (tensor<4xf32>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<4xf8E4M3FN>
  return %y : tensor<4xf8E4M3FN>
}

// -----

// precision names an ONNX data type.
func.func @quantize_precision(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xui8> {
  // expected-error @+1 {{attribute 'precision' = 99 is not a supported ONNX data type}}
  %y = onnx.QuantizeLinear %x, %s {precision = 99 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xui8>
  return %y : tensor<4xui8>
}

// -----

// block_size is not negative.
func.func @quantize_block_negative(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xui8> {
  // expected-error @+1 {{attribute 'block_size' must be >= 0, got -1}}
  %y = onnx.QuantizeLinear %x, %s {block_size = -1 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xui8>
  return %y : tensor<4xui8>
}

// -----

// Scales are floats.
func.func @quantize_scale_type(%x: tensor<4xf32>, %s: tensor<i32>) -> tensor<4xui8> {
  // expected-error @+1 {{operand 'y_scale' must have a floating-point element type, got 'i32'}}
  %y = onnx.QuantizeLinear %x, %s : (tensor<4xf32>, tensor<i32>) -> tensor<4xui8>
  return %y : tensor<4xui8>
}

// -----

// The zero point has the scale's shape.
func.func @quantize_zero_point_shape(%x: tensor<4x8xf32>, %s: tensor<8xf32>, %zp: tensor<4xi8>) -> tensor<4x8xi8> {
  // expected-error @+1 {{operand 'y_zero_point' type 'tensor<4xi8>' does not have the shape of 'y_scale' 'tensor<8xf32>'}}
  %y = onnx.QuantizeLinear %x, %s y_zero_point(%zp) : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xi8>) -> tensor<4x8xi8>
  return %y : tensor<4x8xi8>
}

// -----

// A 2-D scale needs block_size.
func.func @quantize_scale_rank(%x: tensor<4x8xf32>, %s: tensor<4x8xf32>) -> tensor<4x8xui8> {
  // expected-error @+1 {{operand 'y_scale' must be a scalar or 1-D without 'block_size', got rank 2}}
  %y = onnx.QuantizeLinear %x, %s : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xui8>
  return %y : tensor<4x8xui8>
}

// -----

// Per-axis: axis 2 of a rank-2 input.
func.func @quantize_axis(%x: tensor<4x8xf32>, %s: tensor<8xf32>) -> tensor<4x8xui8> {
  // expected-error @+1 {{attribute 'axis' 2 is out of range [-2, 1]}}
  %y = onnx.QuantizeLinear %x, %s {axis = 2 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xui8>
  return %y : tensor<4x8xui8>
}

// -----

// Per-axis on axis 1 (default): one scale per column, 8, not 4.
func.func @quantize_per_axis(%x: tensor<4x8xf32>, %s: tensor<4xf32>) -> tensor<4x8xui8> {
  // expected-error @+1 {{per-axis 'y_scale' has 4 entries, but the quantization axis has size 8}}
  %y = onnx.QuantizeLinear %x, %s : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xui8>
  return %y : tensor<4x8xui8>
}

// -----

// Blocked scales have the input's rank.
func.func @dequantize_blocked_rank(%x: tensor<64x8xi4>, %s: tensor<2xf16>) -> tensor<64x8xf16> {
  // expected-error @+1 {{blocked quantization needs 'x_scale' of the input's rank 2, got rank 1}}
  %y = onnx.DequantizeLinear %x, %s {axis = 0 : i64, block_size = 32 : i64} : (tensor<64x8xi4>, tensor<2xf16>) -> tensor<64x8xf16>
  return %y : tensor<64x8xf16>
}

// -----

// 64 rows in blocks of 32 make 2 scale rows, not 4.
func.func @dequantize_blocked_shape(%x: tensor<64x8xi4>, %s: tensor<4x8xf16>) -> tensor<64x8xf16> {
  // expected-error @+1 {{blocked 'x_scale' shape [4, 8] does not match the expected [2, 8]}}
  %y = onnx.DequantizeLinear %x, %s {axis = 0 : i64, block_size = 32 : i64} : (tensor<64x8xi4>, tensor<4x8xf16>) -> tensor<64x8xf16>
  return %y : tensor<64x8xf16>
}

// -----

// y has x's shape.
func.func @quantize_result_shape(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<8xui8> {
  // expected-error @+1 {{result 'y' type 'tensor<8xui8>' does not have the shape of operand 'x' 'tensor<4xf32>'}}
  %y = onnx.QuantizeLinear %x, %s : (tensor<4xf32>, tensor<f32>) -> tensor<8xui8>
  return %y : tensor<8xui8>
}

// -----

// output_dtype names an ONNX data type.
func.func @quantize_output_dtype_unknown(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xui8> {
  // expected-error @+1 {{attribute 'output_dtype' = 8 is not a supported ONNX data type}}
  %y = onnx.QuantizeLinear %x, %s {output_dtype = 8 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xui8>
  return %y : tensor<4xui8>
}

// -----

// output_dtype = 3 is i8.
func.func @quantize_output_dtype(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xui8> {
  // expected-error @+1 {{result 'y' must have element type 'i8' (output_dtype = 3), got 'ui8'}}
  %y = onnx.QuantizeLinear %x, %s {output_dtype = 3 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xui8>
  return %y : tensor<4xui8>
}

// -----

// The zero point's type is the result's.
func.func @quantize_zero_point_type(%x: tensor<4xf32>, %s: tensor<f32>, %zp: tensor<i8>) -> tensor<4xui8> {
  // expected-error @+1 {{result 'y' must have the element type of 'y_zero_point' ('i8'), got 'ui8'}}
  %y = onnx.QuantizeLinear %x, %s y_zero_point(%zp) : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<4xui8>
  return %y : tensor<4xui8>
}

// -----

// Without zero point or output_dtype the result is ui8.
func.func @quantize_default_type(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xi8> {
  // expected-error @+1 {{result 'y' must have element type 'ui8' (no 'y_zero_point', no 'output_dtype'), got 'i8'}}
  %y = onnx.QuantizeLinear %x, %s : (tensor<4xf32>, tensor<f32>) -> tensor<4xi8>
  return %y : tensor<4xi8>
}

// -----

// The zero point has x's type.
func.func @dequantize_zero_point_type(%x: tensor<4xi8>, %s: tensor<f32>, %zp: tensor<ui8>) -> tensor<4xf32> {
  // expected-error @+1 {{operands 'x' and 'x_zero_point' have different element types 'i8' and 'ui8'}}
  %y = onnx.DequantizeLinear %x, %s x_zero_point(%zp) : (tensor<4xi8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// y has x's shape.
func.func @dequantize_result_shape(%x: tensor<4xi8>, %s: tensor<f32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{result 'y' type 'tensor<2x2xf32>' does not have the shape of operand 'x' 'tensor<4xi8>'}}
  %y = onnx.DequantizeLinear %x, %s : (tensor<4xi8>, tensor<f32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// output_dtype = 10 is f16.
func.func @dequantize_output_dtype(%x: tensor<4xi8>, %s: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{result 'y' must have element type 'f16' (output_dtype = 10), got 'f32'}}
  %y = onnx.DequantizeLinear %x, %s {output_dtype = 10 : i64} : (tensor<4xi8>, tensor<f32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Without output_dtype y has the scale's type.
func.func @dequantize_result_type(%x: tensor<4xi8>, %s: tensor<f32>) -> tensor<4xf16> {
  // expected-error @+1 {{result 'y' must have the element type of 'x_scale' ('f32'), got 'f16'}}
  %y = onnx.DequantizeLinear %x, %s : (tensor<4xi8>, tensor<f32>) -> tensor<4xf16>
  return %y : tensor<4xf16>
}

// -----

// K and N are positive.
func.func @nbits_k(%a: tensor<2x32xf16>, %b: tensor<8x1x16xui8>, %s: tensor<8xf16>) -> tensor<2x8xf16> {
  // expected-error @+1 {{attributes 'K' and 'N' must be > 0, got 0 and 8}}
  %y = onnx.ms_MatMulNBits %a, %b, %s {K = 0 : i64, N = 8 : i64, block_size = 32 : i64} : (tensor<2x32xf16>, tensor<8x1x16xui8>, tensor<8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// bits are 2 to 8.
func.func @nbits_bits(%a: tensor<2x32xf16>, %b: tensor<8x1x16xui8>, %s: tensor<8xf16>) -> tensor<2x8xf16> {
  // expected-error @+1 {{attribute 'bits' must be in [2, 8], got 16}}
  %y = onnx.ms_MatMulNBits %a, %b, %s {K = 32 : i64, N = 8 : i64, bits = 16 : i64, block_size = 32 : i64} : (tensor<2x32xf16>, tensor<8x1x16xui8>, tensor<8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// block_size is a power of 2, at least 16.
func.func @nbits_block_size(%a: tensor<2x48xf16>, %b: tensor<8x2x12xui8>, %s: tensor<16xf16>) -> tensor<2x8xf16> {
  // expected-error @+1 {{attribute 'block_size' must be a power of 2 >= 16, got 24}}
  %y = onnx.ms_MatMulNBits %a, %b, %s {K = 48 : i64, N = 8 : i64, block_size = 24 : i64} : (tensor<2x48xf16>, tensor<8x2x12xui8>, tensor<16xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// B is packed into ui8.
func.func @nbits_b_type(%a: tensor<2x32xf16>, %b: tensor<8x1x16xi8>, %s: tensor<8xf16>) -> tensor<2x8xf16> {
  // expected-error @+1 {{operand 'B' must have element type 'ui8', got 'i8'}}
  %y = onnx.ms_MatMulNBits %a, %b, %s {K = 32 : i64, N = 8 : i64, block_size = 32 : i64} : (tensor<2x32xf16>, tensor<8x1x16xi8>, tensor<8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// scales have A's element type.
func.func @nbits_scales_type(%a: tensor<2x32xf16>, %b: tensor<8x1x16xui8>, %s: tensor<8xf32>) -> tensor<2x8xf16> {
  // expected-error @+1 {{operands 'A' and 'scales' have different element types 'f16' and 'f32'}}
  %y = onnx.ms_MatMulNBits %a, %b, %s {K = 32 : i64, N = 8 : i64, block_size = 32 : i64} : (tensor<2x32xf16>, tensor<8x1x16xui8>, tensor<8xf32>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// Y has A's element type.
func.func @nbits_result_type(%a: tensor<2x32xf16>, %b: tensor<8x1x16xui8>, %s: tensor<8xf16>) -> tensor<2x8xf32> {
  // expected-error @+1 {{result 'Y' must have element type 'f16', got 'f32'}}
  %y = onnx.ms_MatMulNBits %a, %b, %s {K = 32 : i64, N = 8 : i64, block_size = 32 : i64} : (tensor<2x32xf16>, tensor<8x1x16xui8>, tensor<8xf16>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// B is [N, k_blocks, blob_size].
func.func @nbits_b_rank(%a: tensor<2x32xf16>, %b: tensor<8x16xui8>, %s: tensor<8xf16>) -> tensor<2x8xf16> {
  // expected-error @+1 {{operand 'B' must have rank 3, got 2}}
  %y = onnx.ms_MatMulNBits %a, %b, %s {K = 32 : i64, N = 8 : i64, block_size = 32 : i64} : (tensor<2x32xf16>, tensor<8x16xui8>, tensor<8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// 4-bit blocks of 32 pack into 16 bytes, not 32.
func.func @nbits_b_shape(%a: tensor<2x32xf16>, %b: tensor<8x1x32xui8>, %s: tensor<8xf16>) -> tensor<2x8xf16> {
  // expected-error @+1 {{operand 'B' type 'tensor<8x1x32xui8>' does not match [N, ceil(K / block_size), block_size * bits / 8] = [8, 1, 16]}}
  %y = onnx.ms_MatMulNBits %a, %b, %s {K = 32 : i64, N = 8 : i64, block_size = 32 : i64} : (tensor<2x32xf16>, tensor<8x1x32xui8>, tensor<8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// One scale per block: 8 x 1.
func.func @nbits_scales_count(%a: tensor<2x32xf16>, %b: tensor<8x1x16xui8>, %s: tensor<16xf16>) -> tensor<2x8xf16> {
  // expected-error @+1 {{operand 'scales' has 16 elements, expected N * ceil(K / block_size) = 8}}
  %y = onnx.ms_MatMulNBits %a, %b, %s {K = 32 : i64, N = 8 : i64, block_size = 32 : i64} : (tensor<2x32xf16>, tensor<8x1x16xui8>, tensor<16xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// bias is [N].
func.func @nbits_bias_rank(%a: tensor<2x32xf16>, %b: tensor<8x1x16xui8>, %s: tensor<8xf16>, %bias: tensor<1x8xf16>) -> tensor<2x8xf16> {
  // expected-error @+1 {{operand 'bias' must have rank 1, got 2}}
  %y = onnx.ms_MatMulNBits %a, %b, %s bias(%bias) {K = 32 : i64, N = 8 : i64, block_size = 32 : i64} : (tensor<2x32xf16>, tensor<8x1x16xui8>, tensor<8xf16>, tensor<1x8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// bias has A's element type.
func.func @nbits_bias_type(%a: tensor<2x32xf16>, %b: tensor<8x1x16xui8>, %s: tensor<8xf16>, %bias: tensor<8xf32>) -> tensor<2x8xf16> {
  // expected-error @+1 {{operands 'A' and 'bias' have different element types 'f16' and 'f32'}}
  %y = onnx.ms_MatMulNBits %a, %b, %s bias(%bias) {K = 32 : i64, N = 8 : i64, block_size = 32 : i64} : (tensor<2x32xf16>, tensor<8x1x16xui8>, tensor<8xf16>, tensor<8xf32>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// bias has N = 8 entries.
func.func @nbits_bias_size(%a: tensor<2x32xf16>, %b: tensor<8x1x16xui8>, %s: tensor<8xf16>, %bias: tensor<4xf16>) -> tensor<2x8xf16> {
  // expected-error @+1 {{operand 'bias' has size 4, expected N = 8}}
  %y = onnx.ms_MatMulNBits %a, %b, %s bias(%bias) {K = 32 : i64, N = 8 : i64, block_size = 32 : i64} : (tensor<2x32xf16>, tensor<8x1x16xui8>, tensor<8xf16>, tensor<4xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// A has at least the K dim.
func.func @nbits_a_rank(%a: tensor<f16>, %b: tensor<8x1x16xui8>, %s: tensor<8xf16>) -> tensor<8xf16> {
  // expected-error @+1 {{operand 'A' must have rank >= 1}}
  %y = onnx.ms_MatMulNBits %a, %b, %s {K = 32 : i64, N = 8 : i64, block_size = 32 : i64} : (tensor<f16>, tensor<8x1x16xui8>, tensor<8xf16>) -> tensor<8xf16>
  return %y : tensor<8xf16>
}

// -----

// A's last dim is K.
func.func @nbits_a_k(%a: tensor<2x64xf16>, %b: tensor<8x1x16xui8>, %s: tensor<8xf16>) -> tensor<2x8xf16> {
  // expected-error @+1 {{the last dim of 'A' (64) does not match 'K' (32)}}
  %y = onnx.ms_MatMulNBits %a, %b, %s {K = 32 : i64, N = 8 : i64, block_size = 32 : i64} : (tensor<2x64xf16>, tensor<8x1x16xui8>, tensor<8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// Y is A's shape with N for K: [2, 8].
func.func @nbits_result_shape(%a: tensor<2x32xf16>, %b: tensor<8x1x16xui8>, %s: tensor<8xf16>) -> tensor<2x32xf16> {
  // expected-error @+1 {{result type 'tensor<2x32xf16>' does not agree with the inferred shape [2, 8]}}
  %y = onnx.ms_MatMulNBits %a, %b, %s {K = 32 : i64, N = 8 : i64, block_size = 32 : i64} : (tensor<2x32xf16>, tensor<8x1x16xui8>, tensor<8xf16>) -> tensor<2x32xf16>
  return %y : tensor<2x32xf16>
}

// -----

// onnx.dim_params is the only onnx attribute of an argument.
// expected-error @+1 {{argument #0 has unknown attribute 'onnx.dim_param'}}
func.func @dim_params_unknown(%x: tensor<?xf32> {onnx.dim_param = ["n"]}) {
  return
}

// -----

// dim_params are strings.
// expected-error @+1 {{'onnx.dim_params' on argument #0 must be an array of strings}}
func.func @dim_params_not_strings(%x: tensor<?xf32> {onnx.dim_params = [1]}) {
  return
}

// -----

// Names need dims: a ranked tensor.
// expected-error @+1 {{'onnx.dim_params' on argument #0 requires a ranked tensor, got 'tensor<*xf32>'}}
func.func @dim_params_unranked(%x: tensor<*xf32> {onnx.dim_params = ["n"]}) {
  return
}

// -----

// One name per dim.
// expected-error @+1 {{'onnx.dim_params' on argument #0 has 1 entries for rank 2}}
func.func @dim_params_length(%x: tensor<?x?xf32> {onnx.dim_params = ["batch"]}) {
  return
}

// -----

// ONNX names only dynamic dims (dim_value and dim_param are exclusive).
// expected-error @+1 {{'onnx.dim_params' on argument #0 names static dim 1 (of size 64) 'hidden'}}
func.func @dim_params_static(%x: tensor<?x64xf32> {onnx.dim_params = ["batch", "hidden"]}) {
  return
}

// -----

// The same rules hold for results.
// expected-error @+1 {{'onnx.dim_params' on result #0 has 1 entries for rank 2}}
func.func private @dim_params_result() -> (tensor<?x?xf32> {onnx.dim_params = ["tokens"]})
