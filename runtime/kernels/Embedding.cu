//===- Embedding.cu - token embedding gather -------------------------------===//
#include "runtime/kernels/Common.cuh"

using namespace accel_kernels;

namespace {
// out [tokens, hidden] = table [ids[t], :] * scale. Ids outside [0, vocab)
// give a zero row (the host checks ids it can see before the launch).
template <typename T>
__device__ __forceinline__ void embedding(const T *table, const void *ids, int ids64, T *out,
                                          i64 hidden, i64 vocab, float scale) {
  const i64 t = blockIdx.x;
  const i64 id = loadIndex(ids, t, ids64);
  T *orow = out + t * hidden;
  if (id < 0 || id >= vocab) {
    for (i64 c = threadIdx.x; c < hidden; c += blockDim.x)
      orow[c] = fromF32<T>(0.0f);
    return;
  }
  const T *row = table + id * hidden;
  if (scale == 1.0f) {
    for (i64 c = threadIdx.x; c < hidden; c += blockDim.x)
      orow[c] = row[c];
  } else {
    for (i64 c = threadIdx.x; c < hidden; c += blockDim.x)
      orow[c] = fromF32<T>(toF32(row[c]) * scale);
  }
}
} // namespace

#define EMBEDDING(T, S)                                                                     \
  extern "C" __global__ void embedding_##S(const T *table, const void *ids, int ids64,     \
                                           T *out, i64 hidden, i64 vocab, float scale) {    \
    embedding<T>(table, ids, ids64, out, hidden, vocab, scale);                             \
  }
ACCEL_FOR_EACH_DTYPE(EMBEDDING)
