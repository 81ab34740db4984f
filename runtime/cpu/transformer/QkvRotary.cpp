//===- QkvRotary.cpp - fused QKV split, head views and rotary -------------===//
#include "runtime/cpu/transformer/QkvRotary.h"

#include "runtime/cpu/transformer/KernelSupport.h"
#include "runtime/cpu/transformer/Split.h"

namespace accel::rt::cpu::transformer {

using namespace detail;

StatusOr<QkvRotaryResult> qkvRotary(const Tensor &qkv, const Tensor &positions,
                                    const QkvHeads &heads, const RotaryParams &params) {
  const char *op = "qkv_rotary";
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "qkv", qkv));
  ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "qkv", qkv, 2));
  if (heads.numHeads <= 0 || heads.numKvHeads <= 0 || heads.headDim <= 0)
    return opError(op, "num_heads " + std::to_string(heads.numHeads) + ", num_kv_heads " +
                           std::to_string(heads.numKvHeads) + " and head_dim " +
                           std::to_string(heads.headDim) + " must be positive");
  const int64_t qCols = heads.numHeads * heads.headDim;
  const int64_t kvCols = heads.numKvHeads * heads.headDim;
  if (qkv.dim(1) != qCols + 2 * kvCols)
    return opError(op, "qkv " + qkv.describe() + " must have (num_heads + 2 * num_kv_heads) * "
                       "head_dim = " + std::to_string(qCols + 2 * kvCols) + " columns");
  ACCEL_RT_ASSIGN_OR_RETURN(std::vector<Tensor> parts,
                            splitColumns(qkv, {qCols, kvCols, kvCols}));
  QkvRotaryResult r;
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor q, splitHeads(parts[0], heads.numHeads));
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor k, splitHeads(parts[1], heads.numKvHeads));
  ACCEL_RT_ASSIGN_OR_RETURN(r.v, splitHeads(parts[2], heads.numKvHeads));
  ACCEL_RT_ASSIGN_OR_RETURN(r.q, rotary(q, positions, params));
  ACCEL_RT_ASSIGN_OR_RETURN(r.k, rotary(k, positions, params));
  return r;
}

} // namespace accel::rt::cpu::transformer
