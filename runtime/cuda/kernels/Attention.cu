//===- Attention.cu - paged attention: ragged prefill and split-KV decode ---===//
//
// q [tokens, heads, head_dim] of a ragged batch attends over the paged KV
// pool through the step's block tables, with the semantics of
// runtime/cpu/transformer/PagedAttention.h: sequence i's query rows are
// [qsl[i], qsl[i + 1]); with n queries and context L, query j sits at
// position L - n + j and sees keys [lo, hi], lo = max(0, pos - W + 1) with a
// sliding window W (else 0), hi = pos when causal (else L - 1). Scores are
// (q . k) * scale, softcapped (c tanh(s / c)) when c > 0; softmax in f32
// (online, max-subtracted); query head h reads KV head h / (heads / kv_heads).
//
// paged_attention_*: one block (128 threads, 4 warps) per (query token,
// head, split). Keys go in tiles of 64: each warp scores keys of the tile
// (lanes across head_dim, coalesced), then every thread rescales its running
// softmax state and accumulates V for the channels it owns (c = tid + 128 i,
// head_dim <= 512). With one split the block writes the normalised output.
// With S > 1 splits (decode: one query per sequence and long contexts), split
// s covers key positions [s * split_size, (s + 1) * split_size) and writes
// its partial (max, sum, unnormalised accumulator); attention_combine_*
// merges the splits. A split with no keys (past its sequence's context; a
// padded row of a CUDA graph has seq_len 0) writes max -inf and returns at
// once. In a CUDA graph split_size comes from device memory (the grid's
// split count is fixed at capture, the size follows each step's longest
// context); a single split with no keys writes zeros.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"
#include "runtime/cuda/kernels/KvScales.h"

#include <math_constants.h>

using namespace accel_kernels;

namespace {

constexpr int kThreads = 128;
constexpr int kTile = 64;
constexpr int kMaxChannelsPerThread = 4; // head_dim <= 512

/// C: the cache's element type (T, or __nv_fp8_e4m3: its KV head's k scale
/// multiplies `scale`, its v scale the result).
template <typename T, typename C>
__device__ __forceinline__ void pagedAttention(
    const T *q, const C *kCache, const C *vCache, const int *qsl, const int *seqLens,
    const int *blockTables, i64 tableWidth, T *out, float *partM, float *partL, float *partAcc,
    i64 numSeqs, i64 heads, i64 kvHeads, i64 headDim, i64 blockSize, float scale, int causal,
    i64 window, float softcap, int numSplits, i64 splitSize, const int *splitSizeDev,
    const accel::rt::kernels::KvScales &kvs) {
  extern __shared__ __align__(16) unsigned char smemRaw[];
  i64 *keyOff = reinterpret_cast<i64 *>(smemRaw);
  float *qs = reinterpret_cast<float *>(keyOff + kTile);
  float *scores = qs + headDim;
  __shared__ int seqShared;

  const i64 t = blockIdx.x, h = blockIdx.y;
  const int split = blockIdx.z;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int warps = blockDim.x >> 5;

  if (tid == 0) {
    // The last sequence whose first row is <= t (empty sequences share
    // their start with the next one).
    i64 lo = 0, hi = numSeqs - 1;
    while (lo < hi) {
      const i64 mid = (lo + hi + 1) / 2;
      if (qsl[mid] <= t)
        lo = mid;
      else
        hi = mid - 1;
    }
    seqShared = int(lo);
  }
  __syncthreads();

  const i64 seq = seqShared;
  const i64 len = seqLens[seq];
  const i64 n = i64(qsl[seq + 1]) - qsl[seq];
  const i64 pos = len - n + (t - qsl[seq]);
  i64 kb = window > 0 ? max(i64(0), pos - window + 1) : 0;
  i64 ke = causal ? pos : len - 1;
  if (numSplits > 1) {
    // A CUDA graph reads the step's split size from device memory.
    const i64 size = splitSizeDev ? i64(*splitSizeDev) : splitSize;
    kb = max(kb, i64(split) * size);
    ke = min(ke, i64(split + 1) * size - 1);
    if (kb > ke) {
      // An empty split (past this sequence's context, or a padded row of a
      // graph): attention_combine skips partials whose max is -inf.
      if (tid == 0) {
        const i64 idx = (t * heads + h) * numSplits + split;
        partM[idx] = -CUDART_INF_F;
        partL[idx] = 0.0f;
      }
      return;
    }
  }
  const i64 qrow = (t * heads + h) * headDim;
  for (i64 c = tid; c < headDim; c += blockDim.x)
    qs[c] = toF32(q[qrow + c]);
  __syncthreads();
  const i64 group = heads / kvHeads;
  const i64 kvh = h / group;
  scale *= kvs.kAt(kvh);
  const float vScale = kvs.vAt(kvh);
  const i64 rowElems = kvHeads * headDim;
  const int *table = blockTables + seq * tableWidth;

  float m = -CUDART_INF_F, l = 0.0f;
  float acc[kMaxChannelsPerThread];
#pragma unroll
  for (int i = 0; i < kMaxChannelsPerThread; ++i)
    acc[i] = 0.0f;

  for (i64 k0 = kb; k0 <= ke; k0 += kTile) {
    const int nk = int(min(i64(kTile), ke - k0 + 1));
    for (int j = warp; j < nk; j += warps) {
      const i64 p = k0 + j;
      const i64 slot = i64(table[p / blockSize]) * blockSize + p % blockSize;
      const i64 off = slot * rowElems + kvh * headDim;
      float dot = 0.0f;
      for (i64 c = lane; c < headDim; c += 32)
        dot += qs[c] * toF32(kCache[off + c]);
      dot = warpSum(dot);
      if (lane == 0) {
        float s = dot * scale;
        if (softcap > 0.0f)
          s = softcap * tanhf(s / softcap);
        scores[j] = s;
        keyOff[j] = off;
      }
    }
    __syncthreads();
    float tileMax = -CUDART_INF_F;
    for (int j = 0; j < nk; ++j)
      tileMax = fmaxf(tileMax, scores[j]);
    const float mNew = fmaxf(m, tileMax);
    const float alpha = m == -CUDART_INF_F ? 0.0f : expf(m - mNew);
    l *= alpha;
#pragma unroll
    for (int i = 0; i < kMaxChannelsPerThread; ++i)
      acc[i] *= alpha;
    for (int j = 0; j < nk; ++j) {
      const float p = expf(scores[j] - mNew);
      l += p;
      const C *vr = vCache + keyOff[j];
#pragma unroll
      for (int i = 0; i < kMaxChannelsPerThread; ++i) {
        const i64 c = tid + i64(i) * kThreads;
        if (c < headDim)
          acc[i] += p * toF32(vr[c]);
      }
    }
    m = mNew;
    __syncthreads(); // the next tile overwrites scores and keyOff
  }

  if (numSplits == 1) {
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
#pragma unroll
    for (int i = 0; i < kMaxChannelsPerThread; ++i) {
      const i64 c = tid + i64(i) * kThreads;
      if (c < headDim)
        out[qrow + c] = fromF32<T>(acc[i] * inv * vScale);
    }
    return;
  }
  const i64 idx = (t * heads + h) * numSplits + split;
  if (tid == 0) {
    partM[idx] = m;
    partL[idx] = l;
  }
#pragma unroll
  for (int i = 0; i < kMaxChannelsPerThread; ++i) {
    const i64 c = tid + i64(i) * kThreads;
    if (c < headDim)
      partAcc[idx * headDim + c] = acc[i] * vScale;
  }
}

template <typename T>
__device__ __forceinline__ void attentionCombine(const float *partM, const float *partL,
                                                 const float *partAcc, T *out, i64 heads,
                                                 i64 headDim, int numSplits) {
  const i64 t = blockIdx.x, h = blockIdx.y;
  const i64 base = (t * heads + h) * numSplits;
  float mx = -CUDART_INF_F;
  for (int s = 0; s < numSplits; ++s)
    mx = fmaxf(mx, partM[base + s]);
  float total = 0.0f;
  for (int s = 0; s < numSplits; ++s)
    if (partM[base + s] != -CUDART_INF_F)
      total += partL[base + s] * expf(partM[base + s] - mx);
  const float inv = total > 0.0f ? 1.0f / total : 0.0f;
  for (i64 c = threadIdx.x; c < headDim; c += blockDim.x) {
    float v = 0.0f;
    for (int s = 0; s < numSplits; ++s)
      if (partM[base + s] != -CUDART_INF_F)
        v += partAcc[(base + s) * headDim + c] * expf(partM[base + s] - mx);
    out[(t * heads + h) * headDim + c] = fromF32<T>(v * inv);
  }
}

} // namespace

#define ATTENTION(T, S, C, CS)                                                              \
  extern "C" __global__ void __launch_bounds__(kThreads) paged_attention_##S##CS(          \
      const T *q, const C *kCache, const C *vCache, const int *qsl, const int *seqLens,    \
      const int *blockTables, i64 tableWidth, T *out, float *partM, float *partL,          \
      float *partAcc, i64 numSeqs, i64 heads, i64 kvHeads, i64 headDim, i64 blockSize,     \
      float scale, int causal, i64 window, float softcap, int numSplits, i64 splitSize,     \
      const int *splitSizeDev, accel::rt::kernels::KvScales kvs) {                          \
    pagedAttention<T, C>(q, kCache, vCache, qsl, seqLens, blockTables, tableWidth, out,     \
                         partM, partL, partAcc, numSeqs, heads, kvHeads, headDim,           \
                         blockSize, scale, causal, window, softcap, numSplits, splitSize,   \
                         splitSizeDev, kvs);                                                \
  }
ACCEL_FOR_EACH_DTYPE_AND_KV(ATTENTION)

#define ATTENTION_COMBINE(T, S)                                                             \
  extern "C" __global__ void attention_combine_##S(const float *partM, const float *partL, \
                                                   const float *partAcc, T *out, i64 heads, \
                                                   i64 headDim, int numSplits) {            \
    pdlPrologue();                                                                          \
    attentionCombine<T>(partM, partL, partAcc, out, heads, headDim, numSplits);             \
  }
ACCEL_FOR_EACH_DTYPE(ATTENTION_COMBINE)
