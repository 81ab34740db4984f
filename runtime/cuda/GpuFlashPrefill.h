//===- GpuFlashPrefill.h - tensor-core prefill attention (host side) -*- C++ -*-===//
//
// The launch of runtime/cuda/kernels/FlashPrefill.cu (flash_prefill_d{64,128}_
// {bf16,f16}) for an attention_prefill step: FlashAttention-2 style tiles on
// the tensor cores over the paged KV cache, one CTA per 64 (token, query
// head) rows of one sequence and one KV head's GQA group. ops/Attention.cpp's
// attention step tries it first; when it does not apply it says so and the
// step runs paged_attention_* (Attention.cu) as before.
//
// It applies when: the compute dtype is bf16 or f16; head_dim is 64 or 128;
// the step is not a split-KV decode step and not being captured into a CUDA
// graph; its longest query run (a prefill chunk) has at least
// kFlashPrefillMinQueryLen tokens; q, out and the pool are 16 B aligned; and
// GpuRunState::flashPrefill is on (GpuExecutorOptions::tuning.flashPrefill,
// default on; tests turn it off to run paged_attention_*).
// Causal or not, sliding window, softcap, GQA/MQA, prefix-cached chunks
// (seq_len > q_len) and any block size are handled by the kernel.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_GPUFLASHPREFILL_H
#define ACCEL_RUNTIME_CUDA_GPUFLASHPREFILL_H

#include "runtime/cuda/GpuSteps.h"

namespace accel::rt::engine {

/// A step uses the flash kernel when some sequence brings this many queries.
constexpr int64_t kFlashPrefillMinQueryLen = 16;

/// The attention of `q` [tokens, heads, head_dim] over layer `layer` of the
/// device KV pool into `out` (q's shape and dtype) with the flash kernel,
/// if it applies to this step (see above). Returns false, having launched
/// nothing, when it does not; an error only for a failed launch.
/// `scale` is the effective scale (already 1/sqrt(head_dim) when unset).
StatusOr<bool> runFlashPrefill(GpuRunState &st, const DeviceTensor &q, const DeviceTensor &out,
                               int64_t layer, float scale, bool causal, int64_t window,
                               float softcap);

/// The launch alone, without the step policy (GpuRunState::flashPrefill,
/// minimum query length, split-KV, graph capture): false when the kernel cannot run
/// this attention (dtype, head_dim, alignment, sizes). Tests use it to run
/// the kernel on decode-sized sequences too.
StatusOr<bool> launchFlashPrefill(GpuRunState &st, const DeviceTensor &q, const DeviceTensor &out,
                                  int64_t layer, float scale, bool causal, int64_t window,
                                  float softcap);

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_CUDA_GPUFLASHPREFILL_H
