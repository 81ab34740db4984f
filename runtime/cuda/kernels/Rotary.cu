//===- Rotary.cu - rotary position embedding --------------------------------===//
//
// x [tokens, heads, head_dim] rotated by each token's position, HF's
// formulas (runtime/cpu/transformer/Rotary.h): angle = pos * inv_freq[j]
// in f32, or cos/sin read from f32 tables [max_position, rotary_dim / 2].
// half_split pairs j with j + rotary_dim / 2; interleaved pairs 2j, 2j + 1.
// Channels past rotary_dim pass through. One block per token.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"
#include "runtime/cuda/kernels/KvScales.h"

using namespace accel_kernels;

namespace {
/// cos and sin of position `pos` for pair j: from the tables, or pos * inv_freq[j].
__device__ __forceinline__ void rotaryAngle(i64 pos, i64 j, i64 half, const float *invFreq,
                                            const float *cosTab, const float *sinTab, float &c,
                                            float &s) {
  if (cosTab) {
    c = cosTab[pos * half + j];
    s = sinTab[pos * half + j];
  } else {
    const float angle = float(pos) * invFreq[j];
    c = cosf(angle);
    s = sinf(angle);
  }
}

template <typename T>
__device__ __forceinline__ void rotary(const T *x, T *out, const void *positions, int pos64,
                                       const float *invFreq, const float *cosTab,
                                       const float *sinTab, i64 heads, i64 headDim,
                                       i64 rotaryDim, int interleaved) {
  const i64 t = blockIdx.x;
  const i64 half = rotaryDim / 2;
  const i64 pos = loadIndex(positions, t, pos64);
  const T *xt = x + t * heads * headDim;
  T *ot = out + t * heads * headDim;
  // Rotated pairs.
  for (i64 i = threadIdx.x; i < heads * half; i += blockDim.x) {
    const i64 h = i / half, j = i - h * half;
    float c, s;
    rotaryAngle(pos, j, half, invFreq, cosTab, sinTab, c, s);
    const i64 i1 = interleaved ? 2 * j : j, i2 = interleaved ? 2 * j + 1 : j + half;
    const float x1 = toF32(xt[h * headDim + i1]), x2 = toF32(xt[h * headDim + i2]);
    ot[h * headDim + i1] = fromF32<T>(x1 * c - x2 * s);
    ot[h * headDim + i2] = fromF32<T>(x2 * c + x1 * s);
  }
  // Pass-through channels.
  const i64 rest = headDim - rotaryDim;
  for (i64 i = threadIdx.x; i < heads * rest; i += blockDim.x) {
    const i64 h = i / rest, c = rotaryDim + (i - h * rest);
    ot[h * headDim + c] = xt[h * headDim + c];
  }
}
} // namespace

#define ROTARY(T, S)                                                                        \
  extern "C" __global__ void rotary_##S(const T *x, T *out, const void *positions,         \
                                        int pos64, const float *invFreq,                    \
                                        const float *cosTab, const float *sinTab,           \
                                        i64 heads, i64 headDim, i64 rotaryDim,              \
                                        int interleaved) {                                  \
    rotary<T>(x, out, positions, pos64, invFreq, cosTab, sinTab, heads, headDim,            \
              rotaryDim, interleaved);                                                      \
  }
ACCEL_FOR_EACH_DTYPE(ROTARY)

//===----------------------------------------------------------------------===//
// qkv_rotary: split + rotary of q and k (+ the KV-cache write), one launch
//===----------------------------------------------------------------------===//
//
// qkv [tokens, (heads + 2 kvHeads) * headDim] (a fused QKV projection's
// output) is split into q [tokens, heads, headDim], k and v [tokens,
// kvHeads, headDim]; q and k rotate as rotary_* does. q goes to `q`; k and
// v go either to kOut / vOut (the launch step qkv_rotary) or, when kCache
// is set, into the paged pool at slot slots[t] (the kv_write step
// qkv_rotary; a negative slot skips the token's K/V, as kv_write does;
// qkv_rotary_<S>_kv8 stores them as f8E4M3FN, value / scale). gridDim.y
// blocks per token (the runtime uses several when tokens are few, so that
// a decode step's token is one item per thread, not a loop of them).

namespace {
template <typename T, typename C>
__device__ __forceinline__ void qkvRotary(const T *qkv, T *q, T *kOut, T *vOut, const int *slots,
                                          C *kCache, C *vCache,
                                          const accel::rt::kernels::KvScales &kvs,
                                          const void *positions, int pos64,
                                          const float *invFreq, const float *cosTab,
                                          const float *sinTab, i64 heads, i64 kvHeads,
                                          i64 headDim, i64 rotaryDim, int interleaved) {
  const i64 t = blockIdx.x;
  const i64 half = rotaryDim / 2;
  // gridDim.y blocks share a token (few tokens: one item per thread).
  const i64 first = threadIdx.x + i64(blockIdx.y) * blockDim.x;
  const i64 stride = i64(blockDim.x) * gridDim.y;
  const i64 pos = loadIndex(positions, t, pos64);
  const i64 kvRow = kvHeads * headDim;
  const T *src = qkv + t * (heads * headDim + 2 * kvRow);
  T *qt = q + t * heads * headDim;
  // k and v go to the outputs (T) or to the cache (C, stored = value / scale).
  T *ko = nullptr, *vo = nullptr;
  C *kc = nullptr, *vc = nullptr;
  if (kCache) {
    const i64 slot = slots[t];
    if (slot >= 0) {
      kc = kCache + slot * kvRow;
      vc = vCache + slot * kvRow;
    }
  } else {
    ko = kOut + t * kvRow;
    vo = vOut + t * kvRow;
  }
  auto put = [&](i64 h, i64 c, float v) {
    if (h < heads)
      qt[h * headDim + c] = fromF32<T>(v);
    else if (kc)
      kc[(h - heads) * headDim + c] = fromF32<C>(v / kvs.kAt(h - heads));
    else if (ko)
      ko[(h - heads) * headDim + c] = fromF32<T>(v);
  };
  // Heads 0 .. heads-1 are q's, heads .. heads+kvHeads-1 k's.
  const i64 rotHeads = heads + kvHeads;
  for (i64 i = first; i < rotHeads * half; i += stride) {
    const i64 h = i / half, j = i - h * half;
    float c, s;
    rotaryAngle(pos, j, half, invFreq, cosTab, sinTab, c, s);
    const i64 i1 = interleaved ? 2 * j : j, i2 = interleaved ? 2 * j + 1 : j + half;
    const float x1 = toF32(src[h * headDim + i1]), x2 = toF32(src[h * headDim + i2]);
    put(h, i1, x1 * c - x2 * s);
    put(h, i2, x2 * c + x1 * s);
  }
  // Pass-through channels of q and k (partial rotary).
  const i64 rest = headDim - rotaryDim;
  for (i64 i = first; i < rotHeads * rest; i += stride) {
    const i64 h = i / rest, c = rotaryDim + (i - h * rest);
    put(h, c, toF32(src[h * headDim + c]));
  }
  // v.
  for (i64 c = first; c < kvRow; c += stride) {
    const float v = toF32(src[rotHeads * headDim + c]);
    if (vc)
      vc[c] = fromF32<C>(v / kvs.vAt(c / headDim));
    else if (vo)
      vo[c] = fromF32<T>(v);
  }
}
} // namespace

#define QKV_ROTARY(T, S, C, CS)                                                             \
  extern "C" __global__ void qkv_rotary_##S##CS(                                            \
      const T *qkv, T *q, T *kOut, T *vOut, const int *slots, C *kCache, C *vCache,          \
      accel::rt::kernels::KvScales kvs, const void *positions, int pos64,                    \
      const float *invFreq,                                                                  \
      const float *cosTab, const float *sinTab, i64 heads, i64 kvHeads, i64 headDim,         \
      i64 rotaryDim, int interleaved) {                                                      \
    pdlPrologue();                                                                           \
    qkvRotary<T, C>(qkv, q, kOut, vOut, slots, kCache, vCache, kvs, positions,               \
                    pos64, invFreq, cosTab, sinTab, heads, kvHeads, headDim, rotaryDim,      \
                    interleaved);                                                            \
  }
ACCEL_FOR_EACH_DTYPE_AND_KV(QKV_ROTARY)
