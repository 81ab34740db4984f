//===- Elementwise.cu - casts, residual add, activations, epilogues -------===//
#include "runtime/cuda/kernels/Common.cuh"

using namespace accel_kernels;

namespace {

#define GRID_STRIDE(i, n)                                                                   \
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);                        \
       i += i64(gridDim.x) * blockDim.x)

// dtype codes of cast: 0 f32, 1 f16, 2 bf16.
__device__ __forceinline__ float loadCode(const void *p, i64 i, int code) {
  if (code == 0)
    return static_cast<const float *>(p)[i];
  if (code == 1)
    return __half2float(static_cast<const __half *>(p)[i]);
  return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
}
__device__ __forceinline__ void storeCode(void *p, i64 i, int code, float v) {
  if (code == 0)
    static_cast<float *>(p)[i] = v;
  else if (code == 1)
    static_cast<__half *>(p)[i] = __float2half_rn(v);
  else
    static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16_rn(v);
}

template <typename T>
__device__ __forceinline__ void residualAdd(const T *a, const T *b, T *out, i64 n) {
  GRID_STRIDE(i, n) { out[i] = fromF32<T>(toF32(a[i]) + toF32(b[i])); }
}

template <typename T>
__device__ __forceinline__ void activation(const T *x, T *out, i64 n, int kind) {
  GRID_STRIDE(i, n) { out[i] = fromF32<T>(activate(kind, toF32(x[i]))); }
}

// x [rows, 2 * inter] (gate columns first) -> out [rows, inter].
template <typename T>
__device__ __forceinline__ void gatedAct(const T *x, T *out, i64 rows, i64 inter, int kind) {
  GRID_STRIDE(i, rows * inter) {
    const i64 r = i / inter, j = i - r * inter;
    const T *row = x + r * 2 * inter;
    out[i] = fromF32<T>(activate(kind, toF32(row[j])) * toF32(row[inter + j]));
  }
}

// Separate gate and up [n] -> out [n].
template <typename T>
__device__ __forceinline__ void gatedAct2(const T *gate, const T *up, T *out, i64 n, int kind) {
  GRID_STRIDE(i, n) { out[i] = fromF32<T>(activate(kind, toF32(gate[i])) * toF32(up[i])); }
}

// A GEMM's epilogue in place: x [rows, cols] = act(x + bias [cols]) (bias
// in x's dtype, or null; act a Common.cuh activation kind, or -1 for none).
template <typename T>
__device__ __forceinline__ void biasAct(T *x, const T *bias, i64 rows, i64 cols, int act) {
  GRID_STRIDE(i, rows * cols) {
    float v = toF32(x[i]);
    if (bias)
      v += toF32(bias[i % cols]);
    x[i] = fromF32<T>(act >= 0 ? activate(act, v) : v);
  }
}

// dst [seqs, cols] = src [query_start_loc[s + 1] - 1, :]: each sequence's
// last token (the logits' select_last).
template <typename T>
__device__ __forceinline__ void gatherLastRows(const T *src, const int *qsl, T *dst, i64 seqs,
                                               i64 cols) {
  GRID_STRIDE(i, seqs * cols) {
    const i64 s = i / cols, c = i - s * cols;
    const i64 row = i64(qsl[s + 1]) - 1;
    dst[i] = src[row * cols + c];
  }
}

} // namespace

extern "C" __global__ void cast_kernel(const void *src, int srcCode, void *dst, int dstCode,
                                       i64 n) {
  GRID_STRIDE(i, n) { storeCode(dst, i, dstCode, loadCode(src, i, srcCode)); }
}

// c * tanh(x / c) on f32 logits.
extern "C" __global__ void softcap_f32(float *x, i64 n, float cap) {
  GRID_STRIDE(i, n) { x[i] = cap * tanhf(x[i] / cap); }
}

#define ELEMENTWISE(T, S)                                                                   \
  extern "C" __global__ void residual_add_##S(const T *a, const T *b, T *out, i64 n) {      \
    residualAdd<T>(a, b, out, n);                                                           \
  }                                                                                         \
  extern "C" __global__ void activation_##S(const T *x, T *out, i64 n, int kind) {         \
    activation<T>(x, out, n, kind);                                                         \
  }                                                                                         \
  extern "C" __global__ void gated_act_##S(const T *x, T *out, i64 rows, i64 inter,        \
                                           int kind) {                                      \
    gatedAct<T>(x, out, rows, inter, kind);                                                 \
  }                                                                                         \
  extern "C" __global__ void gated_act2_##S(const T *gate, const T *up, T *out, i64 n,     \
                                            int kind) {                                     \
    gatedAct2<T>(gate, up, out, n, kind);                                                   \
  }                                                                                         \
  extern "C" __global__ void bias_act_##S(T *x, const T *bias, i64 rows, i64 cols,        \
                                          int act) {                                        \
    biasAct<T>(x, bias, rows, cols, act);                                                   \
  }                                                                                         \
  extern "C" __global__ void gather_last_rows_##S(const T *src, const int *qsl, T *dst,    \
                                                  i64 seqs, i64 cols) {                     \
    gatherLastRows<T>(src, qsl, dst, seqs, cols);                                           \
  }
ACCEL_FOR_EACH_DTYPE(ELEMENTWISE)
