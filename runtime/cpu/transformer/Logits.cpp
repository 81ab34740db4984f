//===- Logits.cpp - the language-model head -------------------------------===//
#include "runtime/cpu/transformer/Logits.h"

#include "runtime/cpu/transformer/KernelSupport.h"
#include "runtime/cpu/transformer/Linear.h"

#include <cmath>
#include <cstring>

namespace accel::rt::cpu::transformer {

using namespace detail;

StatusOr<Tensor> logits(const Tensor &hidden, const Tensor &lmHead,
                        const LogitsOptions &o) {
  const char *op = "logits";
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "hidden", hidden));
  ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "hidden", hidden, 2));
  if (o.softcap < 0.0f)
    return opError(op, "softcap " + std::to_string(o.softcap) + " is negative");
  Tensor rows = hidden;
  if (o.queryStartLoc) {
    std::vector<int64_t> qsl;
    ACCEL_RT_ASSIGN_OR_RETURN(qsl, readIndices(op, "query_start_loc", *o.queryStartLoc));
    if (qsl.empty() || qsl.front() != 0 || qsl.back() != hidden.dim(0))
      return opError(op, "query_start_loc " + o.queryStartLoc->describe() +
                             " must run from 0 to the " + std::to_string(hidden.dim(0)) +
                             " tokens of hidden");
    const int64_t seqs = int64_t(qsl.size()) - 1, h = hidden.dim(1);
    ACCEL_RT_ASSIGN_OR_RETURN(rows, Tensor::allocate(hidden.dtype(), {seqs, h}));
    const size_t rowBytes = size_t(h) * dtypeSize(hidden.dtype());
    for (int64_t i = 0; i < seqs; ++i) {
      if (qsl[size_t(i + 1)] <= qsl[size_t(i)])
        return opError(op, "sequence " + std::to_string(i) +
                               " has no token to select (query_start_loc " +
                               std::to_string(qsl[size_t(i)]) + " .. " +
                               std::to_string(qsl[size_t(i + 1)]) + ")");
      std::memcpy(static_cast<char *>(rows.rawData()) + size_t(i) * rowBytes,
                  static_cast<const char *>(hidden.rawData()) +
                      size_t(qsl[size_t(i + 1)] - 1) * rowBytes,
                  rowBytes);
    }
  }
  Tensor y;
  ACCEL_RT_ASSIGN_OR_RETURN(y, linear(rows, lmHead, o.bias, DType::kF32));
  if (o.softcap > 0.0f) {
    float *v = y.data<float>();
    for (int64_t i = 0, n = y.numElements(); i < n; ++i)
      v[i] = o.softcap * std::tanh(v[i] / o.softcap);
  }
  if (!isActivationType(o.outType))
    return opError(op, std::string("result type ") + dtypeName(o.outType) +
                           " must be f32, f16 or bf16");
  return fromF32(op, std::move(y), o.outType);
}

} // namespace accel::rt::cpu::transformer
