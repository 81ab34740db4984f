//===- Norm.cpp - RMS and layer normalisation -----------------------------===//
#include "runtime/cpu/transformer/Norm.h"

#include "runtime/cpu/transformer/Residual.h"
#include "runtime/cpu/transformer/KernelSupport.h"
#include "runtime/cpu/transformer/Parallel.h"

#include <cmath>
#include <vector>

namespace accel::rt::cpu::transformer {

using namespace detail;

namespace {

/// Checks x (2-D or 3-D) and a 1-D parameter of x's last dimension.
Status checkNormArgs(const char *op, const Tensor &x, const Tensor &weight,
                     const Tensor *bias) {
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "x", x));
  if (x.rank() != 2 && x.rank() != 3)
    return opError(op, "x " + x.describe() +
                           " must be [tokens, hidden] or [tokens, heads, head_dim]");
  for (const Tensor *p : {&weight, bias}) {
    if (!p)
      continue;
    const char *what = p == &weight ? "weight" : "bias";
    ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, what, *p));
    if (p->rank() != 1 || p->dim(0) != x.dim(-1))
      return opError(op, std::string(what) + " " + p->describe() + " must be [" +
                             std::to_string(x.dim(-1)) + "], the last dimension of x " +
                             x.describe());
  }
  return Status::ok();
}

} // namespace

StatusOr<Tensor> rmsNorm(const Tensor &x, const Tensor &weight, float epsilon,
                         float weightOffset) {
  const char *op = "rms_norm";
  ACCEL_RT_RETURN_IF_ERROR(checkNormArgs(op, x, weight, nullptr));
  Tensor xf, wf, out;
  ACCEL_RT_ASSIGN_OR_RETURN(xf, asF32(op, x));
  ACCEL_RT_ASSIGN_OR_RETURN(wf, asF32(op, weight));
  ACCEL_RT_ASSIGN_OR_RETURN(out, newF32(op, x.shape()));
  const int64_t d = x.dim(-1), rows = d ? x.numElements() / d : 0;
  const float *xs = xf.data<float>(), *w = wf.data<float>();
  float *ys = out.data<float>();
  parallelFor(rows, 16, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const float *xr = xs + r * d;
      float *yr = ys + r * d;
      double ss = 0;
      for (int64_t i = 0; i < d; ++i)
        ss += double(xr[i]) * double(xr[i]);
      const float inv = float(1.0 / std::sqrt(ss / double(d) + double(epsilon)));
      for (int64_t i = 0; i < d; ++i)
        yr[i] = xr[i] * inv * (w[i] + weightOffset);
    }
  });
  return fromF32(op, std::move(out), x.dtype());
}

StatusOr<AddRmsNormResult> addRmsNorm(const Tensor &x, const Tensor &residual,
                                      const Tensor &weight, float epsilon,
                                      float weightOffset) {
  AddRmsNormResult r;
  ACCEL_RT_ASSIGN_OR_RETURN(r.sum, residualAdd(residual, x));
  ACCEL_RT_ASSIGN_OR_RETURN(r.normed, rmsNorm(r.sum, weight, epsilon, weightOffset));
  return r;
}

StatusOr<Tensor> layerNorm(const Tensor &x, const Tensor &weight,
                           const Tensor *bias, float epsilon) {
  const char *op = "layer_norm";
  ACCEL_RT_RETURN_IF_ERROR(checkNormArgs(op, x, weight, bias));
  Tensor xf, wf, bf, out;
  ACCEL_RT_ASSIGN_OR_RETURN(xf, asF32(op, x));
  ACCEL_RT_ASSIGN_OR_RETURN(wf, asF32(op, weight));
  if (bias) {
    ACCEL_RT_ASSIGN_OR_RETURN(bf, asF32(op, *bias));
  }
  ACCEL_RT_ASSIGN_OR_RETURN(out, newF32(op, x.shape()));
  const int64_t d = x.dim(-1), rows = d ? x.numElements() / d : 0;
  const float *xs = xf.data<float>(), *w = wf.data<float>();
  const float *bv = bias ? bf.data<float>() : nullptr;
  float *ys = out.data<float>();
  parallelFor(rows, 16, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const float *xr = xs + r * d;
      float *yr = ys + r * d;
      double sum = 0;
      for (int64_t i = 0; i < d; ++i)
        sum += xr[i];
      const double mean = sum / double(d);
      double var = 0;
      for (int64_t i = 0; i < d; ++i)
        var += (xr[i] - mean) * (xr[i] - mean);
      var /= double(d);
      const double inv = 1.0 / std::sqrt(var + double(epsilon));
      for (int64_t i = 0; i < d; ++i)
        yr[i] = float((xr[i] - mean) * inv) * w[i] + (bv ? bv[i] : 0.0f);
    }
  });
  return fromF32(op, std::move(out), x.dtype());
}

} // namespace accel::rt::cpu::transformer
