//===- Collectives.cpp - collective steps on the GPU ----------------------===//
//
// all_reduce (the one-shot peer-access kernel for small ones, else NCCL)
// and all_gather (NCCL) across the plan's tensor-parallel ranks; ranks that
// share GPUs (no NCCL) run both through the one-shot kernel, in chunks.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/ops/Ops.h"

namespace accel::rt::engine::ops {

namespace {

/// `rank`'s block of an all_gather along a non-leading axis, [outer, width
/// bytes] at `src`, into its columns of the result [outer, group * width
/// bytes] at `dst`: one 2D copy (row by row for pitches of 2 GiB or more).
Status placeBlock(GpuRunState &st, CuDevicePtr dst, CuDevicePtr src, size_t width, int64_t rank,
                  int64_t group, int64_t outer) {
  const size_t pitch = width * size_t(group);
  dst += CuDevicePtr(size_t(rank) * width);
  if (pitch < (size_t(1) << 31))
    return st.gpu->copy2D(dst, pitch, src, width, width, size_t(outer));
  for (int64_t i = 0; i < outer; ++i)
    ACCEL_RT_RETURN_IF_ERROR(st.gpu->copy(dst + CuDevicePtr(size_t(i) * pitch),
                                          src + CuDevicePtr(size_t(i) * width), width));
  return Status::ok();
}

/// An all_gather's result shape (x's with `axisAttr` times `group`) and
/// the product of the dimensions before that axis.
StatusOr<std::pair<Shape, int64_t>> gatheredShape(const DeviceTensor &x, int64_t axisAttr,
                                                  int64_t group) {
  const int64_t axis = axisAttr < 0 ? axisAttr + x.rank() : axisAttr;
  if (axis < 0 || axis >= x.rank())
    return badInput("all_gather axis " + std::to_string(axisAttr) + " is out of range for " +
                    x.describe());
  Shape shape = x.shape;
  shape[size_t(axis)] *= group;
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= x.dim(i);
  return std::make_pair(std::move(shape), outer);
}

/// recv = the sum over the one-shot group of send, `count` elements, in
/// chunks the one-shot kernel takes (each a whole number of 16-byte
/// vectors of at most kP2pMaxBytes).
Status oneShotAllReduce(GpuRunState &st, CuDevicePtr send, CuDevicePtr recv, size_t count,
                        DType dtype) {
  const size_t elem = dtypeSize(dtype);
  const size_t chunk = size_t(accel_p2p::kP2pMaxBytes) / elem;
  for (size_t at = 0; at < count; at += chunk) {
    const size_t n = std::min(chunk, count - at);
    if (!gpu::P2pAllReduce::takes(n, dtype))
      return Status(StatusCode::kUnimplemented,
                    "tensor-parallel ranks that share a GPU reduce through the one-shot "
                    "all-reduce, which takes f32, bf16 or f16 in 16-byte vectors; this one is " +
                        std::to_string(count) + " elements of " + dtypeName(dtype));
    ACCEL_RT_RETURN_IF_ERROR(st.p2p->run(st.p2pRank, send + CuDevicePtr(at * elem),
                                         recv + CuDevicePtr(at * elem), n, dtype));
  }
  return Status::ok();
}

/// A collective without NCCL (tensor-parallel ranks that share GPUs): the
/// one-shot group sums; an all_gather is the sum of every rank's block
/// placed in zeros (exact: every element is one rank's value plus zeros).
Status oneShotCollective(GpuRunState &st, GpuValue &input, bool gather, int64_t axisAttr,
                         Outputs &out) {
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor x, st.toDevice(input));
  const size_t count = size_t(x.numElements());
  const int64_t group = st.p2p->size();
  st.gpu->noteForeignWork();
  GpuValue v;
  if (!gather) {
    ACCEL_RT_ASSIGN_OR_RETURN(v.dev, st.output(0, x.dtype, x.shape));
    if (count)
      ACCEL_RT_RETURN_IF_ERROR(oneShotAllReduce(st, x.ptr, v.dev.ptr, count, x.dtype));
    out.push_back(std::move(v));
    return Status::ok();
  }
  ACCEL_RT_ASSIGN_OR_RETURN(auto gathered, gatheredShape(x, axisAttr, group));
  const auto &[shape, outer] = gathered;
  ACCEL_RT_ASSIGN_OR_RETURN(v.dev, st.output(0, x.dtype, shape));
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor placed, st.empty(x.dtype, shape));
  ACCEL_RT_RETURN_IF_ERROR(st.gpu->zero(placed.ptr, placed.byteSize()));
  if (count) {
    const size_t width = count * dtypeSize(x.dtype) / size_t(outer); // a row of its block
    ACCEL_RT_RETURN_IF_ERROR(placeBlock(st, placed.ptr, x.ptr, width, st.p2pRank, group, outer));
    ACCEL_RT_RETURN_IF_ERROR(oneShotAllReduce(st, placed.ptr, v.dev.ptr, count * size_t(group),
                                              x.dtype));
  }
  out.push_back(std::move(v));
  return Status::ok();
}

} // namespace

/// A `collective` step across the plan's tensor-parallel ranks: NCCL on
/// the rank's stream (GpuRunState::comm, TpGpuExecutor), into a new device
/// tensor of the input's dtype. all_gather along a non-leading axis gathers
/// rank-major ([ranks, outer, inner], NCCL's layout) into a scratch buffer,
/// then one 2D copy per rank puts its [outer, inner] block at column
/// rank * inner of the [outer, ranks * inner] result.
StatusOr<GpuKernel> prepareCollective(const plan::PlanFile &plan, const pb::Step &step,
                                      const Attrs &a) {
  ACCEL_RT_ASSIGN_OR_RETURN(CollectiveParams cp,
                            readCollectiveParams(plan, step, a, /*allowSingle=*/true));
  const int64_t group = cp.group, axisAttr = cp.axis;
  const bool gather = cp.gather;
  return GpuKernel([group, gather, axisAttr](GpuRunState &st, Inputs &in,
                                             Outputs &out) -> Status {
    if (group == 1) {
      out.push_back(*in[0]);
      return Status::ok();
    }
    if (!st.comm && st.p2p && st.p2p->size() == group)
      return oneShotCollective(st, *in[0], gather, axisAttr, out);
    if (!st.comm || st.comm->size() != group)
      return Status(StatusCode::kInternal,
                    "a collective over " + std::to_string(group) +
                        " ranks needs every rank running (the tensor-parallel executor)");
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor x, st.toDevice(*in[0]));
    const size_t count = size_t(x.numElements());
    void *stream = st.gpu->stream();
    st.gpu->noteForeignWork(); // NCCL's kernels: the next launch is a plain one
    GpuValue v;
    if (!gather) {
      ACCEL_RT_ASSIGN_OR_RETURN(v.dev, st.output(0, x.dtype, x.shape));
      if (count && st.p2p && gpu::P2pAllReduce::takes(count, x.dtype))
        ACCEL_RT_RETURN_IF_ERROR(st.p2p->run(st.comm->rank(), x.ptr, v.dev.ptr, count, x.dtype));
      else if (count)
        ACCEL_RT_RETURN_IF_ERROR(
            st.comm->allReduceSum(x.ptr, v.dev.ptr, count, x.dtype, stream));
      out.push_back(std::move(v));
      return Status::ok();
    }
    ACCEL_RT_ASSIGN_OR_RETURN(auto gathered, gatheredShape(x, axisAttr, group));
    const auto &[shape, outer] = gathered;
    ACCEL_RT_ASSIGN_OR_RETURN(v.dev, st.output(0, x.dtype, shape));
    if (count == 0) {
      out.push_back(std::move(v));
      return Status::ok();
    }
    if (outer == 1) { // rank-major is the result's layout
      ACCEL_RT_RETURN_IF_ERROR(st.comm->allGather(x.ptr, v.dev.ptr, count, x.dtype, stream));
      out.push_back(std::move(v));
      return Status::ok();
    }
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor ranks, st.empty(x.dtype, {group * int64_t(count)}));
    ACCEL_RT_RETURN_IF_ERROR(st.comm->allGather(x.ptr, ranks.ptr, count, x.dtype, stream));
    const size_t block = count * dtypeSize(x.dtype); // one rank's [outer, inner]
    for (int64_t r = 0; r < group; ++r)
      ACCEL_RT_RETURN_IF_ERROR(placeBlock(st, v.dev.ptr, ranks.ptr + CuDevicePtr(size_t(r) * block),
                                          block / size_t(outer), r, group, outer));
    out.push_back(std::move(v));
    return Status::ok();
  });
}

} // namespace accel::rt::engine::ops
