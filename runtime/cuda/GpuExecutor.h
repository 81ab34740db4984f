//===- GpuExecutor.h - run a plan's schedule on an NVIDIA GPU ---*- C++ -*-===//
//
// The GPU backend (issue 5, first version): the same plan schedule as the
// CPU backend (docs/plan-format.md), each step a launch of a hand-written
// kernel of runtime/cuda/kernels (loaded from the fatbin embedded in the library,
// through the CUDA driver API opened at run time), a cuBLASLt GEMM, or a
// device-to-device copy. docs/gpu-backend.md describes it.
//
//   - Activations are in the compute dtype (f32, bf16 or f16; arithmetic in
//     f32). Weights are converted to it once at create(); norm weights,
//     rotary tables and the LM head's bias stay f32.
//   - The paged KV cache lives in device memory, [num_blocks, block_size,
//     kv_heads, head_dim] per layer for K and V (BlockPool's layout), in the
//     compute dtype. The host kv::BlockPool passed to run() is the block
//     allocator (its geometry sizes the device pool; a kv::KvStorage::kDevice
//     pool has no host storage, and its copy-on-write copies are applied on
//     the device before the step).
//   - Decode steps replay CUDA graphs captured per batch-size bucket
//     (GpuGraphs.h); prefill and mixed steps run eagerly.
//   - ONNX glue that raising left in place runs where its data is: shape
//     arithmetic on small host tensors with the CPU ONNX kernels; Reshape,
//     Flatten, Squeeze, Unsqueeze, Identity as views of device buffers;
//     Split, Slice (unit step, one axis) and Concat as device copies; any
//     other operator whose input lives on the device is copied to the host,
//     run by the CPU kernel and copied back (correct, slow: fallbacks()
//     names them, and each is logged once to stderr).
//
// create() prepares one call per step (an unknown kind or op fails there,
// naming the step); run() has CpuExecutor::run's signature.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_GPUEXECUTOR_H
#define ACCEL_RUNTIME_CUDA_GPUEXECUTOR_H

#include "runtime/comm/Nccl.h"
#include "runtime/cuda/GpuTuning.h"
#include "runtime/engine/Engine.h"
#include "runtime/kv/BlockPool.h"
#include "runtime/kv/StepMetadata.h"
#include "runtime/plan/PlanFile.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace accel::rt::gpu {
class GpuContext;
class GpuPipeline;
class P2pAllReduce;
} // namespace accel::rt::gpu

namespace accel::rt::engine {

struct GpuExecutorOptions {
  /// The compute dtype of activations, weights and the KV cache: f32, bf16
  /// or f16.
  DType dtype = DType::kF32;
  /// Use the plan's compute_dtype (accelc -precision=bf16|fp16) instead of
  /// `dtype` when the plan records one (accel-run without --dtype).
  bool dtypeFromPlan = false;
  /// The CUDA device ordinal.
  int device = 0;
  /// Print one line to stderr the first time each ONNX operator falls back
  /// to the CPU (and when CUDA graphs turn out impossible for the plan).
  bool logFallbacks = true;
  /// Decode steps replayed from CUDA graphs (GpuGraphs.h); false is vLLM's
  /// --enforce-eager. $ACCEL_GPU_GRAPHS=0 turns them off as well (Env.h).
  bool cudaGraphs = true;
  /// The largest decode batch replayed from a graph (--cuda-graph-max-bs,
  /// --max-num-seqs by default); larger decode batches run eagerly.
  int64_t graphMaxBatch = 64;
  /// The longest sequence (--max-model-len): the graphs' block-table width
  /// and the profiling step's longest sequence. 0: the plan's max_position,
  /// else 2048 (the Engine's rule).
  int64_t maxModelLen = 0;
  /// KV cache sizing by planKvCache: the fraction of the device's memory
  /// this process may use (--gpu-memory-utilization) and the tokens of the
  /// profiling step (--max-num-batched-tokens).
  double gpuMemoryUtilization = 0.9;
  int64_t maxNumBatchedTokens = 2048;
  /// planKvCache prints its one-line memory summary to stderr.
  bool logMemory = true;
  /// The tensor-parallel rank this executor runs (its weights section,
  /// `weights.rank<r>`) in a plan partitioned by accelc -tp=N; -1: a plan
  /// of one rank. TpGpuExecutor sets it (and `device` to the rank's GPU).
  int tpRank = -1;
  /// The pipeline stage this executor runs (its steps, its side of every
  /// pp_transfer, a KV pool of its layers) in a plan split by accelc -pp=M;
  /// -1: a plan of one stage. TpGpuExecutor sets it.
  int ppStage = -1;
  /// TpGpuExecutor, a plan of more tensor-parallel ranks than the machine
  /// has GPUs from `device` on: the ranks share them (round robin), and
  /// every collective goes through the one-shot all-reduce, host-ordered
  /// (no NCCL, which takes one rank per GPU; no CUDA graphs). For tests and
  /// small machines; false refuses such a plan in one sentence (accel-run
  /// --share-gpus).
  bool shareGpus = false;
  /// TpGpuExecutor, a pipelined plan: the micro-batches a step is split
  /// into (EngineOptions::ppMicroBatches' GPU twin); 0: $ACCEL_PP_MICRO_BATCHES,
  /// else one per stage when the stages have GPUs of their own, one when
  /// they share GPUs.
  int ppMicroBatches = 0;
  GpuTuning tuning;
};

/// What a GpuExecutor holds back before its KV pool is sized
/// (GpuExecutor::reserveKvCache).
struct GpuKvReservation {
  int64_t activationsBytes = 0; // the profiling step's peak
  int64_t profiledTokens = 0;
  int64_t graphBytes = 0;       // the CUDA graphs' pool
  int64_t bytesPerBlock = 0;    // K and V of one block, every layer of the pool
};

struct GpuExecutorImpl;

class GpuExecutor final : public Backend {
public:
  /// Opens the GPU (kUnavailable in one sentence when there is no driver, no
  /// such device, or no kernels in this build), uploads the weights and
  /// prepares every step.
  static StatusOr<std::unique_ptr<GpuExecutor>>
  create(std::shared_ptr<const plan::PlanFile> plan, const GpuExecutorOptions &options = {});
  ~GpuExecutor();

  /// Runs the schedule once on the GPU: `tokenIds` [tokens] (host, any
  /// integer dtype) for the step described by `meta` (host tensors, as
  /// kv::prepareStep makes them over `pool`). The K/V of the step go to the
  /// device pool that mirrors `pool`'s geometry. Returns the logits on the
  /// host as f32, [tokens, vocab] (or [seqs, vocab] when the plan selects
  /// each sequence's last token). Synchronous.
  StatusOr<Tensor> run(const Tensor &tokenIds, kv::BlockPool &pool,
                       const kv::StepMetadata &meta) override;
  /// run() for one rank of a tensor-parallel group (TpGpuExecutor): the
  /// copy-on-write copies of `pool` were taken once for every rank and are
  /// `copies` (the pool's queue is not touched).
  StatusOr<Tensor> run(const Tensor &tokenIds, kv::BlockPool &pool, const kv::StepMetadata &meta,
                       const std::vector<kv::BlockCopy> &copies);
  /// run() for micro-batch `part` of a step of a pipelined plan
  /// (TpGpuExecutor): awaits the transfers this stage receives, enqueues its
  /// steps (and the copy-on-write `copies`, given for part 0 only), posts
  /// the transfers it sends. A stage before the last returns an undefined
  /// tensor without waiting for its GPU (synchronize() does); the last
  /// returns the logits as run() does. `pool` has the engine's geometry;
  /// this stage's device pool holds its own layers.
  StatusOr<Tensor> runPart(const Tensor &tokenIds, kv::BlockPool &pool,
                           const kv::StepMetadata &meta, const std::vector<kv::BlockCopy> &copies,
                           int part);
  /// Waits for everything enqueued on the executor's stream.
  Status synchronize();
  /// The pipeline a stage of a pipelined plan hands over through (null:
  /// none); its staging buffers are sized for this executor's largest step.
  void setPipeline(gpu::GpuPipeline *pipeline);
  /// Pipeline stages (TpGpuExecutor): with `on`, runPart records an event
  /// on the stream before a part's steps (after the waits for its
  /// transfers) and one after them; partSeconds() sums the GPU time
  /// between each pair since its last call (after synchronize()).
  void setPartTiming(bool on);
  StatusOr<double> partSeconds();

  /// The rank's tensor-parallel communicator (null: none), used by every
  /// later step; a new one drops the captured CUDA graphs (they hold the old
  /// one's NCCL kernels).
  /// `p2p` (optional, TpGpuExecutor): the one-shot all-reduce of the
  /// ranks of this process, for the all_reduce steps it takes; with no
  /// `comm` (ranks sharing GPUs), for every collective.
  void setCommunicator(comm::NcclRank *comm, gpu::P2pAllReduce *p2p = nullptr);
  /// The executor's GPU (TpGpuExecutor makes the one-shot all-reduce over
  /// its ranks' contexts).
  gpu::GpuContext &context();
  /// Makes the executor's device context current on the calling thread
  /// (what ncclCommInitRank needs, runtime/cuda/GpuProcessRank).
  Status makeCurrent();

  /// Sizes the paged KV cache as vLLM does: a profiling step of
  /// maxNumBatchedTokens tokens reserves the activations' peak, the CUDA
  /// graphs' pool is reserved at the largest decode bucket's peak, then the
  /// KV pool gets gpuMemoryUtilization x the device's memory minus what is
  /// in use (cuMemGetInfo). Allocates that device pool for `geometry` (its
  /// numBlocks ignored), prints one line (weights, activations, graphs, KV
  /// bytes, blocks, tokens) and returns the block count. kResourceExhausted
  /// in one sentence when not even one sequence of maxModelLen tokens fits.
  StatusOr<int64_t> planKvCache(const kv::KVCacheConfig &geometry);
  /// planKvCache in parts, for executors that share GPUs (pipeline stages
  /// on one GPU, TpGpuExecutor): the profiling step and the graphs' pool
  /// (a stage's profiling step awaits and posts its transfers as a step
  /// does), then a device pool of geometry.numBlocks blocks. The layers of
  /// `geometry` are replaced by the stage's.
  StatusOr<GpuKvReservation> reserveKvCache(const kv::KVCacheConfig &geometry);
  Status allocateKvCache(const kv::KVCacheConfig &geometry);

  /// The ONNX operators that ran on the CPU with device inputs so far
  /// ("onnx.Transpose", ...).
  std::set<std::string> fallbacks() const;
  /// The compute dtype (activations, weights, the KV cache).
  DType computeDType() const;
  /// The device KV pool's element type (f8E4M3FN for an FP8 cache plan).
  DType kvCacheDType() const;
  /// CUDA graphs captured so far (one per decode bucket and split count).
  size_t numGraphs() const;
  /// Why decode steps run eagerly ("" while CUDA graphs are on).
  std::string graphsOffReason() const;
  /// "NVIDIA H200 (sm_90, 132 SMs), bf16, cuBLASLt from <path>".
  std::string describe() const override;
  /// Backend: the KV cache is on the device, of kvCacheDType(); sized by
  /// planKvCache.
  KvCacheHome kvCacheHome() const override { return {true, kvCacheDType()}; }
  StatusOr<int64_t> sizeKvCache(const kv::KVCacheConfig &geometry) override {
    return planKvCache(geometry);
  }
  /// Bytes of device memory this executor holds (weights, KV pool, cached
  /// activation blocks).
  std::size_t deviceBytes() const;

private:
  GpuExecutor() = default;
  std::unique_ptr<GpuExecutorImpl> impl_;
};

/// The Engine's GPU backend: a GpuExecutor with `options` for each plan
/// built for a GPU target (EngineOptions::gpuBackend), a TpGpuExecutor over
/// GPUs options.device, options.device + 1, ... for a plan partitioned by
/// accelc -tp=N, or, when the Engine runs one rank per process, that rank's
/// GpuExecutor on options.device with an NCCL communicator across the
/// processes (GpuProcessRank.h); it keeps the KV cache on the device and
/// sizes it with planKvCache.
BackendFactory makeGpuBackend(const GpuExecutorOptions &options);

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_CUDA_GPUEXECUTOR_H
