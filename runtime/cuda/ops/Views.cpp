//===- Views.cpp - views and copies on the GPU ----------------------------===//
//
// split (columns copied out), the views (split_heads, merge_heads,
// flatten_tokens, unflatten_tokens: either copy of a value, no data
// moved), the copy step, and the copies along one axis that Onnx.cpp's
// Split, Slice and Concat share.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/ops/Ops.h"

namespace accel::rt::engine::ops {

/// Copies x[..., begin:begin+len, ...] (along `axis`) into dst's
/// [..., dstBegin:dstBegin+len, ...]; both contiguous.
Status copyAlongAxis(GpuRunState &st, const DeviceTensor &dst, int64_t dstBegin,
                     const DeviceTensor &src, int64_t srcBegin, int64_t len, int64_t axis) {
  int64_t outer = 1, inner = int64_t(dtypeSize(src.dtype));
  for (int64_t i = 0; i < axis; ++i)
    outer *= src.dim(i);
  for (int64_t i = axis + 1; i < src.rank(); ++i)
    inner *= src.dim(i);
  return st.gpu->copy2D(dst.ptr + CuDevicePtr(dstBegin * inner), size_t(dst.dim(axis) * inner),
                        src.ptr + CuDevicePtr(srcBegin * inner), size_t(src.dim(axis) * inner),
                        size_t(len * inner), size_t(outer));
}

StatusOr<DeviceTensor> sliceAxis(GpuRunState &st, const DeviceTensor &x, int64_t axis,
                                 int64_t begin, int64_t len) {
  Shape shape = x.shape;
  shape[size_t(axis)] = len;
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor out, st.empty(x.dtype, shape));
  ACCEL_RT_RETURN_IF_ERROR(copyAlongAxis(st, out, 0, x, begin, len, axis));
  return out;
}

namespace {

/// A view step that works on either copy of a value.
template <typename ShapeFn> GpuKernel viewStep(ShapeFn shapeOf) {
  return [shapeOf](GpuRunState &, Inputs &in, Outputs &out) -> Status {
    GpuValue &x = *in[0];
    const GpuValue *like = at(in, 1);
    ACCEL_RT_ASSIGN_OR_RETURN(Shape shape, shapeOf(x.shape(), like ? &like->shape() : nullptr));
    GpuValue v;
    if (x.host.defined()) {
      ACCEL_RT_ASSIGN_OR_RETURN(v.host, x.host.reshaped(shape));
    }
    if (x.dev.defined()) {
      int64_t n = 1;
      for (int64_t d : shape)
        n *= d;
      if (n != x.dev.numElements())
        return badInput("cannot view " + x.dev.describe() + " as " + shapeToString(shape));
      v.dev = viewAs(x.dev, shape);
    }
    out.push_back(std::move(v));
    return Status::ok();
  };
}

} // namespace

/// `launch split`: columns copied out on the device.
StatusOr<GpuKernel> prepareSplit(const plan::PlanFile &, const pb::Step &step, const Attrs &a,
                                 const GpuPrepareContext &ctx) {
  const DType cdt = ctx.dtype;
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
  ACCEL_RT_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, a.ints("sizes"));
  ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, sizes.size()));
  return GpuKernel([=](GpuRunState &st, Inputs &in, Outputs &out) -> Status {
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor x, st.toDevice(*in[0], cdt));
    int64_t total = 0;
    for (int64_t s : sizes)
      total += s;
    if (x.rank() != 2 || total != x.dim(1))
      return badInput("cannot split " + x.describe() + " into columns of " +
                      std::to_string(total) + " in all");
    int64_t begin = 0;
    for (int64_t s : sizes) {
      GpuValue v;
      ACCEL_RT_ASSIGN_OR_RETURN(v.dev, sliceAxis(st, x, 1, begin, s));
      out.push_back(std::move(v));
      begin += s;
    }
    return Status::ok();
  });
}

/// `launch split_heads`, a view.
StatusOr<GpuKernel> prepareSplitHeads(const plan::PlanFile &, const pb::Step &step, const Attrs &a,
                                      const GpuPrepareContext &) {
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
  ACCEL_RT_ASSIGN_OR_RETURN(int64_t heads, a.i("num_heads"));
  return viewStep([heads](const Shape &s, const Shape *) -> StatusOr<Shape> {
    if (s.size() != 2 || heads <= 0 || s[1] % heads != 0)
      return badInput("cannot split " + shapeToString(s) + " into " + std::to_string(heads) +
                      " heads");
    return Shape{s[0], heads, s[1] / heads};
  });
}

/// `launch merge_heads`, a view.
StatusOr<GpuKernel> prepareMergeHeads(const plan::PlanFile &, const pb::Step &step, const Attrs &,
                                      const GpuPrepareContext &) {
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
  return viewStep([](const Shape &s, const Shape *) -> StatusOr<Shape> {
    if (s.size() != 3)
      return badInput("merge_heads needs [tokens, heads, head_dim], got " + shapeToString(s));
    return Shape{s[0], s[1] * s[2]};
  });
}

/// `launch flatten_tokens`, a view.
StatusOr<GpuKernel> prepareFlattenTokens(const plan::PlanFile &, const pb::Step &step,
                                         const Attrs &a, const GpuPrepareContext &) {
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
  ACCEL_RT_ASSIGN_OR_RETURN(int64_t rank, a.i("rank"));
  return viewStep([rank](const Shape &s, const Shape *) -> StatusOr<Shape> {
    int64_t n = 1;
    for (int64_t d : s)
      n *= d;
    if (rank == 1)
      return Shape{n};
    if (s.empty())
      return badInput("cannot flatten a scalar into [tokens, features]");
    return Shape{s.back() ? n / s.back() : 0, s.back()};
  });
}

/// `launch unflatten_tokens`, a view.
StatusOr<GpuKernel> prepareUnflattenTokens(const plan::PlanFile &, const pb::Step &step,
                                           const Attrs &a, const GpuPrepareContext &) {
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 2));
  ACCEL_RT_ASSIGN_OR_RETURN(int64_t tokenDims, a.i("num_token_dims"));
  return viewStep([tokenDims](const Shape &s, const Shape *like) -> StatusOr<Shape> {
    if (!like || tokenDims < 0 || tokenDims > int64_t(like->size()))
      return badInput("cannot take " + std::to_string(tokenDims) + " token dimensions");
    Shape shape(like->begin(), like->begin() + tokenDims);
    int64_t tokens = 1;
    for (int64_t d : shape)
      tokens *= d;
    if (s.empty() || tokens != s[0])
      return badInput("the input " + shapeToString(s) + " does not have the " +
                      std::to_string(tokens) + " tokens of " + shapeToString(*like));
    for (size_t i = 1; i < s.size(); ++i)
      shape.push_back(s[i]);
    return shape;
  });
}

/// A `copy` step: a new buffer with the input's contents.
StatusOr<GpuKernel> prepareCopy(const pb::Step &step) {
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
  ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, 1));
  return GpuKernel([](GpuRunState &st, Inputs &in, Outputs &out) -> Status {
    GpuValue v;
    if (in[0]->dev.defined()) {
      ACCEL_RT_ASSIGN_OR_RETURN(v.dev, st.empty(in[0]->dev.dtype, in[0]->dev.shape));
      ACCEL_RT_RETURN_IF_ERROR(st.gpu->copy(v.dev.ptr, in[0]->dev.ptr, v.dev.byteSize()));
    } else {
      v.host = in[0]->host.clone();
    }
    out.push_back(std::move(v));
    return Status::ok();
  });
}

} // namespace accel::rt::engine::ops
