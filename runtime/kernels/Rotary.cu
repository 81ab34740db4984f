//===- Rotary.cu - rotary position embedding --------------------------------===//
//
// x [tokens, heads, head_dim] rotated by each token's position, HF's
// formulas (runtime/cpu/transformer/Rotary.h): angle = pos * inv_freq[j]
// in f32, or cos/sin read from f32 tables [max_position, rotary_dim / 2].
// half_split pairs j with j + rotary_dim / 2; interleaved pairs 2j, 2j + 1.
// Channels past rotary_dim pass through. One block per token.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Common.cuh"

using namespace accel_kernels;

namespace {
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
    if (cosTab) {
      c = cosTab[pos * half + j];
      s = sinTab[pos * half + j];
    } else {
      const float angle = float(pos) * invFreq[j];
      c = cosf(angle);
      s = sinf(angle);
    }
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
