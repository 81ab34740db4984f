//===- P2pAllReduce.h - one-shot all-reduce over CUDA peer access -*- C++ -*-===//
//
// The all_reduce of a tensor-parallel plan whose ranks are the GPUs of one
// process (TpGpuExecutor), for small messages: one kernel per rank
// (runtime/cuda/kernels/AllReduce.cu) reads every rank's staging buffer through
// CUDA peer access and sums in rank order in f32, where NCCL runs its
// protocol of several steps. Decode steps (a few KiB to 1 MiB per
// all_reduce, two per layer) are latency-bound, and this is the latency
// that tensor parallelism adds to every layer (vLLM's and TensorRT-LLM's
// custom all-reduce do the same).
//
// Ranks may share a GPU (tensor-parallel ranks of a machine with fewer
// GPUs: TpGpuExecutor, which then has no NCCL and sends every collective
// here in chunks). Such a group never spins on the GPU: a kernel that waits
// for a kernel of another stream of its own GPU deadlocks as soon as
// anything synchronizes that GPU in between (the first launch of a lazily
// loaded kernel, cuBLASLt's modules, cuMemFree), which is what the spinning
// kernel did on an H100 (2026-12-08: the 30 s trap, then error 719). It is
// host-ordered instead: each rank copies its send into its staging half and
// records an event; the ranks' threads meet on the host (all have recorded);
// each rank's stream waits for its peers' events and sums every staging
// half (p2p_sum_*). A host-ordered group cannot be captured in a CUDA graph
// (TpGpuExecutor runs ranks that share GPUs eagerly).
//
// create() enables peer access between every pair of GPUs and gives each
// rank a staging buffer of kP2pMaxBytes and a zeroed flag area; it fails in
// one sentence when a pair cannot reach each other, and the caller keeps
// NCCL. Each rank calls run() from its own thread on its context's stream
// (it may be captured in a CUDA graph); every rank must call it with the same
// count and dtype, as with NCCL.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_P2PALLREDUCE_H
#define ACCEL_RUNTIME_CUDA_P2PALLREDUCE_H

#include "core/DType.h"
#include "runtime/cuda/GpuContext.h"
#include "runtime/cuda/HostMeeting.h"
#include "runtime/cuda/kernels/P2pAllReduce.h"

#include <array>
#include <memory>
#include <vector>

namespace accel::rt::gpu {

class P2pAllReduce {
public:
  /// The group of `ranks` (rank r on ranks[r]'s GPU; 2 to 8), from the
  /// calling thread; host-ordered when two ranks share a GPU.
  static StatusOr<std::unique_ptr<P2pAllReduce>> create(const std::vector<GpuContext *> &ranks);
  ~P2pAllReduce();

  /// Whether run() takes `count` elements of `dtype`: f32, bf16 or f16, a
  /// whole number of 16-byte vectors, at most kP2pMaxBytes.
  static bool takes(std::size_t count, DType dtype);

  /// recv = the sum over ranks of send (`count` elements of `dtype`; recv
  /// may not be send) on rank `rank`'s stream.
  Status run(int rank, CuDevicePtr send, CuDevicePtr recv, std::size_t count, DType dtype);

  int size() const { return int(ranks_.size()); }
  /// The ranks meet on the host, not in a spinning kernel (ranks that
  /// share a GPU).
  bool hostOrdered() const { return meeting_ != nullptr; }

  /// After rank `absent`'s step failed before an all_reduce its peers
  /// reached: lets the peers' kernels that wait for it go on (with sums that
  /// mean nothing; the step fails anyway), by writing "arrived" into every
  /// peer's flags from a stream of its own; a host-ordered group wakes the
  /// threads waiting on the host instead, whose run() fails. The group needs
  /// reset() before it is used again.
  Status releaseWaitersFor(int absent);
  /// Zeroes every rank's flags and epochs on its stream and waits: after a
  /// failed step, so that the next call starts from epoch 1 everywhere.
  Status reset();

private:
  P2pAllReduce() = default;
  Status makeHostOrdered();
  Status runHostOrdered(int rank, CuDevicePtr send, CuDevicePtr recv, std::size_t count,
                        DType dtype);
  std::vector<GpuContext *> ranks_;
  std::vector<DeviceBuffer> data_, flags_;
  accel_p2p::P2pAllReduceParams params_{};
  /// Host-ordered groups: the ranks' meeting point, each rank's calls so
  /// far, and per rank and staging half the events "my send is staged"
  /// (ready) and "I have read every staging half" (done).
  std::unique_ptr<HostMeeting> meeting_;
  std::vector<unsigned long long> calls_;
  std::vector<std::array<CuEvent, 2>> ready_, done_;
};

} // namespace accel::rt::gpu

#endif // ACCEL_RUNTIME_CUDA_P2PALLREDUCE_H
