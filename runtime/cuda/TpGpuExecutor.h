//===- TpGpuExecutor.h - a tensor-parallel plan on N GPUs -------*- C++ -*-===//
//
// Runs a plan partitioned for N tensor-parallel ranks (accelc -tp=N) on N
// GPUs of this machine, TpCpuExecutor's contract on the GPU: N GpuExecutors,
// rank r on CUDA device options.device + r over its rank's weights section
// (`weights.rank<r>`) and its own device KV pool, one thread per rank per
// step. The ranks meet at the plan's collective steps through NCCL (opened
// at run time, runtime/comm/Nccl.h), one communicator per GPU from
// ncclCommInitAll; the vocabulary-parallel embedding and LM head need no
// more than that.
//
// KV cache: the caller's pool (the engine's, KvStorage::kDevice) is the
// block allocator; its block tables are every rank's. Every rank keeps a
// device pool of the caller's geometry (the plan's kv_cache is one rank's:
// its KV heads), and the copy-on-write block copies the caller's pool
// queues are applied to every one of them before the step. planKvCache
// sizes every rank's pool and returns the smallest count.
//
// CUDA graphs: each rank captures its own decode graphs, NCCL kernels
// included (NCCL 2.10+; the eager warm-up before a capture makes NCCL's
// connections outside it). --enforce-eager / ACCEL_GPU_GRAPHS=0 turn them
// off as for one GPU.
//
// Rank 0's logits are returned (the plan all_gathers them). A rank whose
// step fails stops the group: the other ranks' later collectives fail at
// once, NCCL kernels that already wait for it are aborted, and the first
// failing rank's error is returned, naming the rank. The next step makes a
// new group. Pipelined plans (accelc -pp) are refused.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_TPGPUEXECUTOR_H
#define ACCEL_RUNTIME_CUDA_TPGPUEXECUTOR_H

#include "runtime/cuda/GpuExecutor.h"
#include "runtime/cuda/P2pAllReduce.h"

#include <functional>

namespace accel::rt::engine {

class TpGpuExecutor final : public Backend {
public:
  /// kUnavailable in one sentence when the machine has fewer GPUs than the
  /// plan has ranks (from options.device on) or NCCL cannot be opened.
  static StatusOr<std::unique_ptr<TpGpuExecutor>>
  create(std::shared_ptr<const plan::PlanFile> plan, const GpuExecutorOptions &options = {});
  ~TpGpuExecutor();

  int tpSize() const { return int(ranks_.size()); }
  GpuExecutor &rank(int r) { return *ranks_[size_t(r)]; }

  /// GpuExecutor::run's contract over all ranks.
  StatusOr<Tensor> run(const Tensor &tokenIds, kv::BlockPool &pool,
                       const kv::StepMetadata &meta) override;
  /// GpuExecutor::planKvCache on every rank (their profiling steps meet at
  /// the collectives); the fewest blocks any rank holds.
  StatusOr<int64_t> planKvCache(const kv::KVCacheConfig &geometry);

  DType computeDType() const { return ranks_[0]->computeDType(); }
  /// The device KV pools' element type (every rank's is the same).
  DType kvCacheDType() const { return ranks_[0]->kvCacheDType(); }
  /// Rank 0's description and the group: "..., tensor-parallel over 2 GPUs
  /// (0-1) with NCCL 2.28.3".
  std::string describe() const override;
  KvCacheHome kvCacheHome() const override { return {true, kvCacheDType()}; }
  StatusOr<int64_t> sizeKvCache(const kv::KVCacheConfig &geometry) override {
    return planKvCache(geometry);
  }

private:
  TpGpuExecutor() = default;
  /// A group of communicators, made again after a failed step.
  Status ensureGroup();
  /// fn(r) on one thread per rank; a failing rank stops the group. Returns
  /// the first failing rank's error (named), else ok; results are fn's.
  Status onRanks(const std::function<Status(int)> &fn);

  std::shared_ptr<const plan::PlanFile> plan_;
  GpuExecutorOptions options_;
  const comm::Nccl *nccl_ = nullptr;
  std::vector<std::unique_ptr<GpuExecutor>> ranks_;
  std::unique_ptr<comm::NcclGroup> group_;
  /// One thread per rank for the executor's life.
  class RankThreads;
  std::unique_ptr<RankThreads> threads_;
  /// The one-shot all-reduce over peer access (null: NCCL only; why in
  /// p2pOff_).
  std::unique_ptr<gpu::P2pAllReduce> p2p_;
  std::string p2pOff_;
};

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_CUDA_TPGPUEXECUTOR_H
