//===- Embedding.cu - token embedding gather -------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"

using namespace accel_kernels;

namespace {
// out [tokens, hidden] = table [ids[t] - first, :] * scale: the table holds
// the rows of ids [first, first + rows). Other ids give a zero row: another
// rank's ids in a vocabulary-parallel embedding (first = rank * rows; the
// all_reduce after the step sums the ranks' rows), or ids outside the
// vocabulary (the host checks the ids it can see before the launch).
template <typename T>
__device__ __forceinline__ void embedding(const T *table, const void *ids, int ids64, T *out,
                                          i64 hidden, i64 rows, i64 first, float scale) {
  const i64 t = blockIdx.x;
  const i64 id = loadIndex(ids, t, ids64) - first;
  T *orow = out + t * hidden;
  if (id < 0 || id >= rows) {
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
                                           T *out, i64 hidden, i64 rows, i64 first,         \
                                           float scale) {                                   \
    embedding<T>(table, ids, ids64, out, hidden, rows, first, scale);                       \
  }
ACCEL_FOR_EACH_DTYPE(EMBEDDING)
