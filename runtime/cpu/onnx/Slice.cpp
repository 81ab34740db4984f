//===- Slice.cpp - Slice, Concat, Split, Pad ------------------------------===//
#include "runtime/cpu/onnx/ElementwiseUtil.h"

#include <limits>

namespace accel::rt::onnx {

namespace {

/// Copies a strided window of `src`: output dim i takes input index
/// start[i] + j * step[i] for j < outShape[i].
template <typename T>
void stridedCopy(const T *src, const Shape &inShape, const std::vector<int64_t> &start,
                 const std::vector<int64_t> &step, const Shape &outShape, T *dst) {
  const size_t r = inShape.size();
  std::vector<int64_t> inStride(r, 1), st(r);
  for (size_t i = r; i-- > 1;)
    inStride[i - 1] = inStride[i] * inShape[i];
  int64_t off = 0;
  for (size_t i = 0; i < r; ++i) {
    off += start[i] * inStride[i];
    st[i] = step[i] * inStride[i];
  }
  copyStridedView(src, off, st, outShape, dst);
}

void stridedCopyBytes(const Tensor &x, const std::vector<int64_t> &start,
                      const std::vector<int64_t> &step, Tensor &y) {
  switch (dtypeSize(x.dtype())) {
  case 1:
    stridedCopy(x.data<uint8_t>(), x.shape(), start, step, y.shape(), y.data<uint8_t>());
    break;
  case 2:
    stridedCopy(x.data<uint16_t>(), x.shape(), start, step, y.shape(), y.data<uint16_t>());
    break;
  case 4:
    stridedCopy(x.data<uint32_t>(), x.shape(), start, step, y.shape(), y.data<uint32_t>());
    break;
  default:
    stridedCopy(x.data<uint64_t>(), x.shape(), start, step, y.shape(), y.data<uint64_t>());
    break;
  }
}

Status kSlice(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0);
  const int64_t r = x.rank();
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.has(1) || ctx.has(2)) {
    if (!ctx.has(1) || !ctx.has(2))
      return ctx.error("starts and ends are both required");
    ACCEL_RT_ASSIGN_OR_RETURN(starts, readIndexTensor(ctx, *ctx.in(1), "starts"));
    ACCEL_RT_ASSIGN_OR_RETURN(ends, readIndexTensor(ctx, *ctx.in(2), "ends"));
    if (const Tensor *a = ctx.in(3)) {
      ACCEL_RT_ASSIGN_OR_RETURN(axes, readIndexTensor(ctx, *a, "axes"));
    }
    if (const Tensor *s = ctx.in(4)) {
      ACCEL_RT_ASSIGN_OR_RETURN(steps, readIndexTensor(ctx, *s, "steps"));
    }
  } else {
    // Opset 1: attributes.
    starts = ctx.attrInts("starts").value_or(std::vector<int64_t>{});
    ends = ctx.attrInts("ends").value_or(std::vector<int64_t>{});
    axes = ctx.attrInts("axes").value_or(std::vector<int64_t>{});
  }
  const size_t n = starts.size();
  if (ends.size() != n)
    return ctx.error("starts and ends have different lengths (" +
                     std::to_string(n) + " and " + std::to_string(ends.size()) + ")");
  if (axes.empty())
    for (size_t i = 0; i < n; ++i)
      axes.push_back(int64_t(i));
  if (steps.empty())
    steps.assign(n, 1);
  if (axes.size() != n || steps.size() != n)
    return ctx.error("starts, ends, axes and steps must have the same length");
  Shape out = x.shape();
  std::vector<int64_t> start(size_t(r), 0), step(size_t(r), 1);
  std::vector<bool> seen(size_t(r), false);
  for (size_t i = 0; i < n; ++i) {
    int64_t ax;
    ACCEL_RT_ASSIGN_OR_RETURN(ax, normalizeAxis(ctx, axes[i], r));
    if (seen[size_t(ax)])
      return ctx.error("axis " + std::to_string(axes[i]) + " is repeated");
    seen[size_t(ax)] = true;
    const int64_t dim = x.dim(ax), sp = steps[i];
    if (sp == 0)
      return ctx.error("steps must be nonzero");
    int64_t s = starts[i], e = ends[i];
    if (s < 0)
      s += dim; // cannot overflow: dim >= 0
    if (e < 0)
      e += dim;
    int64_t count;
    if (sp > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count = e > s ? (e - s - 1) / sp + 1 : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      if (s <= e)
        count = 0;
      else if (sp == std::numeric_limits<int64_t>::min()) // -sp overflows
        count = 1;
      else
        count = (s - e - 1) / -sp + 1;
    }
    if (dim == 0)
      count = 0;
    start[size_t(ax)] = count ? s : 0;
    step[size_t(ax)] = sp;
    out[size_t(ax)] = count;
  }
  Tensor y;
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(x.dtype(), out));
  stridedCopyBytes(x, start, step, y);
  ctx.outputs[0] = std::move(y);
  return Status::ok();
}

Status kConcat(KernelContext &ctx) {
  if (!ctx.hasAttr("axis"))
    return ctx.error("attribute 'axis' is required");
  const Tensor &first = *ctx.in(0);
  const int64_t r = first.rank();
  if (r == 0)
    return ctx.error("cannot concatenate scalars");
  int64_t axis;
  ACCEL_RT_ASSIGN_OR_RETURN(axis, normalizeAxis(ctx, ctx.attrInt("axis", 0), r));
  Shape out = first.shape();
  out[size_t(axis)] = 0;
  for (size_t k = 0; k < ctx.inputs.size(); ++k) {
    const Tensor *t = ctx.in(k);
    if (!t)
      return ctx.error("input " + std::to_string(k) + " is missing");
    bool ok = t->dtype() == first.dtype() && t->rank() == r;
    for (int64_t i = 0; ok && i < r; ++i)
      ok = i == axis || t->dim(i) == first.dim(i);
    if (!ok)
      return ctx.error("input " + std::to_string(k) + " " + t->describe() +
                       " does not match input 0 " + first.describe() +
                       " outside axis " + std::to_string(axis));
    out[size_t(axis)] += t->dim(axis);
  }
  Tensor y;
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(first.dtype(), out));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= out[size_t(i)];
  for (int64_t i = axis + 1; i < r; ++i)
    inner *= out[size_t(i)];
  const size_t es = dtypeSize(first.dtype());
  const size_t rowBytes = size_t(out[size_t(axis)] * inner) * es;
  char *dst = static_cast<char *>(y.rawData());
  size_t colOff = 0;
  for (size_t k = 0; k < ctx.inputs.size(); ++k) {
    const Tensor &t = *ctx.in(k);
    const size_t block = size_t(t.dim(axis) * inner) * es;
    const char *src = static_cast<const char *>(t.rawData());
    if (block)
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(dst + size_t(o) * rowBytes + colOff, src + size_t(o) * block, block);
    colOff += block;
  }
  ctx.outputs[0] = std::move(y);
  return Status::ok();
}

Status kSplit(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0);
  if (x.rank() == 0)
    return ctx.error("cannot split a scalar");
  int64_t axis;
  ACCEL_RT_ASSIGN_OR_RETURN(axis, normalizeAxis(ctx, ctx.attrInt("axis", 0), x.rank()));
  const int64_t dim = x.dim(axis);
  const size_t outs = ctx.numOutputs;
  std::vector<int64_t> sizes;
  if (const Tensor *s = ctx.in(1)) {
    ACCEL_RT_ASSIGN_OR_RETURN(sizes, readIndexTensor(ctx, *s, "split"));
  } else if (auto a = ctx.attrInts("split")) {
    sizes = *a;
  } else if (ctx.hasAttr("num_outputs")) {
    const int64_t num = ctx.attrInt("num_outputs", 1);
    if (num < 1 || size_t(num) != outs)
      return ctx.error("num_outputs is " + std::to_string(num) + " but the node has " +
                       std::to_string(outs) + " outputs");
    const int64_t chunk = (dim + num - 1) / num;
    for (int64_t i = 0; i < num; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
  } else {
    if (dim % int64_t(outs) != 0)
      return ctx.error("axis " + std::to_string(axis) + " of size " + std::to_string(dim) +
                       " does not split evenly into " + std::to_string(outs) + " outputs");
    sizes.assign(outs, dim / int64_t(outs));
  }
  if (sizes.size() != outs)
    return ctx.error("split has " + std::to_string(sizes.size()) + " sizes but the node has " +
                     std::to_string(outs) + " outputs");
  int64_t sum = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return ctx.error("split sizes " + shapeToString(sizes) + " include a negative size");
    sum += s;
  }
  if (sum != dim)
    return ctx.error("split sizes " + shapeToString(sizes) + " add up to " +
                     std::to_string(sum) + ", not the axis size " + std::to_string(dim));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= x.dim(i);
  for (int64_t i = axis + 1; i < x.rank(); ++i)
    inner *= x.dim(i);
  const size_t es = dtypeSize(x.dtype());
  const size_t rowBytes = size_t(dim * inner) * es;
  const char *src = static_cast<const char *>(x.rawData());
  size_t colOff = 0;
  for (size_t k = 0; k < outs; ++k) {
    Shape s = x.shape();
    s[size_t(axis)] = sizes[k];
    Tensor y;
    ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(x.dtype(), s));
    const size_t block = size_t(sizes[k] * inner) * es;
    char *dst = static_cast<char *>(y.rawData());
    if (block)
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(dst + size_t(o) * block, src + size_t(o) * rowBytes + colOff, block);
    colOff += block;
    ctx.outputs[k] = std::move(y);
  }
  return Status::ok();
}

Status kPad(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0);
  const int64_t r = x.rank();
  const std::string mode = ctx.attrString("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap")
    return ctx.error("unknown mode \"" + mode + "\"");
  std::vector<int64_t> pads;
  if (const Tensor *p = ctx.in(1)) {
    ACCEL_RT_ASSIGN_OR_RETURN(pads, readIndexTensor(ctx, *p, "pads"));
  } else {
    pads = ctx.attrInts("pads").value_or(std::vector<int64_t>{});
  }
  std::vector<int64_t> axes;
  if (const Tensor *a = ctx.in(3)) {
    ACCEL_RT_ASSIGN_OR_RETURN(axes, readIndexTensor(ctx, *a, "axes"));
  } else {
    for (int64_t i = 0; i < r; ++i)
      axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size())
    return ctx.error("pads has " + std::to_string(pads.size()) + " values for " +
                     std::to_string(axes.size()) + " axes");
  std::vector<int64_t> before(size_t(r), 0), after(size_t(r), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t ax;
    ACCEL_RT_ASSIGN_OR_RETURN(ax, normalizeAxis(ctx, axes[i], r));
    before[size_t(ax)] = pads[i];
    after[size_t(ax)] = pads[i + axes.size()];
  }
  // Constant value, as raw bytes of x's dtype.
  Tensor value = Tensor::zeros(x.dtype(), {});
  if (const Tensor *v = ctx.in(2)) {
    if (v->numElements() != 1)
      return ctx.error("constant_value must be a scalar, got " + v->describe());
    ACCEL_RT_ASSIGN_OR_RETURN(value, convertTo(*v, x.dtype()));
  } else if (ctx.hasAttr("value")) {
    ACCEL_RT_ASSIGN_OR_RETURN(
        value, Tensor::fromDoubles(x.dtype(), {}, {double(ctx.attrFloat("value", 0))}));
  }
  Shape out(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) {
    out[size_t(i)] = x.dim(i) + before[size_t(i)] + after[size_t(i)];
    if (out[size_t(i)] < 0)
      return ctx.error("pads crop axis " + std::to_string(i) + " below zero");
    if (mode != "constant" && x.dim(i) == 0 && out[size_t(i)] > 0)
      return ctx.error("mode \"" + mode + "\" cannot pad an empty axis");
  }
  Tensor y;
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(x.dtype(), out));
  // Maps an output index along dim i to an input index, -1 for "constant".
  const int kind = mode == "constant" ? 0 : mode == "edge" ? 1 : mode == "wrap" ? 2 : 3;
  auto mapIndex = [&](int64_t i, int64_t o) -> int64_t {
    const int64_t d = x.dim(i);
    int64_t p = o - before[size_t(i)];
    if (p >= 0 && p < d)
      return p;
    if (kind == 0)
      return -1;
    if (kind == 1)
      return p < 0 ? 0 : d - 1;
    if (kind == 2)
      return ((p % d) + d) % d;
    if (d == 1) // reflect
      return 0;
    const int64_t period = 2 * (d - 1);
    p = ((p % period) + period) % period;
    return p < d ? p : period - p;
  };
  const size_t es = dtypeSize(x.dtype());
  const char *src = static_cast<const char *>(x.rawData());
  char *dst = static_cast<char *>(y.rawData());
  std::vector<int64_t> inStride(size_t(r), 1);
  for (int64_t i = r - 1; i > 0; --i)
    inStride[size_t(i - 1)] = inStride[size_t(i)] * x.dim(i);
  const int64_t total = y.numElements();
  std::vector<int64_t> idx(size_t(r), 0);
  for (int64_t o = 0; o < total; ++o) {
    int64_t off = 0;
    bool constant = false;
    for (int64_t i = 0; i < r && !constant; ++i) {
      int64_t m = mapIndex(i, idx[size_t(i)]);
      constant = m < 0;
      off += m * inStride[size_t(i)];
    }
    std::memcpy(dst + size_t(o) * es, constant ? value.rawData() : src + size_t(off) * es, es);
    for (int64_t k = r - 1; k >= 0; --k) {
      if (++idx[size_t(k)] < out[size_t(k)])
        break;
      idx[size_t(k)] = 0;
    }
  }
  ctx.outputs[0] = std::move(y);
  return Status::ok();
}

} // namespace

void addSliceKernels(KernelTable &t) {
  t["Slice"] = {kSlice, 1, 5, 1};
  t["Concat"] = {kConcat, 1, -1, 1};
  t["Split"] = {kSplit, 1, 2, -1};
  t["Pad"] = {kPad, 1, 4, 1};
}

} // namespace accel::rt::onnx
