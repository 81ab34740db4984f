//===- Moe.cu - the sparse mixture of experts (transformer.moe) -----------===//
//
// The moe step on the GPU (runtime/cuda/ops/Moe.cpp launches these; the
// math is the CPU kernel's, runtime/cpu/transformer/Moe.cpp). For x [T, H]
// and k = top_k, the entries (t, i) of the routing are t * k + i:
//
// moe_route_<T>: one block per token. Router logits in f32 (x . router[e]
//   + bias[e], the router f32), their softmax, the k largest (ties to the
//   lower expert), routing weights (divided by their sum when renormalize,
//   as the CPU does), and each entry's rank among the entries of its expert
//   (an atomicAdd on the expert's count, which the caller zeroed). With a
//   shared expert gate, also sigmoid(x . gate) per token.
// moe_permute: one block. Exclusive prefix sum of the counts (offsets
//   [E + 1]), the experts that got any entry in ascending order (active
//   [E], -1 after the last), and for every entry its row in expert order,
//   offsets[expert] + rank: perm[row] = token, rowOf[entry] = row. The order
//   of the rows of one expert follows the atomics (not deterministic), but
//   no row's arithmetic depends on its position.
// moe_gather_<T>: xs[row] = x[perm[row]] (the cuBLASLt path's GEMM input).
// moe_expert_gate_up_<T> / moe_expert_down_<T>: the expert-batched GEMV of
//   small steps (decode; CUDA graphs). Grid (column blocks, slots): slot s
//   serves active[s] (an idle slot's blocks return at once; the host sizes
//   the slots by min(E, T * k), a bound it knows without reading the
//   device), a warp per output column streams that column's weight row(s)
//   once per pass of kMoeRows rows of the expert, the rows' inputs read
//   through the read-only cache. gate_up writes act(gate . x) * (up . x)
//   for the rows' tokens into act [T * k, I]; down writes act . down into
//   y [T * k, H]. f32 sums; results rounded to T.
// moe_expert_gate_up_q_<T> / moe_expert_down_q_<T>: the same over quantised
//   experts (i8 or f8E4M3FN bytes, `wkind` 0 or 1, as Dequantize.cu's
//   kinds) with f32 scales per expert and row: a warp sums q * x for its
//   output column and multiplies the sum by that row's scale (exact: the
//   scale is constant along the row). The cuBLASLt path of larger steps
//   dequantises each expert's slice with dequantize_rows_<T> instead.
// moe_mma_gate_up_<T> / moe_mma_down_<T> (bf16, f16): the same products on
//   tensor cores (GpuTuning::moeMma). Grid (columns / 64, slots); a block of
//   4 warps stages its expert's 64 weight rows (both of gate and up) and 64
//   of the expert's input rows 32 columns at a time in shared memory (16-byte
//   loads, zeros past N, K and the rows), each warp multiplies 16 weight rows
//   by the 64 input rows (mma.m16n8k16, f32 sums), passes of 64 rows until
//   the expert's rows are done: each weight row is read once per 64 rows,
//   where the GEMV reads it once per 8. K a multiple of 8, 16-byte aligned
//   operands (the host checks; else the GEMV runs).
// moe_combine_<T>: out[t] = sum_i w[t, i] * y[rowOf[t, i]] (+ sigmoid gate
//   * shared[t]), summed in f32 and rounded once.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"
#include "runtime/cuda/kernels/Mma.cuh"
#include "runtime/cuda/kernels/MoeShape.h"

using namespace accel_kernels;

namespace {
namespace moe {

constexpr int kWarps = accel::rt::kernels::kMoeWarps;
constexpr int kRows = accel::rt::kernels::kMoeRows;
constexpr int kUnroll = accel::rt::kernels::kMoeUnroll;
constexpr int kMaxExperts = accel::rt::kernels::kMoeMaxExperts;

/// 8 consecutive elements of T in registers (16 bytes; 32 for f32).
template <typename T> struct Pack {
  uint4 a;
};
template <> struct Pack<float> {
  uint4 a, b;
};

__device__ __forceinline__ uint4 loadCached(const void *p) {
  return __ldg(static_cast<const uint4 *>(p));
}

/// p must be 16-byte aligned.
template <typename T> __device__ __forceinline__ Pack<T> load(const T *p, bool streaming) {
  Pack<T> r;
  r.a = streaming ? loadStreaming(p) : loadCached(p);
  return r;
}
template <> __device__ __forceinline__ Pack<float> load<float>(const float *p, bool streaming) {
  Pack<float> r;
  r.a = streaming ? loadStreaming(p) : loadCached(p);
  r.b = streaming ? loadStreaming(p + 4) : loadCached(p + 4);
  return r;
}

template <typename T> __device__ __forceinline__ void unpack(const Pack<T> &p, float (&f)[8]) {
  const T *v = reinterpret_cast<const T *>(&p.a);
#pragma unroll
  for (int q = 0; q < 8; ++q)
    f[q] = toF32(v[q]);
}
template <> __device__ __forceinline__ void unpack<float>(const Pack<float> &p, float (&f)[8]) {
  const float *lo = reinterpret_cast<const float *>(&p.a);
  const float *hi = reinterpret_cast<const float *>(&p.b);
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    f[q] = lo[q];
    f[4 + q] = hi[q];
  }
}

/// How a warp reads a weight row: in the compute dtype (W = T: 8 elements
/// in 16 bytes, or 32 for f32) or as quantised bytes (W = uint8_t: 8 i8 or
/// f8E4M3FN weights in 8 bytes, decoded by `wkind`).
template <typename W> struct WeightRow {
  using Raw = Pack<W>;
  static __device__ __forceinline__ Raw load8(const W *p) { return load(p, true); }
  static __device__ __forceinline__ void unpack8(const Raw &r, int, float (&f)[8]) { unpack(r, f); }
  static __device__ __forceinline__ float one(const W *p, int) { return toF32(*p); }
};
template <> struct WeightRow<uint8_t> {
  using Raw = uint2;
  /// p must be 8-byte aligned.
  static __device__ __forceinline__ Raw load8(const uint8_t *p) {
    uint2 r;
    asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];"
                 : "=r"(r.x), "=r"(r.y)
                 : "l"(p));
    return r;
  }
  static __device__ __forceinline__ float e4m3(uint8_t b) {
    const __half_raw h = __nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(b), __NV_E4M3);
    return __half2float(__half(h));
  }
  static __device__ __forceinline__ void unpack8(const Raw &r, int wkind, float (&f)[8]) {
    if (wkind == 0) {
#pragma unroll
      for (int q = 0; q < 8; ++q) // the byte's sign extended: shift it to the top, then down
        f[q] = float(int((q < 4 ? r.x : r.y) << (24 - 8 * (q & 3))) >> 24);
    } else {
#pragma unroll
      for (int p = 0; p < 4; ++p) {
        const uint32_t word = p < 2 ? r.x : r.y;
        const __nv_fp8x2_storage_t two = __nv_fp8x2_storage_t((word >> (16 * (p & 1))) & 0xffffu);
        const float2 v = __half22float2(__half2(__nv_cvt_fp8x2_to_halfraw2(two, __NV_E4M3)));
        f[2 * p] = v.x; // the lower byte is the first element
        f[2 * p + 1] = v.y;
      }
    }
  }
  static __device__ __forceinline__ float one(const uint8_t *p, int wkind) {
    return wkind == 0 ? float(int8_t(*p)) : e4m3(*p);
  }
};

template <typename T>
__device__ __forceinline__ void route(const T *x, const float *router, const float *routerBias,
                                      const float *sharedGateW, i64 tokens, i64 hidden,
                                      int experts, int topK, int renormalize, int *topIds,
                                      float *topW, int *topRank, int *counts, float *sharedGate) {
  extern __shared__ float prob[]; // [experts]
  __shared__ float scratch[32];
  const i64 t = blockIdx.x;
  if (t >= tokens)
    return;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const T *xr = x + t * hidden;
  // Logits: a warp per expert.
  for (int e = warp; e < experts; e += warps) {
    const float *wr = router + i64(e) * hidden;
    float s = 0.0f;
    for (i64 h = lane; h < hidden; h += 32)
      s += toF32(xr[h]) * wr[h];
    s = warpSum(s);
    if (lane == 0)
      prob[e] = s + (routerBias ? routerBias[e] : 0.0f);
  }
  if (sharedGateW) { // the whole block (blockSum synchronises it)
    float s = 0.0f;
    for (i64 h = threadIdx.x; h < hidden; h += blockDim.x)
      s += toF32(xr[h]) * sharedGateW[h];
    s = blockSum(s, scratch);
    if (threadIdx.x == 0)
      sharedGate[t] = 1.0f / (1.0f + expf(-s));
  }
  __syncthreads();
  if (warp != 0)
    return;
  // Softmax in f32 (the CPU's: exp(l - max), divided by the sum).
  float mx = -INFINITY;
  for (int e = lane; e < experts; e += 32)
    mx = fmaxf(mx, prob[e]);
  mx = warpMax(mx);
  float sum = 0.0f;
  for (int e = lane; e < experts; e += 32) {
    const float v = expf(prob[e] - mx);
    prob[e] = v;
    sum += v;
  }
  sum = warpSum(sum);
  for (int e = lane; e < experts; e += 32)
    prob[e] /= sum;
  __syncwarp();
  // The k largest, one per round: the warp's largest probability, of equal
  // ones the lowest expert; a chosen expert's entry becomes -2 (probabilities
  // are >= 0, so it is never chosen again; a NaN never is).
  float selected = 0.0f;
  for (int i = 0; i < topK; ++i) {
    float bv = -1.0f;
    int bi = -1;
    for (int e = lane; e < experts; e += 32) {
      const float v = prob[e];
      if (v > bv) { // ascending e: the first of equal values stays
        bv = v;
        bi = e;
      }
    }
    for (int o = 16; o > 0; o >>= 1) {
      const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
      const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
      if (ov > bv || (ov == bv && oi >= 0 && (bi < 0 || oi < bi))) {
        bv = ov;
        bi = oi;
      }
    }
    if (bi < 0) { // only NaN left (NaN logits): any valid expert, weight 0
      bi = 0;
      bv = 0.0f;
    }
    if (lane == 0) {
      const i64 entry = t * topK + i;
      topIds[entry] = bi;
      topW[entry] = bv;
      topRank[entry] = atomicAdd(&counts[bi], 1);
      prob[bi] = -2.0f;
    }
    selected += bv; // in the CPU's order: descending probability
    __syncwarp();
  }
  if (renormalize && lane == 0)
    for (int i = 0; i < topK; ++i)
      topW[t * topK + i] /= selected;
}

template <typename T>
__device__ __forceinline__ void gather(const T *x, const int *perm, T *xs, i64 rows, i64 hidden) {
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < rows * hidden;
       i += i64(gridDim.x) * blockDim.x) {
    const i64 r = i / hidden, h = i - r * hidden;
    xs[i] = x[i64(perm[r]) * hidden + h];
  }
}

/// out[row, j] for the rows of expert active[blockIdx.y] and column j =
/// blockIdx.x * kWarps + warp: Gated, act(in[row'] . w0[e, j]) * (in[row']
/// . w1[e, j]) with row' = perm[row] (a token of x); else in[row] . w0[e,
/// j]. Weights [E, n, k] (w0, w1 at their matrices' first row of expert 0,
/// `expertStride` elements apart), of T or quantised bytes (W = uint8_t,
/// decoded by `wkind`) whose rows are scaled by s0 / s1 [E, scaleStride]
/// (at expert 0's scale of row 0; null: 1); `vec`: k % 8 == 0 and every
/// pointer aligned to its 8-element loads, else element by element.
template <typename T, typename W, bool Gated>
__device__ __forceinline__ void expertGemv(const T *in, const int *perm, const int *offsets,
                                           const int *active, const W *w0, const W *w1,
                                           i64 expertStride, const float *s0, const float *s1,
                                           i64 scaleStride, int wkind, T *out, i64 n, i64 k,
                                           int kind, int vec) {
  using R = WeightRow<W>;
  const int e = active[blockIdx.y];
  if (e < 0)
    return; // an idle slot: fewer experts got tokens than the grid allows
  const int lane = threadIdx.x & 31;
  const i64 j = i64(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  if (j >= n)
    return;
  const i64 begin = offsets[e], count = i64(offsets[e + 1]) - begin;
  const W *g = w0 + i64(e) * expertStride + j * k;
  const W *u = Gated ? w1 + i64(e) * expertStride + j * k : g;
  const float sg = s0 ? s0[i64(e) * scaleStride + j] : 1.0f;
  const float su = Gated && s1 ? s1[i64(e) * scaleStride + j] : 1.0f;
  for (i64 p = 0; p < count; p += kRows) {
    const int rows = count - p < kRows ? int(count - p) : kRows;
    const T *xr[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const i64 row = begin + p + (r < rows ? r : 0);
      xr[r] = in + (perm ? i64(perm[row]) : row) * k;
    }
    float a0[kRows], a1[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      a0[r] = a1[r] = 0.0f;
    if (vec) {
      for (i64 c0 = i64(lane) * 8; c0 < k; c0 += 32 * 8 * kUnroll) {
        typename R::Raw wg[kUnroll], wu[kUnroll];
#pragma unroll
        for (int v = 0; v < kUnroll; ++v) {
          const i64 c = c0 + i64(v) * 32 * 8;
          if (c < k) {
            wg[v] = R::load8(g + c);
            if (Gated)
              wu[v] = R::load8(u + c);
          }
        }
#pragma unroll
        for (int v = 0; v < kUnroll; ++v) {
          const i64 c = c0 + i64(v) * 32 * 8;
          if (c >= k)
            break;
          float gf[8], uf[8];
          R::unpack8(wg[v], wkind, gf);
          if (Gated)
            R::unpack8(wu[v], wkind, uf);
#pragma unroll
          for (int r = 0; r < kRows; ++r) {
            if (r < rows) {
              float xf[8];
              unpack(load(xr[r] + c, false), xf);
#pragma unroll
              for (int q = 0; q < 8; ++q) {
                a0[r] += gf[q] * xf[q];
                if (Gated)
                  a1[r] += uf[q] * xf[q];
              }
            }
          }
        }
      }
    } else {
      for (i64 c = lane; c < k; c += 32) {
        const float gv = R::one(g + c, wkind);
        const float uv = Gated ? R::one(u + c, wkind) : 0.0f;
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          if (r < rows) {
            const float xv = toF32(xr[r][c]);
            a0[r] += gv * xv;
            if (Gated)
              a1[r] += uv * xv;
          }
        }
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (r < rows) { // rows is the same for the whole warp
        float v = warpSum(a0[r]) * sg;
        if (Gated)
          v = activate(kind, v) * (warpSum(a1[r]) * su);
        if (lane == 0)
          out[(begin + p + r) * n + j] = fromF32<T>(v);
      }
    }
  }
}

/// The tensor-core form of expertGemv (T bf16 or f16): out[row, j] for the
/// rows of expert active[blockIdx.y] and columns j of blockIdx.x's 64, with
/// expertGemv's operands (k % 8 == 0, every pointer 16-byte aligned).
template <typename T, bool Gated>
__device__ __forceinline__ void expertMma(const T *in, const int *perm, const int *offsets,
                                          const int *active, const T *w0, const T *w1,
                                          i64 expertStride, T *out, i64 n, i64 k, int kind) {
  constexpr int kCols = accel::rt::kernels::kMoeMmaCols;  // weight rows per block
  constexpr int kTok = accel::rt::kernels::kMoeMmaRows;   // input rows per pass
  constexpr int kK = 32;                                  // columns per stage
  constexpr int kPad = kK + 8; // row stride in shared memory: conflict-free fragments
  constexpr int kMats = Gated ? 2 : 1;
  __shared__ __align__(16) T ws[kMats][kCols][kPad];
  __shared__ __align__(16) T xs[kTok][kPad];
  const int e = active[blockIdx.y];
  if (e < 0)
    return;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const i64 j0 = i64(blockIdx.x) * kCols;
  const i64 begin = offsets[e], count = i64(offsets[e + 1]) - begin;
  const T *wm[2] = {w0 + i64(e) * expertStride, (Gated ? w1 : w0) + i64(e) * expertStride};
  const int m0 = warp * 16;
  for (i64 p = 0; p < count; p += kTok) {
    const int rows = count - p < kTok ? int(count - p) : kTok;
    float acc[kMats][kTok / 8][4];
#pragma unroll
    for (int q = 0; q < kMats; ++q)
#pragma unroll
      for (int nt = 0; nt < kTok / 8; ++nt)
        acc[q][nt][0] = acc[q][nt][1] = acc[q][nt][2] = acc[q][nt][3] = 0.0f;
    for (i64 kc = 0; kc < k; kc += kK) {
      // Stage the weight rows and the input rows: 16 bytes (8 columns) a load.
#pragma unroll
      for (int q = 0; q < kMats; ++q)
        for (int c = tid; c < kCols * (kK / 8); c += blockDim.x) {
          const int r = c / (kK / 8), c8 = (c % (kK / 8)) * 8;
          uint4 v = make_uint4(0, 0, 0, 0);
          if (j0 + r < n && kc + c8 < k)
            v = loadStreaming(wm[q] + (j0 + r) * k + kc + c8);
          *reinterpret_cast<uint4 *>(&ws[q][r][c8]) = v;
        }
      for (int c = tid; c < kTok * (kK / 8); c += blockDim.x) {
        const int r = c / (kK / 8), c8 = (c % (kK / 8)) * 8;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (r < rows && kc + c8 < k) {
          const i64 row = begin + p + r;
          v = __ldg(reinterpret_cast<const uint4 *>(in + (perm ? i64(perm[row]) : row) * k + kc +
                                                    c8));
        }
        *reinterpret_cast<uint4 *>(&xs[r][c8]) = v;
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < kK; kk += 16) {
        uint32_t a[kMats][4];
#pragma unroll
        for (int q = 0; q < kMats; ++q) {
          a[q][0] = *reinterpret_cast<const uint32_t *>(&ws[q][m0 + g][kk + 2 * t]);
          a[q][1] = *reinterpret_cast<const uint32_t *>(&ws[q][m0 + g + 8][kk + 2 * t]);
          a[q][2] = *reinterpret_cast<const uint32_t *>(&ws[q][m0 + g][kk + 2 * t + 8]);
          a[q][3] = *reinterpret_cast<const uint32_t *>(&ws[q][m0 + g + 8][kk + 2 * t + 8]);
        }
#pragma unroll
        for (int nt = 0; nt < kTok / 8; ++nt) {
          const uint32_t b0 = *reinterpret_cast<const uint32_t *>(&xs[nt * 8 + g][kk + 2 * t]);
          const uint32_t b1 =
              *reinterpret_cast<const uint32_t *>(&xs[nt * 8 + g][kk + 2 * t + 8]);
#pragma unroll
          for (int q = 0; q < kMats; ++q)
            mma16816<T>(acc[q][nt], a[q], b0, b1);
        }
      }
      __syncthreads(); // the next stage overwrites ws and xs
    }
    // acc[q][nt][i]: weight row m0 + g + 8 (i >> 1), input row nt * 8 + 2 t + (i & 1).
#pragma unroll
    for (int nt = 0; nt < kTok / 8; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const i64 j = j0 + m0 + g + 8 * (i >> 1);
        const int r = nt * 8 + 2 * t + (i & 1);
        if (j < n && r < rows) {
          float v = acc[0][nt][i];
          if (Gated)
            v = activate(kind, v) * acc[kMats - 1][nt][i];
          out[(begin + p + r) * n + j] = fromF32<T>(v);
        }
      }
  }
}

template <typename T>
__device__ __forceinline__ void combine(const T *y, const int *rowOf, const float *topW,
                                        const T *shared, const float *sharedGate, T *out,
                                        i64 tokens, i64 hidden, int topK) {
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < tokens * hidden;
       i += i64(gridDim.x) * blockDim.x) {
    const i64 t = i / hidden, h = i - t * hidden;
    float acc = 0.0f;
    for (int q = 0; q < topK; ++q) {
      const i64 entry = t * topK + q;
      acc += topW[entry] * toF32(y[i64(rowOf[entry]) * hidden + h]);
    }
    if (shared)
      acc += (sharedGate ? sharedGate[t] : 1.0f) * toF32(shared[i]);
    out[i] = fromF32<T>(acc);
  }
}

} // namespace moe
} // namespace

extern "C" __global__ void moe_permute(const int *counts, const int *topIds, const int *topRank,
                                       i64 entries, int topK, int experts, int *offsets,
                                       int *active, int *perm, int *rowOf) {
  __shared__ int off[moe::kMaxExperts + 1];
  for (int e = threadIdx.x; e < experts; e += blockDim.x)
    off[e] = counts[e];
  __syncthreads();
  if (threadIdx.x == 0) {
    int run = 0, a = 0;
    for (int e = 0; e < experts; ++e) {
      const int c = off[e];
      off[e] = run;
      if (c > 0)
        active[a++] = e;
      run += c;
    }
    off[experts] = run;
    for (; a < experts; ++a)
      active[a] = -1;
  }
  __syncthreads();
  for (int e = threadIdx.x; e <= experts; e += blockDim.x)
    offsets[e] = off[e];
  for (i64 q = threadIdx.x; q < entries; q += blockDim.x) {
    const int row = off[topIds[q]] + topRank[q];
    perm[row] = int(q / topK);
    rowOf[q] = row;
  }
}

#define MOE_KERNELS(T, S)                                                                   \
  extern "C" __global__ void moe_route_##S(                                                 \
      const T *x, const float *router, const float *routerBias, const float *sharedGateW,   \
      i64 tokens, i64 hidden, int experts, int topK, int renormalize, int *topIds,          \
      float *topW, int *topRank, int *counts, float *sharedGate) {                          \
    moe::route<T>(x, router, routerBias, sharedGateW, tokens, hidden, experts, topK,        \
                  renormalize, topIds, topW, topRank, counts, sharedGate);                  \
  }                                                                                         \
  extern "C" __global__ void moe_gather_##S(const T *x, const int *perm, T *xs, i64 rows,   \
                                            i64 hidden) {                                   \
    moe::gather<T>(x, perm, xs, rows, hidden);                                              \
  }                                                                                         \
  extern "C" __global__ void __launch_bounds__(moe::kWarps * 32, 2) moe_expert_gate_up_##S(                                      \
      const T *x, const int *perm, const int *offsets, const int *active, const T *gate,    \
      const T *up, i64 expertStride, T *act, i64 inter, i64 hidden, int kind, int vec) {    \
    moe::expertGemv<T, T, true>(x, perm, offsets, active, gate, up, expertStride, nullptr,  \
                                nullptr, 0, 0, act, inter, hidden, kind, vec);              \
  }                                                                                         \
  extern "C" __global__ void __launch_bounds__(moe::kWarps * 32, 2) moe_expert_down_##S(     \
      const T *act, const int *offsets, const int *active, const T *down, i64 expertStride,  \
      T *y, i64 hidden, i64 inter, int vec) {                                               \
    moe::expertGemv<T, T, false>(act, nullptr, offsets, active, down, down, expertStride,   \
                                 nullptr, nullptr, 0, 0, y, hidden, inter, 0, vec);         \
  }                                                                                         \
  extern "C" __global__ void __launch_bounds__(moe::kWarps * 32, 2) moe_expert_gate_up_q_##S(  \
      const T *x, const int *perm, const int *offsets, const int *active,                   \
      const uint8_t *gate, const uint8_t *up, i64 expertStride, const float *gateScale,      \
      const float *upScale, i64 scaleStride, int wkind, T *act, i64 inter, i64 hidden,       \
      int kind, int vec) {                                                                   \
    moe::expertGemv<T, uint8_t, true>(x, perm, offsets, active, gate, up, expertStride,     \
                                      gateScale, upScale, scaleStride, wkind, act, inter,   \
                                      hidden, kind, vec);                                   \
  }                                                                                         \
  extern "C" __global__ void __launch_bounds__(moe::kWarps * 32, 2) moe_expert_down_q_##S(   \
      const T *act, const int *offsets, const int *active, const uint8_t *down,             \
      i64 expertStride, const float *downScale, i64 scaleStride, int wkind, T *y,           \
      i64 hidden, i64 inter, int vec) {                                                     \
    moe::expertGemv<T, uint8_t, false>(act, nullptr, offsets, active, down, down,           \
                                       expertStride, downScale, nullptr, scaleStride,       \
                                       wkind, y, hidden, inter, 0, vec);                    \
  }                                                                                         \
  extern "C" __global__ void moe_combine_##S(const T *y, const int *rowOf, const float *topW, \
                                             const T *shared, const float *sharedGate,      \
                                             T *out, i64 tokens, i64 hidden, int topK) {    \
    moe::combine<T>(y, rowOf, topW, shared, sharedGate, out, tokens, hidden, topK);         \
  }
ACCEL_FOR_EACH_DTYPE(MOE_KERNELS)

#define MOE_MMA_KERNELS(T, S)                                                               \
  extern "C" __global__ void __launch_bounds__(accel::rt::kernels::kMoeMmaThreads)          \
      moe_mma_gate_up_##S(const T *x, const int *perm, const int *offsets, const int *active, \
                          const T *gate, const T *up, i64 expertStride, T *act, i64 inter,   \
                          i64 hidden, int kind) {                                            \
    moe::expertMma<T, true>(x, perm, offsets, active, gate, up, expertStride, act, inter,    \
                            hidden, kind);                                                   \
  }                                                                                          \
  extern "C" __global__ void __launch_bounds__(accel::rt::kernels::kMoeMmaThreads)          \
      moe_mma_down_##S(const T *act, const int *offsets, const int *active, const T *down,   \
                       i64 expertStride, T *y, i64 hidden, i64 inter) {                      \
    moe::expertMma<T, false>(act, nullptr, offsets, active, down, down, expertStride, y,     \
                             hidden, inter, 0);                                              \
  }
MOE_MMA_KERNELS(__nv_bfloat16, bf16)
MOE_MMA_KERNELS(__half, f16)
#undef MOE_MMA_KERNELS
