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
// Micro-batches (a pipelined plan): the step is split into M parts
// (runtime/engine/MicroBatches.h; M = the stage count unless
// TpCpuExecutorOptions says), each stage's threads run the parts in order,
// so that stage s runs part i while stage s + 1 runs part i - 1; part p's
// transfers travel under tag p * (the schedule's steps) + the step's index.
// Each stage's KV shard sees the parts in order (a sequence cut in two
// writes its first piece's K/V before the second piece attends to them);
// the block copies are applied once before the step. M = 1 runs the whole
// step through stage 0, then stage 1, ... (no overlap).
//
// The schedule's trace (runtime/engine/PipelineStats.h): per step and
// stage, busy = the time its rank 0 spent running its parts minus what it
// waited for transfers; idle = the rest of the step's wall time (waiting
// for the stage before, before its first and after its last part);
// pipelineStats() sums them, ACCEL_PP_TRACE writes one line per step.
//
// The last stage's ranks end with the whole logits (the plan all_gathers
// them); its rank 0's are returned (joined from the parts' rows). A rank whose step fails aborts its
// group and the pipeline, so that the others stop at their next collective
// or transfer instead of waiting; the first failing rank's error is
// returned, naming the rank (and the stage in a pipelined plan).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TPCPUEXECUTOR_H
#define ACCEL_RUNTIME_CPU_TPCPUEXECUTOR_H

#include "runtime/cpu/CpuExecutor.h"

#include "runtime/engine/PipelineStats.h"

namespace accel::rt::engine {

struct TpCpuExecutorOptions {
  /// The micro-batches of a pipelined plan's step: 0 takes
  /// $ACCEL_PP_MICRO_BATCHES, and when that is 0 too, one per stage; 1: the
  /// whole step through one stage after the other.
  int microBatches = 0;
  /// Appends one JSON line per step there (pipelineTraceJson); empty takes
  /// $ACCEL_PP_TRACE (unset: no trace).
  std::string tracePath;
};

class TpCpuExecutor final : public Backend {
public:
  /// kInvalidArgument when the trace file cannot be opened.
  static StatusOr<std::unique_ptr<TpCpuExecutor>>
  create(std::shared_ptr<const plan::PlanFile> plan, const TpCpuExecutorOptions &options = {});

  int tpSize() const { return tp_; }
  int ppSize() const { return pp_; }
  /// The micro-batches each later step is split into (at most; a step of
  /// fewer tokens gets fewer); below 1 is taken as 1.
  void setMicroBatches(int parts) { microBatches_ = parts < 1 ? 1 : parts; }
  int microBatches() const { return microBatches_; }

  /// CpuExecutor::run's contract, over all ranks and stages. `pool` is the
  /// block allocator (rank 0's cache too in a plan of one stage).
  StatusOr<Tensor> run(const Tensor &tokenIds, kv::BlockPool &pool,
                       const kv::StepMetadata &meta) override;
  /// Each rank and stage keeps its KV shard; the Engine's pool allocates.
  KvCacheHome kvCacheHome() const override { return {true, std::nullopt}; }
  /// A pipelined plan's totals (nullopt for one stage).
  std::optional<PipelineStats> pipelineStats() const override;

private:
  TpCpuExecutor() = default;
  /// The step through every rank of one stage (no micro-batches).
  StatusOr<Tensor> runTensorParallel(const Tensor &tokenIds, kv::BlockPool &pool,
                                     const kv::StepMetadata &meta);
  /// The step as micro-batches through the stages.
  StatusOr<Tensor> runPipeline(const Tensor &tokenIds, const kv::StepMetadata &meta);
  std::shared_ptr<const plan::PlanFile> plan_;
  int tp_ = 1, pp_ = 1;
  int microBatches_ = 1;
  bool selectsLast_ = false; // the plan's LM head keeps each sequence's last row
  std::unique_ptr<PipelineCounters> counters_; // pipelined plans
  std::vector<std::unique_ptr<CpuExecutor>> ranks_;  // stage-major: s * tp + r
  std::vector<std::unique_ptr<kv::BlockPool>> pools_; // one per rank and stage
};

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_CPU_TPCPUEXECUTOR_H
