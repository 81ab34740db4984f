//===- Gemv.cu - skinny GEMMs of decode steps: y = x W^T for a few rows ------===//
//
// gemv_m<M>_<T>[_f32out]: y[m, n] = sum_k x[m, k] * w[n, k] for m < rows <= M,
// x and w bf16 or f16 (row-major, contiguous, K a multiple of 8, 16-byte
// aligned), y in T or f32; f32 accumulation. Only M = 1 is built: on the
// H200 (2026-11-30) an M = 8 variant of this design read the Llama-3-8B
// weights at 0.6-1.6 TB/s, below cuBLASLt, so batches of 2 and more stay
// with cuBLASLt; at M = 1 it reads them at 2.6-4.4 TB/s (docs/performance.md). One warp per output column n (a row of w): its lanes read
// the row in 16-byte chunks, kUnroll chunks in flight per lane, and each
// chunk is multiplied by the matching chunk of every x row (which the
// read-only cache serves: x is a few KB). A batch-1 decode step's GEMMs are
// reads of the weights, bound by HBM bandwidth.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Common.cuh"

using namespace accel_kernels;

namespace {

constexpr int kGemvWarps = 8;
constexpr int kUnroll = 4;

template <typename T>
__device__ __forceinline__ void unpack8(const uint4 &raw, float (&out)[8]) {
  const T *h = reinterpret_cast<const T *>(&raw);
#pragma unroll
  for (int j = 0; j < 8; ++j)
    out[j] = toF32(h[j]);
}

template <typename T, typename O, int M>
__device__ __forceinline__ void gemv(const T *x, const T *w, O *y, i64 rows, i64 n, i64 k) {
  const int lane = threadIdx.x & 31;
  const i64 col = i64(blockIdx.x) * kGemvWarps + (threadIdx.x >> 5);
  if (col >= n)
    return;
  const uint4 *wr = reinterpret_cast<const uint4 *>(w + col * k);
  const i64 chunks = k / 8;
  float acc[M];
#pragma unroll
  for (int m = 0; m < M; ++m)
    acc[m] = 0.0f;
  for (i64 c0 = lane; c0 < chunks; c0 += 32 * kUnroll) {
    uint4 raw[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const i64 c = c0 + i64(u) * 32;
      raw[u] = c < chunks ? __ldg(wr + c) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const i64 c = c0 + i64(u) * 32;
      if (c >= chunks)
        break;
      float wv[8];
      unpack8<T>(raw[u], wv);
#pragma unroll
      for (int m = 0; m < M; ++m) {
        if (m >= rows)
          break;
        float xv[8];
        unpack8<T>(__ldg(reinterpret_cast<const uint4 *>(x + m * k) + c), xv);
#pragma unroll
        for (int j = 0; j < 8; ++j)
          acc[m] += xv[j] * wv[j];
      }
    }
  }
#pragma unroll
  for (int m = 0; m < M; ++m) {
    float v = acc[m];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
      v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == 0 && m < rows)
      y[m * n + col] = fromF32<O>(v);
  }
}

} // namespace

#define GEMV(T, S, M)                                                                       \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32)                             \
      gemv_m##M##_##S(const T *x, const T *w, T *y, i64 rows, i64 n, i64 k) {               \
    gemv<T, T, M>(x, w, y, rows, n, k);                                                     \
  }                                                                                         \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32)                             \
      gemv_m##M##_##S##_f32out(const T *x, const T *w, float *y, i64 rows, i64 n, i64 k) {  \
    gemv<T, float, M>(x, w, y, rows, n, k);                                                 \
  }
GEMV(__nv_bfloat16, bf16, 1)
GEMV(__half, f16, 1)
