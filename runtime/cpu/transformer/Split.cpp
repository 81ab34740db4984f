//===- Split.cpp - column splits and head views ---------------------------===//
#include "runtime/cpu/transformer/Split.h"

#include "runtime/cpu/transformer/KernelSupport.h"

#include <cstring>

namespace accel::rt::cpu::transformer {

using namespace detail;

StatusOr<std::vector<Tensor>> splitColumns(const Tensor &x,
                                           const std::vector<int64_t> &sizes) {
  const char *op = "split";
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "input", x));
  ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "input", x, 2));
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return opError(op, "a column block of size " + std::to_string(s));
    total += s;
  }
  if (total != x.dim(1))
    return opError(op, "column blocks add up to " + std::to_string(total) +
                           ", not the " + std::to_string(x.dim(1)) +
                           " columns of " + x.describe());
  const size_t elem = dtypeSize(x.dtype());
  const char *src = static_cast<const char *>(x.rawData());
  std::vector<Tensor> out;
  int64_t col = 0;
  for (int64_t s : sizes) {
    Tensor t;
    ACCEL_RT_ASSIGN_OR_RETURN(t, Tensor::allocate(x.dtype(), {x.dim(0), s}));
    char *dst = static_cast<char *>(t.rawData());
    for (int64_t r = 0; r < x.dim(0); ++r)
      std::memcpy(dst + size_t(r * s) * elem, src + size_t(r * x.dim(1) + col) * elem,
                  size_t(s) * elem);
    col += s;
    out.push_back(std::move(t));
  }
  return out;
}

StatusOr<Tensor> splitHeads(const Tensor &x, int64_t heads) {
  const char *op = "split_heads";
  ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "input", x, 2));
  if (heads <= 0 || x.dim(1) % heads != 0)
    return opError(op, "cannot split the " + std::to_string(x.dim(1)) +
                           " columns of " + x.describe() + " into " +
                           std::to_string(heads) + " heads");
  return x.reshaped({x.dim(0), heads, x.dim(1) / heads});
}

StatusOr<Tensor> mergeHeads(const Tensor &x) {
  const char *op = "merge_heads";
  ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "input", x, 3));
  return x.reshaped({x.dim(0), x.dim(1) * x.dim(2)});
}

} // namespace accel::rt::cpu::transformer
