//===- P2pAllReduce.cpp - one-shot all-reduce over CUDA peer access -------===//
#include "runtime/cuda/P2pAllReduce.h"

#include <algorithm>

namespace accel::rt::gpu {

namespace {
constexpr int kCudaErrorPeerAccessAlreadyEnabled = 704;
constexpr unsigned kThreads = 512;
constexpr unsigned kEventDisableTiming = 0x2; // CU_EVENT_DISABLE_TIMING
const char *suffixOf(DType dtype) {
  return dtype == DType::kF32 ? "f32" : dtype == DType::kBF16 ? "bf16" : "f16";
}
} // namespace

StatusOr<std::unique_ptr<P2pAllReduce>>
P2pAllReduce::create(const std::vector<GpuContext *> &ranks) {
  const int n = int(ranks.size());
  if (n < 2 || n > accel_p2p::kP2pMaxRanks)
    return Status(StatusCode::kUnavailable,
                  "the one-shot all-reduce takes 2 to " +
                      std::to_string(accel_p2p::kP2pMaxRanks) + " GPUs, not " + std::to_string(n));
  const CudaApi &api = ranks[0]->api();
  if (!api.cuDeviceCanAccessPeer || !api.cuCtxEnablePeerAccess)
    return Status(StatusCode::kUnavailable, "the CUDA driver has no peer access entry points");
  std::unique_ptr<P2pAllReduce> p(new P2pAllReduce());
  p->ranks_ = ranks;
  for (int r = 0; r < n; ++r) {
    GpuContext &g = *ranks[size_t(r)];
    ACCEL_RT_RETURN_IF_ERROR(g.makeCurrent());
    for (int q = 0; q < n; ++q) {
      // Ranks on one GPU share its primary context: nothing to enable.
      if (q == r || ranks[size_t(q)]->device() == g.device())
        continue;
      int can = 0;
      ACCEL_RT_RETURN_IF_ERROR(g.check(
          api.cuDeviceCanAccessPeer(&can, g.device(), ranks[size_t(q)]->device()),
          "cuDeviceCanAccessPeer"));
      if (!can)
        return Status(StatusCode::kUnavailable,
                      "GPU " + std::to_string(g.device()) + " cannot access GPU " +
                          std::to_string(ranks[size_t(q)]->device()) + "'s memory (no peer access)");
      const int rc = api.cuCtxEnablePeerAccess(ranks[size_t(q)]->context(), 0);
      if (rc != 0 && rc != kCudaErrorPeerAccessAlreadyEnabled)
        ACCEL_RT_RETURN_IF_ERROR(g.check(rc, "cuCtxEnablePeerAccess"));
    }
    // Exact buffers: they live as long as the group, outside every pool.
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceBuffer data, g.allocateExact(2 * accel_p2p::kP2pMaxBytes));
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceBuffer flags,
                              g.allocateExact(accel_p2p::kP2pFlagWords * sizeof(unsigned)));
    ACCEL_RT_RETURN_IF_ERROR(g.zero(flags->ptr, accel_p2p::kP2pFlagWords * sizeof(unsigned)));
    ACCEL_RT_RETURN_IF_ERROR(g.synchronize());
    p->params_.data[r] = data->ptr;
    p->params_.flags[r] = flags->ptr;
    p->data_.push_back(std::move(data));
    p->flags_.push_back(std::move(flags));
  }
  p->params_.ranks = n;
  for (int r = 0; r < n; ++r)
    for (int q = 0; q < r; ++q)
      if (ranks[size_t(q)]->device() == ranks[size_t(r)]->device() && !p->meeting_)
        ACCEL_RT_RETURN_IF_ERROR(p->makeHostOrdered());
  return p;
}

Status P2pAllReduce::makeHostOrdered() {
  const CudaApi &api = ranks_[0]->api();
  if (!api.cuEventCreate || !api.cuEventRecord || !api.cuStreamWaitEvent ||
      !api.cuMemcpyDtoDAsync)
    return Status(StatusCode::kUnavailable,
                  "the CUDA driver has no events (cuEventCreate, cuEventRecord, "
                  "cuStreamWaitEvent) to order the all-reduce of ranks that share a GPU");
  meeting_ = std::make_unique<HostMeeting>(size());
  calls_.assign(size_t(size()), 0);
  ready_.assign(size_t(size()), {nullptr, nullptr});
  done_.assign(size_t(size()), {nullptr, nullptr});
  for (int r = 0; r < size(); ++r) {
    GpuContext &g = *ranks_[size_t(r)];
    ACCEL_RT_RETURN_IF_ERROR(g.makeCurrent());
    for (int h = 0; h < 2; ++h) {
      ACCEL_RT_RETURN_IF_ERROR(g.check(
          api.cuEventCreate(&ready_[size_t(r)][size_t(h)], kEventDisableTiming), "cuEventCreate"));
      ACCEL_RT_RETURN_IF_ERROR(g.check(
          api.cuEventCreate(&done_[size_t(r)][size_t(h)], kEventDisableTiming), "cuEventCreate"));
    }
    for (const char *s : {"f32", "bf16", "f16"})
      ACCEL_RT_RETURN_IF_ERROR(g.function(std::string("p2p_sum_") + s).status());
  }
  return Status::ok();
}

P2pAllReduce::~P2pAllReduce() {
  for (size_t r = 0; r < ready_.size(); ++r) {
    GpuContext &g = *ranks_[r];
    (void)g.makeCurrent();
    for (CuEvent e : {ready_[r][0], ready_[r][1], done_[r][0], done_[r][1]})
      if (e)
        (void)g.api().cuEventDestroy(e);
  }
}

Status P2pAllReduce::releaseWaitersFor(int absent) {
  if (absent < 0 || absent >= size())
    return Status(StatusCode::kInternal, "no rank " + std::to_string(absent) + " to release");
  if (meeting_) {
    // Nothing waits on the GPU: wake the threads waiting on the host.
    meeting_->stop();
    return Status::ok();
  }
  GpuContext &g = *ranks_[size_t(absent)];
  const CudaApi &api = g.api();
  ACCEL_RT_RETURN_IF_ERROR(g.makeCurrent());
  CuStream s = nullptr;
  ACCEL_RT_RETURN_IF_ERROR(g.check(api.cuStreamCreate(&s, /*CU_STREAM_NON_BLOCKING=*/1),
                                   "cuStreamCreate"));
  // Far ahead of any epoch a group reaches between two resets.
  const std::vector<unsigned> arrived(size_t(accel_p2p::kP2pMaxBlocks) * accel_p2p::kP2pMaxRanks,
                                      0x40000000u);
  Status st = Status::ok();
  for (int q = 0; q < size() && st.isOk(); ++q)
    if (q != absent)
      st = g.check(api.cuMemcpyHtoDAsync(params_.flags[q], arrived.data(),
                                         arrived.size() * sizeof(unsigned), s),
                   "cuMemcpyHtoDAsync");
  if (st.isOk())
    st = g.check(api.cuStreamSynchronize(s), "cuStreamSynchronize");
  (void)api.cuStreamDestroy(s);
  return st;
}

Status P2pAllReduce::reset() {
  for (int r = 0; r < size(); ++r) {
    GpuContext &g = *ranks_[size_t(r)];
    ACCEL_RT_RETURN_IF_ERROR(g.makeCurrent());
    ACCEL_RT_RETURN_IF_ERROR(g.zero(params_.flags[r], accel_p2p::kP2pFlagWords * sizeof(unsigned)));
    ACCEL_RT_RETURN_IF_ERROR(g.synchronize());
  }
  if (meeting_) {
    // Every stream is idle: the next call of every rank is call 0.
    std::fill(calls_.begin(), calls_.end(), 0ull);
    meeting_->restart();
  }
  return Status::ok();
}

bool P2pAllReduce::takes(std::size_t count, DType dtype) {
  if (dtype != DType::kF32 && dtype != DType::kBF16 && dtype != DType::kF16)
    return false;
  const std::size_t bytes = count * dtypeSize(dtype);
  return bytes > 0 && bytes % 16 == 0 && bytes <= accel_p2p::kP2pMaxBytes;
}

Status P2pAllReduce::run(int rank, CuDevicePtr send, CuDevicePtr recv, std::size_t count,
                         DType dtype) {
  if (!takes(count, dtype) || rank < 0 || rank >= size())
    return Status(StatusCode::kInternal, "the one-shot all-reduce cannot take " +
                                             std::to_string(count) + " elements of " +
                                             dtypeName(dtype));
  if (meeting_)
    return runHostOrdered(rank, send, recv, count, dtype);
  GpuContext &g = *ranks_[size_t(rank)];
  const long long n16 = (long long)(count * dtypeSize(dtype) / 16);
  // Enough blocks to spread the copies, few enough to be resident at once.
  const unsigned blocks = unsigned(std::clamp<long long>((n16 + kThreads - 1) / kThreads, 1,
                                                         accel_p2p::kP2pMaxBlocks / 2));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn,
                            g.function(std::string("p2p_allreduce_") + suffixOf(dtype)));
  accel_p2p::P2pAllReduceParams p = params_;
  p.rank = rank;
  return g.launch(fn, Dim3{blocks, 1, 1}, Dim3{kThreads, 1, 1}, 0, p, send, recv, n16);
}

Status P2pAllReduce::runHostOrdered(int rank, CuDevicePtr send, CuDevicePtr recv,
                                    std::size_t count, DType dtype) {
  GpuContext &g = *ranks_[size_t(rank)];
  if (g.capturing())
    return Status(StatusCode::kInternal,
                  "the all-reduce of ranks that share a GPU meets on the host, which a CUDA "
                  "graph cannot capture");
  const CudaApi &api = g.api();
  const CuStream stream = g.stream();
  const unsigned long long k = calls_[size_t(rank)]++;
  const int half = int(k & 1);
  const std::size_t bytes = count * dtypeSize(dtype);
  const CuDevicePtr staged = params_.data[rank] + (half ? accel_p2p::kP2pMaxBytes : 0);
  // Call k - 2 used this half: every peer has read it (their `done` of
  // call k - 2 was recorded before they met this rank at call k - 1).
  if (k >= 2)
    for (int q = 0; q < size(); ++q)
      if (q != rank)
        ACCEL_RT_RETURN_IF_ERROR(
            g.check(api.cuStreamWaitEvent(stream, done_[size_t(q)][size_t(half)], 0),
                    "cuStreamWaitEvent"));
  ACCEL_RT_RETURN_IF_ERROR(g.copy(staged, send, bytes));
  ACCEL_RT_RETURN_IF_ERROR(
      g.check(api.cuEventRecord(ready_[size_t(rank)][size_t(half)], stream), "cuEventRecord"));
  // Every peer has recorded its `ready` of call k once they all met.
  ACCEL_RT_RETURN_IF_ERROR(meeting_->meet());
  for (int q = 0; q < size(); ++q)
    if (q != rank)
      ACCEL_RT_RETURN_IF_ERROR(
          g.check(api.cuStreamWaitEvent(stream, ready_[size_t(q)][size_t(half)], 0),
                  "cuStreamWaitEvent"));
  const long long n16 = (long long)(bytes / 16);
  const unsigned blocks =
      unsigned(std::clamp<long long>((n16 + kThreads - 1) / kThreads, 1, 1024));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn, g.function(std::string("p2p_sum_") + suffixOf(dtype)));
  ACCEL_RT_RETURN_IF_ERROR(
      g.launch(fn, Dim3{blocks, 1, 1}, Dim3{kThreads, 1, 1}, 0, params_, half, recv, n16));
  ACCEL_RT_RETURN_IF_ERROR(
      g.check(api.cuEventRecord(done_[size_t(rank)][size_t(half)], stream), "cuEventRecord"));
  g.noteForeignWork();
  return Status::ok();
}

} // namespace accel::rt::gpu
