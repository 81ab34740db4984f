// RUN: accel-opt %s -split-input-file -accel-raise-quantized-linear=all-forms=false | FileCheck %s
// RUN: accel-opt %s -split-input-file -accel-raise-quantized-linear | FileCheck %s --check-prefix=ALL
//
// Already-quantised weights: MatMul of a DequantizeLinear'd constant (QDQ,
// as onnxruntime's quantisation tools and test/fixtures/make_quant_fixtures.py
// write it) and com.microsoft MatMulNBits. By default (prefix ALL) i4,
// blocked scales and zero points are raised too; with all-forms=false (prefix
// CHECK) only i8 / f8E4M3FN, per tensor or per channel, without a zero point.

// i8 per output channel (axis 1 of the [in, out] weight) with an all-zero
// zero point: the weight is transposed to [out, in], the zero point dropped.
// CHECK-LABEL: func @i8_per_channel
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x2xf32>)
// CHECK-DAG: %[[W:.+]] = onnx.Constant {value = dense<{{\[}}[1, -4], [2, 5], [-3, 127]]> : tensor<3x2xi8>}
// CHECK-DAG: %[[S:.+]] = onnx.Constant {value = dense<[5.000000e-01, 2.500000e-01, 1.250000e-01]> : tensor<3xf32>}
// CHECK: %[[T:.+]] = transformer.flatten_tokens %[[X]] : tensor<?x?x2xf32> -> tensor<?x2xf32>
// CHECK-NEXT: %[[L:.+]] = transformer.linear %[[T]], %[[W]] weight_scale(%[[S]]) granularity = per_channel : (tensor<?x2xf32>, tensor<3x2xi8>, tensor<3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[L]] like %[[X]] : tensor<?x3xf32>, tensor<?x?x2xf32> -> tensor<?x?x3xf32>
// CHECK-NEXT: return %[[Y]]
// CHECK-NOT: onnx.DequantizeLinear
func.func @i8_per_channel(%x: tensor<?x?x2xf32>) -> tensor<?x?x3xf32> {
  %q = onnx.Constant {value = dense<[[1, 2, -3], [-4, 5, 127]]> : tensor<2x3xi8>} : () -> tensor<2x3xi8>
  %s = onnx.Constant {value = dense<[0.5, 0.25, 0.125]> : tensor<3xf32>} : () -> tensor<3xf32>
  %zp = onnx.Constant {value = dense<0> : tensor<3xi8>} : () -> tensor<3xi8>
  %w = onnx.DequantizeLinear %q, %s x_zero_point(%zp) {axis = 1 : i64} : (tensor<2x3xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3xf32>
  %y = onnx.MatMul %x, %w : (tensor<?x?x2xf32>, tensor<2x3xf32>) -> tensor<?x?x3xf32>
  return %y : tensor<?x?x3xf32>
}

// -----

// ui8 per tensor with zero point 128 (onnxruntime's symmetric uint8): q - 128
// as i8, exactly, and no zero point. The scale becomes rank 0.
// CHECK-LABEL: func @u8_symmetric_per_tensor
// CHECK-DAG: %[[W:.+]] = onnx.Constant {value = dense<{{\[}}[-128, 127], [0, 1]]> : tensor<2x2xi8>}
// CHECK-DAG: %[[S:.+]] = onnx.Constant {value = dense<3.000000e+00> : tensor<f32>}
// CHECK: transformer.linear %{{.+}}, %[[W]] weight_scale(%[[S]]) granularity = per_tensor : (tensor<?x2xf32>, tensor<2x2xi8>, tensor<f32>) -> tensor<?x2xf32>
func.func @u8_symmetric_per_tensor(%x: tensor<?x?x2xf32>) -> tensor<?x?x2xf32> {
  %q = onnx.Constant {value = dense<[[0, 128], [255, 129]]> : tensor<2x2xui8>} : () -> tensor<2x2xui8>
  %s = onnx.Constant {value = dense<3.0> : tensor<f32>} : () -> tensor<f32>
  %zp = onnx.Constant {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %w = onnx.DequantizeLinear %q, %s x_zero_point(%zp) : (tensor<2x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x2xf32>
  %y = onnx.MatMul %x, %w : (tensor<?x?x2xf32>, tensor<2x2xf32>) -> tensor<?x?x2xf32>
  return %y : tensor<?x?x2xf32>
}

// -----

// ui8 per channel with asymmetric zero points: by default nothing happens
// (the plan writer cannot write zero points yet); with all-forms the weight
// and the zero point are both shifted by 128 into i8.
// CHECK-LABEL: func @u8_asymmetric
// CHECK: onnx.DequantizeLinear
// CHECK-NOT: transformer.linear
// ALL-LABEL: func @u8_asymmetric
// ALL-DAG: %[[W:.+]] = onnx.Constant {value = dense<{{\[}}[-118, 72], [-98, 92]]> : tensor<2x2xi8>}
// ALL-DAG: %[[S:.+]] = onnx.Constant {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}
// ALL-DAG: %[[Z:.+]] = onnx.Constant {value = dense<[-128, 2]> : tensor<2xi8>}
// ALL: transformer.linear %{{.+}}, %[[W]] weight_scale(%[[S]]) zero_point(%[[Z]]) granularity = per_channel : (tensor<?x2xf32>, tensor<2x2xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<?x2xf32>
// ALL-NOT: onnx.DequantizeLinear
func.func @u8_asymmetric(%x: tensor<?x?x2xf32>) -> tensor<?x?x2xf32> {
  %q = onnx.Constant {value = dense<[[10, 30], [200, 220]]> : tensor<2x2xui8>} : () -> tensor<2x2xui8>
  %s = onnx.Constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %zp = onnx.Constant {value = dense<[0, 130]> : tensor<2xui8>} : () -> tensor<2xui8>
  %w = onnx.DequantizeLinear %q, %s x_zero_point(%zp) {axis = 1 : i64} : (tensor<2x2xui8>, tensor<2xf32>, tensor<2xui8>) -> tensor<2x2xf32>
  %y = onnx.MatMul %x, %w : (tensor<?x?x2xf32>, tensor<2x2xf32>) -> tensor<?x?x2xf32>
  return %y : tensor<?x?x2xf32>
}

// -----

// int4 blocked along K (opset 21, axis 0 of the [in = 4, out = 2] weight,
// block_size 2): per_group, group_size 2, the [K / 2, N] scales transposed to
// [N, K / 2]. Not raised by default (no i4 or per-group linear on the CPU yet).
// CHECK-LABEL: func @i4_blocked
// CHECK: onnx.DequantizeLinear
// CHECK-NOT: transformer.linear
// ALL-LABEL: func @i4_blocked
// ALL-DAG: %[[W:.+]] = onnx.Constant {value = dense<{{\[}}[1, 3, -5, 7], [2, -4, 6, -8]]> : tensor<2x4xi4>}
// ALL-DAG: %[[S:.+]] = onnx.Constant {value = dense<{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>}
// ALL: transformer.linear %{{.+}}, %[[W]] weight_scale(%[[S]]) granularity = per_group {group_size = 2 : i64} : (tensor<?x4xf32>, tensor<2x4xi4>, tensor<2x2xf32>) -> tensor<?x2xf32>
func.func @i4_blocked(%x: tensor<?x?x4xf32>) -> tensor<?x?x2xf32> {
  %q = onnx.Constant {value = dense<[[1, 2], [3, -4], [-5, 6], [7, -8]]> : tensor<4x2xi4>} : () -> tensor<4x2xi4>
  %s = onnx.Constant {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %w = onnx.DequantizeLinear %q, %s {axis = 0 : i64, block_size = 2 : i64} : (tensor<4x2xi4>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %y = onnx.MatMul %x, %w : (tensor<?x?x4xf32>, tensor<4x2xf32>) -> tensor<?x?x2xf32>
  return %y : tensor<?x?x2xf32>
}

// -----

// fp8 in torch layout: Transpose(DequantizeLinear(W_q [out, in], axis 0))
// reads W_q as it is (no copy transposed); raised by default.
// CHECK-LABEL: func @fp8_torch_layout
// CHECK-DAG: %[[W:.+]] = onnx.Constant {value = dense<{{\[}}[1.000000e+00, -2.000000e+00], [4.480000e+02, 5.000000e-01], [0.000000e+00, 1.000000e+00]]> : tensor<3x2xf8E4M3FN>}
// CHECK-DAG: %[[S:.+]] = onnx.Constant {value = dense<[1.000000e+00, 2.000000e+00, 4.000000e+00]> : tensor<3xf32>}
// CHECK: transformer.linear %{{.+}}, %[[W]] weight_scale(%[[S]]) granularity = per_channel : (tensor<?x2xf32>, tensor<3x2xf8E4M3FN>, tensor<3xf32>) -> tensor<?x3xf32>
// CHECK-NOT: onnx.Transpose
// CHECK-NOT: onnx.DequantizeLinear
func.func @fp8_torch_layout(%x: tensor<?x?x2xf32>) -> tensor<?x?x3xf32> {
  %q = onnx.Constant {value = dense<[[1.0, -2.0], [448.0, 0.5], [0.0, 1.0]]> : tensor<3x2xf8E4M3FN>} : () -> tensor<3x2xf8E4M3FN>
  %s = onnx.Constant {value = dense<[1.0, 2.0, 4.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %d = onnx.DequantizeLinear %q, %s {axis = 0 : i64} : (tensor<3x2xf8E4M3FN>, tensor<3xf32>) -> tensor<3x2xf32>
  %w = onnx.Transpose %d {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %y = onnx.MatMul %x, %w : (tensor<?x?x2xf32>, tensor<2x3xf32>) -> tensor<?x?x3xf32>
  return %y : tensor<?x?x3xf32>
}

// -----

// A dense_resource weight is copied transposed into a new blob named after
// it + ".qT": 1 2 3 / 4 5 6 becomes 1 4 / 2 5 / 3 6.
// CHECK-LABEL: func @resource_weight
// CHECK: onnx.Constant {value = dense_resource<wq.qT> : tensor<3x2xi8>}
// CHECK: transformer.linear
// CHECK: wq.qT: "0x40000000010402050306"
func.func @resource_weight(%x: tensor<?x?x2xf32>) -> tensor<?x?x3xf32> {
  %q = onnx.Constant {value = dense_resource<wq> : tensor<2x3xi8>} : () -> tensor<2x3xi8>
  %s = onnx.Constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %w = onnx.DequantizeLinear %q, %s : (tensor<2x3xi8>, tensor<f32>) -> tensor<2x3xf32>
  %y = onnx.MatMul %x, %w : (tensor<?x?x2xf32>, tensor<2x3xf32>) -> tensor<?x?x3xf32>
  return %y : tensor<?x?x3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      wq: "0x01000000010203040506"
    }
  }
#-}

// -----

// MatMulNBits, bits 4, K 32, N 2, block_size 16, no zero points (default 8):
// symmetric i4 = nibble - 8, low nibble first; per_group scales [N, K / 16].
// Row 0 is bytes 0x98 (nibbles 8, 9 -> 0, 1) then 0x88...; row 1 is all
// 0x0F (nibbles 15, 0 -> 7, -8). Not raised by default (i4).
// CHECK-LABEL: func @nbits4
// CHECK: onnx.ms_MatMulNBits
// CHECK-NOT: transformer.linear
// ALL-LABEL: func @nbits4
// ALL-DAG: %[[W:.+]] = onnx.Constant {value = dense<{{\[}}[0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [7, -8, 7, -8, 7, -8, 7, -8, 7, -8, 7, -8, 7, -8, 7, -8, 7, -8, 7, -8, 7, -8, 7, -8, 7, -8, 7, -8, 7, -8, 7, -8]]> : tensor<2x32xi4>}
// ALL-DAG: %[[S:.+]] = onnx.Constant {value = dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>}
// ALL: transformer.linear %{{.+}}, %[[W]] bias(%{{.+}}) weight_scale(%[[S]]) granularity = per_group {group_size = 16 : i64} : (tensor<?x32xf32>, tensor<2x32xi4>, tensor<2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
// ALL-NOT: onnx.ms_MatMulNBits
func.func @nbits4(%x: tensor<?x?x32xf32>, %bias: tensor<2xf32>) -> tensor<?x?x2xf32> {
  %b = onnx.Constant {value = dense<[[[152, 136, 136, 136, 136, 136, 136, 136], [136, 136, 136, 136, 136, 136, 136, 136]], [[15, 15, 15, 15, 15, 15, 15, 15], [15, 15, 15, 15, 15, 15, 15, 15]]]> : tensor<2x2x8xui8>} : () -> tensor<2x2x8xui8>
  %s = onnx.Constant {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %y = onnx.ms_MatMulNBits %x, %b, %s bias(%bias) {K = 32 : i64, N = 2 : i64, bits = 4 : i64, block_size = 16 : i64} : (tensor<?x?x32xf32>, tensor<2x2x8xui8>, tensor<4xf32>, tensor<2xf32>) -> tensor<?x?x2xf32>
  return %y : tensor<?x?x2xf32>
}

// -----

// MatMulNBits with packed 4-bit zero points (row 0: 0x53 -> blocks 3, 5;
// row 1: 0x08 -> 8, 0): the zero points shifted by 8 -> [[-5, -3], [0, -8]].
// ALL-LABEL: func @nbits4_zero_points
// ALL-DAG: %[[Z:.+]] = onnx.Constant {value = dense<{{\[}}[-5, -3], [0, -8]]> : tensor<2x2xi4>}
// ALL: transformer.linear %{{.+}}, %{{.+}} weight_scale(%{{.+}}) zero_point(%[[Z]]) granularity = per_group {group_size = 16 : i64}
func.func @nbits4_zero_points(%x: tensor<?x32xf32>) -> tensor<?x2xf32> {
  %b = onnx.Constant {value = dense<136> : tensor<2x2x8xui8>} : () -> tensor<2x2x8xui8>
  %s = onnx.Constant {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %zp = onnx.Constant {value = dense<[83, 8]> : tensor<2xui8>} : () -> tensor<2xui8>
  %y = onnx.ms_MatMulNBits %x, %b, %s zero_points(%zp) {K = 32 : i64, N = 2 : i64, bits = 4 : i64, block_size = 16 : i64} : (tensor<?x32xf32>, tensor<2x2x8xui8>, tensor<4xf32>, tensor<2xui8>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// MatMulNBits with bits 8 and one block (block_size = K), no zero points:
// symmetric i8 (byte - 128) per channel, which the CPU runs: raised by default.
// CHECK-LABEL: func @nbits8_one_block
// CHECK-DAG: %[[W:.+]] = onnx.Constant {value = dense<{{\[}}[-128, 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]> : tensor<1x16xi8>}
// CHECK-DAG: %[[S:.+]] = onnx.Constant {value = dense<2.500000e-01> : tensor<1xf32>}
// CHECK: transformer.linear %{{.+}}, %[[W]] weight_scale(%[[S]]) granularity = per_channel : (tensor<?x16xf32>, tensor<1x16xi8>, tensor<1xf32>) -> tensor<?x1xf32>
func.func @nbits8_one_block(%x: tensor<?x16xf32>) -> tensor<?x1xf32> {
  %b = onnx.Constant {value = dense<[[[0, 255, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128]]]> : tensor<1x1x16xui8>} : () -> tensor<1x1x16xui8>
  %s = onnx.Constant {value = dense<0.25> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = onnx.ms_MatMulNBits %x, %b, %s {K = 16 : i64, N = 1 : i64, bits = 8 : i64, block_size = 16 : i64} : (tensor<?x16xf32>, tensor<1x1x16xui8>, tensor<1xf32>) -> tensor<?x1xf32>
  return %y : tensor<?x1xf32>
}

// -----

// Per-axis scales along in_features (axis 0 of the [in, out] weight) scale
// the columns of W^T: the linear's per_channel scales rows. Not raised.
// CHECK-LABEL: func @scales_along_in_features
// CHECK-NOT: transformer.linear
// ALL-LABEL: func @scales_along_in_features
// ALL-NOT: transformer.linear
func.func @scales_along_in_features(%x: tensor<?x?x2xf32>) -> tensor<?x?x3xf32> {
  %q = onnx.Constant {value = dense<1> : tensor<2x3xi8>} : () -> tensor<2x3xi8>
  %s = onnx.Constant {value = dense<[0.5, 0.25]> : tensor<2xf32>} : () -> tensor<2xf32>
  %w = onnx.DequantizeLinear %q, %s {axis = 0 : i64} : (tensor<2x3xi8>, tensor<2xf32>) -> tensor<2x3xf32>
  %y = onnx.MatMul %x, %w : (tensor<?x?x2xf32>, tensor<2x3xf32>) -> tensor<?x?x3xf32>
  return %y : tensor<?x?x3xf32>
}

// -----

// Blocks along out_features (axis 1 of the [in, out] weight): the linear's
// groups run along in_features. Not raised.
// ALL-LABEL: func @blocks_along_out_features
// ALL-NOT: transformer.linear
func.func @blocks_along_out_features(%x: tensor<?x2xf32>) -> tensor<?x4xf32> {
  %q = onnx.Constant {value = dense<1> : tensor<2x4xi8>} : () -> tensor<2x4xi8>
  %s = onnx.Constant {value = dense<1.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %w = onnx.DequantizeLinear %q, %s {axis = 1 : i64, block_size = 2 : i64} : (tensor<2x4xi8>, tensor<2x2xf32>) -> tensor<2x4xf32>
  %y = onnx.MatMul %x, %w : (tensor<?x2xf32>, tensor<2x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// A scale that is not a constant (computed at run time): not raised.
// ALL-LABEL: func @runtime_scale
// ALL-NOT: transformer.linear
func.func @runtime_scale(%x: tensor<?x2xf32>, %s: tensor<f32>) -> tensor<?x2xf32> {
  %q = onnx.Constant {value = dense<1> : tensor<2x2xi8>} : () -> tensor<2x2xi8>
  %w = onnx.DequantizeLinear %q, %s : (tensor<2x2xi8>, tensor<f32>) -> tensor<2x2xf32>
  %y = onnx.MatMul %x, %w : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// A fp8 weight with a nonzero zero point is not on the linear's grid: not
// raised.
// ALL-LABEL: func @fp8_nonzero_zero_point
// ALL-NOT: transformer.linear
func.func @fp8_nonzero_zero_point(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %q = onnx.Constant {value = dense<1.0> : tensor<2x2xf8E4M3FN>} : () -> tensor<2x2xf8E4M3FN>
  %s = onnx.Constant {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %zp = onnx.Constant {value = dense<0.5> : tensor<f8E4M3FN>} : () -> tensor<f8E4M3FN>
  %w = onnx.DequantizeLinear %q, %s x_zero_point(%zp) : (tensor<2x2xf8E4M3FN>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<2x2xf32>
  %y = onnx.MatMul %x, %w : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}
