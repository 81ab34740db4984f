//===- Linear.h - dense layers ----------------------------------*- C++ -*-===//
//
// transformer.linear (float weights) on the CPU, through the Gemm wrapper
// (OpenBLAS sgemm when the build has it).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_LINEAR_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_LINEAR_H

#include "core/Tensor.h"

#include <optional>

namespace accel::rt::cpu::transformer {

/// result[t, o] = sum_i x[t, i] * weight[o, i] (+ bias[o]): x [tokens, in],
/// weight torch's [out, in], bias [out] or null. f32/f16/bf16 operands are
/// computed in f32; the result has `outType` (default: x's dtype).
/// Quantised weights (f8, i8, i4) fail with kUnimplemented: the CPU has no
/// dequantising linear yet.
StatusOr<Tensor> linear(const Tensor &x, const Tensor &weight,
                        const Tensor *bias = nullptr,
                        std::optional<DType> outType = std::nullopt);

} // namespace accel::rt::cpu::transformer

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_LINEAR_H
