//===- Rope.h - rotary position embedding frequencies ------------*- C++ -*-===//
//
// The frequencies of a rotary position embedding, with HF transformers'
// formulas, shared by the runtime (which rotates with them) and the
// compiler (RaiseRotary recovers a model's theta and rope_scaling by asking
// which parameters reproduce its measured frequencies):
//
//   inv_freq[j] = 1 / theta^(2j / rotary_dim),  j < rotary_dim / 2   (f32)
//
// then the scaling (linear: / factor; llama3: HF's
// _compute_llama3_parameters).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_CORE_ROPE_H
#define ACCEL_CORE_ROPE_H

#include "core/Status.h"

#include <cstdint>
#include <vector>

namespace accel::rt {

/// The dialect's RopeScalingKind (kNone: no #transformer.rope_scaling).
enum class RopeScalingKind { kNone, kLinear, kDynamicNtk, kLlama3, kYarn };

/// HF's rope_scaling, as #transformer.rope_scaling carries it.
struct RopeScaling {
  RopeScalingKind kind = RopeScalingKind::kNone;
  float factor = 1.0f;
  int64_t originalMaxPosition = 0;
  float lowFreqFactor = 1.0f;  // llama3
  float highFreqFactor = 4.0f; // llama3
  float betaFast = 32.0f;      // yarn
  float betaSlow = 1.0f;       // yarn
};

/// inv_freq for `rotaryDim` channels: theta's frequencies, then the
/// scaling. kInvalidArgument for an odd or non-positive rotaryDim, a
/// non-positive theta or scaling parameters HF would reject;
/// kUnimplemented for dynamic_ntk and yarn.
StatusOr<std::vector<float>> rotaryInvFreq(int64_t rotaryDim, double theta,
                                           const RopeScaling &scaling);

} // namespace accel::rt

#endif // ACCEL_CORE_ROPE_H
