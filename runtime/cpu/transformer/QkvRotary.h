//===- QkvRotary.h - fused QKV split, head views and rotary -----*- C++ -*-===//
//
// transformer.qkv_rotary on the CPU (and the plan's `kv_write qkv_rotary`
// step before its KV-cache write): splitColumns, splitHeads and rotary, one
// after the other, so that the fused op is exactly the ops it replaces.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_QKVROTARY_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_QKVROTARY_H

#include "runtime/cpu/transformer/Rotary.h"

namespace accel::rt::cpu::transformer {

/// The heads of a fused QKV projection.
struct QkvHeads {
  int64_t numHeads = 0;
  int64_t numKvHeads = 0;
  int64_t headDim = 0;
};

struct QkvRotaryResult {
  Tensor q; // [tokens, numHeads, headDim], rotated
  Tensor k; // [tokens, numKvHeads, headDim], rotated
  Tensor v; // [tokens, numKvHeads, headDim]
};

/// Cuts `qkv` [tokens, (numHeads + 2 numKvHeads) * headDim] (f32, f16 or
/// bf16) into q | k | v, views each as heads, and rotates q and k by
/// `positions` [tokens] with `params` (as rotary()). Fails in one sentence
/// on head counts that are not positive or a column count that does not
/// match them.
StatusOr<QkvRotaryResult> qkvRotary(const Tensor &qkv, const Tensor &positions,
                                    const QkvHeads &heads, const RotaryParams &params);

} // namespace accel::rt::cpu::transformer

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_QKVROTARY_H
