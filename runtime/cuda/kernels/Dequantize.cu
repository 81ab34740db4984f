//===- Dequantize.cu - weight-only quantised weights to the compute dtype ---===//
//
// dequantize_rows_<T>(w, kind, scale, perChannel, out, n, k): out [n, k] =
// w [n, k] * scale[row, or 0 per tensor], w i8 (kind 0), f8E4M3FN (1) or
// f8E5M2 (2), scale f32. A GEMM of more than one row with such a weight
// (prefill, decode batches) dequantises it into a scratch buffer and runs
// cuBLASLt on that; one row runs gemv_m1_q_* (Gemv.cu) on the 8-bit weight.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"

#include <cuda_fp8.h>

using namespace accel_kernels;

namespace {
__device__ __forceinline__ float weightByte(int kind, uint8_t b) {
  if (kind == 0)
    return float(int8_t(b));
  __nv_fp8_storage_t s = b;
  const __half_raw h = __nv_cvt_fp8_to_halfraw(s, kind == 1 ? __NV_E4M3 : __NV_E5M2);
  return __half2float(__half(h));
}
} // namespace

#define DEQUANTIZE(T, S)                                                                    \
  extern "C" __global__ void dequantize_rows_##S(const uint8_t *w, int kind,               \
                                                 const float *scale, int perChannel, T *out, \
                                                 i64 n, i64 k) {                             \
    for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < n * k;                      \
         i += i64(gridDim.x) * blockDim.x)                                                   \
      out[i] = fromF32<T>(weightByte(kind, w[i]) * scale[perChannel ? i / k : 0]);           \
  }
ACCEL_FOR_EACH_DTYPE(DEQUANTIZE)
