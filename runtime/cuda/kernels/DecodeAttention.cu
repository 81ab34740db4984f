//===- DecodeAttention.cu - paged decode attention, one KV head per block ---===//
//
// decode_attention_d<D>_*: a decode step (one query per sequence, the last
// position of its context) over the paged KV pool, with the semantics of
// paged_attention_* (Attention.cu) for that case: sequence i's query sits at
// position L - 1 and sees keys [lo, L - 1] (lo = max(0, L - W) with a
// sliding window W, else 0; causal or not makes no difference for the last
// position); scores (q . k) * scale, softcapped when c > 0; softmax in f32.
//
// One block (4 warps) per (sequence, KV head, split) serves all G = heads /
// kv_heads query heads of that KV head (G <= 8), so each key and value row
// is read from memory once, not G times. A lane owns D / 32 consecutive
// channels (one vector load per row); a warp takes kKeys (8, or 4 at
// D = 256) keys per
// iteration, issuing all their K and V loads before using any (memory
// latency, not bandwidth, bounds a decode step's attention), and keeps its
// own online-softmax state per head; the block merges its warps' states in
// shared memory. With S > 1 splits the block writes partials (max, sum,
// unnormalised accumulator) in paged_attention's layout and
// attention_combine_* merges them; a split with no keys writes max -inf.
// (Merging in this kernel instead, by the last split block of each
// (sequence, KV head) through an atomic counter, measured 0.18-0.24 ms slower
// per 32-layer batch-1 step than the combine launch on the H200: the last
// block's dependent L2 reads of the partials cost more than the launch.)
// decode_attention_d<D>_<S>_kv8 reads an f8E4M3FN cache (4 bytes per lane
// and row at D = 128).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"
#include "runtime/cuda/kernels/KvScales.h"

#include <math_constants.h>

using namespace accel_kernels;

namespace {

constexpr int kDecodeWarps = 4;
constexpr int kDecodeMaxGroup = 8;


/// n consecutive elements at p (aligned to n elements) as floats.
template <int N>
__device__ __forceinline__ void loadRow(const float *p, float (&out)[N]) {
  if constexpr (N % 4 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 4) {
      const float4 v = *reinterpret_cast<const float4 *>(p + i);
      out[i] = v.x, out[i + 1] = v.y, out[i + 2] = v.z, out[i + 3] = v.w;
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      out[i] = p[i];
  }
}

template <int N, typename H>
__device__ __forceinline__ void loadRow16(const H *p, float (&out)[N]) {
  // bf16 / f16: N halves; 8 bytes (N = 4) or 16 bytes (N = 8) per load.
  if constexpr (N % 8 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 8) {
      const uint4 raw = *reinterpret_cast<const uint4 *>(p + i);
      const H *h = reinterpret_cast<const H *>(&raw);
#pragma unroll
      for (int j = 0; j < 8; ++j)
        out[i + j] = toF32(h[j]);
    }
  } else if constexpr (N % 4 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 4) {
      const uint2 raw = *reinterpret_cast<const uint2 *>(p + i);
      const H *h = reinterpret_cast<const H *>(&raw);
#pragma unroll
      for (int j = 0; j < 4; ++j)
        out[i + j] = toF32(h[j]);
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      out[i] = toF32(p[i]);
  }
}

/// An f8E4M3FN cache row (stored values; the caller scales): 2, 4 or 8
/// bytes per load, converted two at a time through f16x2.
template <int N>
__device__ __forceinline__ void loadRow(const __nv_fp8_e4m3 *p, float (&out)[N]) {
  if constexpr (N % 4 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 4) {
      const uint32_t raw = *reinterpret_cast<const uint32_t *>(p + i);
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const __half2_raw h =
            __nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t(raw >> (16 * j)), __NV_E4M3);
        const float2 f = __half22float2(__half2(h));
        out[i + 2 * j] = f.x;
        out[i + 2 * j + 1] = f.y;
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      out[i] = toF32(p[i]);
  }
}

template <int N>
__device__ __forceinline__ void loadRow(const __nv_bfloat16 *p, float (&out)[N]) {
  loadRow16<N>(p, out);
}
template <int N>
__device__ __forceinline__ void loadRow(const __half *p, float (&out)[N]) {
  loadRow16<N>(p, out);
}

/// C: the cache's element type (T, or __nv_fp8_e4m3: its KV head's k scale
/// multiplies `scale`, its v scale the result).
template <typename T, typename C, int D>
__device__ __forceinline__ void decodeAttention(
    const T *q, const C *kCache, const C *vCache, const int *qsl, const int *seqLens,
    const int *blockTables, i64 tableWidth, T *out, float *partM, float *partL, float *partAcc,
    i64 heads, i64 kvHeads, i64 blockSize, float scale, i64 window, float softcap, int numSplits,
    i64 splitSize, const int *splitSizeDev, const accel::rt::kernels::KvScales &kvs) {
  constexpr int E = D / 32; // channels per lane
  // Keys in flight per warp: 8 up to D = 128 (a split of a short batch-1
  // context is then one round of loads), 4 at D = 256 (registers).
  constexpr int kKeys = D <= 128 ? 8 : 4;
  __shared__ float sM[kDecodeWarps][kDecodeMaxGroup], sL[kDecodeWarps][kDecodeMaxGroup];
  __shared__ float sAcc[kDecodeWarps][kDecodeMaxGroup][D];

  const i64 seq = blockIdx.x, kvh = blockIdx.y;
  scale *= kvs.kAt(kvh);
  const float vScale = kvs.vAt(kvh);
  const int split = blockIdx.z;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int group = int(heads / kvHeads);
  const i64 t = qsl[seq]; // the sequence's one query row
  const i64 len = seqLens[seq];
  i64 kb = window > 0 ? max(i64(0), len - window) : 0;
  i64 ke = len - 1;
  if (numSplits > 1) {
    const i64 size = splitSizeDev ? i64(*splitSizeDev) : splitSize;
    kb = max(kb, i64(split) * size);
    ke = min(ke, i64(split + 1) * size - 1);
  }

  float qr[kDecodeMaxGroup][E];
#pragma unroll
  for (int g = 0; g < kDecodeMaxGroup; ++g)
    if (g < group)
      loadRow<E>(q + ((t * heads) + kvh * group + g) * D + lane * E, qr[g]);
  float m[kDecodeMaxGroup], l[kDecodeMaxGroup], acc[kDecodeMaxGroup][E];
#pragma unroll
  for (int g = 0; g < kDecodeMaxGroup; ++g) {
    m[g] = -CUDART_INF_F;
    l[g] = 0.0f;
#pragma unroll
    for (int e = 0; e < E; ++e)
      acc[g][e] = 0.0f;
  }

  const int *table = blockTables + seq * tableWidth;
  const i64 rowElems = kvHeads * D;
  for (i64 k0 = kb + i64(warp) * kKeys; k0 <= ke; k0 += i64(kDecodeWarps) * kKeys) {
    float kv[kKeys][E], vv[kKeys][E];
#pragma unroll
    for (int u = 0; u < kKeys; ++u) {
      const i64 p = k0 + u;
      if (p <= ke) {
        const i64 slot = i64(table[p / blockSize]) * blockSize + p % blockSize;
        const i64 off = slot * rowElems + kvh * D + lane * E;
        loadRow<E>(kCache + off, kv[u]);
        loadRow<E>(vCache + off, vv[u]);
      } else {
#pragma unroll
        for (int e = 0; e < E; ++e)
          kv[u][e] = vv[u][e] = 0.0f;
      }
    }
#pragma unroll
    for (int g = 0; g < kDecodeMaxGroup; ++g) {
      if (g >= group)
        break;
      float s[kKeys];
#pragma unroll
      for (int u = 0; u < kKeys; ++u) {
        float dot = 0.0f;
#pragma unroll
        for (int e = 0; e < E; ++e)
          dot += qr[g][e] * kv[u][e];
        s[u] = dot;
      }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1)
#pragma unroll
        for (int u = 0; u < kKeys; ++u)
          s[u] += __shfl_xor_sync(0xffffffffu, s[u], o);
      float mx = m[g];
#pragma unroll
      for (int u = 0; u < kKeys; ++u) {
        float sc = s[u] * scale;
        if (softcap > 0.0f)
          sc = softcap * tanhf(sc / softcap);
        s[u] = k0 + u <= ke ? sc : -CUDART_INF_F;
        mx = fmaxf(mx, s[u]);
      }
      // mx is finite: key k0 is always in range.
      const float alpha = expf(m[g] - mx); // 0 while m is -inf
      l[g] *= alpha;
#pragma unroll
      for (int e = 0; e < E; ++e)
        acc[g][e] *= alpha;
#pragma unroll
      for (int u = 0; u < kKeys; ++u) {
        const float p = expf(s[u] - mx); // 0 for keys out of range
        l[g] += p;
#pragma unroll
        for (int e = 0; e < E; ++e)
          acc[g][e] += p * vv[u][e];
      }
      m[g] = mx;
    }
  }

  // Merge the warps' states.
#pragma unroll
  for (int g = 0; g < kDecodeMaxGroup; ++g) {
    if (g >= group)
      break;
    if (lane == 0) {
      sM[warp][g] = m[g];
      sL[warp][g] = l[g];
    }
#pragma unroll
    for (int e = 0; e < E; ++e)
      sAcc[warp][g][lane * E + e] = acc[g][e];
  }
  __syncthreads();
  for (int i = threadIdx.x; i < group * D; i += blockDim.x) {
    const int g = i / D, c = i % D;
    float mx = -CUDART_INF_F;
#pragma unroll
    for (int w = 0; w < kDecodeWarps; ++w)
      mx = fmaxf(mx, sM[w][g]);
    float total = 0.0f, a = 0.0f;
    if (mx != -CUDART_INF_F) {
#pragma unroll
      for (int w = 0; w < kDecodeWarps; ++w) {
        const float f = expf(sM[w][g] - mx);
        total += sL[w][g] * f;
        a += sAcc[w][g][c] * f;
      }
    }
    a *= vScale;
    const i64 h = kvh * group + g;
    if (numSplits == 1) {
      out[(t * heads + h) * D + c] = fromF32<T>(total > 0.0f ? a / total : 0.0f);
    } else {
      const i64 idx = (t * heads + h) * numSplits + split;
      if (c == 0) {
        partM[idx] = mx;
        partL[idx] = total;
      }
      partAcc[idx * D + c] = a;
    }
  }
}

} // namespace

#define DECODE_ATTENTION(T, S, C, CS, D)                                                    \
  extern "C" __global__ void __launch_bounds__(kDecodeWarps * 32)                           \
      decode_attention_d##D##_##S##CS(                                                      \
          const T *q, const C *kCache, const C *vCache, const int *qsl, const int *seqLens, \
          const int *blockTables, i64 tableWidth, T *out, float *partM, float *partL,       \
          float *partAcc, i64 heads, i64 kvHeads, i64 blockSize, float scale, i64 window,   \
          float softcap, int numSplits, i64 splitSize, const int *splitSizeDev,             \
          accel::rt::kernels::KvScales kvs) {                                               \
    pdlPrologue();                                                                          \
    decodeAttention<T, C, D>(q, kCache, vCache, qsl, seqLens, blockTables, tableWidth, out, \
                             partM, partL, partAcc, heads, kvHeads, blockSize, scale,       \
                             window, softcap, numSplits, splitSize, splitSizeDev, kvs);     \
  }
#define DECODE_ATTENTION_ALL_D(T, S, C, CS)                                                 \
  DECODE_ATTENTION(T, S, C, CS, 64)                                                         \
  DECODE_ATTENTION(T, S, C, CS, 128)                                                        \
  DECODE_ATTENTION(T, S, C, CS, 256)
ACCEL_FOR_EACH_DTYPE_AND_KV(DECODE_ATTENTION_ALL_D)
