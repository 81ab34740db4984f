//===- Shape.cpp - Shape, Reshape, Squeeze, Transpose, Expand, Tile, ... --===//
//
// Ops that move or describe data without arithmetic. Reshape, Flatten,
// Squeeze and Unsqueeze return views sharing the input's storage.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/onnx/ElementwiseUtil.h"

#include <cmath>
#include <limits>

namespace accel::rt::onnx {

namespace {

Status setOut(KernelContext &ctx, Tensor t) {
  ctx.outputs[0] = std::move(t);
  return Status::ok();
}

StatusOr<Tensor> int64Vector(const std::vector<int64_t> &v) {
  return Tensor::fromVector<int64_t>({int64_t(v.size())}, v);
}

Status kShape(KernelContext &ctx) {
  const Shape &s = ctx.in(0)->shape();
  const int64_t r = int64_t(s.size());
  auto clampDim = [r](int64_t v) {
    if (v < 0)
      v += r;
    return std::min(std::max<int64_t>(v, 0), r);
  };
  const int64_t start = clampDim(ctx.attrInt("start", 0));
  const int64_t end = clampDim(ctx.attrInt("end", r));
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i)
    dims.push_back(s[size_t(i)]);
  ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], int64Vector(dims));
  return Status::ok();
}

Status kSize(KernelContext &ctx) {
  return setOut(ctx, Tensor::scalar<int64_t>(ctx.in(0)->numElements()));
}

Status kReshape(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0);
  std::vector<int64_t> req;
  if (const Tensor *s = ctx.in(1)) {
    ACCEL_RT_ASSIGN_OR_RETURN(req, readIndexTensor(ctx, *s, "shape"));
  } else if (auto a = ctx.attrInts("shape")) {
    req = *a;
  } else {
    return ctx.error("the shape input is missing");
  }
  const bool allowzero = ctx.attrInt("allowzero", 0) != 0;
  const std::string want = shapeToString(req);
  auto fail = [&](const std::string &why) {
    return ctx.error("cannot reshape " + std::to_string(x.numElements()) +
                     " elements into " + want + why);
  };
  Shape out(req.size());
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < req.size(); ++i) {
    int64_t d = req[i];
    if (d == 0 && !allowzero) {
      if (i >= size_t(x.rank()))
        return fail(": dim " + std::to_string(i) + " copies an input dim that does not exist");
      d = x.shape()[i];
    }
    if (d == -1) {
      if (inferred >= 0)
        return fail(": more than one -1");
      inferred = int64_t(i);
      continue;
    }
    if (d < 0)
      return fail(": negative dim " + std::to_string(d));
    if (d != 0 && known > std::numeric_limits<int64_t>::max() / d)
      return fail(": too many elements");
    out[i] = d;
    known *= d;
  }
  if (inferred >= 0) {
    if (known == 0 || x.numElements() % known != 0)
      return fail("");
    out[size_t(inferred)] = x.numElements() / known;
  } else if (known != x.numElements()) {
    return fail("");
  }
  ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], x.reshaped(out));
  return Status::ok();
}

Status kFlatten(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0);
  int64_t axis = ctx.attrInt("axis", 1);
  if (axis < -x.rank() || axis > x.rank())
    return ctx.error("axis " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(x.rank()));
  if (axis < 0)
    axis += x.rank();
  int64_t a = 1, b = 1;
  for (int64_t i = 0; i < x.rank(); ++i)
    (i < axis ? a : b) *= x.dim(i);
  ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], x.reshaped({a, b}));
  return Status::ok();
}

/// Axes from input 1 (newer opsets) or the `axes` attribute; empty optional
/// when neither is given.
StatusOr<std::optional<std::vector<int64_t>>> axesArg(KernelContext &ctx) {
  if (const Tensor *t = ctx.in(1)) {
    std::vector<int64_t> v;
    ACCEL_RT_ASSIGN_OR_RETURN(v, readIndexTensor(ctx, *t, "axes"));
    return std::optional<std::vector<int64_t>>(v);
  }
  return ctx.attrInts("axes");
}

Status kSqueeze(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0);
  std::optional<std::vector<int64_t>> axes;
  ACCEL_RT_ASSIGN_OR_RETURN(axes, axesArg(ctx));
  std::vector<bool> drop(size_t(x.rank()), false);
  if (!axes || axes->empty()) {
    for (int64_t i = 0; i < x.rank(); ++i)
      drop[size_t(i)] = x.dim(i) == 1;
  } else {
    for (int64_t a : *axes) {
      int64_t ax;
      ACCEL_RT_ASSIGN_OR_RETURN(ax, normalizeAxis(ctx, a, x.rank()));
      if (x.dim(ax) != 1)
        return ctx.error("cannot squeeze axis " + std::to_string(a) + " of " +
                         x.describe() + ": its size is not 1");
      drop[size_t(ax)] = true;
    }
  }
  Shape out;
  for (int64_t i = 0; i < x.rank(); ++i)
    if (!drop[size_t(i)])
      out.push_back(x.dim(i));
  ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], x.reshaped(out));
  return Status::ok();
}

Status kUnsqueeze(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0);
  std::optional<std::vector<int64_t>> axes;
  ACCEL_RT_ASSIGN_OR_RETURN(axes, axesArg(ctx));
  if (!axes)
    return ctx.error("axes are required");
  const int64_t r = x.rank() + int64_t(axes->size());
  std::vector<bool> added(size_t(r), false);
  for (int64_t a : *axes) {
    int64_t ax;
    ACCEL_RT_ASSIGN_OR_RETURN(ax, normalizeAxis(ctx, a, r));
    if (added[size_t(ax)])
      return ctx.error("axis " + std::to_string(a) + " is repeated");
    added[size_t(ax)] = true;
  }
  Shape out;
  size_t k = 0;
  for (int64_t i = 0; i < r; ++i)
    out.push_back(added[size_t(i)] ? 1 : x.shape()[k++]);
  ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], x.reshaped(out));
  return Status::ok();
}

Status kTranspose(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0);
  const int64_t r = x.rank();
  std::vector<int64_t> perm;
  if (auto p = ctx.attrInts("perm")) {
    perm = *p;
  } else {
    for (int64_t i = r - 1; i >= 0; --i)
      perm.push_back(i);
  }
  if (int64_t(perm.size()) != r)
    return ctx.error("perm " + shapeToString(perm) + " does not permute rank " +
                     std::to_string(r));
  std::vector<bool> seen(size_t(r), false);
  Shape out;
  for (int64_t &p : perm) {
    if (p < -r || p >= r || seen[size_t(p < 0 ? p + r : p)])
      return ctx.error("perm " + shapeToString(perm) + " is not a permutation of rank " +
                       std::to_string(r));
    if (p < 0)
      p += r;
    seen[size_t(p)] = true;
    out.push_back(x.dim(p));
  }
  Tensor y;
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(x.dtype(), out));
  transposeBytes(x.rawData(), x.shape(), perm, y.rawData(), dtypeSize(x.dtype()));
  return setOut(ctx, std::move(y));
}

Status kExpand(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0);
  std::vector<int64_t> req;
  ACCEL_RT_ASSIGN_OR_RETURN(req, readIndexTensor(ctx, *ctx.in(1), "shape"));
  for (int64_t d : req)
    if (d < 0)
      return ctx.error("shape " + shapeToString(req) + " has a negative dim");
  Shape out;
  ACCEL_RT_ASSIGN_OR_RETURN(out, broadcastShapes(ctx, {&x.shape(), &req}));
  Tensor y;
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(x.dtype(), out));
  broadcastCopy(x.rawData(), x.shape(), y.rawData(), out, dtypeSize(x.dtype()));
  return setOut(ctx, std::move(y));
}

Status kTile(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0);
  std::vector<int64_t> rep;
  ACCEL_RT_ASSIGN_OR_RETURN(rep, readIndexTensor(ctx, *ctx.in(1), "repeats"));
  if (int64_t(rep.size()) != x.rank())
    return ctx.error("repeats has " + std::to_string(rep.size()) +
                     " values for an input of rank " + std::to_string(x.rank()));
  // Tile == broadcast [1, d0, 1, d1, ...] to [r0, d0, r1, d1, ...].
  Shape from, to, out;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (rep[size_t(i)] < 0)
      return ctx.error("repeats " + shapeToString(rep) + " has a negative value");
    from.insert(from.end(), {1, x.dim(i)});
    to.insert(to.end(), {rep[size_t(i)], x.dim(i)});
    out.push_back(rep[size_t(i)] * x.dim(i));
  }
  Tensor y;
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(x.dtype(), out));
  broadcastCopy(x.rawData(), from, y.rawData(), to, dtypeSize(x.dtype()));
  return setOut(ctx, std::move(y));
}

Status kConstantOfShape(KernelContext &ctx) {
  std::vector<int64_t> dims;
  ACCEL_RT_ASSIGN_OR_RETURN(dims, readIndexTensor(ctx, *ctx.in(0), "shape"));
  const Tensor *value = ctx.attrTensor("value");
  if (value && value->numElements() != 1)
    return ctx.error("attribute 'value' must hold one element, got " + value->describe());
  const DType dt = value ? value->dtype() : DType::kF32;
  Tensor y;
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(dt, dims));
  if (value) {
    broadcastCopy(value->rawData(), {}, y.rawData(), y.shape(), dtypeSize(dt));
  } else {
    std::memset(y.rawData(), 0, y.byteSize());
  }
  return setOut(ctx, std::move(y));
}

Status kRange(KernelContext &ctx) {
  const Tensor &s = *ctx.in(0), &l = *ctx.in(1), &d = *ctx.in(2);
  if (s.dtype() != l.dtype() || s.dtype() != d.dtype())
    return ctx.error("start, limit and delta must have the same type, got " +
                     s.describe() + ", " + l.describe() + " and " + d.describe());
  for (const Tensor *t : {&s, &l, &d})
    if (t->numElements() != 1)
      return ctx.error("start, limit and delta must be scalars, got " + t->describe());
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, s, kAllowNumeric));
  Tensor out;
  Status st;
  if (isFloat(s.dtype())) {
    const double start = s.toDoubles()[0], limit = l.toDoubles()[0],
                 delta = d.toDoubles()[0];
    if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
      return ctx.error("delta must be nonzero and all of start, limit, delta finite");
    const double count = std::max(std::ceil((limit - start) / delta), 0.0);
    if (count > double(int64_t(1) << 40))
      return ctx.error("the range has too many elements");
    const int64_t n = int64_t(count);
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      v[size_t(i)] = start + double(i) * delta;
    ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::fromDoubles(s.dtype(), {n}, v));
  } else {
    const int64_t start = s.toInt64s()[0], limit = l.toInt64s()[0],
                  delta = d.toInt64s()[0];
    if (delta == 0)
      return ctx.error("delta must be nonzero");
    // Count in 128 bits so extreme bounds cannot overflow.
    __int128 span = __int128(limit) - start;
    __int128 n128 = span / delta + ((span % delta) != 0 && ((span > 0) == (delta > 0)));
    if (n128 < 0)
      n128 = 0;
    if (n128 > (__int128(1) << 40))
      return ctx.error("the range has too many elements");
    const int64_t n = int64_t(n128);
    ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::allocate(s.dtype(), {n}));
    dispatchInteger(s.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T *p = out.data<T>();
      for (int64_t i = 0; i < n; ++i)
        p[i] = T(start + i * delta);
    });
  }
  ACCEL_RT_RETURN_IF_ERROR(st);
  return setOut(ctx, std::move(out));
}

Status kTrilu(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0);
  if (x.rank() < 2)
    return ctx.error("input must have rank >= 2, got " + x.describe());
  int64_t k = 0;
  if (const Tensor *kt = ctx.in(1)) {
    std::vector<int64_t> kv;
    ACCEL_RT_ASSIGN_OR_RETURN(kv, readIndexTensor(ctx, *kt, "k"));
    if (kv.size() != 1)
      return ctx.error("k must be a scalar, got " + kt->describe());
    k = kv[0];
  }
  const bool upper = ctx.attrInt("upper", 1) != 0;
  const int64_t rows = x.dim(-2), cols = x.dim(-1);
  const int64_t mats = rows * cols != 0 ? x.numElements() / (rows * cols) : 0;
  Tensor y;
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(x.dtype(), x.shape()));
  const size_t es = dtypeSize(x.dtype());
  const char *src = static_cast<const char *>(x.rawData());
  char *dst = static_cast<char *>(y.rawData());
  std::memset(dst, 0, y.byteSize());
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t i = 0; i < rows; ++i) {
      // Keep j - i >= k (upper) or j - i <= k (lower).
      int64_t lo = upper ? std::max<int64_t>(0, std::min(cols, i + k)) : 0;
      int64_t hi = upper ? cols : std::max<int64_t>(0, std::min(cols, i + k + 1));
      if (hi > lo) {
        const int64_t off = (m * rows + i) * cols + lo;
        std::memcpy(dst + off * int64_t(es), src + off * int64_t(es), size_t(hi - lo) * es);
      }
    }
  return setOut(ctx, std::move(y));
}

} // namespace

void addShapeKernels(KernelTable &t) {
  t["Shape"] = {kShape, 1, 1, 1};
  t["Size"] = {kSize, 1, 1, 1};
  t["Reshape"] = {kReshape, 1, 2, 1};
  t["Flatten"] = {kFlatten, 1, 1, 1};
  t["Squeeze"] = {kSqueeze, 1, 2, 1};
  t["Unsqueeze"] = {kUnsqueeze, 1, 2, 1};
  t["Transpose"] = {kTranspose, 1, 1, 1};
  t["Expand"] = {kExpand, 2, 2, 1};
  t["Tile"] = {kTile, 2, 2, 1};
  t["ConstantOfShape"] = {kConstantOfShape, 1, 1, 1};
  t["Range"] = {kRange, 3, 3, 1};
  t["Trilu"] = {kTrilu, 1, 2, 1};
  addSliceKernels(t);
}

} // namespace accel::rt::onnx
