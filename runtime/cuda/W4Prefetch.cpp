//===- W4Prefetch.cpp - 4-bit weights dequantised a GEMM ahead ------------===//
#include "runtime/cuda/W4Prefetch.h"

#include "runtime/cuda/kernels/Int4Layout.h"
#include "runtime/cuda/ops/Ops.h"

#include <algorithm>

namespace accel::rt::engine {

namespace {
namespace kn = accel::rt::kernels;
using ops::badInput;
constexpr unsigned kEventDisableTiming = 0x2; // CU_EVENT_DISABLE_TIMING
constexpr unsigned kStreamNonBlocking = 0x1;  // CU_STREAM_NON_BLOCKING
constexpr unsigned kDequantThreads = 256;
} // namespace

StatusOr<W4Dequant> w4Dequant(const DeviceTensor &w, const DeviceTensor &scale,
                              const DeviceTensor *zp, int64_t group) {
  if (!w.packedInt4 || w.rank() != 2)
    return Status(StatusCode::kInternal,
                  "the 4-bit weight " + w.describe() + " was not packed at load");
  W4Dequant d;
  d.w = w.ptr;
  d.n = w.dim(0);
  d.k = w.dim(1);
  const kn::W4Layout layout = kn::w4Layout(d.n, d.k);
  d.packedBytes = layout.bytes();
  d.groupChunks = std::max<int64_t>(layout.chunks, 1);
  const int64_t scales = scale.numElements();
  if (group > 0) {
    if (group % kn::kW4Chunk != 0 || d.k % group != 0)
      return Status(StatusCode::kUnimplemented,
                    "the GPU runs 4-bit groups of a multiple of 64 columns that divides K; the "
                    "weight " + w.describe() + " has groups of " + std::to_string(group));
    if (scales != d.n * (d.k / group))
      return badInput("the weight scale " + scale.describe() + " must be [" +
                      std::to_string(d.n) + ", " + std::to_string(d.k / group) +
                      "] (per group of " + std::to_string(group) + ")");
    d.scaleRow = d.k / group;
    d.groupChunks = group / kn::kW4Chunk;
  } else if (scales == d.n && d.n != 1) {
    d.scaleRow = 1;
  } else if (scales != 1) {
    return badInput("the weight scale " + scale.describe() + " must have one entry per output (" +
                    std::to_string(d.n) + ") or one in all");
  }
  if (zp && (zp->dtype != w.dtype || zp->numElements() != scales))
    return badInput("the zero point " + zp->describe() + " must be " + dtypeName(w.dtype) +
                    " with one entry per scale (" + std::to_string(scales) + ")");
  d.qmin = w.dtype == DType::kI4 ? -8 : 0;
  d.scale = scale.ptr;
  d.zp = zp ? zp->ptr : CuDevicePtr(0);
  return d;
}

StatusOr<std::unique_ptr<W4Prefetcher>> W4Prefetcher::create(gpu::GpuContext &g, DType cdt,
                                                              std::vector<W4Dequant> order) {
  const CudaApi &api = g.api();
  if (!api.cuStreamCreate || !api.cuStreamDestroy || !api.cuEventCreate ||
      !api.cuEventRecord || !api.cuStreamWaitEvent)
    return Status(StatusCode::kUnavailable,
                  "the CUDA driver has no streams and events to prefetch 4-bit weights with");
  if (order.size() < 2)
    return Status(StatusCode::kInvalidArgument,
                  "prefetching 4-bit weights needs two of them or more, not " +
                      std::to_string(order.size()));
  std::unique_ptr<W4Prefetcher> p(new W4Prefetcher());
  p->g_ = &g;
  p->cdt_ = cdt;
  const char *suffix = cdt == DType::kF32 ? "f32" : cdt == DType::kBF16 ? "bf16" : "f16";
  ACCEL_RT_ASSIGN_OR_RETURN(p->dequant_, g.function(std::string("dequantize_w4_") + suffix));
  for (size_t i = 0; i < order.size(); ++i) {
    if (!p->index_.emplace(order[i].w, int(i)).second)
      return Status(StatusCode::kInvalidArgument,
                    "a 4-bit weight appears twice in the prefetch order (step " +
                        std::to_string(i) + ")");
    p->bufferBytes_ =
        std::max(p->bufferBytes_, std::size_t(order[i].n * order[i].k) * dtypeSize(cdt));
  }
  p->order_ = std::move(order);
  ACCEL_RT_RETURN_IF_ERROR(g.makeCurrent());
  ACCEL_RT_RETURN_IF_ERROR(g.check(api.cuStreamCreate(&p->side_, kStreamNonBlocking),
                                   "cuStreamCreate"));
  for (int b = 0; b < 2; ++b) {
    ACCEL_RT_RETURN_IF_ERROR(g.check(api.cuEventCreate(&p->ready_[size_t(b)], kEventDisableTiming),
                                     "cuEventCreate"));
    ACCEL_RT_RETURN_IF_ERROR(g.check(api.cuEventCreate(&p->read_[size_t(b)], kEventDisableTiming),
                                     "cuEventCreate"));
  }
  return p;
}

W4Prefetcher::~W4Prefetcher() {
  if (!g_)
    return;
  const CudaApi &api = g_->api();
  (void)g_->makeCurrent();
  // The side stream may still write a buffer: finish before they are freed.
  if (side_ && api.cuStreamSynchronize)
    (void)api.cuStreamSynchronize(side_);
  for (CuEvent e : {ready_[0], ready_[1], read_[0], read_[1]})
    if (e)
      (void)api.cuEventDestroy(e);
  if (side_)
    (void)api.cuStreamDestroy(side_);
}

Status W4Prefetcher::ensureBuffers() {
  if (buf_[0] && buf_[1])
    return Status::ok();
  for (int b = 0; b < 2; ++b) {
    if (buf_[size_t(b)])
      continue;
    StatusOr<gpu::DeviceBuffer> m = g_->allocateExact(bufferBytes_);
    if (!m)
      return m.status();
    buf_[size_t(b)] = std::move(*m);
  }
  return Status::ok();
}

Status W4Prefetcher::launchDequant(const W4Dequant &d, CuDevicePtr out,
                                   CuStream stream) {
  if (d.packedBytes == 0)
    return Status::ok();
  CuDevicePtr w = d.w, scale = d.scale, zp = d.zp, o = out;
  int qmin = d.qmin;
  long long n = d.n, k = d.k, scaleRow = d.scaleRow, groupChunks = d.groupChunks;
  void *params[] = {&w, &scale, &zp, &qmin, &o, &n, &k, &scaleRow, &groupChunks, nullptr};
  // One thread per packed 32-bit word, grid-stride (as int4Gemm launches it).
  const gpu::Dim3 grid = ops::strideGrid(d.packedBytes / 4, kDequantThreads);
  return g_->check(g_->api().cuLaunchKernel(dequant_, grid.x, 1, 1, kDequantThreads, 1, 1, 0,
                                            stream, params, nullptr),
                   "cuLaunchKernel");
}

StatusOr<CuDevicePtr> W4Prefetcher::acquire(const W4Dequant &d) {
  if (current_ >= 0)
    return Status(StatusCode::kInternal, "W4Prefetcher::acquire before the last release");
  auto it = index_.find(d.w);
  if (noBuffers_ || it == index_.end())
    return CuDevicePtr(0);
  if (Status s = ensureBuffers(); !s.isOk()) {
    noBuffers_ = true; // no memory for them: dequantise as without a prefetcher
    buf_[0] = nullptr;
    buf_[1] = nullptr;
    return CuDevicePtr(0);
  }
  const CudaApi &api = g_->api();
  const CuStream main = g_->stream();
  const int want = it->second;
  int b = holds_[0] == want ? 0 : holds_[1] == want ? 1 : -1;
  if (b >= 0) {
    ++hits_;
    // Its dequantisation was enqueued on the side stream.
    ACCEL_RT_RETURN_IF_ERROR(
        g_->check(api.cuStreamWaitEvent(main, ready_[size_t(b)], 0), "cuStreamWaitEvent"));
  } else {
    ++misses_;
    // Out of order (the first weight of a run, a step that skips some):
    // dequantise here, into the buffer that does not hold the weight after
    // this one, once no side-stream work still writes it.
    const int after = (want + 1) % int(order_.size());
    b = holds_[0] == after ? 1 : 0;
    ACCEL_RT_RETURN_IF_ERROR(
        g_->check(api.cuStreamWaitEvent(main, ready_[size_t(b)], 0), "cuStreamWaitEvent"));
    ACCEL_RT_RETURN_IF_ERROR(launchDequant(d, buf_[size_t(b)]->ptr, main));
    holds_[size_t(b)] = want;
  }
  current_ = b;
  g_->noteForeignWork(); // the GEMM after this may not launch dependently on an event wait
  return buf_[size_t(b)]->ptr;
}

Status W4Prefetcher::release() {
  if (current_ < 0)
    return Status(StatusCode::kInternal, "W4Prefetcher::release without an acquire");
  const int b = current_;
  current_ = -1;
  const CudaApi &api = g_->api();
  ACCEL_RT_RETURN_IF_ERROR(
      g_->check(api.cuEventRecord(read_[size_t(b)], g_->stream()), "cuEventRecord"));
  // The next weight into the other buffer, after that buffer's last GEMM.
  const int next = (holds_[size_t(b)] + 1) % int(order_.size());
  const int o = 1 - b;
  if (holds_[size_t(o)] == next)
    return Status::ok(); // already there or on its way
  ACCEL_RT_RETURN_IF_ERROR(
      g_->check(api.cuStreamWaitEvent(side_, read_[size_t(o)], 0), "cuStreamWaitEvent"));
  ACCEL_RT_RETURN_IF_ERROR(launchDequant(order_[size_t(next)], buf_[size_t(o)]->ptr, side_));
  ACCEL_RT_RETURN_IF_ERROR(
      g_->check(api.cuEventRecord(ready_[size_t(o)], side_), "cuEventRecord"));
  holds_[size_t(o)] = next;
  return Status::ok();
}

} // namespace accel::rt::engine
