//===- Residual.cpp - the residual add ------------------------------------===//
#include "runtime/cpu/transformer/Residual.h"

#include "runtime/cpu/transformer/KernelSupport.h"

namespace accel::rt::cpu::transformer {

using namespace detail;

StatusOr<Tensor> residualAdd(const Tensor &residual, const Tensor &branch) {
  const char *op = "residual_add";
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "residual", residual));
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "branch", branch));
  ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "residual", residual, 2));
  if (branch.shape() != residual.shape())
    return opError(op, "branch " + branch.describe() + " and residual " +
                           residual.describe() + " differ in shape");
  Tensor a, b, out;
  ACCEL_RT_ASSIGN_OR_RETURN(a, asF32(op, residual));
  ACCEL_RT_ASSIGN_OR_RETURN(b, asF32(op, branch));
  ACCEL_RT_ASSIGN_OR_RETURN(out, newF32(op, residual.shape()));
  const float *x = a.data<float>(), *y = b.data<float>();
  float *z = out.data<float>();
  for (int64_t i = 0, n = out.numElements(); i < n; ++i)
    z[i] = x[i] + y[i];
  return fromF32(op, std::move(out), residual.dtype());
}

} // namespace accel::rt::cpu::transformer
