//===- Moe.h - the sparse mixture of experts ---------------------*- C++ -*-===//
//-*-===//
//
// transformer.moe on the CPU (the math: its description in
// dialects/Transformer/TransformerOps.td): router logits, top-k of their
// softmax (ties to the lower expert), routing weights, each expert's gated
// MLP over the tokens routed to it (gathered into one GEMM per expert),
// the weighted sum, and an optional shared expert.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_MOE_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_MOE_H

#include "runtime/cpu/transformer/Activation.h"

#include <optional>
#include <string>
#include <vector>

namespace accel::rt::cpu::transformer {

/// How the k selected softmax probabilities become routing weights.
enum class MoeRouting {
  kRenormalize, ///< divided by their sum (Mixtral; norm_topk_prob = true)
  kSoftmax,     ///< as they are (Qwen2-MoE norm_topk_prob = false)
};

/// "renormalize" / "softmax" (the dialect's and the plan's spelling).
std::optional<MoeRouting> moeRoutingFromName(const std::string &name);

/// The router [E, H] (bias [E] or null); the experts' `gateUp` [E, 2I, H]
/// (each expert's gate rows first) or `gate` and `up` [E, I, H], and `down`
/// [E, H, I]; a shared expert `sharedGateUp` [2S, H] and `sharedDown`
/// [H, S] (both or neither), scaled by sigmoid(x · sharedExpertGate[0])
/// when `sharedExpertGate` [1, H] is given. Quantised experts (i8 or
/// f8E4M3FN) come with f32 scales per expert and row: `gateUpScale` [E, 2I],
/// `gateScale` / `upScale` [E, I], `downScale` [E, H].
struct MoeWeights {
  const Tensor *router = nullptr;
  const Tensor *routerBias = nullptr;
  const Tensor *gateUp = nullptr;
  const Tensor *gate = nullptr;
  const Tensor *up = nullptr;
  const Tensor *down = nullptr;
  const Tensor *sharedGateUp = nullptr;
  const Tensor *sharedDown = nullptr;
  const Tensor *sharedExpertGate = nullptr;
  const Tensor *gateUpScale = nullptr;
  const Tensor *gateScale = nullptr;
  const Tensor *upScale = nullptr;
  const Tensor *downScale = nullptr;
};

struct MoeParams {
  int64_t numExperts = 0;
  int64_t topK = 0;
  ActivationKind kind = ActivationKind::kSilu;
  MoeRouting routing = MoeRouting::kRenormalize;
};

/// Every token's selected experts and routing weights, k per token in
/// descending probability (ties: the lower expert first).
struct MoeRoute {
  int64_t topK = 0;
  std::vector<int64_t> experts; ///< [tokens * k]
  std::vector<float> weights;   ///< [tokens * k]
};

/// The routing of x [tokens, H] (computed in f32).
StatusOr<MoeRoute> moeRoute(const Tensor &x, const Tensor &router, const Tensor *routerBias,
                            const MoeParams &params);

/// transformer.moe for x [tokens, H]: the sum is accumulated in f32 and the
/// result has x's dtype. Weights are f32, or f16/bf16 (any mix); quantised
/// experts are decoded a row block at a time (QuantLinear.h).
StatusOr<Tensor> moe(const Tensor &x, const MoeWeights &weights, const MoeParams &params);

} // namespace accel::rt::cpu::transformer

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_MOE_H
