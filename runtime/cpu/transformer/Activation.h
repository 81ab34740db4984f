//===- Activation.h - pointwise and gated activations -----------*- C++ -*-===//
//
// transformer.activation and transformer.gated_act on the CPU. The formulas
// are those of HF transformers' ACT2FN:
//   silu        x * sigmoid(x)
//   gelu        0.5 x (1 + erf(x / sqrt 2))
//   gelu_tanh   0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
//   quick_gelu  x * sigmoid(1.702 x)
//   relu        max(x, 0)
//   relu_squared relu(x)^2
//   sigmoid     1 / (1 + exp(-x))
//   tanh        tanh(x)
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_ACTIVATION_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_ACTIVATION_H

#include "core/Tensor.h"

#include <optional>
#include <string_view>

namespace accel::rt::cpu::transformer {

/// The transformer dialect's ActivationKind, in its order.
enum class ActivationKind {
  kSilu,
  kGelu,
  kGeluTanh,
  kQuickGelu,
  kRelu,
  kReluSquared,
  kSigmoid,
  kTanh,
};

/// The dialect's spelling: "silu", "gelu", "gelu_tanh", ...
const char *activationKindName(ActivationKind kind);
/// Parses activationKindName() spellings; empty when unknown.
std::optional<ActivationKind> activationKindFromName(std::string_view name);

/// kind(x) for one f32 value.
float activate(ActivationKind kind, float x);

/// kind applied to every element of `x` (any rank), in x's dtype.
StatusOr<Tensor> activation(const Tensor &x, ActivationKind kind);

/// `x` is [tokens, 2 * I], gate columns first: result[t, j] =
/// kind(x[t, j]) * x[t, I + j], [tokens, I] in x's dtype.
StatusOr<Tensor> gatedAct(const Tensor &x, ActivationKind kind);

} // namespace accel::rt::cpu::transformer

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_ACTIVATION_H
