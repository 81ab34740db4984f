//===- GatedMlp.h - the gated feed-forward block ----------------*- C++ -*-===//
//
// transformer.gated_mlp on the CPU: down(kind(gate(x)) * up(x)).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_GATEDMLP_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_GATEDMLP_H

#include "runtime/cpu/transformer/Activation.h"

namespace accel::rt::cpu::transformer {

/// Either `gateUp` ([2 * I, hidden], gate rows first; Phi3's gate_up_proj)
/// or both `gate` and `up` ([I, hidden] each); `down` is [hidden, I].
struct GatedMlpWeights {
  const Tensor *gateUp = nullptr;
  const Tensor *gate = nullptr;
  const Tensor *up = nullptr;
  const Tensor *down = nullptr;
};

/// down(kind(x gate^T) * (x up^T)) for x [tokens, hidden]; the intermediate
/// stays f32, the result has x's dtype.
StatusOr<Tensor> gatedMlp(const Tensor &x, const GatedMlpWeights &weights,
                          ActivationKind kind);

} // namespace accel::rt::cpu::transformer

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_GATEDMLP_H
