//===- GpuSteps.h - one prepared GPU call per plan step ---------*- C++ -*-===//
//
// The GPU backend's values and step calls (GpuExecutor.h describes the
// backend). A value lives on the host, on the device, or both with the same
// contents; float device copies are in the compute dtype (or f32 where a
// kernel wants f32: norm weights, rotary tables), host float copies in f32.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_GPUSTEPS_H
#define ACCEL_RUNTIME_CUDA_GPUSTEPS_H

#include "runtime/comm/Nccl.h"
#include "runtime/cuda/CublasLt.h"
#include "runtime/cuda/GpuContext.h"
#include "runtime/cuda/GpuPipeline.h"
#include "runtime/cuda/GpuTuning.h"
#include "runtime/cuda/GraphBuckets.h"
#include "runtime/cuda/P2pAllReduce.h"
#include "runtime/cuda/kernels/KvScales.h"
#include "runtime/engine/StepAttrs.h"
#include "runtime/kv/StepMetadata.h"
#include "runtime/plan/PlanFile.h"

#include <functional>
#include <optional>
#include <set>

namespace accel::rt::engine {

/// A contiguous row-major tensor in device memory.
struct DeviceTensor {
  gpu::DeviceBuffer mem; // keeps the allocation alive (views share it)
  gpu::CuDevicePtr ptr = 0;
  DType dtype = DType::kF32;
  Shape shape;
  /// A plan constant uploaded at load (and views of it): no step writes it,
  /// so a kernel launched dependently may read it before its
  /// griddepcontrol.wait (the GEMVs' first weight loads).
  bool constant = false;
  /// An i4/u4 weight [N, K] in the packed layout of kernels/Int4Layout.h
  /// (GpuExecutor packs them at load; only GemvInt4.cu's kernels read it).
  bool packedInt4 = false;

  bool defined() const { return mem != nullptr; }
  int64_t rank() const { return int64_t(shape.size()); }
  int64_t dim(int64_t i) const { return shape[size_t(i < 0 ? i + rank() : i)]; }
  int64_t numElements() const;
  size_t byteSize() const { return size_t(numElements()) * dtypeSize(dtype); }
  std::string describe() const; // "bf16[12, 64] (device)"
};

struct GpuValue {
  Tensor host;
  DeviceTensor dev;
  bool defined() const { return host.defined() || dev.defined(); }
  const Shape &shape() const { return host.defined() ? host.shape() : dev.shape; }
  std::string describe() const;
};

/// What a step's call sees at run time.
class W4Prefetcher; // W4Prefetch.h

struct GpuRunState {
  gpu::GpuContext *gpu = nullptr;
  /// 4-bit weights of eager steps dequantised a GEMM ahead (null: each is
  /// dequantised when its GEMM runs).
  W4Prefetcher *w4 = nullptr;
  gpu::CublasLt *blas = nullptr;
  DType dtype = DType::kF32; // the compute dtype
  const kv::StepMetadata *meta = nullptr;
  // The step's metadata on the device (i32).
  DeviceTensor queryStartLoc, seqLens, blockTables, slotMapping;
  /// meta->logitsRowEnds on the device when the step has it (speculative
  /// verification: several logits rows per sequence).
  DeviceTensor logitsRowEnds;
  int64_t maxSeqLen = 0;
  /// Decode steps (one query per sequence) whose longest context exceeds
  /// 2 * decodeSplit keys split each query's keys into chunks of about this
  /// many (split-KV); the executor sets GpuTuning::decodeSplit.
  int64_t decodeSplit = kDefaultDecodeSplit;
  /// Prefill attention may run the tensor-core kernel (GpuTuning::flashPrefill).
  bool flashPrefill = true;
  /// Attention blocks that keep the GPU busy (two per multiprocessor):
  /// small decode batches split their keys to reach it (decodeSplitFor).
  int64_t splitTargetBlocks = 0;
  /// The split-KV geometry of this step (decodeSplitFor(maxSeqLen,
  /// decodeSplit, sequences x KV heads, splitTargetBlocks) for decode
  /// steps, else none), set by the executor.
  DecodeSplit split;
  /// CUDA-graph steps: the split size lives in device memory (an i32 the
  /// executor uploads before each replay), and so do the positions (the
  /// `positions` step then returns these instead of meta->positions).
  gpu::CuDevicePtr splitSizeDev = 0;
  DeviceTensor positionsI64, positionsI32;
  // The device KV pool: per layer, K and V [blocks, block_size, kv_heads, head_dim].
  std::vector<DeviceTensor> *keys = nullptr, *values = nullptr;
  int64_t blockSize = 16, numKvHeads = 1, headDim = 1;
  /// The pipeline of a plan split into stages (pp_transfer steps,
  /// TpGpuExecutor) and the micro-batch this run of the schedule is (its
  /// transfers' staging buffers); null for a plan of one stage.
  gpu::GpuPipeline *pipeline = nullptr;
  int ppPart = 0;
  /// The rank's tensor-parallel group (collective steps and the
  /// vocabulary-parallel embedding of a plan with tp_size > 1: TpGpuExecutor);
  /// null for a single-GPU plan.
  comm::NcclRank *comm = nullptr;
  /// The one-shot all-reduce over CUDA peer access of the ranks of this
  /// process (runtime/cuda/P2pAllReduce.h); null: NCCL carries every
  /// all_reduce.
  gpu::P2pAllReduce *p2p = nullptr;
  /// This executor's rank in `p2p`'s group. With p2p and no `comm` (the
  /// ranks share GPUs, where NCCL takes one rank per GPU), the one-shot
  /// group carries every collective, in chunks (ops/Collectives.cpp).
  int p2pRank = 0;
  // ONNX operators that fell back to the CPU; logged once each.
  std::set<std::string> *fallbacks = nullptr;
  bool logFallbacks = true;

  /// The planned places of the current step's outputs (GpuExecutor sets
  /// them from the plan's activations arena before each step): output i's
  /// bytes start at slots[i].ptr and hold slots[i].bytes; ptr 0: none (a
  /// step bigger than the arena, or an output the plan does not place).
  struct Slot {
    gpu::DeviceBuffer mem; // the arena (keeps it alive)
    gpu::CuDevicePtr ptr = 0;
    size_t bytes = 0;
  };
  std::vector<Slot> slots;

  /// A new uninitialised device tensor (a temporary of the step).
  StatusOr<DeviceTensor> empty(DType dtype, Shape shape);
  /// The step's output `index`: its planned place in the arena when it has
  /// one that holds it, else a new tensor as empty() makes.
  StatusOr<DeviceTensor> output(size_t index, DType dtype, Shape shape);
  /// v on the device; floats converted to `want` when given (on the device
  /// if the value is there already, else on the host before the upload).
  /// The copy is kept in v.
  StatusOr<DeviceTensor> toDevice(GpuValue &v, std::optional<DType> want = std::nullopt);
  /// v on the host (device floats come back as f32). `copied` is set when
  /// this had to download.
  StatusOr<Tensor> toHost(GpuValue &v, bool *copied = nullptr);
  /// Records (and logs once) an ONNX operator run on the CPU with device data.
  void noteFallback(const std::string &op);
};

using GpuKernel =
    std::function<Status(GpuRunState &, std::vector<GpuValue *> &, std::vector<GpuValue> &)>;

/// A GpuKernel from `fn(st, inputs) -> StatusOr<DeviceTensor>`: a call
/// producing one device result.
template <typename Fn> GpuKernel one(Fn fn) {
  return [fn](GpuRunState &st, std::vector<GpuValue *> &in,
              std::vector<GpuValue> &out) -> Status {
    StatusOr<DeviceTensor> t = fn(st, in);
    if (!t)
      return t.status();
    GpuValue v;
    v.dev = std::move(*t);
    out.push_back(std::move(v));
    return Status::ok();
  };
}

/// `t` as [rows, last dim] (0 rows when the last dim is 0).
std::pair<int64_t, int64_t> rowsCols(const DeviceTensor &t);

/// The device operands of rms_norm (x, weight) and add_rms_norm (x,
/// residual, weight): x and the residual in `dtype` and of one shape, the
/// weight in f32; for the hand-written and the generated kernels alike.
struct NormOperands {
  DeviceTensor x, residual, weight;
  int64_t rows = 0, hidden = 0;
};
StatusOr<NormOperands> normOperands(GpuRunState &st, std::vector<GpuValue *> &in, bool add,
                                    DType dtype);

class GpuPlanKernels;

/// What preparing a step needs: the context (for kernel lookups and small
/// uploads of tables) and the compute dtype.
struct GpuPrepareContext {
  gpu::GpuContext *gpu = nullptr;
  DType dtype = DType::kF32;
  int64_t numLayers = 0;
  /// The tensor-parallel rank the steps are prepared for (StepAttrs).
  int tpRank = 0;
  /// The pipeline stage they run in (a pp_transfer step sends from it or
  /// receives into it).
  int ppStage = 0;
  /// The plan's generated kernels (GpuPlanKernels.h); a step that names one
  /// runs it. Null: every step runs the hand-written kernels.
  const GpuPlanKernels *planKernels = nullptr;
  /// W8A8 FP8 GEMMs of at least this many rows let cuBLASLt scale the sums
  /// (GpuTuning::fp8OuterScalesMinRows).
  int64_t fp8OuterScalesMinRows = kDefaultFp8OuterScalesMinRows;
  /// Decode steps of bf16/f16 plans run decode_attention_kp where it
  /// applies (GpuTuning::decodeKeyParallel).
  bool decodeKeyParallel = true;
  /// GpuTuning::decodeKpVariant.
  int64_t decodeKpVariant = 0;
  /// Eager moe steps of at most this many tokens run the expert-batched
  /// GEMV kernel (GpuTuning::moeGemvMaxTokens).
  int64_t moeGemvMaxTokens = kDefaultMoeGemvMaxTokens;
  /// GpuTuning::w4Unroll (4 or 8).
  int64_t w4Unroll = 4;
  /// GpuTuning::moeMma.
  bool moeMma = false;
};

/// The call for `step` on the GPU, or why the GPU backend cannot run it (one
/// sentence, without the step's name).
StatusOr<GpuKernel> prepareGpuStep(const plan::PlanFile &plan, const accel::plan::Step &step,
                                   const GpuPrepareContext &ctx);

/// The device dtype in which `step` reads float operand `operand` (for
/// uploading constants once, at create): f32 for norm weights, rotary tables
/// and the LM head's bias, the compute dtype for other device operands,
/// nullopt for operands the step reads on the host (ONNX glue).
std::optional<DType> gpuOperandDType(const accel::plan::Step &step, int operand, DType compute);

/// The runtime/cuda/kernels function `base`_<dtype suffix> for the compute dtype.
StatusOr<gpu::CuFunction> computeKernel(const GpuPrepareContext &ctx, const std::string &base);

/// The kernel-name suffix of a compute dtype: "f32", "bf16", "f16".
const char *gpuDTypeSuffix(DType dtype);

/// Greedy decoding on the device: the argmax (lowest index on ties) of each
/// of the first `rows` rows of the logits [>= rows, vocab] at `logits`, as
/// i64 [rows] on the host (runtime/cuda/kernels/Sampling.cu: partials per chunk
/// of the row, reduced here), -1 for a row with a NaN or +inf or only -inf.
/// A few bytes per row come back instead of the row.
StatusOr<Tensor> greedyTokensOnDevice(gpu::GpuContext &gpu, gpu::CuDevicePtr logits,
                                      DType dtype, int64_t rows, int64_t vocab);

/// An FP8 cache's k and v scales of a kv_write / qkv_rotary / attention
/// step (readKvScales) as the *_kv8 kernels take them: one per layer, or
/// one per KV head (at most kernels::kMaxKvScaleHeads, else refused in one
/// sentence).
StatusOr<kernels::KvScales> gpuKvScales(const StepAttrs &a);

/// Whether `s` fits a KV pool of `numKvHeads` heads; "" or why not.
std::string kvScalesMismatch(const kernels::KvScales &s, int64_t numKvHeads);

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_CUDA_GPUSTEPS_H
