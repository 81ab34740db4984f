//===- Backend.h - what the Engine drives: a plan on one backend -*- C++ -*-===//
//
// One interface for every executor of a plan: CpuExecutor (one rank),
// TpCpuExecutor (tensor-parallel and pipelined CPU plans, ranks as threads),
// GpuExecutor (one GPU), TpGpuExecutor (tensor-parallel and pipelined GPU
// plans, an executor per rank and stage), and the rank of a group of
// processes (runtime/cuda/GpuProcessRank.h). The Engine owns one and runs
// every step through it; it neither knows nor asks which.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_ENGINE_BACKEND_H
#define ACCEL_RUNTIME_ENGINE_BACKEND_H

#include "core/Tensor.h"
#include "runtime/kv/BlockPool.h"
#include "runtime/engine/PipelineStats.h"
#include "runtime/kv/StepMetadata.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace accel::rt::plan {
class PlanFile;
}
namespace accel::rt::comm {
class Communicator;
}

namespace accel::rt::engine {

class Backend {
public:
  virtual ~Backend() = default;

  /// Runs the plan's schedule once: `tokenIds` [tokens] (host, any integer
  /// dtype) for the step `meta` describes over `pool`. Returns the logits on
  /// the host: f32 [tokens, vocab], [seqs, vocab] when the plan (or
  /// meta.lastRowsOnly) selects each sequence's last row, or i64 [seqs]
  /// token ids when meta.greedy asks for them.
  virtual StatusOr<Tensor> run(const Tensor &tokenIds, kv::BlockPool &pool,
                               const kv::StepMetadata &meta) = 0;

  /// Where the KV cache lives. On the device (or in per-rank shards the
  /// backend keeps): the Engine's BlockPool only allocates blocks and
  /// queues copies (kv::KvStorage::kDevice); `dtype` is that cache's
  /// element type when it is not the plan's.
  struct KvCacheHome {
    bool ownMemory = false;
    std::optional<DType> dtype;
  };
  virtual KvCacheHome kvCacheHome() const { return {}; }

  /// The KV blocks of `geometry` (numBlocks ignored) that the backend's
  /// memory holds (the GPU: --gpu-memory-utilization after a profiling
  /// step); 0: no opinion, the Engine sizes the cache itself.
  virtual StatusOr<int64_t> sizeKvCache(const kv::KVCacheConfig &geometry) {
    (void)geometry;
    return int64_t(0);
  }

  /// One line about the backend ("NVIDIA H200 (sm_90, ...), bf16, ..."),
  /// empty for the CPU.
  virtual std::string describe() const { return std::string(); }

  /// A pipelined plan's schedule so far (runtime/engine/PipelineStats.h):
  /// each stage's busy and idle seconds, steps and micro-batches, a
  /// snapshot (callable from any thread); nullopt for a backend that runs
  /// no pipeline.
  virtual std::optional<PipelineStats> pipelineStats() const { return std::nullopt; }
};

/// Makes the backend of a plan built for a GPU target ("sm_80", "sm_90").
/// `processGroup` is null when this process runs every tensor-parallel rank
/// of the plan; else it runs rank processGroup->rank() only, and the group
/// of processes (runtime/comm/SocketGroup.h) has met already.
using BackendFactory = std::function<StatusOr<std::unique_ptr<Backend>>(
    std::shared_ptr<const plan::PlanFile> plan, std::shared_ptr<comm::Communicator> processGroup)>;

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_ENGINE_BACKEND_H
