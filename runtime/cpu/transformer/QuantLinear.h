//===- QuantLinear.h - linear layers with quantised weights -----*- C++ -*-===//
//
// transformer.linear with a quantised weight and its scales on the CPU
// (accelc -precision=int8-weight|fp8, and ONNX QDQ / MatMulNBits weights
// raised by accel-raise-quantized-linear; docs/precision.md): the weight is
// dequantised a block of rows at a time and multiplied in f32.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_QUANTLINEAR_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_QUANTLINEAR_H

#include "core/Tensor.h"

namespace accel::rt::cpu::transformer {

/// result[t, o] = sum_i x[t, i] * ((weight[o, i] - zp) * scale) (+ bias[o]):
/// x [tokens, in] (f32/f16/bf16), weight [out, in] i8, i4, f8E4M3FN or
/// f8E5M2; scale (f32/f16/bf16) and the optional zero point (i8/i4, the
/// weight's type) `[out]` (per channel), `[]`/`[1]` (per tensor), or, with
/// groupSize > 0, `[out, in / groupSize]` (per group along in); bias [out]
/// or null. i8 and f8E4M3FN weights without zero point or groups decode
/// inside the GEMM (Gemm.h's gemmF32Weights); the other forms decode a block
/// of rows at a time. The result has `outType`.
StatusOr<Tensor> quantLinear(const Tensor &x, const Tensor &weight, const Tensor &scale,
                             const Tensor *bias, DType outType, const Tensor *zeroPoint = nullptr,
                             int64_t groupSize = 0);

/// W8A8 (accelc -precision=w8a8 / w8a8-fp8, docs/precision.md): x [tokens,
/// in] (f32, f16 or bf16) is quantised with the static per-tensor
/// `inputScale` ([] or [1], f32) to the weight's type: for an i8 weight xq =
/// clamp(round_half_even(x / inputScale), -127, 127), the sum below exact in
/// i32; for an f8E4M3FN weight xq = e4m3(x / inputScale) (round to nearest
/// even, saturating at +-448), the sum in f32 (as FP8 tensor cores
/// accumulate). Then result[t, o] = (sum_i xq[t, i] * weight[o, i]) *
/// inputScale * scale[o] (+ bias[o]), the rescale and bias in f32. weight
/// is i8 or f8E4M3FN [out, in], scale f32/f16/bf16 [out] or [] / [1].
StatusOr<Tensor> w8a8Linear(const Tensor &x, const Tensor &weight, const Tensor &scale,
                            const Tensor &inputScale, const Tensor *bias, DType outType);

/// w8a8Linear with dynamic per-token scales (accelc -precision=w8a8-fp8
/// without -calibration): row r of x is quantised with max |x[r, :]| / 448
/// (127 for an i8 weight; 1 for a row of zeros), computed here. A row with
/// a NaN or an infinity fails, naming it.
StatusOr<Tensor> w8a8LinearDynamic(const Tensor &x, const Tensor &weight, const Tensor &scale,
                                   const Tensor *bias, DType outType);

} // namespace accel::rt::cpu::transformer

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_QUANTLINEAR_H
