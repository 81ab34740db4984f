//===- GatedMlp.cpp - the gated feed-forward block ------------------------===//
#include "runtime/cpu/transformer/GatedMlp.h"

#include "runtime/cpu/transformer/KernelSupport.h"
#include "runtime/cpu/transformer/Linear.h"

namespace accel::rt::cpu::transformer {

using namespace detail;

StatusOr<Tensor> gatedMlp(const Tensor &x, const GatedMlpWeights &w,
                          ActivationKind kind) {
  const char *op = "gated_mlp";
  const bool fused = w.gateUp != nullptr;
  if (fused == (w.gate != nullptr || w.up != nullptr) ||
      (!fused && (!w.gate || !w.up)))
    return opError(op, "needs either gate_up, or both gate and up");
  if (!w.down)
    return opError(op, "needs a down projection");
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "x", x));
  ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "x", x, 2));
  Tensor gu;
  if (fused) {
    ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "gate_up", *w.gateUp, 2));
    if (w.gateUp->dim(0) % 2 != 0)
      return opError(op, "gate_up " + w.gateUp->describe() +
                             " must have an even number of rows (gate, then up)");
    ACCEL_RT_ASSIGN_OR_RETURN(gu, linear(x, *w.gateUp, nullptr, DType::kF32));
  } else {
    ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "gate", *w.gate, 2));
    if (w.up->shape() != w.gate->shape())
      return opError(op, "up " + w.up->describe() + " and gate " +
                             w.gate->describe() + " differ in shape");
    Tensor g, u;
    ACCEL_RT_ASSIGN_OR_RETURN(g, linear(x, *w.gate, nullptr, DType::kF32));
    ACCEL_RT_ASSIGN_OR_RETURN(u, linear(x, *w.up, nullptr, DType::kF32));
    // Side by side, so gatedAct sees [gate | up].
    const int64_t t = x.dim(0), inter = w.gate->dim(0);
    ACCEL_RT_ASSIGN_OR_RETURN(gu, newF32(op, {t, 2 * inter}));
    float *d = gu.data<float>();
    for (int64_t r = 0; r < t; ++r)
      for (int64_t j = 0; j < inter; ++j) {
        d[r * 2 * inter + j] = g.data<float>()[r * inter + j];
        d[r * 2 * inter + inter + j] = u.data<float>()[r * inter + j];
      }
  }
  Tensor act;
  ACCEL_RT_ASSIGN_OR_RETURN(act, gatedAct(gu, kind));
  if (w.down->rank() != 2 || w.down->dim(1) != act.dim(1) ||
      w.down->dim(0) != x.dim(1))
    return opError(op, "down " + w.down->describe() + " must be [" +
                           std::to_string(x.dim(1)) + ", " +
                           std::to_string(act.dim(1)) + "]");
  return linear(act, *w.down, nullptr, x.dtype());
}

} // namespace accel::rt::cpu::transformer
