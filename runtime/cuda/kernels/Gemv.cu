//===- Gemv.cu - the batch-1 GEMMs of decode steps: y = x W^T for one row ---===//
//
// gemv_m1_<T>[_f32out](x, w, y, n, k, ks): y[n] = sum_k x[k] * w[n, k], x and
// w bf16 or f16 (row-major, contiguous, K a multiple of 8, 16-byte aligned),
// y in T or f32; f32 accumulation. A batch-1 decode step's GEMMs are reads
// of the weights, bound by HBM bandwidth; batches of 2 and more go to
// cuBLASLt (an M = 8 variant of this design read the Llama-3-8B weights at
// 0.6-1.6 TB/s on the H200, below cuBLASLt).
//
// A block of kGemvWarps warps makes kGemvWarps / ks output columns: `ks`
// warps share one row of w (split-K), each reading a contiguous slice of it
// in 16-byte chunks, kGemvUnroll chunks in flight per lane; their partial
// sums meet in shared memory. ks = 1 for wide matrices (gate_up, lm_head),
// larger for the narrow ones (qkv, o_proj, down: 4096-6144 columns give too
// few warps to keep enough bytes in flight). GemvShape.h picks ks; the x
// chunks come from the read-only cache (x is a few KB).
//
// gemv_m1_gated_<T>(x, w, y, inter, k, ks, kind): the gated MLP's first
// GEMM with gated_act as its epilogue: w is [gate; up] (2 * inter rows),
// y[j] = act_kind(gate_j . x) * (up_j . x) for j < inter (kinds as
// Common.cuh's activate), ks at most 4 (a block holds whole pairs).
//
// gemv_m1_q_<w>_<T>(x, w, scale, perChannel, y, n, k, ks): weight-only
// quantised weights (w: i8, e4m3 = f8E4M3FN, e5m2 = f8E5M2; K a multiple of
// 16), y[n] = scale[n, or 0 per tensor] * (w[n, :] . x): half the bytes of
// a bf16 weight, so batch-1 decode of an int8-weight or fp8 plan reads half
// as much.
//
// gemv_m1_w8a8_<w>_<O>(xq, xs, w, scale, perChannel, y, n, k, ks): W8A8 for
// one row, x already quantised (QuantizeActivations.cu) to the weight's
// type: i8 sums in i32 with __dp4a, e4m3 in f32; y[n] = xs * scale[n] * sum.
// (Decoding both e4m3 operands costs no more than the weight-only kernel's
// one: 12.5 against 12.8 us for Llama-3-8B's qkv on the H200; the i8 kernel
// is faster than the weight-only one, 10.1 against 13.1 us:
// accel-gpu-gemv-tests --bench, docs/performance.md.)
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"
#include "runtime/cuda/kernels/GemvShape.h"

#include <cuda_fp8.h>
#include <type_traits>

using namespace accel_kernels;

namespace {

constexpr int kWarps = accel::rt::kernels::kGemvWarps;
constexpr int kUnroll = accel::rt::kernels::kGemvUnroll;

template <typename T>
__device__ __forceinline__ float dot8(const uint4 &wraw, const uint4 &xraw) {
  const T *w = reinterpret_cast<const T *>(&wraw);
  const T *x = reinterpret_cast<const T *>(&xraw);
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < 8; ++j)
    s += toF32(x[j]) * toF32(w[j]);
  return s;
}


// Programmatic dependent launch (Common.cuh's pdlWait): the GEMVs start
// while the kernel before them finishes, issue their first weight loads
// (constants), and wait for that kernel's results before they read x; once
// a block has read its weights it lets the next dependent launch start (a
// GEMV after a GEMV: its weight loads overlap this one's tail; triggering
// earlier would let waiting blocks take the SMs this kernel's later blocks
// need). The runtime launches them dependently only when w is a plan
// constant.

/// Split-K: slice `slice` of `ks` of a row's `chunks` 16-byte chunks.
__device__ __forceinline__ void sliceOf(i64 chunks, int ks, int slice, i64 &begin, i64 &end) {
  const i64 per = (chunks + ks - 1) / ks;
  begin = slice * per;
  end = begin + per < chunks ? begin + per : chunks;
}

template <int N>
__device__ __forceinline__ void loadRound(uint4 (&raw)[N], const uint4 *wr, i64 c0, i64 end) {
#pragma unroll
  for (int u = 0; u < N; ++u) {
    const i64 c = c0 + i64(u) * 32;
    raw[u] = c < end ? loadStreaming(wr + c) : make_uint4(0, 0, 0, 0);
  }
}

/// The dot product of row `row` of w (or, for ks > 1, of one K slice of
/// it) with x, summed over the warp: every lane gets it. The first round of
/// weight loads goes out before the PDL wait. `DoubleBuffer` keeps a second
/// round in flight (issued before the current one is used): more bytes in
/// flight per warp, but 54 registers instead of 48, so fewer blocks per SM.
/// The runtime runs the single-round form (gemv_m1_sr_*: 4.73 against
/// 4.96 ms per 32-layer batch-1 step in one A/B on the H200,
/// docs/performance.md); accel-gpu-gemv-tests --bench times both.
template <typename T, bool DoubleBuffer = true>
__device__ __forceinline__ float rowDot(const T *x, const T *w, i64 row, i64 k, int ks,
                                        int slice, int lane) {
  const i64 chunks = k / 8;
  i64 begin, end;
  sliceOf(chunks, ks, slice, begin, end);
  const uint4 *wr = reinterpret_cast<const uint4 *>(w + row * k);
  const uint4 *xr = reinterpret_cast<const uint4 *>(x);
  float acc = 0.0f;
  uint4 raw[kUnroll];
  loadRound(raw, wr, begin + lane, end);
  pdlWait();
  for (i64 c0 = begin + lane; c0 < end; c0 += 32 * kUnroll) {
    uint4 cur[kUnroll];
    if (DoubleBuffer) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        cur[u] = raw[u];
      if (c0 + 32 * kUnroll < end)
        loadRound(raw, wr, c0 + 32 * kUnroll, end);
    } else {
      if (c0 != begin + lane)
        loadRound(raw, wr, c0, end);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        cur[u] = raw[u];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const i64 c = c0 + i64(u) * 32;
      if (c < end)
        acc += dot8<T>(cur[u], __ldg(xr + c));
    }
  }
  return warpSum(acc);
}

/// y[n] = w[n, :] . x. With `Gated`, w is a fused [gate; up] of 2 * n rows
/// and y[j] = act(w[j] . x) * (w[n + j] . x): the block's column pairs are
/// (gate j, up j), so that gated_act needs no launch of its own.
template <typename T, typename O, bool Gated, bool DoubleBuffer = true>
__device__ __forceinline__ void gemv1(const T *x, const T *w, O *y, i64 n, i64 k, int ks,
                                      int kind) {
  __shared__ float partial[kWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int cols = kWarps / ks, local = warp / ks, slice = warp % ks;
  // Gated: local column 2p is gate j, 2p + 1 up j, for j = block * cols / 2 + p.
  const i64 j = Gated ? i64(blockIdx.x) * (cols / 2) + local / 2 : i64(blockIdx.x) * cols + local;
  const i64 row = Gated && (local & 1) ? n + j : j;
  const float acc = j < n ? rowDot<T, DoubleBuffer>(x, w, row, k, ks, slice, lane) : 0.0f;
  pdlLaunchDependents(); // the weights are read: the next GEMV may start its own
  if (!Gated && ks == 1) {
    if (lane == 0 && j < n)
      y[j] = fromF32<O>(acc);
    return;
  }
  if (lane == 0)
    partial[warp] = acc;
  __syncthreads();
  if (lane != 0 || slice != 0 || j >= n || (Gated && (local & 1)))
    return;
  float s = 0.0f;
  for (int i = 0; i < ks; ++i)
    s += partial[warp + i];
  if (Gated) {
    float u = 0.0f;
    for (int i = 0; i < ks; ++i)
      u += partial[warp + ks + i];
    s = activate(kind, s) * u;
  }
  y[j] = fromF32<O>(s);
}

//===----------------------------------------------------------------------===//
// Weight-only quantised weights: i8, f8E4M3FN, f8E5M2 with f32 scales
//===----------------------------------------------------------------------===//

struct WeightI8 {};
struct WeightE4M3 {};
struct WeightE5M2 {};

/// Four 8-bit weights of one 32-bit word as floats. i8 by the exponent
/// trick (one byte permute makes 2^23 + byte; one add: full rate, where I2F
/// runs at a quarter); fp8 through the f16x2
/// conversion (one instruction on sm_89+).
__device__ __forceinline__ void decode4(WeightI8, uint32_t v, float (&f)[4]) {
  const uint32_t u = v ^ 0x80808080u; // biased to unsigned
#pragma unroll
  for (int j = 0; j < 4; ++j) // {byte j, 0, 0, 0x4B}: 2^23 + byte
    f[j] = __int_as_float(__byte_perm(u, 0x4B000000u, 0x7540u + j)) - 8388736.0f;
}
template <__nv_fp8_interpretation_t Kind>
__device__ __forceinline__ void decodeFp8x4(uint32_t v, float (&f)[4]) {
  const __half2_raw lo = __nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t(v & 0xFFFF), Kind);
  const __half2_raw hi = __nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t(v >> 16), Kind);
  const float2 a = __half22float2(__half2(lo)), b = __half22float2(__half2(hi));
  f[0] = a.x;
  f[1] = a.y;
  f[2] = b.x;
  f[3] = b.y;
}
__device__ __forceinline__ void decode4(WeightE4M3, uint32_t v, float (&f)[4]) {
  decodeFp8x4<__NV_E4M3>(v, f);
}
__device__ __forceinline__ void decode4(WeightE5M2, uint32_t v, float (&f)[4]) {
  decodeFp8x4<__NV_E5M2>(v, f);
}

/// The loop of the 8-bit rowDots for one lane: the 16-byte weight chunks
/// c = begin + lane, + 32, ... < end of row `wr`, a round of kUnroll chunks
/// loaded ahead of the one in use (the first before the PDL wait), each
/// handed to body(c, chunk).
template <typename Body>
__device__ __forceinline__ void forEachChunk(const uint4 *wr, i64 begin, i64 end, int lane,
                                             Body body) {
  uint4 raw[kUnroll];
  loadRound(raw, wr, begin + lane, end);
  pdlWait();
  for (i64 c0 = begin + lane; c0 < end; c0 += 32 * kUnroll) {
    uint4 cur[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      cur[u] = raw[u];
    if (c0 + 32 * kUnroll < end)
      loadRound(raw, wr, c0 + 32 * kUnroll, end);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const i64 c = c0 + i64(u) * 32;
      if (c >= end)
        break;
      body(c, cur[u]);
    }
  }
}

/// rowDot for 8-bit weights: a 16-byte chunk holds 16 weights, matched by
/// two 16-byte chunks of x.
template <typename T, typename W>
__device__ __forceinline__ float rowDotQ(const T *x, const uint8_t *w, i64 row, i64 k, int ks,
                                         int slice, int lane) {
  i64 begin, end;
  sliceOf(k / 16, ks, slice, begin, end);
  const uint4 *xr = reinterpret_cast<const uint4 *>(x);
  float acc = 0.0f;
  forEachChunk(reinterpret_cast<const uint4 *>(w + row * k), begin, end, lane,
               [&](i64 c, const uint4 &chunk) {
                 const uint4 x0 = __ldg(xr + 2 * c), x1 = __ldg(xr + 2 * c + 1);
                 const T *xs0 = reinterpret_cast<const T *>(&x0);
                 const T *xs1 = reinterpret_cast<const T *>(&x1);
                 const uint32_t words[4] = {chunk.x, chunk.y, chunk.z, chunk.w};
#pragma unroll
                 for (int q = 0; q < 4; ++q) {
                   float f[4];
                   decode4(W{}, words[q], f);
#pragma unroll
                   for (int j = 0; j < 4; ++j) {
                     const int e = 4 * q + j;
                     acc += f[j] * toF32(e < 8 ? xs0[e] : xs1[e - 8]);
                   }
                 }
               });
  return warpSum(acc);
}

/// One output per (block, local column) of the 8-bit GEMVs: `ks` warps each
/// sum a K slice of row j (rowDot(j, slice, lane), every lane gets the
/// warp's sum), lane 0 of slice 0 adds the slices and store(j, sum) writes
/// y[j].
template <typename RowDot, typename Store>
__device__ __forceinline__ void gemvSlices(i64 n, int ks, RowDot rowDot, Store store) {
  __shared__ float partial[kWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int cols = kWarps / ks, local = warp / ks, slice = warp % ks;
  const i64 j = i64(blockIdx.x) * cols + local;
  const float acc = j < n ? rowDot(j, slice, lane) : 0.0f;
  pdlLaunchDependents();
  if (lane == 0)
    partial[warp] = acc;
  __syncthreads();
  if (lane != 0 || slice != 0 || j >= n)
    return;
  float s = 0.0f;
  for (int i = 0; i < ks; ++i)
    s += partial[warp + i];
  store(j, s);
}

/// y[n] = scale[n or 0] * (w[n, :] . x) for an 8-bit weight of type W.
template <typename T, typename W>
__device__ __forceinline__ void gemvQ(const T *x, const uint8_t *w, const float *scale,
                                      int perChannel, T *y, i64 n, i64 k, int ks) {
  gemvSlices(
      n, ks,
      [&](i64 j, int slice, int lane) { return rowDotQ<T, W>(x, w, j, k, ks, slice, lane); },
      [&](i64 j, float s) { y[j] = fromF32<T>(s * scale[perChannel ? j : 0]); });
}

//===----------------------------------------------------------------------===//
// W8A8: quantised activations times 8-bit weights
//===----------------------------------------------------------------------===//

/// Four i8 x i8 products of two 32-bit words, summed exactly.
__device__ __forceinline__ int dot4(WeightI8, uint32_t x, uint32_t w, int acc) {
  return __dp4a(int(x), int(w), acc);
}

/// rowDotQ for W8A8 (QuantizeActivations.cu made xq): one 16-byte chunk of
/// xq matches one chunk of the weight. i8 sums exactly in i32 (__dp4a), as
/// the CPU's w8a8 kernel does; e4m3 products are exact in f32 and summed
/// there.
template <typename W>
__device__ __forceinline__ float rowDotW8A8(const uint8_t *xq, const uint8_t *w, i64 row, i64 k,
                                            int ks, int slice, int lane) {
  constexpr bool kInt = std::is_same<W, WeightI8>::value;
  i64 begin, end;
  sliceOf(k / 16, ks, slice, begin, end);
  const uint4 *xr = reinterpret_cast<const uint4 *>(xq);
  float acc = 0.0f;
  int iacc = 0;
  forEachChunk(reinterpret_cast<const uint4 *>(w + row * k), begin, end, lane,
               [&](i64 c, const uint4 &chunk) {
                 const uint4 xv = __ldg(xr + c);
                 const uint32_t xw[4] = {xv.x, xv.y, xv.z, xv.w};
                 const uint32_t ww[4] = {chunk.x, chunk.y, chunk.z, chunk.w};
#pragma unroll
                 for (int q = 0; q < 4; ++q) {
                   if constexpr (kInt) {
                     iacc = dot4(W{}, xw[q], ww[q], iacc);
                   } else {
                     float fx[4], fw[4];
                     decode4(W{}, xw[q], fx);
                     decode4(W{}, ww[q], fw);
#pragma unroll
                     for (int j = 0; j < 4; ++j)
                       acc = fmaf(fx[j], fw[j], acc);
                   }
                 }
               });
  if constexpr (kInt) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
      iacc += __shfl_xor_sync(0xffffffffu, iacc, o);
    return float(iacc);
  } else {
    return warpSum(acc);
  }
}

/// y[n] = xs[0] * scale[n or 0] * (w[n, :] . xq) for one quantised row.
template <typename O, typename W>
__device__ __forceinline__ void gemvW8A8(const uint8_t *xq, const float *xs, const uint8_t *w,
                                         const float *scale, int perChannel, O *y, i64 n, i64 k,
                                         int ks) {
  gemvSlices(
      n, ks,
      [&](i64 j, int slice, int lane) { return rowDotW8A8<W>(xq, w, j, k, ks, slice, lane); },
      [&](i64 j, float s) { y[j] = fromF32<O>(s * (xs[0] * scale[perChannel ? j : 0])); });
}

} // namespace

// VARIANT "sr_" is single round (what the runtime runs by default, with a
// target of 49152 warps: 0.23 ms faster per 32-layer batch-1 step than
// the double-buffered one at 8192 on the H200, 2026-11-30), "" double
// buffered (the tests' and the benchmark's other side).
#define GEMV(T, S, VARIANT, DB)                                                             \
  extern "C" __global__ void __launch_bounds__(kWarps * 32)                                 \
      gemv_m1_##VARIANT##S(const T *x, const T *w, T *y, i64 n, i64 k, int ks) {            \
    gemv1<T, T, false, DB>(x, w, y, n, k, ks, 0);                                           \
  }                                                                                         \
  extern "C" __global__ void __launch_bounds__(kWarps * 32)                                 \
      gemv_m1_##VARIANT##S##_f32out(const T *x, const T *w, float *y, i64 n, i64 k,        \
                                    int ks) {                                               \
    gemv1<T, float, false, DB>(x, w, y, n, k, ks, 0);                                       \
  }                                                                                         \
  extern "C" __global__ void __launch_bounds__(kWarps * 32)                                 \
      gemv_m1_gated_##VARIANT##S(const T *x, const T *w, T *y, i64 inter, i64 k, int ks,    \
                                 int kind) {                                                \
    gemv1<T, T, true, DB>(x, w, y, inter, k, ks, kind);                                     \
  }
GEMV(__nv_bfloat16, bf16, , true)
GEMV(__half, f16, , true)
GEMV(__nv_bfloat16, bf16, sr_, false)
GEMV(__half, f16, sr_, false)

#define GEMV_Q(T, S, W, WS)                                                                 \
  extern "C" __global__ void __launch_bounds__(kWarps * 32)                                 \
      gemv_m1_q_##WS##_##S(const T *x, const uint8_t *w, const float *scale, int perChannel, \
                           T *y, i64 n, i64 k, int ks) {                                     \
    gemvQ<T, W>(x, w, scale, perChannel, y, n, k, ks);                                       \
  }
GEMV_Q(__nv_bfloat16, bf16, WeightI8, i8)
GEMV_Q(__half, f16, WeightI8, i8)
GEMV_Q(__nv_bfloat16, bf16, WeightE4M3, e4m3)
GEMV_Q(__half, f16, WeightE4M3, e4m3)
GEMV_Q(__nv_bfloat16, bf16, WeightE5M2, e5m2)
GEMV_Q(__half, f16, WeightE5M2, e5m2)

// gemv_m1_w8a8_<w>_<O>(xq, xs, w, scale, perChannel, y, n, k, ks): W8A8
// (accelc -precision=w8a8 / w8a8-fp8) for one row: xq [K] and w [N, K] both
// i8 or both e4m3, xs one f32 (the row's activation scale), y in O.
#define GEMV_W8A8(O, S, W, WS)                                                              \
  extern "C" __global__ void __launch_bounds__(kWarps * 32)                                 \
      gemv_m1_w8a8_##WS##_##S(const uint8_t *xq, const float *xs, const uint8_t *w,          \
                              const float *scale, int perChannel, O *y, i64 n, i64 k,       \
                              int ks) {                                                     \
    gemvW8A8<O, W>(xq, xs, w, scale, perChannel, y, n, k, ks);                              \
  }
GEMV_W8A8(float, f32, WeightI8, i8)
GEMV_W8A8(__nv_bfloat16, bf16, WeightI8, i8)
GEMV_W8A8(__half, f16, WeightI8, i8)
GEMV_W8A8(float, f32, WeightE4M3, e4m3)
GEMV_W8A8(__nv_bfloat16, bf16, WeightE4M3, e4m3)
GEMV_W8A8(__half, f16, WeightE4M3, e4m3)
