//===- QuantLinear.h - linear layers with quantised weights -----*- C++ -*-===//
//
// transformer.linear with an i8 or f8E4M3FN weight and its f32 scales
// (accelc -precision=int8-weight|fp8, docs/precision.md) on the CPU: the
// weight is dequantised a block of rows at a time inside the GEMM
// (runtime/cpu/Gemm.h's gemmF32Weights) and multiplied in f32.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_QUANTLINEAR_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_QUANTLINEAR_H

#include "runtime/tensor/Tensor.h"

namespace accel::rt::cpu::transformer {

/// result[t, o] = sum_i x[t, i] * (weight[o, i] * scale[o | 0]) (+ bias[o]):
/// x [tokens, in] (f32/f16/bf16), weight [out, in] i8 or f8E4M3FN, scale
/// `[out]` (per-channel) or `[]`/`[1]` (per-tensor) f32/f16/bf16, bias [out]
/// or null. The result has `outType`.
StatusOr<Tensor> quantLinear(const Tensor &x, const Tensor &weight, const Tensor &scale,
                             const Tensor *bias, DType outType);

} // namespace accel::rt::cpu::transformer

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_QUANTLINEAR_H
