//===- P2pAllReduce.cpp - one-shot all-reduce over CUDA peer access -------===//
#include "runtime/cuda/P2pAllReduce.h"

#include <algorithm>

namespace accel::rt::gpu {

namespace {
constexpr int kCudaErrorPeerAccessAlreadyEnabled = 704;
constexpr unsigned kThreads = 512;
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
  return p;
}

Status P2pAllReduce::releaseWaitersFor(int absent) {
  if (absent < 0 || absent >= size())
    return Status(StatusCode::kInternal, "no rank " + std::to_string(absent) + " to release");
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
  GpuContext &g = *ranks_[size_t(rank)];
  const long long n16 = (long long)(count * dtypeSize(dtype) / 16);
  // Enough blocks to spread the copies, few enough to be resident at once.
  const unsigned blocks = unsigned(std::clamp<long long>((n16 + kThreads - 1) / kThreads, 1,
                                                         accel_p2p::kP2pMaxBlocks / 2));
  const char *suffix = dtype == DType::kF32 ? "f32" : dtype == DType::kBF16 ? "bf16" : "f16";
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn, g.function(std::string("p2p_allreduce_") + suffix));
  accel_p2p::P2pAllReduceParams p = params_;
  p.rank = rank;
  return g.launch(fn, Dim3{blocks, 1, 1}, Dim3{kThreads, 1, 1}, 0, p, send, recv, n16);
}

} // namespace accel::rt::gpu
