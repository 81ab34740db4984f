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
                                 int64_t begin, int64_t len, int out) {
  Shape shape = x.shape;
  shape[size_t(axis)] = len;
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, out >= 0 ? st.output(size_t(out), x.dtype, shape)
                                                      : st.empty(x.dtype, shape));
  const DeviceTensor &out_ = y;
  ACCEL_RT_RETURN_IF_ERROR(copyAlongAxis(st, out_, 0, x, begin, len, axis));
  return y;
}


/// `split`: the last axis cut into parts, each copied out on the device.
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
    if (x.rank() < 1 || total != x.dim(-1))
      return badInput("cannot split " + x.describe() + " into columns of " +
                      std::to_string(total) + " in all");
    int64_t begin = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      const int64_t s = sizes[i];
      GpuValue v;
      ACCEL_RT_ASSIGN_OR_RETURN(v.dev, sliceAxis(st, x, x.rank() - 1, begin, s, int(i)));
      out.push_back(std::move(v));
      begin += s;
    }
    return Status::ok();
  });
}

/// A `copy` step: a new buffer with the input's contents.
StatusOr<GpuKernel> prepareCopy(const pb::Step &step) {
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
  ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, 1));
  return GpuKernel([](GpuRunState &st, Inputs &in, Outputs &out) -> Status {
    GpuValue v;
    if (in[0]->dev.defined()) {
      ACCEL_RT_ASSIGN_OR_RETURN(v.dev, st.output(0, in[0]->dev.dtype, in[0]->dev.shape));
      ACCEL_RT_RETURN_IF_ERROR(st.gpu->copy(v.dev.ptr, in[0]->dev.ptr, v.dev.byteSize()));
    } else {
      v.host = in[0]->host.clone();
    }
    out.push_back(std::move(v));
    return Status::ok();
  });
}

} // namespace accel::rt::engine::ops
