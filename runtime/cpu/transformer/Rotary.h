//===- Rotary.h - rotary position embedding ---------------------*- C++ -*-===//
//
// transformer.rotary on the CPU, with HF transformers' formulas:
//
//   inv_freq[j] = 1 / theta^(2j / rotary_dim),  j < rotary_dim / 2
//   angle[t, j] = positions[t] * inv_freq[j]     (f32, as HF computes it)
//
// (or cos/sin read from explicit [max_position, rotary_dim / 2] tables), and
// each head's first rotary_dim channels rotate in pairs (x1, x2):
//
//   x1' = x1 cos - x2 sin,   x2' = x2 cos + x1 sin
//
// half_split pairs channel j with j + rotary_dim / 2 (rotate_half: NeoX,
// Llama, most HF models); interleaved pairs 2j with 2j + 1 (GPT-J's
// rotate_every_two). Channels past rotary_dim pass through.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_ROTARY_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_ROTARY_H

#include "core/Rope.h"
#include "core/Tensor.h"

#include <vector>

namespace accel::rt::cpu::transformer {

enum class RotaryStyle { kInterleaved, kHalfSplit };

// The frequencies and their scaling: core/Rope.h (the compiler uses them
// too).
using accel::rt::RopeScaling;
using accel::rt::RopeScalingKind;
using accel::rt::rotaryInvFreq;

struct RotaryParams {
  RotaryStyle style = RotaryStyle::kHalfSplit;
  /// Channels that rotate, even and at most head_dim; 0 means head_dim.
  int64_t rotaryDim = 0;
  double theta = 10000.0;
  RopeScaling scaling;
  /// Explicit tables [max_position, rotary_dim / 2] (f32, f16 or bf16),
  /// indexed by position; when set, theta and scaling are ignored. Both or
  /// neither.
  const Tensor *cosTable = nullptr;
  const Tensor *sinTable = nullptr;
};

/// Rotates `x` [tokens, heads, head_dim] (f32, f16 or bf16) by `positions`
/// [tokens] (i32 or i64, non-negative); the result has x's dtype.
StatusOr<Tensor> rotary(const Tensor &x, const Tensor &positions,
                        const RotaryParams &params);

} // namespace accel::rt::cpu::transformer

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_ROTARY_H
