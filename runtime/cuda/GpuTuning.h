//===- GpuTuning.h - the GPU backend's tuning knobs -------------*- C++ -*-===//
//
// GpuExecutorOptions::tuning: the choices between two correct paths that a
// measurement settled (docs/performance.md), kept as options so that tests
// can run the other path. They replaced the environment switches
// ACCEL_GPU_FLASH_PREFILL, ACCEL_GPU_FP8_OUTER_SCALES and
// ACCEL_GPU_P2P_ALLREDUCE (docs/env.md); decodeSplit takes its default from
// $ACCEL_GPU_DECODE_SPLIT (runtime/Env.h).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_GPUTUNING_H
#define ACCEL_RUNTIME_CUDA_GPUTUNING_H

#include "runtime/Env.h"

#include <cstdint>

namespace accel::rt::engine {

/// W8A8 FP8 GEMMs of this many rows or more let cuBLASLt scale the sums: on
/// the H200 (32 layers of Llama-3-8B shapes) that made a 2048-token prefill
/// 39.8 ms against 48.7, but a batch-16 decode step 6.33 ms against 5.03.
constexpr int64_t kDefaultFp8OuterScalesMinRows = 129;

/// Eager moe steps of at most this many tokens run the expert-batched GEMV
/// kernel (runtime/cuda/kernels/Moe.cu); larger ones run cuBLASLt per
/// expert, which needs the per-expert token counts on the host (one
/// synchronisation per moe step). Steps captured into CUDA graphs always
/// run the GEMV kernel. Not measured yet: 64 is the decode batch up to
/// which a weight row read once for every token of an expert should beat a
/// tensor-core GEMM per expert (docs/gpu-backend.md, "Mixture of experts").
constexpr int64_t kDefaultMoeGemvMaxTokens = 64;

/// Tuning knobs of the GPU backend: each default is the measured best
/// (docs/performance.md); tests flip them to reach the other path.
struct GpuTuning {
  /// Decode steps (one query per sequence) whose longest context exceeds
  /// 2 * decodeSplit keys split each query's keys into chunks of about this
  /// many (split-KV, GraphBuckets.h decodeSplitFor); 0: never split by
  /// length. Default: $ACCEL_GPU_DECODE_SPLIT, else 256.
  int64_t decodeSplit = env().gpuDecodeSplit;
  /// Prefill attention on the tensor-core kernel where it applies
  /// (GpuFlashPrefill.h); false: paged_attention_* for every step.
  bool flashPrefill = true;
  /// Decode steps of bf16/f16 plans whose KV heads serve one query head or
  /// two to four run decode_attention_kp (a key row over D / 16 lanes,
  /// DecodeAttentionKP.cu); false: decode_attention (a key row over a warp)
  /// for every decode step. Default: $ACCEL_GPU_DECODE_KEY_PARALLEL, else on.
  bool decodeKeyParallel = env().gpuDecodeKeyParallel;
  /// Which build of decode_attention_kp: 0, or 1-3, the variants of
  /// DecodeAttentionKP.cu (slot prefetch, query in shared memory, more
  /// blocks per multiprocessor). Default: $ACCEL_GPU_DECODE_KP_VARIANT, else 0.
  int64_t decodeKpVariant = env().gpuDecodeKpVariant;
  /// W8A8 FP8 GEMMs of at least this many rows let cuBLASLt scale the sums
  /// (outer-vector scales); smaller ones write f32 sums and rescale them
  /// (ops/Linear.cpp). 1: always; INT64_MAX: never.
  int64_t fp8OuterScalesMinRows = kDefaultFp8OuterScalesMinRows;
  /// Tensor-parallel plans on one process's GPUs: small all_reduces through
  /// the one-shot kernel over peer access (P2pAllReduce.h) when the GPUs
  /// reach each other; false: NCCL carries every all_reduce.
  bool p2pAllReduce = true;
  /// Eager moe steps of at most this many tokens run the expert-batched
  /// GEMV kernel, larger ones cuBLASLt per expert (kDefaultMoeGemvMaxTokens;
  /// 0: cuBLASLt for every eager step; INT64_MAX: the GEMV kernel always).
  int64_t moeGemvMaxTokens = kDefaultMoeGemvMaxTokens;
  /// 4-bit GEMMs of up to 16 rows (gemm_w4, GemvInt4.cu): the 64-column
  /// chunks each lane keeps in flight, 4 or 8 (the _u8 kernels). Default:
  /// $ACCEL_GPU_W4_UNROLL, else 4.
  int64_t w4Unroll = env().gpuW4Unroll;
  /// 4-bit GEMMs of more than 64 rows (dequantised for cuBLASLt) get their
  /// weight dequantised a GEMM ahead on a side stream (W4Prefetch.h).
  /// Default: $ACCEL_GPU_W4_PREFETCH, else on.
  bool w4Prefetch = env().gpuW4Prefetch;
  /// bf16/f16 moe steps that take the expert-batched GEMV run its
  /// tensor-core form instead (moe_mma_*, Moe.cu: each expert weight row read
  /// once per 64 routed rows, not per 8). Default: $ACCEL_GPU_MOE_MMA, else off
  /// until measured.
  bool moeMma = env().gpuMoeMma;
};

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_CUDA_GPUTUNING_H
