//===- TpGpuExecutor.h - a partitioned plan on the GPUs of one process -*- C++ -*-===//
//
// Runs a plan partitioned for N tensor-parallel ranks (accelc -tp=N) and M
// pipeline stages (accelc -pp=M) on the GPUs of this machine, TpCpuExecutor's
// contract on the GPU: M x N GpuExecutors, stage s rank r over its rank's
// weights section (`weights.rank<r>`), its stage's steps and its own device
// KV pool of its stage's layers, one thread per executor per step.
//
// Placement: with M x N GPUs from options.device on, stage s rank r runs on
// GPU options.device + s * N + r; with fewer but at least N, the stages
// share GPUs (rank r of every stage on GPU options.device + r: tests, small
// machines); fewer than N GPUs is refused in one sentence unless
// options.shareGpus, which puts rank r on GPU options.device + r mod the
// GPUs there are and sends every collective through the one-shot
// all-reduce (NCCL takes one rank per GPU).
//
// The ranks of a stage meet at the plan's collective steps through NCCL
// (opened at run time, runtime/comm/Nccl.h), one communicator group per
// stage from ncclCommInitAll (none for N = 1), and the one-shot all-reduce
// over peer access for small ones. A stage hands its values to a later one
// at pp_transfer steps through device memory (runtime/cuda/GpuPipeline.h:
// a staging buffer on the receiver's GPU, a peer copy between GPUs, events
// between the streams), so the stages' host threads never wait for a GPU
// to finish a part.
//
// KV cache: the caller's pool (the engine's, KvStorage::kDevice) is the
// block allocator; its block tables are every rank's and every stage's.
// Every executor keeps a device pool of the caller's geometry with its
// stage's layers (the plan's kv_cache is one rank's: its KV heads), and the
// copy-on-write block copies the caller's pool queues are applied to every
// one of them before the step. planKvCache profiles every executor, then
// gives each GPU's KV pools the same block count: what its
// --gpu-memory-utilization leaves, over the block bytes of the pools it
// holds, the fewest over the GPUs.
//
// CUDA graphs: each executor captures its own decode graphs, NCCL kernels
// and transfer copies included (NCCL 2.10+; the eager warm-up before a
// capture makes NCCL's connections outside it). --enforce-eager /
// ACCEL_GPU_GRAPHS=0 turn them off as for one GPU.
//
// The last stage's rank 0's logits are returned (the plan all_gathers
// them). An executor whose step fails stops its group and the pipeline:
// the other ranks' later collectives and transfers fail at once, NCCL
// kernels that already wait for it are aborted, and the first failing
// executor's error is returned, naming its rank (and stage). The next step
// makes new groups.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_TPGPUEXECUTOR_H
#define ACCEL_RUNTIME_CUDA_TPGPUEXECUTOR_H

#include "runtime/cuda/GpuExecutor.h"
#include "runtime/cuda/GpuPipeline.h"
#include "runtime/engine/PipelineStats.h"
#include "runtime/cuda/P2pAllReduce.h"

#include <functional>

namespace accel::rt::engine {

class TpGpuExecutor final : public Backend {
public:
  /// kUnavailable in one sentence when the machine has fewer GPUs than the
  /// plan has tensor-parallel ranks (from options.device on) or a plan of
  /// several ranks cannot open NCCL.
  static StatusOr<std::unique_ptr<TpGpuExecutor>>
  create(std::shared_ptr<const plan::PlanFile> plan, const GpuExecutorOptions &options = {});
  ~TpGpuExecutor();

  int tpSize() const { return tp_; }
  int ppSize() const { return pp_; }
  /// Rank r of stage 0 (rank(r, s): of stage s).
  GpuExecutor &rank(int r, int stage = 0) { return *ranks_[size_t(stage * tp_ + r)]; }
  /// The GPU stage s rank r runs on.
  int deviceOf(int r, int stage = 0) const { return devices_[size_t(stage * tp_ + r)]; }

  /// GpuExecutor::run's contract over all ranks and stages.
  StatusOr<Tensor> run(const Tensor &tokenIds, kv::BlockPool &pool,
                       const kv::StepMetadata &meta) override;
  /// Profiles every executor (their profiling steps meet at the collectives
  /// and transfers), then gives every device pool the same block count:
  /// the fewest any GPU holds (GPUs shared by stages split theirs).
  StatusOr<int64_t> planKvCache(const kv::KVCacheConfig &geometry);

  DType computeDType() const { return ranks_[0]->computeDType(); }
  /// The device KV pools' element type (every rank's is the same).
  DType kvCacheDType() const { return ranks_[0]->kvCacheDType(); }
  /// Rank 0's description and the layout: "..., tensor-parallel over 2 GPUs
  /// (0-1) with NCCL 2.28.3", "..., 2 pipeline stages on GPU 0".
  std::string describe() const override;
  /// A pipelined plan's per-stage busy and idle time (the GPU time of each
  /// stage's parts between events on its stream; idle is the rest of each
  /// step's wall time) and micro-batches.
  std::optional<PipelineStats> pipelineStats() const override;
  KvCacheHome kvCacheHome() const override { return {true, kvCacheDType()}; }
  StatusOr<int64_t> sizeKvCache(const kv::KVCacheConfig &geometry) override {
    return planKvCache(geometry);
  }

private:
  TpGpuExecutor() = default;
  /// Each stage's group of communicators, made again after a failed step.
  Status ensureGroups();
  /// fn(i) on one thread per executor (i = stage * tpSize + rank); a
  /// failing one stops its group and the pipeline. Returns the first
  /// failing executor's error (named), else ok.
  Status onRanks(const std::function<Status(int)> &fn);
  /// "rank 1" or "stage 1 rank 0".
  std::string who(int i) const;

  std::shared_ptr<const plan::PlanFile> plan_;
  GpuExecutorOptions options_;
  int tp_ = 1, pp_ = 1;
  /// The ranks share GPUs (GpuExecutorOptions::shareGpus): no NCCL, the
  /// one-shot groups carry every collective.
  bool shared_ = false;
  /// A pipelined plan's step runs as this many micro-batches (at most):
  /// GpuExecutorOptions::ppMicroBatches, else ACCEL_PP_MICRO_BATCHES, else
  /// the stage count (one when the stages share GPUs).
  int microBatches_ = 1;
  /// The plan's LM head keeps only each sequence's last row (select_last).
  bool selectsLast_ = false;
  std::unique_ptr<PipelineCounters> counters_; // pipelined plans
  /// A pipelined step as micro-batches through the stages.
  StatusOr<Tensor> runPipeline(const Tensor &tokenIds, kv::BlockPool &pool,
                               const kv::StepMetadata &meta,
                               const std::vector<kv::BlockCopy> &copies);
  const comm::Nccl *nccl_ = nullptr; // null when tp_ == 1
  std::vector<std::unique_ptr<GpuExecutor>> ranks_; // stage-major: s * tp + r
  std::vector<int> devices_;                        // the GPU of each
  std::vector<std::unique_ptr<comm::NcclGroup>> groups_; // one per stage (tp_ > 1)
  /// The pipeline's staging buffers and events (pp_ > 1).
  std::unique_ptr<gpu::GpuPipeline> pipeline_;
  /// One thread per executor for its life.
  class RankThreads;
  std::unique_ptr<RankThreads> threads_;
  /// Each stage's one-shot all-reduce over peer access (null: NCCL only;
  /// why in p2pOff_).
  std::vector<std::unique_ptr<gpu::P2pAllReduce>> p2p_;
  std::string p2pOff_;
};

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_CUDA_TPGPUEXECUTOR_H
