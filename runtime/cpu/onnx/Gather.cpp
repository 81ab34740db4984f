//===- Gather.cpp - Gather, GatherElements, GatherND, ScatterND, ... ------===//
#include "runtime/cpu/onnx/ElementwiseUtil.h"

namespace accel::rt::onnx {

namespace {

/// Reads an index tensor and maps negative indices by `dim`; fails on an
/// index outside [-dim, dim).
StatusOr<std::vector<int64_t>> readIndices(const KernelContext &ctx, const Tensor &t,
                                           int64_t dim, const char *what) {
  std::vector<int64_t> v;
  ACCEL_RT_ASSIGN_OR_RETURN(v, readIndexTensor(ctx, t, what));
  for (int64_t &i : v) {
    if (i < -dim || i >= dim)
      return ctx.error(std::string(what) + " value " + std::to_string(i) +
                       " is out of range for a dimension of size " + std::to_string(dim));
    if (i < 0)
      i += dim;
  }
  return v;
}

Status kGather(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0), &it = *ctx.in(1);
  if (x.rank() == 0)
    return ctx.error("data must have rank >= 1");
  int64_t axis;
  ACCEL_RT_ASSIGN_OR_RETURN(axis, normalizeAxis(ctx, ctx.attrInt("axis", 0), x.rank()));
  const int64_t dim = x.dim(axis);
  std::vector<int64_t> idx;
  ACCEL_RT_ASSIGN_OR_RETURN(idx, readIndices(ctx, it, dim, "indices"));
  Shape out(x.shape().begin(), x.shape().begin() + axis);
  out.insert(out.end(), it.shape().begin(), it.shape().end());
  out.insert(out.end(), x.shape().begin() + axis + 1, x.shape().end());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= x.dim(i);
  for (int64_t i = axis + 1; i < x.rank(); ++i)
    inner *= x.dim(i);
  Tensor y;
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(x.dtype(), out));
  const size_t block = size_t(inner) * dtypeSize(x.dtype());
  const char *src = static_cast<const char *>(x.rawData());
  char *dst = static_cast<char *>(y.rawData());
  if (block)
    for (int64_t o = 0; o < outer; ++o)
      for (size_t j = 0; j < idx.size(); ++j)
        std::memcpy(dst + (size_t(o) * idx.size() + j) * block,
                    src + (size_t(o * dim + idx[j])) * block, block);
  ctx.outputs[0] = std::move(y);
  return Status::ok();
}

Status kGatherElements(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0), &it = *ctx.in(1);
  const int64_t r = x.rank();
  if (r == 0 || it.rank() != r)
    return ctx.error("data and indices must have the same rank >= 1, got " +
                     x.describe() + " and " + it.describe());
  int64_t axis;
  ACCEL_RT_ASSIGN_OR_RETURN(axis, normalizeAxis(ctx, ctx.attrInt("axis", 0), r));
  for (int64_t i = 0; i < r; ++i)
    if (i != axis && it.dim(i) > x.dim(i))
      return ctx.error("indices " + it.describe() + " exceed data " + x.describe() +
                       " outside the axis");
  std::vector<int64_t> idx;
  ACCEL_RT_ASSIGN_OR_RETURN(idx, readIndices(ctx, it, x.dim(axis), "indices"));
  Tensor y;
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(x.dtype(), it.shape()));
  std::vector<int64_t> stride(size_t(r), 1);
  for (int64_t i = r - 1; i > 0; --i)
    stride[size_t(i - 1)] = stride[size_t(i)] * x.dim(i);
  const size_t es = dtypeSize(x.dtype());
  const char *src = static_cast<const char *>(x.rawData());
  char *dst = static_cast<char *>(y.rawData());
  std::vector<int64_t> pos(size_t(r), 0);
  for (size_t o = 0; o < idx.size(); ++o) {
    int64_t off = 0;
    for (int64_t i = 0; i < r; ++i)
      off += (i == axis ? idx[o] : pos[size_t(i)]) * stride[size_t(i)];
    std::memcpy(dst + o * es, src + size_t(off) * es, es);
    for (int64_t k = r - 1; k >= 0; --k) {
      if (++pos[size_t(k)] < it.dim(k))
        break;
      pos[size_t(k)] = 0;
    }
  }
  ctx.outputs[0] = std::move(y);
  return Status::ok();
}

/// What GatherND and ScatterND share: data [B..., D...], indices
/// [B..., N..., k]; each index tuple picks a slice of `sliceSize` elements.
struct NdPlan {
  int64_t batches = 1, tuplesPerBatch = 1, k = 0, sliceSize = 1, batchStride = 1;
  std::vector<int64_t> offsets; // per tuple, element offset within its batch
};

StatusOr<NdPlan> planNd(const KernelContext &ctx, const Tensor &x, const Tensor &it,
                        int64_t b) {
  NdPlan p;
  const int64_t r = x.rank(), q = it.rank();
  if (r < 1 || q < 1)
    return ctx.error("data and indices must have rank >= 1, got " + x.describe() +
                     " and " + it.describe());
  if (b < 0 || b >= std::min(r, q))
    return ctx.error("batch_dims " + std::to_string(b) + " must be below the ranks of " +
                     x.describe() + " and " + it.describe());
  for (int64_t i = 0; i < b; ++i)
    if (x.dim(i) != it.dim(i))
      return ctx.error("batch dims of data " + x.describe() + " and indices " +
                       it.describe() + " differ");
  p.k = it.dim(-1);
  if (p.k < 1 || p.k > r - b)
    return ctx.error("the last dim of indices " + it.describe() +
                     " must be between 1 and the rank of data minus batch_dims");
  for (int64_t i = 0; i < b; ++i)
    p.batches *= x.dim(i);
  for (int64_t i = b; i < q - 1; ++i)
    p.tuplesPerBatch *= it.dim(i);
  for (int64_t i = b + p.k; i < r; ++i)
    p.sliceSize *= x.dim(i);
  std::vector<int64_t> stride(size_t(r), 1);
  for (int64_t i = r - 1; i > 0; --i)
    stride[size_t(i - 1)] = stride[size_t(i)] * x.dim(i);
  p.batchStride = b > 0 ? stride[size_t(b - 1)] : 0;
  std::vector<int64_t> raw;
  ACCEL_RT_ASSIGN_OR_RETURN(raw, readIndexTensor(ctx, it, "indices"));
  const int64_t tuples = p.batches * p.tuplesPerBatch;
  p.offsets.resize(size_t(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0;
    for (int64_t j = 0; j < p.k; ++j) {
      const int64_t dim = x.dim(b + j);
      int64_t v = raw[size_t(t * p.k + j)];
      if (v < -dim || v >= dim)
        return ctx.error("index " + std::to_string(v) + " is out of range for axis " +
                         std::to_string(b + j) + " of size " + std::to_string(dim));
      if (v < 0)
        v += dim;
      off += v * stride[size_t(b + j)];
    }
    p.offsets[size_t(t)] = off;
  }
  return p;
}

Status kGatherND(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0), &it = *ctx.in(1);
  const int64_t b = ctx.attrInt("batch_dims", 0);
  NdPlan p;
  ACCEL_RT_ASSIGN_OR_RETURN(p, planNd(ctx, x, it, b));
  Shape out(it.shape().begin(), it.shape().end() - 1);
  out.insert(out.end(), x.shape().begin() + b + p.k, x.shape().end());
  Tensor y;
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(x.dtype(), out));
  const size_t es = dtypeSize(x.dtype()), block = size_t(p.sliceSize) * es;
  const char *src = static_cast<const char *>(x.rawData());
  char *dst = static_cast<char *>(y.rawData());
  for (int64_t bt = 0; bt < p.batches; ++bt)
    for (int64_t t = 0; t < p.tuplesPerBatch; ++t) {
      const int64_t tuple = bt * p.tuplesPerBatch + t;
      std::memcpy(dst + size_t(tuple) * block,
                  src + size_t(bt * p.batchStride + p.offsets[size_t(tuple)]) * es, block);
    }
  ctx.outputs[0] = std::move(y);
  return Status::ok();
}

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

StatusOr<Reduction> readReduction(KernelContext &ctx) {
  const std::string r = ctx.attrString("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  return ctx.error("unknown reduction \"" + r + "\"");
}

/// dst[0..n) (op)= src[0..n) in the compute type of `dt` (y and u already
/// widened to it).
template <typename T> void combine(Reduction red, T *dst, const T *src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    switch (red) {
    case Reduction::kNone: dst[i] = src[i]; break;
    case Reduction::kAdd: dst[i] = wrapAdd(dst[i], src[i]); break;
    case Reduction::kMul: dst[i] = wrapMul(dst[i], src[i]); break;
    case Reduction::kMax: dst[i] = dst[i] < src[i] ? src[i] : dst[i]; break;
    case Reduction::kMin: dst[i] = src[i] < dst[i] ? src[i] : dst[i]; break;
    }
  }
}

/// Runs `body(y, u)` with y = a widened copy of data and u = widened updates,
/// then narrows y back into output 0.
template <typename Body>
Status scatterInto(KernelContext &ctx, const Tensor &x, const Tensor &u, Reduction red, Body body) {
  if (u.dtype() != x.dtype())
    return ctx.error("updates must have the data's type, got " + u.describe() + " and " +
                     x.describe());
  if (red != Reduction::kNone)
    ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, x, kAllowNumeric));
  const DType ct = red == Reduction::kNone ? x.dtype() : computeType(x.dtype());
  Tensor y, uw;
  ACCEL_RT_ASSIGN_OR_RETURN(y, convertTo(x, ct));
  if (y.rawData() == x.rawData())
    y = x.clone();
  if (!y.defined())
    return ctx.error("out of memory");
  ACCEL_RT_ASSIGN_OR_RETURN(uw, convertTo(u, ct));
  body(y, uw);
  ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], convertTo(y, x.dtype()));
  return Status::ok();
}

template <typename F> void dispatchStorage(DType dt, Reduction red, F &&f) {
  if (red == Reduction::kNone) {
    // Byte-wise copies: any dtype.
    switch (dtypeSize(dt)) {
    case 1: f(TypeTag<uint8_t>{}); return;
    case 2: f(TypeTag<uint16_t>{}); return;
    case 4: f(TypeTag<uint32_t>{}); return;
    default: f(TypeTag<uint64_t>{}); return;
    }
  }
  dispatchAllowed<kAllowNumeric>(dt, f);
}

Status kScatterND(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0), &it = *ctx.in(1), &u = *ctx.in(2);
  Reduction red;
  ACCEL_RT_ASSIGN_OR_RETURN(red, readReduction(ctx));
  NdPlan p;
  ACCEL_RT_ASSIGN_OR_RETURN(p, planNd(ctx, x, it, 0));
  Shape want(it.shape().begin(), it.shape().end() - 1);
  want.insert(want.end(), x.shape().begin() + p.k, x.shape().end());
  if (u.shape() != want)
    return ctx.error("updates " + u.describe() + " must have shape " + shapeToString(want));
  return scatterInto(ctx, x, u, red, [&](Tensor &y, const Tensor &uw) {
    dispatchStorage(y.dtype(), red, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T *dst = y.data<T>();
      const T *src = uw.data<T>();
      for (size_t t = 0; t < p.offsets.size(); ++t)
        combine(red, dst + p.offsets[t], src + int64_t(t) * p.sliceSize, p.sliceSize);
    });
  });
}

Status kScatterElements(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0), &it = *ctx.in(1), &u = *ctx.in(2);
  Reduction red;
  ACCEL_RT_ASSIGN_OR_RETURN(red, readReduction(ctx));
  const int64_t r = x.rank();
  if (r == 0 || it.rank() != r || u.shape() != it.shape())
    return ctx.error("data, indices and updates must share a rank >= 1 and indices "
                     "the shape of updates, got " +
                     x.describe() + ", " + it.describe() + " and " + u.describe());
  int64_t axis;
  ACCEL_RT_ASSIGN_OR_RETURN(axis, normalizeAxis(ctx, ctx.attrInt("axis", 0), r));
  for (int64_t i = 0; i < r; ++i)
    if (i != axis && it.dim(i) > x.dim(i))
      return ctx.error("indices " + it.describe() + " exceed data " + x.describe() +
                       " outside the axis");
  std::vector<int64_t> idx;
  ACCEL_RT_ASSIGN_OR_RETURN(idx, readIndices(ctx, it, x.dim(axis), "indices"));
  std::vector<int64_t> stride(size_t(r), 1);
  for (int64_t i = r - 1; i > 0; --i)
    stride[size_t(i - 1)] = stride[size_t(i)] * x.dim(i);
  return scatterInto(ctx, x, u, red, [&](Tensor &y, const Tensor &uw) {
    dispatchStorage(y.dtype(), red, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T *dst = y.data<T>();
      const T *src = uw.data<T>();
      std::vector<int64_t> pos(size_t(r), 0);
      for (size_t o = 0; o < idx.size(); ++o) {
        int64_t off = 0;
        for (int64_t i = 0; i < r; ++i)
          off += (i == axis ? idx[o] : pos[size_t(i)]) * stride[size_t(i)];
        combine(red, dst + off, src + o, 1);
        for (int64_t k = r - 1; k >= 0; --k) {
          if (++pos[size_t(k)] < it.dim(k))
            break;
          pos[size_t(k)] = 0;
        }
      }
    });
  });
}

} // namespace

void addGatherKernels(KernelTable &t) {
  t["Gather"] = {kGather, 2, 2, 1};
  t["GatherElements"] = {kGatherElements, 2, 2, 1};
  t["GatherND"] = {kGatherND, 2, 2, 1};
  t["ScatterND"] = {kScatterND, 3, 3, 1};
  t["ScatterElements"] = {kScatterElements, 3, 3, 1};
}

} // namespace accel::rt::onnx
