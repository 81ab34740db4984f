//===- Reduce.cpp - Reduce*, ArgMax/ArgMin, Softmax, LogSoftmax, CumSum ---===//
#include "runtime/cpu/onnx/ElementwiseUtil.h"

#include <cmath>
#include <limits>

namespace accel::rt::onnx {

namespace {

enum class RedOp { kSum, kMean, kMax, kMin, kProd, kSumSquare, kL1, kL2, kLogSum, kLogSumExp };

/// A contiguous tensor seen as [outer, r, inner] with the middle reduced.
struct Block {
  int64_t outer = 1, r = 1, inner = 1;
};

template <typename T> using AccOf =
    std::conditional_t<std::is_floating_point_v<T>, double,
                       std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

/// acc (op)= v for the accumulating reductions.
template <RedOp K, typename T> inline void combineInto(AccOf<T> &acc, AccOf<T> v) {
  using A = AccOf<T>;
  constexpr bool isF = std::is_floating_point_v<T>;
  if constexpr (K == RedOp::kSum || K == RedOp::kMean || K == RedOp::kLogSum)
    acc = wrapAdd(acc, v);
  else if constexpr (K == RedOp::kProd)
    acc = wrapMul(acc, v);
  else if constexpr (K == RedOp::kSumSquare || K == RedOp::kL2)
    acc = wrapAdd(acc, wrapMul(v, v));
  else if constexpr (K == RedOp::kL1)
    acc = wrapAdd(acc, (isF || std::is_signed_v<T>) && v < A(0) ? wrapSub(A(0), v) : v);
  else if constexpr (K == RedOp::kMax) {
    if constexpr (isF)
      acc = (v > acc || std::isnan(v)) && !std::isnan(acc) ? v : acc;
    else
      acc = v > acc ? v : acc;
  } else if constexpr (K == RedOp::kMin) {
    if constexpr (isF)
      acc = (v < acc || std::isnan(v)) && !std::isnan(acc) ? v : acc;
    else
      acc = v < acc ? v : acc;
  }
}

template <RedOp K, typename T>
void reduceBlock(const T *x, const Block &b, T *out) {
  using A = AccOf<T>;
  constexpr bool isF = std::is_floating_point_v<T>;
  std::vector<A> acc(size_t(b.inner));
  std::vector<A> mx;
  for (int64_t o = 0; o < b.outer; ++o) {
    const T *base = x + o * b.r * b.inner;
    A init = A(0);
    if constexpr (K == RedOp::kProd)
      init = A(1);
    if constexpr (K == RedOp::kMax)
      init = isF ? A(-INFINITY) : A(std::numeric_limits<T>::lowest());
    if constexpr (K == RedOp::kMin)
      init = isF ? A(INFINITY) : A(std::numeric_limits<T>::max());
    std::fill(acc.begin(), acc.end(), init);
    if constexpr (K == RedOp::kLogSumExp) {
      // Two passes: the max, then the shifted sum.
      mx.assign(size_t(b.inner), A(-INFINITY));
      for (int64_t r = 0; r < b.r; ++r)
        for (int64_t i = 0; i < b.inner; ++i)
          mx[size_t(i)] = std::max(mx[size_t(i)], A(base[r * b.inner + i]));
      for (int64_t r = 0; r < b.r; ++r)
        for (int64_t i = 0; i < b.inner; ++i) {
          const A m = std::isinf(mx[size_t(i)]) ? A(0) : mx[size_t(i)];
          acc[size_t(i)] += std::exp(A(base[r * b.inner + i]) - m);
        }
    } else if (b.inner == 1) { // the usual last-axis case: one accumulator
      A a0 = acc[0];
      for (int64_t r = 0; r < b.r; ++r)
        combineInto<K, T>(a0, A(base[r]));
      acc[0] = a0;
    } else {
      for (int64_t r = 0; r < b.r; ++r) {
        const T *row = base + r * b.inner;
        A *ac = acc.data();
        for (int64_t i = 0; i < b.inner; ++i)
          combineInto<K, T>(ac[i], A(row[i]));
      }
    }
    T *dst = out + o * b.inner;
    for (int64_t i = 0; i < b.inner; ++i) {
      A v = acc[size_t(i)];
      if constexpr (K == RedOp::kMean) {
        if constexpr (isF)
          v = v / A(b.r);
        else
          v = b.r ? A(v / A(b.r)) : A(0);
      } else if constexpr (K == RedOp::kL2) {
        v = A(std::sqrt(double(v)));
      } else if constexpr (K == RedOp::kLogSum) {
        v = A(std::log(double(v)));
      } else if constexpr (K == RedOp::kLogSumExp) {
        const A m = std::isinf(mx[size_t(i)]) ? A(0) : mx[size_t(i)];
        v = A(std::log(double(v))) + m;
      }
      dst[i] = T(v);
    }
  }
}

template <typename T>
void reduceDispatch(RedOp k, const T *x, const Block &b, T *out) {
  switch (k) {
  case RedOp::kSum: reduceBlock<RedOp::kSum>(x, b, out); break;
  case RedOp::kMean: reduceBlock<RedOp::kMean>(x, b, out); break;
  case RedOp::kMax: reduceBlock<RedOp::kMax>(x, b, out); break;
  case RedOp::kMin: reduceBlock<RedOp::kMin>(x, b, out); break;
  case RedOp::kProd: reduceBlock<RedOp::kProd>(x, b, out); break;
  case RedOp::kSumSquare: reduceBlock<RedOp::kSumSquare>(x, b, out); break;
  case RedOp::kL1: reduceBlock<RedOp::kL1>(x, b, out); break;
  case RedOp::kL2: reduceBlock<RedOp::kL2>(x, b, out); break;
  case RedOp::kLogSum: reduceBlock<RedOp::kLogSum>(x, b, out); break;
  case RedOp::kLogSumExp: reduceBlock<RedOp::kLogSumExp>(x, b, out); break;
  }
}

/// The reduced axes (sorted, unique) from input 1 or the `axes` attribute;
/// `noop` when the op is an identity (empty axes, noop_with_empty_axes=1).
Status readAxes(KernelContext &ctx, int64_t rank, std::vector<bool> &reduced, bool &noop) {
  std::vector<int64_t> axes;
  if (const Tensor *t = ctx.in(1)) {
    ACCEL_RT_ASSIGN_OR_RETURN(axes, readIndexTensor(ctx, *t, "axes"));
  } else if (auto a = ctx.attrInts("axes")) {
    axes = *a;
  }
  noop = false;
  reduced.assign(size_t(rank), false);
  if (axes.empty()) {
    if (ctx.attrInt("noop_with_empty_axes", 0) != 0) {
      noop = true;
      return Status::ok();
    }
    reduced.assign(size_t(rank), true);
    return Status::ok();
  }
  for (int64_t a : axes) {
    int64_t ax;
    ACCEL_RT_ASSIGN_OR_RETURN(ax, normalizeAxis(ctx, a, rank));
    reduced[size_t(ax)] = true;
  }
  return Status::ok();
}

template <RedOp K> Status reduce(KernelContext &ctx, const Tensor &x) {
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, x, kAllowNumeric));
  const int64_t rank = x.rank();
  const bool keepdims = ctx.attrInt("keepdims", 1) != 0;
  std::vector<bool> reduced;
  bool noop;
  ACCEL_RT_RETURN_IF_ERROR(readAxes(ctx, rank, reduced, noop));
  if (noop) {
    // Identity, except the ops that transform each element.
    if (K == RedOp::kSumSquare || K == RedOp::kL1 || K == RedOp::kL2 ||
        K == RedOp::kLogSum || K == RedOp::kLogSumExp) {
      Block b{x.numElements(), 1, 1};
      Tensor w, out;
      ACCEL_RT_ASSIGN_OR_RETURN(w, widen(x));
      ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::allocate(w.dtype(), x.shape()));
      dispatchAllowed<kAllowNumeric>(w.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        reduceBlock<K>(w.data<T>(), b, out.data<T>());
      });
      ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], convertTo(out, x.dtype()));
      return Status::ok();
    }
    ctx.outputs[0] = x;
    return Status::ok();
  }
  Shape outShape, keptShape;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[size_t(i)]) {
      outShape.push_back(x.dim(i));
      keptShape.push_back(x.dim(i));
    } else if (keepdims) {
      outShape.push_back(1);
    }
  }
  // [outer, r, inner] when the reduced axes are one contiguous run;
  // otherwise move them last with a transpose.
  Tensor w;
  ACCEL_RT_ASSIGN_OR_RETURN(w, widen(x));
  int64_t first = -1, last = -1;
  for (int64_t i = 0; i < rank; ++i)
    if (reduced[size_t(i)]) {
      if (first < 0)
        first = i;
      last = i;
    }
  bool contiguous = true;
  for (int64_t i = first; first >= 0 && i <= last; ++i)
    contiguous &= bool(reduced[size_t(i)]);
  Block b;
  if (first < 0) { // a rank-0 input: each element reduces alone
    b.outer = x.numElements();
  } else if (contiguous) {
    for (int64_t i = 0; i < first; ++i)
      b.outer *= x.dim(i);
    for (int64_t i = first; i <= last; ++i)
      b.r *= x.dim(i);
    for (int64_t i = last + 1; i < rank; ++i)
      b.inner *= x.dim(i);
  } else {
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < rank; ++i)
      if (!reduced[size_t(i)]) {
        perm.push_back(i);
        b.outer *= x.dim(i);
      }
    for (int64_t i = 0; i < rank; ++i)
      if (reduced[size_t(i)]) {
        perm.push_back(i);
        b.r *= x.dim(i);
      }
    Tensor t;
    ACCEL_RT_ASSIGN_OR_RETURN(t, Tensor::allocate(w.dtype(), {x.numElements()}));
    transposeBytes(w.rawData(), x.shape(), perm, t.rawData(), dtypeSize(w.dtype()));
    w = t;
  }
  Tensor out;
  ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::allocate(w.dtype(), outShape));
  dispatchAllowed<kAllowNumeric>(w.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduceDispatch(K, w.data<T>(), b, out.data<T>());
  });
  ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], convertTo(out, x.dtype()));
  return Status::ok();
}

template <RedOp K> Status kReduce(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0);
  if (x.dtype() != DType::kI1 || (K != RedOp::kMax && K != RedOp::kMin))
    return reduce<K>(ctx, x);
  // Booleans (opset 20 ReduceMax/ReduceMin) reduce as 0/1 bytes.
  ACCEL_RT_RETURN_IF_ERROR(
      reduce<K>(ctx, Tensor::view(DType::kU8, x.shape(), x.rawData(), x.owner())));
  Tensor &y = ctx.outputs[0];
  if (y.rawData() == x.rawData()) { // the identity case
    y = x;
    return Status::ok();
  }
  auto *v = y.data<uint8_t>();
  for (int64_t i = 0; i < y.numElements(); ++i)
    v[i] = v[i] != 0; // an empty ReduceMin is 255: true
  y = Tensor::view(DType::kI1, y.shape(), y.rawData(), y.owner());
  return Status::ok();
}

/// Splits `shape` around `axis` into [outer, n, inner].
Block around(const Shape &shape, int64_t axis) {
  Block b;
  for (int64_t i = 0; i < int64_t(shape.size()); ++i)
    (i < axis ? b.outer : i == axis ? b.r : b.inner) *= shape[size_t(i)];
  return b;
}

template <bool Max> Status kArgReduce(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0);
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, x, kAllowNumeric));
  int64_t axis;
  ACCEL_RT_ASSIGN_OR_RETURN(axis, normalizeAxis(ctx, ctx.attrInt("axis", 0),
                                                std::max<int64_t>(x.rank(), 1)));
  const bool keepdims = ctx.attrInt("keepdims", 1) != 0;
  const bool lastIndex = ctx.attrInt("select_last_index", 0) != 0;
  if (x.rank() > 0 && x.dim(axis) == 0)
    return ctx.error("cannot reduce an empty axis");
  Shape outShape = x.shape();
  if (x.rank() > 0) {
    if (keepdims)
      outShape[size_t(axis)] = 1;
    else
      outShape.erase(outShape.begin() + axis);
  }
  Block b = around(x.shape(), axis);
  Tensor w, out;
  ACCEL_RT_ASSIGN_OR_RETURN(w, widen(x));
  ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::allocate(DType::kI64, outShape));
  int64_t *dst = out.data<int64_t>();
  dispatchAllowed<kAllowNumeric>(w.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *src = w.data<T>();
    for (int64_t o = 0; o < b.outer; ++o)
      for (int64_t i = 0; i < b.inner; ++i) {
        const T *p = src + o * b.r * b.inner + i;
        int64_t best = 0;
        for (int64_t r = 1; r < b.r; ++r) {
          const T v = p[r * b.inner], cur = p[best * b.inner];
          bool better = Max ? (lastIndex ? v >= cur : v > cur)
                            : (lastIndex ? v <= cur : v < cur);
          if (better)
            best = r;
        }
        dst[o * b.inner + i] = best;
      }
  });
  ctx.outputs[0] = std::move(out);
  return Status::ok();
}

template <bool Log> Status kSoftmax(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0);
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, x, kAllowFloat));
  int64_t axis;
  ACCEL_RT_ASSIGN_OR_RETURN(axis, normalizeAxis(ctx, ctx.attrInt("axis", -1),
                                                std::max<int64_t>(x.rank(), 1)));
  Block b = x.rank() ? around(x.shape(), axis) : Block{};
  Tensor w, out;
  ACCEL_RT_ASSIGN_OR_RETURN(w, widen(x));
  ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::allocate(w.dtype(), x.shape()));
  dispatchAllowed<kAllowFloat>(w.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *src = w.data<T>();
    T *dst = out.data<T>();
    if (b.inner == 1) { // rows: contiguous loops
      for (int64_t o = 0; o < b.outer; ++o) {
        const T *p = src + o * b.r;
        T *q = dst + o * b.r;
        T m = -std::numeric_limits<T>::infinity();
        for (int64_t r = 0; r < b.r; ++r)
          m = std::max(m, p[r]);
        T sum = 0;
        if (Log) {
          for (int64_t r = 0; r < b.r; ++r)
            sum += std::exp(p[r] - m);
          const T ls = m + std::log(sum);
          for (int64_t r = 0; r < b.r; ++r)
            q[r] = p[r] - ls;
        } else {
          for (int64_t r = 0; r < b.r; ++r) {
            q[r] = std::exp(p[r] - m);
            sum += q[r];
          }
          const T inv = T(1) / sum;
          for (int64_t r = 0; r < b.r; ++r)
            q[r] *= inv;
        }
      }
      return;
    }
    for (int64_t o = 0; o < b.outer; ++o)
      for (int64_t i = 0; i < b.inner; ++i) {
        const T *p = src + o * b.r * b.inner + i;
        T *q = dst + o * b.r * b.inner + i;
        const int64_t s = b.inner;
        T m = -std::numeric_limits<T>::infinity();
        for (int64_t r = 0; r < b.r; ++r)
          m = std::max(m, p[r * s]);
        T sum = 0;
        for (int64_t r = 0; r < b.r; ++r) {
          T e = std::exp(p[r * s] - m);
          sum += e;
          if (!Log)
            q[r * s] = e;
        }
        if (Log) {
          const T ls = std::log(sum);
          for (int64_t r = 0; r < b.r; ++r)
            q[r * s] = p[r * s] - m - ls;
        } else {
          const T inv = T(1) / sum;
          for (int64_t r = 0; r < b.r; ++r)
            q[r * s] *= inv;
        }
      }
  });
  ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], convertTo(out, x.dtype()));
  return Status::ok();
}

Status kCumSum(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0), &axisT = *ctx.in(1);
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, x, kAllowNumeric));
  std::vector<int64_t> axisV;
  ACCEL_RT_ASSIGN_OR_RETURN(axisV, readIndexTensor(ctx, axisT, "axis"));
  if (axisV.size() != 1)
    return ctx.error("axis must be a scalar, got " + axisT.describe());
  int64_t axis;
  ACCEL_RT_ASSIGN_OR_RETURN(axis, normalizeAxis(ctx, axisV[0], x.rank()));
  const bool exclusive = ctx.attrInt("exclusive", 0) != 0;
  const bool reverse = ctx.attrInt("reverse", 0) != 0;
  Block b = around(x.shape(), axis);
  Tensor w, out;
  ACCEL_RT_ASSIGN_OR_RETURN(w, widen(x));
  ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::allocate(w.dtype(), x.shape()));
  dispatchAllowed<kAllowNumeric>(w.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *src = w.data<T>();
    T *dst = out.data<T>();
    std::vector<T> acc(size_t(b.inner));
    for (int64_t o = 0; o < b.outer; ++o) {
      std::fill(acc.begin(), acc.end(), T(0));
      for (int64_t k = 0; k < b.r; ++k) {
        const int64_t r = reverse ? b.r - 1 - k : k;
        const T *p = src + (o * b.r + r) * b.inner;
        T *q = dst + (o * b.r + r) * b.inner;
        for (int64_t i = 0; i < b.inner; ++i) {
          if (exclusive) {
            q[i] = acc[size_t(i)];
            acc[size_t(i)] = wrapAdd(acc[size_t(i)], p[i]);
          } else {
            acc[size_t(i)] = wrapAdd(acc[size_t(i)], p[i]);
            q[i] = acc[size_t(i)];
          }
        }
      }
    }
  });
  ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], convertTo(out, x.dtype()));
  return Status::ok();
}

} // namespace

void addReduceKernels(KernelTable &t) {
  t["ReduceSum"] = {kReduce<RedOp::kSum>, 1, 2, 1};
  t["ReduceMean"] = {kReduce<RedOp::kMean>, 1, 2, 1};
  t["ReduceMax"] = {kReduce<RedOp::kMax>, 1, 2, 1};
  t["ReduceMin"] = {kReduce<RedOp::kMin>, 1, 2, 1};
  t["ReduceProd"] = {kReduce<RedOp::kProd>, 1, 2, 1};
  t["ReduceSumSquare"] = {kReduce<RedOp::kSumSquare>, 1, 2, 1};
  t["ReduceL1"] = {kReduce<RedOp::kL1>, 1, 2, 1};
  t["ReduceL2"] = {kReduce<RedOp::kL2>, 1, 2, 1};
  t["ReduceLogSum"] = {kReduce<RedOp::kLogSum>, 1, 2, 1};
  t["ReduceLogSumExp"] = {kReduce<RedOp::kLogSumExp>, 1, 2, 1};
  t["ArgMax"] = {kArgReduce<true>, 1, 1, 1};
  t["ArgMin"] = {kArgReduce<false>, 1, 1, 1};
  t["Softmax"] = {kSoftmax<false>, 1, 1, 1};
  t["LogSoftmax"] = {kSoftmax<true>, 1, 1, 1};
  t["CumSum"] = {kCumSum, 2, 2, 1};
}

} // namespace accel::rt::onnx
