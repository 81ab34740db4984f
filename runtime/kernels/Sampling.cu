//===- Sampling.cu - greedy token selection on the device -------------------===//
//
// argmax_rows_*: one block per row of logits [rows, vocab]; writes the row's
// argmax as an i32, ties to the lowest index (the host sampler's rule), or -1
// when the row holds a NaN or +inf or every value is -inf (the host sampler
// fails on those rows; the caller reports the failure). Lets a greedy decode
// step download one i32 per sequence instead of its whole logits row (128256
// values for Llama 3).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Common.cuh"

#include <math_constants.h>

using namespace accel_kernels;

namespace {

/// (value, index) with the larger value, the lower index on a tie.
__device__ __forceinline__ void keepBest(float &v, int &i, float ov, int oi) {
  if (ov > v || (ov == v && oi < i)) {
    v = ov;
    i = oi;
  }
}

template <typename T>
__device__ __forceinline__ void argmaxRows(const T *logits, i64 vocab, int *out) {
  __shared__ float bestV[32];
  __shared__ int bestI[32];
  __shared__ int badRow;
  if (threadIdx.x == 0)
    badRow = 0;
  __syncthreads();
  const T *row = logits + i64(blockIdx.x) * vocab;
  float v = -CUDART_INF_F;
  int idx = int(vocab); // past the end: loses every tie against a real index
  bool bad = false;
  for (i64 c = threadIdx.x; c < vocab; c += blockDim.x) {
    const float x = toF32(row[c]);
    bad |= isnan(x) || x == CUDART_INF_F;
    if (x > v) { // strictly greater: the first of equal values stays
      v = x;
      idx = int(c);
    }
  }
  if (bad)
    badRow = 1; // benign race: every writer writes 1
  for (int o = 16; o > 0; o >>= 1)
    keepBest(v, idx, __shfl_xor_sync(0xffffffffu, v, o), __shfl_xor_sync(0xffffffffu, idx, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) {
    bestV[warp] = v;
    bestI[warp] = idx;
  }
  __syncthreads();
  if (warp == 0) {
    const int warps = int(blockDim.x >> 5);
    v = lane < warps ? bestV[lane] : -CUDART_INF_F;
    idx = lane < warps ? bestI[lane] : int(vocab);
    for (int o = 16; o > 0; o >>= 1)
      keepBest(v, idx, __shfl_xor_sync(0xffffffffu, v, o), __shfl_xor_sync(0xffffffffu, idx, o));
    if (lane == 0)
      out[blockIdx.x] = idx < vocab && !badRow ? idx : -1;
  }
}

} // namespace

#define ARGMAX(T, S)                                                                        \
  extern "C" __global__ void __launch_bounds__(1024)                                        \
      argmax_rows_##S(const T *logits, i64 vocab, int *out) {                               \
    argmaxRows<T>(logits, vocab, out);                                                      \
  }
ACCEL_FOR_EACH_DTYPE(ARGMAX)
