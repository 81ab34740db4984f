//===- Rope.cpp - rotary position embedding frequencies -------------------===//
#include "core/Rope.h"

#include <cmath>
#include <string>

namespace accel::rt {

StatusOr<std::vector<float>> rotaryInvFreq(int64_t rotaryDim, double theta,
                                           const RopeScaling &s) {
  auto bad = [](const std::string &m) {
    return Status(StatusCode::kInvalidArgument, "rotary: " + m);
  };
  auto unimplemented = [](const std::string &m) {
    return Status(StatusCode::kUnimplemented, "rotary: " + m);
  };
  if (rotaryDim <= 0 || rotaryDim % 2 != 0)
    return bad("rotary_dim " + std::to_string(rotaryDim) + " must be positive and even");
  if (!(theta > 0.0))
    return bad("theta " + std::to_string(theta) + " must be positive");
  const int64_t half = rotaryDim / 2;
  std::vector<float> inv(static_cast<size_t>(half));
  // As HF: 1.0 / (base ** (arange(0, dim, 2).float() / dim)), in f32.
  for (int64_t j = 0; j < half; ++j) {
    const float e = float(2 * j) / float(rotaryDim);
    inv[size_t(j)] = 1.0f / std::pow(float(theta), e);
  }
  switch (s.kind) {
  case RopeScalingKind::kNone:
    return inv;
  case RopeScalingKind::kLinear:
    if (!(s.factor > 0.0f))
      return bad("linear rope scaling needs a positive factor");
    for (float &f : inv)
      f /= s.factor;
    return inv;
  case RopeScalingKind::kLlama3: {
    if (!(s.factor > 0.0f) || s.originalMaxPosition <= 0 ||
        !(s.highFreqFactor > s.lowFreqFactor) || !(s.lowFreqFactor > 0.0f))
      return bad("llama3 rope scaling needs factor > 0, "
                         "original_max_position > 0 and high_freq_factor > "
                         "low_freq_factor > 0");
    const float old = float(s.originalMaxPosition);
    const float lowWavelen = old / s.lowFreqFactor;
    const float highWavelen = old / s.highFreqFactor;
    for (float &f : inv) {
      const float wavelen = 2.0f * 3.14159265358979323846f / f;
      if (wavelen > lowWavelen) {
        f = f / s.factor; // low frequencies: fully interpolated
      } else if (wavelen >= highWavelen) {
        // Medium frequencies: a smooth blend of the two.
        const float smooth = (old / wavelen - s.lowFreqFactor) /
                             (s.highFreqFactor - s.lowFreqFactor);
        f = (1.0f - smooth) * f / s.factor + smooth * f;
      } // high frequencies: unchanged
    }
    return inv;
  }
  case RopeScalingKind::kDynamicNtk:
    return unimplemented("dynamic_ntk rope scaling is not implemented");
  case RopeScalingKind::kYarn:
    return unimplemented("yarn rope scaling is not implemented");
  }
  return inv;
}

} // namespace accel::rt
