//===- Norm.cpp - LayerNormalization, RMSNormalization and ORT variants ---===//
//
// Statistics accumulate in double; the normalisation is applied in f32 (f64
// for f64 inputs) and stored back in the input's dtype.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/onnx/ElementwiseUtil.h"

#include <cmath>

namespace accel::rt::onnx {

namespace {

/// An [outer, n] view of X normalised over its trailing n elements, with
/// scale and bias broadcast to [n] in the compute type.
struct NormPlan {
  int64_t axis = 0, outer = 1, n = 1;
  Tensor x, scale, bias; // widened; scale/bias expanded to [n]
  bool hasBias = false;
};

/// Expands `p` (broadcastable to x.shape[axis:]) to [n] in `ct`.
StatusOr<Tensor> expandParam(const KernelContext &ctx, const Tensor &p, const Tensor &x,
                             int64_t axis, DType ct, const char *what) {
  Shape tail(x.shape().begin() + axis, x.shape().end());
  bool ok = p.rank() <= int64_t(tail.size());
  for (int64_t i = 0; ok && i < p.rank(); ++i) {
    const int64_t d = p.dim(i), t = tail[size_t(int64_t(tail.size()) - p.rank() + i)];
    ok = d == t || d == 1;
  }
  if (!ok)
    return ctx.error(std::string(what) + " " + p.describe() +
                     " does not broadcast to the normalised shape " + shapeToString(tail));
  Tensor w, out;
  ACCEL_RT_ASSIGN_OR_RETURN(w, convertTo(p, ct));
  ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::allocate(ct, tail));
  broadcastCopy(w.rawData(), w.shape(), out.rawData(), tail, dtypeSize(ct));
  return out;
}

StatusOr<NormPlan> planNorm(const KernelContext &ctx, const Tensor &x, int64_t axisAttr,
                            const Tensor *scale, const Tensor *bias) {
  NormPlan p;
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, x, kAllowFloat));
  if (x.rank() == 0)
    return ctx.error("input must have rank >= 1");
  ACCEL_RT_ASSIGN_OR_RETURN(p.axis, normalizeAxis(ctx, axisAttr, x.rank()));
  for (int64_t i = 0; i < x.rank(); ++i)
    (i < p.axis ? p.outer : p.n) *= x.dim(i);
  ACCEL_RT_ASSIGN_OR_RETURN(p.x, widen(x));
  const DType ct = p.x.dtype();
  if (scale) {
    ACCEL_RT_ASSIGN_OR_RETURN(p.scale, expandParam(ctx, *scale, x, p.axis, ct, "scale"));
  }
  if (bias) {
    ACCEL_RT_ASSIGN_OR_RETURN(p.bias, expandParam(ctx, *bias, x, p.axis, ct, "bias"));
    p.hasBias = true;
  }
  return p;
}

/// Normalises each row; writes mean / inverse std dev per row when asked.
template <typename T>
void normRows(const NormPlan &p, bool rms, double eps, const T *x, T *y, T *mean,
              T *invStd) {
  const T *g = p.scale.defined() ? p.scale.data<T>() : nullptr;
  const T *b = p.hasBias ? p.bias.data<T>() : nullptr;
  for (int64_t o = 0; o < p.outer; ++o) {
    const T *row = x + o * p.n;
    T *out = y + o * p.n;
    double mu = 0;
    if (!rms) {
      for (int64_t i = 0; i < p.n; ++i)
        mu += double(row[i]);
      mu /= double(p.n);
    }
    double var = 0;
    for (int64_t i = 0; i < p.n; ++i) {
      const double d = double(row[i]) - mu;
      var += d * d;
    }
    var /= double(p.n);
    const T inv = T(1.0 / std::sqrt(var + eps));
    const T m = T(mu);
    for (int64_t i = 0; i < p.n; ++i) {
      T v = (row[i] - m) * inv;
      if (g)
        v *= g[i];
      if (b)
        v += b[i];
      out[i] = v;
    }
    if (mean)
      mean[o] = m;
    if (invStd)
      invStd[o] = inv;
  }
}

/// Runs the normalisation and fills outputs: Y at 0, mean at `meanOut`,
/// inverse std dev at `invOut` (-1: none), in the stats dtype `st`.
Status runNorm(KernelContext &ctx, const NormPlan &p, const Tensor &x, bool rms, double eps,
               int meanOut, int invOut) {
  const DType ct = p.x.dtype();
  Shape statShape = x.shape();
  for (int64_t i = p.axis; i < x.rank(); ++i)
    statShape[size_t(i)] = 1;
  Tensor y, mean, inv;
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(ct, x.shape()));
  const bool wantMean = meanOut >= 0 && ctx.wants(size_t(meanOut));
  const bool wantInv = invOut >= 0 && ctx.wants(size_t(invOut));
  if (wantMean) {
    ACCEL_RT_ASSIGN_OR_RETURN(mean, Tensor::allocate(ct, statShape));
  }
  if (wantInv) {
    ACCEL_RT_ASSIGN_OR_RETURN(inv, Tensor::allocate(ct, statShape));
  }
  dispatchAllowed<kAllowFloat>(ct, [&](auto tag) {
    using T = typename decltype(tag)::type;
    normRows<T>(p, rms, eps, p.x.data<T>(), y.data<T>(),
                wantMean ? mean.data<T>() : nullptr, wantInv ? inv.data<T>() : nullptr);
  });
  ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], convertTo(y, x.dtype()));
  if (wantMean)
    ctx.outputs[size_t(meanOut)] = std::move(mean);
  if (wantInv)
    ctx.outputs[size_t(invOut)] = std::move(inv);
  return Status::ok();
}

Status checkStash(KernelContext &ctx) {
  const int64_t stash = ctx.attrInt("stash_type", 1);
  if (stash != 1 && stash != 11)
    return ctx.unsupported("stash_type " + std::to_string(stash) +
                           " (only 1, float, and 11, double)");
  return Status::ok();
}

Status kLayerNorm(KernelContext &ctx) {
  ACCEL_RT_RETURN_IF_ERROR(checkStash(ctx));
  const Tensor &x = *ctx.in(0);
  NormPlan p;
  ACCEL_RT_ASSIGN_OR_RETURN(p, planNorm(ctx, x, ctx.attrInt("axis", -1), ctx.in(1), ctx.in(2)));
  return runNorm(ctx, p, x, false, ctx.attrFloat("epsilon", 1e-5f), 1, 2);
}

/// RMSNormalization (opset 23) and ORT's SimplifiedLayerNormalization
/// (domain "", outputs Y and inv_std_var).
template <bool Simplified> Status kRmsNorm(KernelContext &ctx) {
  ACCEL_RT_RETURN_IF_ERROR(checkStash(ctx));
  const Tensor &x = *ctx.in(0);
  NormPlan p;
  ACCEL_RT_ASSIGN_OR_RETURN(p, planNorm(ctx, x, ctx.attrInt("axis", -1), ctx.in(1), nullptr));
  return runNorm(ctx, p, x, true, ctx.attrFloat("epsilon", 1e-5f), -1, Simplified ? 1 : -1);
}

/// com.microsoft SkipLayerNormalization(input, skip, gamma, beta?, bias?) and
/// SkipSimplifiedLayerNormalization(input, skip, gamma, bias?): normalise
/// input + skip (+ bias) over the last dim. Outputs: Y, mean, inv_std_var,
/// input_skip_bias_sum (the RMS form's mean output is zeros).
template <bool Simplified> Status kSkipNorm(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0), &skip = *ctx.in(1), &gamma = *ctx.in(2);
  const Tensor *beta = Simplified ? nullptr : ctx.in(3);
  const Tensor *bias = ctx.in(Simplified ? 3 : 4);
  Tensor sum;
  ACCEL_RT_ASSIGN_OR_RETURN(sum, binaryTensor<kAllowFloat, false>(
                                     ctx, x, skip, [](auto a, auto b) { return a + b; }));
  if (sum.shape() != x.shape())
    return ctx.error("skip " + skip.describe() + " does not broadcast to input " +
                     x.describe());
  if (bias) {
    ACCEL_RT_ASSIGN_OR_RETURN(sum, binaryTensor<kAllowFloat, false>(
                                       ctx, sum, *bias, [](auto a, auto b) { return a + b; }));
  }
  NormPlan p;
  ACCEL_RT_ASSIGN_OR_RETURN(p, planNorm(ctx, sum, -1, &gamma, beta));
  ACCEL_RT_RETURN_IF_ERROR(
      runNorm(ctx, p, sum, Simplified, ctx.attrFloat("epsilon", 1e-12f), 1, 2));
  if (ctx.wants(3))
    ctx.outputs[3] = sum;
  return Status::ok();
}

} // namespace

void addNormKernels(KernelTable &t, KernelTable &ms) {
  t["LayerNormalization"] = {kLayerNorm, 2, 3, 3};
  t["RMSNormalization"] = {kRmsNorm<false>, 2, 2, 1};
  t["SimplifiedLayerNormalization"] = {kRmsNorm<true>, 2, 2, 2};
  // The importer names it onnx.ms_SimplifiedLayerNormalization in either domain.
  ms["SimplifiedLayerNormalization"] = {kRmsNorm<true>, 2, 2, 2};
  ms["SkipLayerNormalization"] = {kSkipNorm<false>, 3, 5, 4};
  ms["SkipSimplifiedLayerNormalization"] = {kSkipNorm<true>, 3, 4, 4};
}

} // namespace accel::rt::onnx
