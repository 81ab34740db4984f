//===- GpuExecutorImpl.h - GpuExecutor's state, inside runtime/cuda -*- C++ -*-===//
//
// What GpuExecutor.cpp (create, the schedule, a step), GpuKvCache.cpp (the
// device KV pool and its sizing) and GpuStages.cpp (a pipeline stage's
// hand-overs and part timing) share. Internal to runtime/cuda.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_GPUEXECUTORIMPL_H
#define ACCEL_RUNTIME_CUDA_GPUEXECUTORIMPL_H

#include "runtime/cuda/GpuExecutor.h"
#include "runtime/cuda/GpuGraphs.h"
#include "runtime/cuda/GpuPipeline.h"
#include "runtime/cuda/GpuPlanKernels.h"
#include "runtime/cuda/GpuSteps.h"
#include "runtime/cuda/W4Prefetch.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace accel::rt::engine {

struct GpuExecutorImpl {
  /// The device KV pool's element type: f8E4M3FN for a plan compiled with
  /// -kv-cache-dtype=fp8 (stored = value / scale), else the compute dtype.
  DType cacheDType() const {
    return plan->metadata().kv_cache().dtype() == "f8E4M3FN" ? DType::kF8E4M3FN : options.dtype;
  }

  struct Prepared {
    GpuKernel kernel;
    std::vector<int32_t> inputs;
    std::vector<int32_t> outputs;
    std::vector<int32_t> freeAfter; // values whose last reader is this step
    std::string what;               // "step 12 (rms_norm at 'node')"
    std::string op;                 // "rms_norm" (the profile's key)
  };

  /// The activations arena (the plan's Schedule.arena, laid out by the
  /// compiler): one device buffer holding every step's outputs, allocated
  /// once for the largest step the executor runs (`arenaTokens`,
  /// `arenaSeqs`); every value in it keeps one address (what CUDA graphs
  /// replay). A value's place: its region's base + its offset, in units of
  /// the region (bytes, tokens or sequences), times `arenaScale` (the
  /// compute dtype's bytes over the plan's: a bf16 plan run in f32).
  struct Placement {
    int region = -1; // pb::Value::Region; -1: not in the arena
    uint64_t offset = 0;
    uint64_t bytesPerUnit = 0;
  };
  std::vector<Placement> placement; // by value id (roots)
  gpu::DeviceBuffer arena;
  int64_t arenaTokens = 0, arenaSeqs = 0;
  uint64_t arenaScale = 1;
  /// Allocates the arena (once).
  Status ensureArena();
  /// The planned places of step `p`'s outputs for a step of `tokens` tokens
  /// and `seqs` sequences (none when the step is larger than the arena).
  void armSlots(GpuRunState &st, const Prepared &p) const;

  /// $ACCEL_GPU_PROFILE=1: eager steps synchronise around every step and add
  /// its wall time to its op's row; the table goes to stderr when the
  /// executor is destroyed (CUDA graphs are off: a capture cannot
  /// synchronise). Coarse (each step pays a synchronisation), but it says
  /// where a step's time goes without a profiler on the machine.
  struct ProfileRow {
    int64_t calls = 0;
    double ms = 0;
  };
  bool profile = false;
  std::map<std::string, ProfileRow> profileRows;
  void printProfile() const;

  std::shared_ptr<const plan::PlanFile> plan;
  GpuExecutorOptions options;
  std::unique_ptr<gpu::GpuContext> gpu;
  std::unique_ptr<gpu::CublasLt> blas;
  std::unique_ptr<GpuPlanKernels> planKernels; // the kernels the plan carries
  std::vector<Prepared> steps;
  std::vector<GpuValue> constants; // by value id; undefined for non-constants
  DType tokenDType = DType::kI64;
  // The device KV pool mirroring the host pool's geometry.
  kv::KVCacheConfig kvConfig;
  DeviceTensor kvStorage;
  std::vector<DeviceTensor> keys, values;
  std::set<std::string> fallbacks;
  int64_t vocab = 0;         // the embedding table's rows (graph steps check ids on the host)
  int64_t maxModelLen = 0;   // options.maxModelLen, or the plan's
  int64_t weightsBytes = 0;  // device bytes after create(): weights, workspace
  std::unique_ptr<DecodeGraphs> graphs; // after gpu: destroyed first
  std::unique_ptr<W4Prefetcher> w4;     // 4-bit weights dequantised ahead (W4Prefetch.h)
  comm::NcclRank *comm = nullptr;       // the rank's group (TpGpuExecutor)
  gpu::P2pAllReduce *p2p = nullptr;     // its one-shot all-reduce, when peer access works
  // A pipelined plan's stage (TpGpuExecutor): the pipeline, and the
  // transfers (their keys' tags) this stage receives and sends.
  int stage = 0, rank = 0;
  bool returnsLogits = true;
  gpu::GpuPipeline *pipeline = nullptr;
  std::vector<int64_t> incoming, outgoing;
  // Part timing (setPartTiming): an event pair per micro-batch.
  bool timeParts = false;
  std::vector<std::pair<CuEvent, CuEvent>> partEvents;
  int partsTimed = 0;
  Status recordPart(int part, bool end);
  /// The engine's pool geometry with this stage's layers.
  kv::KVCacheConfig stageGeometry(kv::KVCacheConfig c) const {
    if (plan->ppSize() > 1)
      c.numLayers = plan->stageLayers(stage);
    return c;
  }
  /// Before a part's steps: its stream waits for the transfers it
  /// receives; after them: the transfers it sends are posted.
  Status awaitIncoming(int part);
  Status postOutgoing(int part);
  /// The tokens and sequences the arena is made for.
  std::pair<int64_t, int64_t> arenaUnits() const;

  Status ensureKvPool(const kv::KVCacheConfig &c, GpuRunState &st);
  GpuRunState baseState();
  /// The schedule once; returns the logits value.
  StatusOr<GpuValue> runSchedule(GpuRunState &st, GpuValue tokens);
  /// Uploads the step's metadata, runs the schedule, returns f32 logits.
  StatusOr<Tensor> runEager(const Tensor &tokenIds, GpuRunState &st, const kv::StepMetadata &meta);
  /// Copy-on-write block copies queued by a device-storage BlockPool.
  Status applyBlockCopies(const std::vector<kv::BlockCopy> &copies);
  bool graphsWanted() const;
  /// The decode graphs for the current KV geometry (null: graphs off).
  DecodeGraphs *decodeGraphs();
  DecodeGraphs::Schedule graphSchedule();
  /// GpuExecutor::run; `copies`: the pool's copy-on-write copies, taken by
  /// the caller (null: taken here).
  StatusOr<Tensor> runStep(const Tensor &tokenIds, kv::BlockPool &pool,
                           const kv::StepMetadata &meta, const std::vector<kv::BlockCopy> *copies,
                           int part = 0);
  /// runStep's second half: a decode step from its graph, else eagerly.
  StatusOr<Tensor> dispatch(const Tensor &tokenIds, GpuRunState &st, const kv::StepMetadata &meta,
                            bool decode, int64_t widest, int part);
  /// The profiling step and the graphs' pool (planKvCache's first half).
  StatusOr<GpuKvReservation> reserve(const kv::KVCacheConfig &geometry);
};

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_CUDA_GPUEXECUTORIMPL_H
