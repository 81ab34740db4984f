//===- QuantizeActivations.cu - W8A8's activation quantisation and rescale -===//
//
// quantize_rows_<q>_<T>(x, staticScale, xq, xs, rows, k): one block per row
// of x [rows, k] (T = f32, bf16, f16) writes xq [rows, k] in q (i8 or e4m3 =
// f8E4M3FN) and the row's f32 scale xs[row]: *staticScale when it is given
// (accelc -precision=w8a8 / w8a8-fp8 with -calibration), else max |x| of the
// row over 127 (i8) or 448 (e4m3), 1 for a row of zeros (dynamic per-token
// scales). i8 is rint(x * (1 / s)) clamped to +-127, e4m3 x / s saturated to
// +-448 (round to nearest even): the CPU's w8a8 kernel
// (runtime/cpu/transformer/QuantLinear.cpp) rounds the same way. A row with
// a NaN or an infinity gets a NaN scale, so its outputs are NaN (the CPU
// refuses such a row; the sampler refuses NaN logits).
//
// w8a8_rescale_<a>_<T>(acc, xs, scale, perChannel, y, rows, n): y [rows, n]
// = acc * xs[row] * scale[col, or 0 per tensor], acc i32 (cuBLASLt's exact
// i8 x i8 sums) or f32 (its e4m3 x e4m3 sums), y in T.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"

#include <cuda_fp8.h>

using namespace accel_kernels;

namespace {

struct QuantI8 {
  static constexpr float kMax = 127.0f;
  __device__ static uint8_t quantise(float v, float s, float inv) {
    return uint8_t(int8_t(fminf(127.0f, fmaxf(-127.0f, rintf(v * inv)))));
  }
};
struct QuantE4M3 {
  static constexpr float kMax = 448.0f;
  __device__ static uint8_t quantise(float v, float s, float) {
    return uint8_t(__nv_cvt_float_to_fp8(v / s, __NV_SATFINITE, __NV_E4M3));
  }
};

template <typename T, typename Q>
__device__ __forceinline__ void quantizeRow(const T *x, const float *staticScale, uint8_t *xq,
                                            float *xs, i64 k) {
  __shared__ float scratch[32];
  pdlPrologue();
  const i64 row = blockIdx.x;
  const T *xr = x + row * k;
  uint8_t *qr = xq + row * k;
  float s;
  if (staticScale) {
    s = *staticScale;
  } else {
    float amax = 0.0f;
    bool finite = true;
    for (i64 i = threadIdx.x; i < k; i += blockDim.x) {
      const float v = toF32(xr[i]);
      finite &= isfinite(v);
      amax = fmaxf(amax, fabsf(v));
    }
    // The block's max: a sum of 0/1 flags says whether all were finite.
    const float bad = blockSum(finite ? 0.0f : 1.0f, scratch);
    amax = warpMax(amax);
    __syncthreads();
    if ((threadIdx.x & 31) == 0)
      scratch[threadIdx.x >> 5] = amax;
    __syncthreads();
    const int warps = (blockDim.x + 31) >> 5;
    amax = warpMax((threadIdx.x & 31) < warps ? scratch[threadIdx.x & 31] : 0.0f);
    s = bad > 0.0f ? __int_as_float(0x7fc00000) : amax > 0.0f ? amax / Q::kMax : 1.0f;
  }
  if (threadIdx.x == 0)
    xs[row] = s;
  const float inv = 1.0f / s;
  for (i64 i = threadIdx.x; i < k; i += blockDim.x)
    qr[i] = Q::quantise(toF32(xr[i]), s, inv);
}

template <typename A, typename T>
__device__ __forceinline__ void rescale(const A *acc, const float *xs, const float *scale,
                                        int perChannel, T *y, i64 rows, i64 n) {
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < rows * n;
       i += i64(gridDim.x) * blockDim.x)
    y[i] = fromF32<T>(float(acc[i]) * (xs[i / n] * scale[perChannel ? i % n : 0]));
}

} // namespace

#define QUANTIZE_ROWS(T, S)                                                                 \
  extern "C" __global__ void quantize_rows_i8_##S(const T *x, const float *staticScale,     \
                                                  uint8_t *xq, float *xs, i64 rows, i64 k) { \
    quantizeRow<T, QuantI8>(x, staticScale, xq, xs, k);                                     \
  }                                                                                         \
  extern "C" __global__ void quantize_rows_e4m3_##S(const T *x, const float *staticScale,   \
                                                    uint8_t *xq, float *xs, i64 rows,       \
                                                    i64 k) {                                \
    quantizeRow<T, QuantE4M3>(x, staticScale, xq, xs, k);                                   \
  }                                                                                         \
  extern "C" __global__ void w8a8_rescale_i32_##S(const int *acc, const float *xs,          \
                                                  const float *scale, int perChannel, T *y, \
                                                  i64 rows, i64 n) {                        \
    rescale(acc, xs, scale, perChannel, y, rows, n);                                        \
  }                                                                                         \
  extern "C" __global__ void w8a8_rescale_f32_##S(const float *acc, const float *xs,        \
                                                  const float *scale, int perChannel, T *y, \
                                                  i64 rows, i64 n) {                        \
    rescale(acc, xs, scale, perChannel, y, rows, n);                                        \
  }
ACCEL_FOR_EACH_DTYPE(QUANTIZE_ROWS)
