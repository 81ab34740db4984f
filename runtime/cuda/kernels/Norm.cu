//===- Norm.cu - rms_norm, add_rms_norm, layer_norm -------------------------===//
//
// One block per row of [rows, hidden]; the reductions are f32 block sums.
// add_rms_norm rounds the sum x + residual to the activation dtype (it is the
// next residual stream) and normalises the rounded values, as the CPU
// kernels (residual_add then rms_norm) do.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"

using namespace accel_kernels;

namespace {

template <typename T>
__device__ __forceinline__ void rmsNorm(const T *x, const T *residual, const float *weight,
                                        T *out, T *sumOut, i64 hidden, float eps,
                                        float offset) {
  __shared__ float scratch[32];
  const i64 row = blockIdx.x;
  const T *xr = x + row * hidden;
  const T *rr = residual ? residual + row * hidden : nullptr;
  T *sr = sumOut ? sumOut + row * hidden : nullptr;
  float ss = 0.0f;
  for (i64 c = threadIdx.x; c < hidden; c += blockDim.x) {
    float v = toF32(xr[c]);
    if (rr) {
      const T s = fromF32<T>(v + toF32(rr[c]));
      sr[c] = s;
      v = toF32(s);
    }
    ss += v * v;
  }
  const float total = blockSum(ss, scratch);
  const float inv = 1.0f / sqrtf(total / float(hidden) + eps);
  T *orow = out + row * hidden;
  for (i64 c = threadIdx.x; c < hidden; c += blockDim.x) {
    const float v = rr ? toF32(sr[c]) : toF32(xr[c]);
    orow[c] = fromF32<T>(v * inv * (weight[c] + offset));
  }
}

template <typename T>
__device__ __forceinline__ void layerNorm(const T *x, const float *weight, const float *bias,
                                          T *out, i64 hidden, float eps) {
  __shared__ float scratch[32];
  const i64 row = blockIdx.x;
  const T *xr = x + row * hidden;
  float s = 0.0f;
  for (i64 c = threadIdx.x; c < hidden; c += blockDim.x)
    s += toF32(xr[c]);
  const float mean = blockSum(s, scratch) / float(hidden);
  float v2 = 0.0f;
  for (i64 c = threadIdx.x; c < hidden; c += blockDim.x) {
    const float d = toF32(xr[c]) - mean;
    v2 += d * d;
  }
  const float var = blockSum(v2, scratch) / float(hidden);
  const float inv = 1.0f / sqrtf(var + eps);
  T *orow = out + row * hidden;
  for (i64 c = threadIdx.x; c < hidden; c += blockDim.x) {
    float y = (toF32(xr[c]) - mean) * inv * weight[c];
    if (bias)
      y += bias[c];
    orow[c] = fromF32<T>(y);
  }
}

} // namespace

#define NORM(T, S)                                                                          \
  extern "C" __global__ void rms_norm_##S(const T *x, const T *residual, const float *w,   \
                                          T *out, T *sumOut, i64 hidden, float eps,         \
                                          float offset) {                                   \
    rmsNorm<T>(x, residual, w, out, sumOut, hidden, eps, offset);                           \
  }                                                                                         \
  extern "C" __global__ void layer_norm_##S(const T *x, const float *w, const float *b,    \
                                            T *out, i64 hidden, float eps) {                \
    layerNorm<T>(x, w, b, out, hidden, eps);                                                \
  }
ACCEL_FOR_EACH_DTYPE(NORM)
