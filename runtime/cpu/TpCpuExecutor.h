//===- TpCpuExecutor.h - a partitioned plan on the CPU ----------*- C++ -*-===//
//
// Runs a plan partitioned for N tensor-parallel ranks (accelc -tp=N) and M
// pipeline stages (accelc -pp=M) as M x N threads, each a CpuExecutor over
// its rank's weights section, its stage's steps and its own KV cache
// (the plan's kv_cache is one rank's: its KV heads; a stage's cache holds
// only its layers, kv_cache.stage_layers). The ranks of a stage meet at the
// plan's collective steps through an in-process communicator group
// (runtime/comm); a stage hands its values to a later one at pp_transfer
// steps through in-process stage links (rank r to rank r). The caller's
// pool is the block allocator and its block tables (the step metadata) are
// every rank's and every stage's.
//
// KV cache: the caller's pool (the engine's) allocates blocks for all ranks
// and, created with KvStorage::kDevice, holds no K/V itself: every rank of
// every stage has its own host pool of the same block geometry (its KV
// heads, its stage's layers), and the copy-on-write block copies the
// caller's pool queues are applied to every one of them before the step. A
// plan of one rank and one stage uses the caller's pool as it is; a
// tensor-parallel plan of one stage may be given a host pool (rank 0 uses
// it); a pipelined plan needs a kDevice pool.
//
// The last stage's ranks end with the whole logits (the plan all_gathers
// them); its rank 0's are returned. A rank whose step fails aborts its
// group and the pipeline, so that the others stop at their next collective
// or transfer instead of waiting; the first failing rank's error is
// returned, naming the rank (and the stage in a pipelined plan).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TPCPUEXECUTOR_H
#define ACCEL_RUNTIME_CPU_TPCPUEXECUTOR_H

#include "runtime/cpu/CpuExecutor.h"

namespace accel::rt::engine {

class TpCpuExecutor final : public Backend {
public:
  static StatusOr<std::unique_ptr<TpCpuExecutor>>
  create(std::shared_ptr<const plan::PlanFile> plan);

  int tpSize() const { return tp_; }
  int ppSize() const { return pp_; }

  /// CpuExecutor::run's contract, over all ranks and stages. `pool` is the
  /// block allocator (rank 0's cache too in a plan of one stage).
  StatusOr<Tensor> run(const Tensor &tokenIds, kv::BlockPool &pool,
                       const kv::StepMetadata &meta) override;
  /// Each rank and stage keeps its KV shard; the Engine's pool allocates.
  KvCacheHome kvCacheHome() const override { return {true, std::nullopt}; }

private:
  TpCpuExecutor() = default;
  std::shared_ptr<const plan::PlanFile> plan_;
  int tp_ = 1, pp_ = 1;
  std::vector<std::unique_ptr<CpuExecutor>> ranks_;  // stage-major: s * tp + r
  std::vector<std::unique_ptr<kv::BlockPool>> pools_; // one per rank and stage
};

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_CPU_TPCPUEXECUTOR_H
