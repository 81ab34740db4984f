//===- Sampling.cu - greedy token selection on the device -------------------===//
//
// argmax_chunks_*: the argmax of each row of logits [rows, vocab], in pieces:
// block (c, r) scans chunk c (`chunk` values) of row r and writes its best
// (value, index) to partV/partI[r * chunks + c], ties to the lowest index
// (the host sampler's rule); index -2 when the chunk holds a NaN or +inf,
// `vocab` when every value in it is -inf. The caller
// (engine::greedyTokensOnDevice) reduces the row's few partials on the host
// and answers -1 for rows the host sampler refuses (a NaN, a +inf, every
// value -inf). Many blocks per row: one block scanning a 128256-value row
// was latency-bound at about 50 us on the H200. Lets a greedy decode step
// download a few bytes per sequence instead of its whole logits row.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"

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

constexpr int kArgmaxThreads = 256;
constexpr int kArgmaxUnroll = 8; // loads in flight per thread

template <typename T>
__device__ __forceinline__ void argmaxChunk(const T *logits, i64 vocab, i64 chunk, float *partV,
                                            int *partI) {
  __shared__ float bestV[32];
  __shared__ int bestI[32];
  __shared__ int badChunk;
  if (threadIdx.x == 0)
    badChunk = 0;
  __syncthreads();
  const i64 rowIdx = blockIdx.y, c0 = i64(blockIdx.x) * chunk;
  const i64 c1 = c0 + chunk < vocab ? c0 + chunk : vocab;
  const T *row = logits + rowIdx * vocab;
  float v = -CUDART_INF_F;
  int idx = int(vocab); // past the end: loses every tie against a real index
  bool bad = false;
  for (i64 base = c0 + threadIdx.x; base < c1; base += i64(kArgmaxThreads) * kArgmaxUnroll) {
    float x[kArgmaxUnroll];
#pragma unroll
    for (int u = 0; u < kArgmaxUnroll; ++u) { // all loads first, then the compares
      const i64 c = base + i64(u) * kArgmaxThreads;
      x[u] = c < c1 ? toF32(row[c]) : -CUDART_INF_F;
    }
#pragma unroll
    for (int u = 0; u < kArgmaxUnroll; ++u) {
      bad |= isnan(x[u]) || x[u] == CUDART_INF_F;
      if (x[u] > v) { // strictly greater: the first of equal values stays
        v = x[u];
        idx = int(base + i64(u) * kArgmaxThreads);
      }
    }
  }
  if (bad)
    badChunk = 1; // benign race: every writer writes 1
  for (int o = 16; o > 0; o >>= 1)
    keepBest(v, idx, __shfl_xor_sync(0xffffffffu, v, o), __shfl_xor_sync(0xffffffffu, idx, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) {
    bestV[warp] = v;
    bestI[warp] = idx;
  }
  __syncthreads();
  if (warp == 0) {
    const int warps = kArgmaxThreads / 32;
    v = lane < warps ? bestV[lane] : -CUDART_INF_F;
    idx = lane < warps ? bestI[lane] : int(vocab);
    for (int o = 16; o > 0; o >>= 1)
      keepBest(v, idx, __shfl_xor_sync(0xffffffffu, v, o), __shfl_xor_sync(0xffffffffu, idx, o));
    if (lane == 0) {
      const i64 at = rowIdx * gridDim.x + blockIdx.x;
      partV[at] = v;
      partI[at] = badChunk ? -2 : idx;
    }
  }
}

} // namespace

#define ARGMAX(T, S)                                                                        \
  extern "C" __global__ void __launch_bounds__(kArgmaxThreads)                              \
      argmax_chunks_##S(const T *logits, i64 vocab, i64 chunk, float *partV, int *partI) {  \
    pdlPrologue();                                                                          \
    argmaxChunk<T>(logits, vocab, chunk, partV, partI);                                     \
  }
ACCEL_FOR_EACH_DTYPE(ARGMAX)
