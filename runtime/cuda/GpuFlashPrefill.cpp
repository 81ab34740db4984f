//===- GpuFlashPrefill.cpp - tensor-core prefill attention (host side) -----===//
//
// GpuFlashPrefill.h says when the kernel applies; FlashPrefill.cu describes
// the kernel. The launch: grid (floor(tokens * G / 64) + seqs, kv_heads),
// 128 threads, 48 KiB (head_dim 128) or 24 KiB (64) of static shared memory,
// so no dynamic-shared-memory opt-in is needed.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/GpuFlashPrefill.h"

#include <algorithm>
#include <string>

namespace accel::rt::engine {

namespace {

using i64 = long long;
constexpr int64_t kFlashRows = 64; // FlashPrefill.cu's kBlockM
constexpr unsigned kFlashThreads = 128;

/// The longest query run of the step, from the host copy of query_start_loc.
int64_t maxQueryLen(const kv::StepMetadata &meta) {
  const Tensor &qsl = meta.queryStartLoc;
  if (!qsl.defined() || qsl.numElements() != meta.numSeqs + 1)
    return 0;
  int64_t best = 0;
  for (int64_t i = 0; i < meta.numSeqs; ++i) {
    const int64_t a = qsl.dtype() == DType::kI64 ? qsl.data<int64_t>()[i] : qsl.data<int32_t>()[i];
    const int64_t b =
        qsl.dtype() == DType::kI64 ? qsl.data<int64_t>()[i + 1] : qsl.data<int32_t>()[i + 1];
    best = std::max(best, b - a);
  }
  return best;
}

bool aligned16(gpu::CuDevicePtr p) { return (p & 15) == 0; }

} // namespace

StatusOr<bool> runFlashPrefill(GpuRunState &st, const DeviceTensor &q, const DeviceTensor &out,
                               int64_t layer, float scale, bool causal, int64_t window,
                               float softcap) {
  if (!st.flashPrefill || !st.meta || !st.gpu)
    return false;
  // Split-KV decode steps and graph captures keep paged_attention.
  if (st.gpu->capturing() || (st.meta->numTokens == st.meta->numSeqs && st.split.numSplits > 1))
    return false;
  if (maxQueryLen(*st.meta) < kFlashPrefillMinQueryLen)
    return false;
  return launchFlashPrefill(st, q, out, layer, scale, causal, window, softcap);
}

StatusOr<bool> launchFlashPrefill(GpuRunState &st, const DeviceTensor &q, const DeviceTensor &out,
                                  int64_t layer, float scale, bool causal, int64_t window,
                                  float softcap) {
  if (!st.gpu || !st.meta || !st.keys || !st.values)
    return false;
  if (st.dtype != DType::kBF16 && st.dtype != DType::kF16)
    return false;
  if (q.dtype != st.dtype || out.dtype != st.dtype || q.rank() != 3)
    return false;
  const int64_t d = st.headDim;
  if ((d != 64 && d != 128) || q.dim(2) != d)
    return false;
  const int64_t tokens = q.dim(0), heads = q.dim(1), kvHeads = st.numKvHeads;
  const int64_t seqs = st.meta->numSeqs;
  if (tokens == 0 || heads == 0 || seqs == 0 || kvHeads <= 0 || heads % kvHeads != 0 ||
      tokens != st.meta->numTokens)
    return false;
  if (layer < 0 || size_t(layer) >= st.keys->size() || size_t(layer) >= st.values->size())
    return false;
  const DeviceTensor &kc = (*st.keys)[size_t(layer)], &vc = (*st.values)[size_t(layer)];
  if (kc.dtype != st.dtype || vc.dtype != st.dtype || !aligned16(q.ptr) || !aligned16(out.ptr) ||
      !aligned16(kc.ptr) || !aligned16(vc.ptr))
    return false;
  const int64_t group = heads / kvHeads;
  // Grid slots: floor(rows / 64) + seqs (FlashPrefill.cu's work list); the
  // kernel's slot arithmetic is in int.
  const int64_t slots = tokens * group / kFlashRows + seqs;
  if (tokens * group >= (int64_t(1) << 30) || kvHeads > 65535 || st.blockSize <= 0)
    return false;
  // The kernel keeps pool slots in int.
  if (kc.rank() < 1 || kc.dim(0) * st.blockSize >= (int64_t(1) << 31))
    return false;
  int blockShift = -1;
  if ((st.blockSize & (st.blockSize - 1)) == 0)
    for (blockShift = 0; (int64_t(1) << blockShift) < st.blockSize; ++blockShift) {
    }
  const std::string name = "flash_prefill_d" + std::to_string(d) + "_" + gpuDTypeSuffix(st.dtype);
  ACCEL_RT_ASSIGN_OR_RETURN(gpu::CuFunction fn, st.gpu->function(name));
  ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(
      fn, gpu::Dim3{unsigned(slots), unsigned(kvHeads), 1}, gpu::Dim3{kFlashThreads, 1, 1}, 0,
      q.ptr, kc.ptr, vc.ptr, st.queryStartLoc.ptr, st.seqLens.ptr, st.blockTables.ptr,
      i64(st.blockTables.dim(1)), out.ptr, i64(seqs), i64(heads), i64(kvHeads),
      i64(st.blockSize), blockShift, scale, int(causal), i64(window), softcap));
  return true;
}

} // namespace accel::rt::engine
