//===- Norm.h - RMS and layer normalisation ---------------------*- C++ -*-===//
//
// transformer.rms_norm, transformer.add_rms_norm and transformer.layer_norm
// on the CPU. Each normalises the last dimension of x ([tokens, hidden] or
// [tokens, heads, head_dim]) in f32 (reductions in f64) and returns x's
// dtype, rounding once at the end.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_NORM_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_NORM_H

#include "core/Tensor.h"

namespace accel::rt::cpu::transformer {

/// x / sqrt(mean(x^2) + epsilon) * (weight + weightOffset) over the last
/// dimension. `weight` is 1-D of the last dimension's size; weightOffset is
/// 1 for Gemma's (1 + w) scale, else 0.
StatusOr<Tensor> rmsNorm(const Tensor &x, const Tensor &weight, float epsilon,
                         float weightOffset = 0.0f);

struct AddRmsNormResult {
  Tensor normed; // rms_norm(sum)
  Tensor sum;    // x + residual, the next residual stream
};
/// sum = x + residual (rounded to x's dtype), normed = rmsNorm(sum, ...):
/// exactly residualAdd followed by rmsNorm. x and residual are 2-D of one
/// shape.
StatusOr<AddRmsNormResult> addRmsNorm(const Tensor &x, const Tensor &residual,
                                      const Tensor &weight, float epsilon,
                                      float weightOffset = 0.0f);

/// (x - mean) / sqrt(var + epsilon) * weight (+ bias) over the last
/// dimension, with the biased variance. `bias` may be null.
StatusOr<Tensor> layerNorm(const Tensor &x, const Tensor &weight,
                           const Tensor *bias, float epsilon);

} // namespace accel::rt::cpu::transformer

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_NORM_H
