//===- MatMul.cpp - MatMul (numpy matmul semantics) and Gemm --------------===//
#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/onnx/ElementwiseUtil.h"

namespace accel::rt::onnx {

namespace {

template <typename T>
void gemmT(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha,
           const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,
           int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    cpu::gemmF32(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if constexpr (std::is_same_v<T, double>) {
    cpu::gemmF64(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    // Integers: exact, wrapping, in the operands' own type.
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T acc = T(0);
        for (int64_t p = 0; p < k; ++p)
          acc = wrapAdd(acc, wrapMul(ta ? a[p * lda + i] : a[i * lda + p],
                                     tb ? b[j * ldb + p] : b[p * ldb + j]));
        T &out = c[i * ldc + j];
        out = wrapAdd(wrapMul(alpha, acc), beta == T(0) ? T(0) : wrapMul(beta, out));
      }
  }
}

Status kMatMul(KernelContext &ctx) {
  const Tensor &a0 = *ctx.in(0), &b0 = *ctx.in(1);
  if (a0.dtype() != b0.dtype())
    return ctx.error("A and B must have the same type, got " + a0.describe() +
                     " and " + b0.describe());
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, a0, kAllowNumeric));
  if (a0.rank() == 0 || b0.rank() == 0)
    return ctx.error("operands must have rank >= 1, got " + a0.describe() +
                     " and " + b0.describe());
  // 1-D operands: A [K] -> [1, K], B [K] -> [K, 1]; the dims go away after.
  Shape as = a0.shape(), bs = b0.shape();
  const bool aVec = as.size() == 1, bVec = bs.size() == 1;
  if (aVec)
    as.insert(as.begin(), 1);
  if (bVec)
    bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back();
  const int64_t n = bs.back();
  if (bs[bs.size() - 2] != k)
    return ctx.error("inner dimensions differ: " + a0.describe() + " times " +
                     b0.describe());
  Shape aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
  Shape batch;
  ACCEL_RT_ASSIGN_OR_RETURN(batch, broadcastShapes(ctx, {&aBatch, &bBatch}));
  Shape outShape = batch;
  if (!aVec)
    outShape.push_back(m);
  if (!bVec)
    outShape.push_back(n);

  Tensor a, b, out;
  ACCEL_RT_ASSIGN_OR_RETURN(a, widen(a0));
  ACCEL_RT_ASSIGN_OR_RETURN(b, widen(b0));
  ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::allocate(a.dtype(), outShape));
  int64_t bBatchCount = 1, aBatchCount = 1;
  for (int64_t d : bBatch)
    bBatchCount *= d;
  for (int64_t d : aBatch)
    aBatchCount *= d;
  dispatchAllowed<kAllowNumeric>(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *pa = a.data<T>(), *pb = b.data<T>();
    T *pc = out.data<T>();
    if (bBatchCount == 1 && aBatch.size() >= bBatch.size()) {
      // Activations times weights: the batch folds into the rows.
      gemmT<T>(false, false, aBatchCount * m, n, k, T(1), pa, k, pb, n, T(0), pc, n);
      return;
    }
    forEachBroadcastRun<2>(batch, {&aBatch, &bBatch},
                           [&](int64_t o, const int64_t *off, int64_t cnt,
                               const int64_t *st) {
                             for (int64_t i = 0; i < cnt; ++i)
                               gemmT<T>(false, false, m, n, k, T(1),
                                        pa + (off[0] + i * st[0]) * m * k, k,
                                        pb + (off[1] + i * st[1]) * k * n, n, T(0),
                                        pc + (o + i) * m * n, n);
                           });
  });
  StatusOr<Tensor> r = convertTo(out, a0.dtype());
  if (!r)
    return r.status();
  ctx.outputs[0] = std::move(r).value();
  return Status::ok();
}

Status kGemm(KernelContext &ctx) {
  const Tensor &a0 = *ctx.in(0), &b0 = *ctx.in(1);
  const bool ta = ctx.attrInt("transA", 0) != 0, tb = ctx.attrInt("transB", 0) != 0;
  const double alpha = ctx.attrFloat("alpha", 1.0f), beta = ctx.attrFloat("beta", 1.0f);
  if (a0.dtype() != b0.dtype())
    return ctx.error("A and B must have the same type, got " + a0.describe() +
                     " and " + b0.describe());
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, a0, kAllowNumeric));
  if (a0.rank() != 2 || b0.rank() != 2)
    return ctx.error("A and B must be 2-D, got " + a0.describe() + " and " +
                     b0.describe());
  const int64_t m = ta ? a0.dim(1) : a0.dim(0), k = ta ? a0.dim(0) : a0.dim(1);
  const int64_t kb = tb ? b0.dim(1) : b0.dim(0), n = tb ? b0.dim(0) : b0.dim(1);
  if (k != kb)
    return ctx.error("inner dimensions differ: " + a0.describe() +
                     (ta ? " (transposed)" : "") + " times " + b0.describe() +
                     (tb ? " (transposed)" : ""));
  Tensor a, b, out;
  ACCEL_RT_ASSIGN_OR_RETURN(a, widen(a0));
  ACCEL_RT_ASSIGN_OR_RETURN(b, widen(b0));
  ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::allocate(a.dtype(), {m, n}));
  const Tensor *c0 = ctx.in(2);
  Tensor c;
  if (c0) {
    if (c0->dtype() != a0.dtype())
      return ctx.error("C must have A's type, got " + c0->describe());
    Shape cs = c0->shape();
    Shape target{m, n};
    bool ok = cs.size() <= 2;
    for (size_t i = 0; ok && i < cs.size(); ++i)
      ok = cs[i] == 1 || cs[i] == target[2 - cs.size() + i];
    if (!ok)
      return ctx.error("C of shape " + shapeToString(cs) +
                       " does not broadcast to [" + std::to_string(m) + ", " +
                       std::to_string(n) + "]");
    ACCEL_RT_ASSIGN_OR_RETURN(c, widen(*c0));
    broadcastCopy(c.rawData(), cs, out.rawData(), target, dtypeSize(out.dtype()));
  }
  const bool useC = c0 && beta != 0.0;
  dispatchAllowed<kAllowNumeric>(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    gemmT<T>(ta, tb, m, n, k, T(alpha), a.data<T>(), a.dim(1), b.data<T>(),
             b.dim(1), useC ? T(beta) : T(0), out.data<T>(), n);
  });
  StatusOr<Tensor> r = convertTo(out, a0.dtype());
  if (!r)
    return r.status();
  ctx.outputs[0] = std::move(r).value();
  return Status::ok();
}

} // namespace

void addMatMulKernels(KernelTable &t) {
  t["MatMul"] = {kMatMul, 2, 2, 1};
  t["Gemm"] = {kGemm, 2, 3, 1};
}

} // namespace accel::rt::onnx
