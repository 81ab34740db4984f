//===- Generate.cpp - Constant, EyeLike, OneHot, NonZero, TopK ------------===//
#include "runtime/cpu/onnx/ElementwiseUtil.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace accel::rt::onnx {

namespace {

Status kConstant(KernelContext &ctx) {
  if (const Tensor *v = ctx.attrTensor("value")) {
    ctx.outputs[0] = *v;
    return Status::ok();
  }
  StatusOr<Tensor> t = ctx.error("one of value, value_float(s), value_int(s) is required");
  if (ctx.hasAttr("value_float"))
    t = Tensor::scalar<float>(ctx.attrFloat("value_float", 0));
  else if (ctx.hasAttr("value_int"))
    t = Tensor::scalar<int64_t>(ctx.attrInt("value_int", 0));
  else if (auto f = ctx.attrFloats("value_floats"))
    t = Tensor::fromVector<float>({int64_t(f->size())}, *f);
  else if (auto i = ctx.attrInts("value_ints"))
    t = Tensor::fromVector<int64_t>({int64_t(i->size())}, *i);
  else if (ctx.hasAttr("sparse_value") || ctx.hasAttr("value_string") ||
           ctx.hasAttr("value_strings"))
    return ctx.unsupported("sparse and string constants are not supported");
  if (!t)
    return t.status();
  ctx.outputs[0] = std::move(t).value();
  return Status::ok();
}

Status kEyeLike(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0);
  if (x.rank() != 2)
    return ctx.error("input must be 2-D, got " + x.describe());
  DType dt = x.dtype();
  if (ctx.hasAttr("dtype")) {
    StatusOr<DType> t = dtypeFromOnnx(ctx.attrInt("dtype", 1));
    if (!t)
      return ctx.unsupported(t.status().message());
    dt = *t;
  }
  const int64_t k = ctx.attrInt("k", 0);
  Tensor one, y;
  ACCEL_RT_ASSIGN_OR_RETURN(one, Tensor::fromDoubles(dt, {}, {1.0}));
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(dt, x.shape()));
  std::memset(y.rawData(), 0, y.byteSize());
  const size_t es = dtypeSize(dt);
  for (int64_t i = 0; i < x.dim(0); ++i) {
    const int64_t j = i + k;
    if (j >= 0 && j < x.dim(1))
      std::memcpy(static_cast<char *>(y.rawData()) + size_t(i * x.dim(1) + j) * es,
                  one.rawData(), es);
  }
  ctx.outputs[0] = std::move(y);
  return Status::ok();
}

Status kOneHot(KernelContext &ctx) {
  const Tensor &idx = *ctx.in(0), &depthT = *ctx.in(1), &values = *ctx.in(2);
  if (depthT.numElements() != 1)
    return ctx.error("depth must be a scalar, got " + depthT.describe());
  if (values.numElements() != 2)
    return ctx.error("values must hold [off, on], got " + values.describe());
  const int64_t depth = int64_t(depthT.toDoubles()[0]);
  if (depth < 1)
    return ctx.error("depth must be positive, got " + std::to_string(depth));
  int64_t axis = ctx.attrInt("axis", -1);
  const int64_t r = idx.rank() + 1;
  ACCEL_RT_ASSIGN_OR_RETURN(axis, normalizeAxis(ctx, axis, r));
  Shape out = idx.shape();
  out.insert(out.begin() + axis, depth);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < idx.rank(); ++i)
    (i < axis ? outer : inner) *= idx.dim(i);
  Tensor y;
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(values.dtype(), out));
  broadcastCopy(values.rawData(), {}, y.rawData(), out, dtypeSize(values.dtype()));
  const std::vector<double> iv = idx.toDoubles();
  const size_t es = dtypeSize(values.dtype());
  const char *on = static_cast<const char *>(values.rawData()) + es;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t v = int64_t(iv[size_t(o * inner + i)]);
      if (v < 0)
        v += depth;
      if (v < 0 || v >= depth)
        continue; // out of range: all off
      std::memcpy(static_cast<char *>(y.rawData()) + size_t((o * depth + v) * inner + i) * es,
                  on, es);
    }
  ctx.outputs[0] = std::move(y);
  return Status::ok();
}

Status kNonZero(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0);
  const std::vector<double> v = x.toDoubles();
  std::vector<int64_t> hits;
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != 0)
      hits.push_back(int64_t(i));
  const int64_t r = x.rank(), n = int64_t(hits.size());
  Tensor y;
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(DType::kI64, {r, n}));
  int64_t *out = y.data<int64_t>();
  for (int64_t k = 0; k < n; ++k) {
    int64_t rem = hits[size_t(k)];
    for (int64_t d = r - 1; d >= 0; --d) {
      out[d * n + k] = rem % x.dim(d);
      rem /= x.dim(d);
    }
  }
  ctx.outputs[0] = std::move(y);
  return Status::ok();
}

Status kTopK(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0), &kT = *ctx.in(1);
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, x, kAllowNumeric));
  std::vector<int64_t> kv;
  ACCEL_RT_ASSIGN_OR_RETURN(kv, readIndexTensor(ctx, kT, "K"));
  if (x.rank() == 0 || kv.size() != 1)
    return ctx.error("needs an input of rank >= 1 and a single K");
  int64_t axis;
  ACCEL_RT_ASSIGN_OR_RETURN(axis, normalizeAxis(ctx, ctx.attrInt("axis", -1), x.rank()));
  const int64_t k = kv[0], n = x.dim(axis);
  if (k < 0 || k > n)
    return ctx.error("K = " + std::to_string(k) + " is outside [0, " + std::to_string(n) + "]");
  const bool largest = ctx.attrInt("largest", 1) != 0;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < x.rank(); ++i)
    if (i != axis)
      (i < axis ? outer : inner) *= x.dim(i);
  Shape outShape = x.shape();
  outShape[size_t(axis)] = k;
  Tensor w, vals, idx;
  ACCEL_RT_ASSIGN_OR_RETURN(w, widen(x));
  ACCEL_RT_ASSIGN_OR_RETURN(vals, Tensor::allocate(w.dtype(), outShape));
  ACCEL_RT_ASSIGN_OR_RETURN(idx, Tensor::allocate(DType::kI64, outShape));
  dispatchAllowed<kAllowNumeric>(w.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *src = w.data<T>();
    T *dv = vals.data<T>();
    int64_t *di = idx.data<int64_t>();
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const T *p = src + o * n * inner + i;
        std::iota(order.begin(), order.end(), 0);
        // Ties keep the lower index first; NaN sorts as the largest value.
        auto before = [&](int64_t a, int64_t b) {
          const T va = p[a * inner], vb = p[b * inner];
          bool na = false, nb = false;
          if constexpr (std::is_floating_point_v<T>)
            na = std::isnan(va), nb = std::isnan(vb);
          if (na || nb) {
            if (na && nb)
              return a < b;
            return largest ? na : nb;
          }
          if (va != vb)
            return largest ? va > vb : va < vb;
          return a < b;
        };
        std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
        for (int64_t j = 0; j < k; ++j) {
          dv[(o * k + j) * inner + i] = p[order[size_t(j)] * inner];
          di[(o * k + j) * inner + i] = order[size_t(j)];
        }
      }
  });
  ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], convertTo(vals, x.dtype()));
  if (ctx.wants(1))
    ctx.outputs[1] = std::move(idx);
  return Status::ok();
}

} // namespace

void addGenerateKernels(KernelTable &t) {
  t["Constant"] = {kConstant, 0, 0, 1};
  t["EyeLike"] = {kEyeLike, 1, 1, 1};
  t["OneHot"] = {kOneHot, 3, 3, 1};
  t["NonZero"] = {kNonZero, 1, 1, 1};
  t["TopK"] = {kTopK, 2, 2, 2};
}

} // namespace accel::rt::onnx
