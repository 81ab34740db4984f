//===- OnnxQuantizationOps.td - (de)quantization -----------*- tablegen -*-===//
//
// QuantizeLinear / DequantizeLinear (opset 23: per-tensor, per-axis and
// blocked) and onnxruntime's weight-only quantized ms_MatMulNBits.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_ONNX_QUANTIZATION_OPS
#define ACCEL_ONNX_QUANTIZATION_OPS

include "OnnxDialect.td"

//===----------------------------------------------------------------------===//
// QuantizeLinear
//===----------------------------------------------------------------------===//

def Onnx_QuantizeLinearOp : Onnx_Op<"QuantizeLinear"> {
  let summary = "y = saturate(round(x / y_scale) + y_zero_point)";
  let description = [{
    The scale's shape picks the granularity: a scalar (per tensor); a 1-D
    tensor of `x.shape[axis]` (per axis); or, with `block_size > 0`, `x`'s
    shape with `ceil(x.shape[axis] / block_size)` at `axis` (blocked). The
    optional zero point has the scale's shape and the result's element type,
    which is also `output_dtype`'s when that is set, and ui8 when neither is.

    ```mlir
    %q = onnx.QuantizeLinear %x, %s y_zero_point(%zp)
        : (tensor<?x4096xf16>, tensor<f16>, tensor<f8E4M3FN>) -> tensor<?x4096xf8E4M3FN>
    ```
  }];
  let arguments = (ins AnyTensor:$x, AnyTensor:$y_scale,
                       Optional<AnyTensor>:$y_zero_point,
                       DefaultValuedAttr<I64Attr, "1">:$axis,
                       DefaultValuedAttr<I64Attr, "0">:$block_size,
                       DefaultValuedAttr<I64Attr, "0">:$output_dtype,
                       DefaultValuedAttr<I64Attr, "0">:$precision,
                       DefaultValuedAttr<I64Attr, "1">:$saturate);
  let results = (outs AnyTensor:$y);
  let assemblyFormat = [{
    $x `,` $y_scale (`y_zero_point` `(` $y_zero_point^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// DequantizeLinear
//===----------------------------------------------------------------------===//

def Onnx_DequantizeLinearOp : Onnx_Op<"DequantizeLinear"> {
  let summary = "y = (x - x_zero_point) * x_scale";
  let description = [{
    Granularity as for QuantizeLinear. The optional zero point has the
    scale's shape and `x`'s element type; the result has the scale's element
    type, or `output_dtype`'s when that is set. Blocked int4 weights:

    ```mlir
    %w = onnx.DequantizeLinear %q, %s x_zero_point(%zp) {axis = 0 : i64, block_size = 32 : i64}
        : (tensor<4096x4096xi4>, tensor<128x4096xf16>, tensor<128x4096xi4>) -> tensor<4096x4096xf16>
    ```
  }];
  let arguments = (ins AnyTensor:$x, AnyTensor:$x_scale,
                       Optional<AnyTensor>:$x_zero_point,
                       DefaultValuedAttr<I64Attr, "1">:$axis,
                       DefaultValuedAttr<I64Attr, "0">:$block_size,
                       DefaultValuedAttr<I64Attr, "0">:$output_dtype);
  let results = (outs AnyTensor:$y);
  let assemblyFormat = [{
    $x `,` $x_scale (`x_zero_point` `(` $x_zero_point^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ms_MatMulNBits
//===----------------------------------------------------------------------===//

def Onnx_MsMatMulNBitsOp
    : Onnx_Op<"ms_MatMulNBits", [AttrSizedOperandSegments]> {
  let summary = "onnxruntime's A x dequantize(B)^T, B block-quantized";
  let description = [{
    `A` is `[..., K]`; `B` is ui8 `[N, ceil(K / block_size), block_size *
    bits / 8]`, packed low bits first; `scales` holds `N * ceil(K /
    block_size)` values (1-D or `[N, k_blocks]`); the optional `zero_points`
    are packed ui8 or of the scales' type (default 2^(bits-1)); `g_idx` is
    deprecated; `bias` is `[N]`. The result is `[..., N]`. `block_size` is a
    power of two >= 16.

    ```mlir
    %y = onnx.ms_MatMulNBits %x, %qw, %scales {K = 4096 : i64, N = 11008 : i64, bits = 4 : i64, block_size = 32 : i64}
        : (tensor<?x?x4096xf16>, tensor<11008x128x16xui8>, tensor<1409024xf16>) -> tensor<?x?x11008xf16>
    ```
  }];
  let arguments = (ins AnyTensor:$A, AnyTensor:$B, AnyTensor:$scales,
                       Optional<AnyTensor>:$zero_points,
                       Optional<AnyTensor>:$g_idx, Optional<AnyTensor>:$bias,
                       I64Attr:$K, I64Attr:$N,
                       DefaultValuedAttr<I64Attr, "4">:$bits,
                       I64Attr:$block_size,
                       DefaultValuedAttr<I64Attr, "0">:$accuracy_level);
  let results = (outs AnyTensor:$Y);
  let assemblyFormat = [{
    $A `,` $B `,` $scales (`zero_points` `(` $zero_points^ `)`)?
    (`g_idx` `(` $g_idx^ `)`)? (`bias` `(` $bias^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // ACCEL_ONNX_QUANTIZATION_OPS
