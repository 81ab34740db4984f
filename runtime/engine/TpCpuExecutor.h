//===- TpCpuExecutor.h - a tensor-parallel plan on the CPU ------*- C++ -*-===//
//
// Runs a plan partitioned for N ranks (accelc -tp=N) as N threads, each a
// CpuExecutor over its rank's weights section and its own KV cache shard
// (the plan's kv_cache is one rank's: its KV heads), meeting at the
// plan's collective steps through an in-process communicator group
// (runtime/comm). The caller's pool is rank 0's and its block tables (the
// step metadata) are every rank's.
//
// KV cache: the caller's pool (the engine's) allocates blocks for all ranks
// and, created with KvStorage::kDevice, holds no K/V itself: every rank has
// its own host pool of the same geometry (its KV heads), and the
// copy-on-write block copies the caller's pool queues are applied to every
// rank's pool before the step. A single-rank plan uses the caller's pool as
// it is.
//
// Every rank ends with the whole logits (the plan all_gathers them); rank
// 0's are returned. A rank whose step fails aborts the group, so that the
// others stop at their next collective instead of waiting; the first
// failing rank's error is returned, naming the rank.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_ENGINE_TPCPUEXECUTOR_H
#define ACCEL_RUNTIME_ENGINE_TPCPUEXECUTOR_H

#include "runtime/engine/CpuExecutor.h"

namespace accel::rt::engine {

class TpCpuExecutor {
public:
  static StatusOr<std::unique_ptr<TpCpuExecutor>>
  create(std::shared_ptr<const plan::PlanFile> plan);

  int tpSize() const { return int(ranks_.size()); }

  /// CpuExecutor::run's contract, over all ranks. `pool` is rank 0's.
  StatusOr<Tensor> run(const Tensor &tokenIds, kv::BlockPool &pool,
                       const kv::StepMetadata &meta);

private:
  TpCpuExecutor() = default;
  std::vector<std::unique_ptr<CpuExecutor>> ranks_;
  std::vector<std::unique_ptr<kv::BlockPool>> pools_; // one per rank
};

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_ENGINE_TPCPUEXECUTOR_H
