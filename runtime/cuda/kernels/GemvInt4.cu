//===- GemvInt4.cu - GEMMs of 4-bit weights for decode and small batches --===//
//
// gemm_w4_<T>_nt<NT>[_u8](x, w, scale, zp, qmin, y, m, n, k, scaleRow,
// groupChunks, ks): y[m, n] = x[m, k] . ((w - off) * scale)^T for a 4-bit
// weight packed as Int4Layout.h says, x and y bf16 or f16, m <= 8 * NT
// (NT = 1, 2, 4, 8: up to 64 rows of x). On tensor cores: each warp owns a
// block of 16 weight rows and a K slice; per 64-column chunk a lane loads
// 16 bytes (its A fragments for four k-tiles), turns each 4-bit pair into
// two 16-bit values with one shift-mask-or (2^7 + u in bf16, 2^10 + u in
// f16: exact) and one subtraction of 2^7 + off (exact), and runs
// mma.m16n8k16 against x (B, 8 rows of x per n-tile, from the read-only
// cache) into f32; the chunk's sums are scaled in f32 by the row's scale of
// that group (group sizes are multiples of 64). `ks` warps split a row
// block along K and meet in shared memory. Each lane keeps 4 chunks (2 KiB
// a warp) in flight; the _u8 builds (NT 1 and 2) keep 8.
//
//   scale:       f32, scale[row * scaleRow + chunk / groupChunks]
//                (per group: scaleRow = K / group, groupChunks = group / 64;
//                per channel: scaleRow 1, groupChunks >= chunks; per
//                tensor: scaleRow 0)
//   zp:          null, or one byte per scale (i4 when qmin = -8, u4 when 0)
//   off:         zp - qmin with a zero point, -qmin without
//
// dequantize_w4_<T>(w, scale, zp, qmin, out, n, k, scaleRow, groupChunks):
// the same weight as T [n, k] (batches of more than 64 rows: cuBLASLt), one
// thread per packed 32-bit word (8 values).
//
// Batch-1 decode reads 0.5 byte per weight plus 4 bytes of scale per group
// of 128 (accel-gpu-gemv-tests --bench times the Llama-3-8B shapes).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"
#include "runtime/cuda/kernels/Int4Layout.h"
#include "runtime/cuda/kernels/Mma.cuh"

using namespace accel_kernels;

namespace int4_gemm {

namespace kn = accel::rt::kernels;
constexpr int kWarps = kn::kW4Warps;
constexpr int kUnroll = 4; // chunks in flight per lane (the _u8 kernels: 8)

/// The 16-bit pattern of 2^7 (bf16) or 2^10 (f16): OR-ing u < 16 into its
/// low bits makes 2^7 + u or 2^10 + u exactly.
template <typename T> struct Magic;
template <> struct Magic<__nv_bfloat16> { static constexpr uint32_t kBits = 0x4300u; };
template <> struct Magic<__half> { static constexpr uint32_t kBits = 0x6400u; };

/// a - b on two 16-bit values of T.
template <typename T> __device__ __forceinline__ uint32_t sub2(uint32_t a, uint32_t b);
template <> __device__ __forceinline__ uint32_t sub2<__nv_bfloat16>(uint32_t a, uint32_t b) {
  __nv_bfloat162 x, y;
  memcpy(&x, &a, 4);
  memcpy(&y, &b, 4);
  const __nv_bfloat162 r = __hsub2(x, y);
  uint32_t out;
  memcpy(&out, &r, 4);
  return out;
}
template <> __device__ __forceinline__ uint32_t sub2<__half>(uint32_t a, uint32_t b) {
  __half2 x, y;
  memcpy(&x, &a, 4);
  memcpy(&y, &b, 4);
  const __half2 r = __hsub2(x, y);
  uint32_t out;
  memcpy(&out, &r, 4);
  return out;
}

/// x[tok, kk], x[tok, kk + 1] as one 32-bit word; 0 past m or k (k is even).
template <typename T>
__device__ __forceinline__ uint32_t xPair(const T *x, i64 tok, i64 kk, i64 m, i64 k) {
  return tok < m && kk < k ? __ldg(reinterpret_cast<const unsigned int *>(x + tok * k + kk)) : 0u;
}

/// off of scale `idx`: its zero point (i4 when qmin = -8, u4 when 0) - qmin,
/// or -qmin without zero points.
__device__ __forceinline__ int zeroOffset(const uint8_t *zp, i64 idx, int qmin) {
  const int zpv = zp ? (qmin < 0 ? int(int8_t(zp[idx])) : int(zp[idx])) : 0;
  return zpv - qmin;
}

/// The subtrahend of a row: 2^7 + off (bf16) or 2^10 + off (f16) in both halves.
template <typename T>
__device__ __forceinline__ uint32_t subtrahend(const uint8_t *zp, i64 idx, int qmin) {
  const uint32_t h = Magic<T>::kBits | (uint32_t(zeroOffset(zp, idx, qmin)) & 15u);
  return h | (h << 16);
}

template <typename T, int NT, int kUnroll>
__device__ __forceinline__ void gemmW4(const T *__restrict__ x, const uint4 *__restrict__ w,
                                       const float *__restrict__ scale,
                                       const uint8_t *__restrict__ zp, int qmin,
                                       T *__restrict__ y, i64 m, i64 n, i64 k, i64 scaleRow,
                                       i64 groupChunks, int ks) {
  __shared__ float red[kWarps][NT * 8][16];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int per = kWarps / ks, local = warp / ks, slice = warp % ks;
  const kn::W4Layout L = kn::w4Layout(n, k);
  const i64 rb = i64(blockIdx.x) * per + local;
  const bool active = rb < L.rowBlocks;
  const i64 each = (L.chunks + ks - 1) / ks;
  const i64 begin = slice * each;
  const i64 end = active ? (begin + each < L.chunks ? begin + each : L.chunks) : begin;
  const uint4 *wl = w + rb * L.chunks * 32 + lane; // chunk c at wl + 32 c
  const i64 r0 = rb * 16 + g, r1 = r0 + 8;
  const i64 r0c = r0 < n ? r0 : n - 1, r1c = r1 < n ? r1 : n - 1;
  constexpr uint32_t kMagic2 = Magic<T>::kBits | (Magic<T>::kBits << 16);

  float acc[NT][4];
#pragma unroll
  for (int q = 0; q < NT; ++q)
    acc[q][0] = acc[q][1] = acc[q][2] = acc[q][3] = 0.0f;

  // Each chunk's scales (and zero-point subtrahends) travel with its
  // weights, a round ahead: a scale load waited for where its group starts
  // stalled every warp once a group (0.84-1.37 TB/s at batch 1 on an H100,
  // docs/performance.md 2026-12-08).
  const uint32_t subNoZp = subtrahend<T>(nullptr, 0, qmin);
  uint4 raw[kUnroll];
  float sa[kUnroll], sb[kUnroll];
  uint32_t za[kUnroll], zb[kUnroll];
  auto fetch = [&](int u, i64 c) {
    if (c >= end) {
      raw[u] = make_uint4(0, 0, 0, 0);
      sa[u] = sb[u] = 0.0f;
      za[u] = zb[u] = subNoZp;
      return;
    }
    raw[u] = loadStreaming(wl + c * 32);
    const i64 grp = c / groupChunks;
    const i64 i0 = r0c * scaleRow + grp, i1 = r1c * scaleRow + grp;
    sa[u] = __ldg(scale + i0);
    sb[u] = __ldg(scale + i1);
    za[u] = zp ? subtrahend<T>(zp, i0, qmin) : subNoZp;
    zb[u] = zp ? subtrahend<T>(zp, i1, qmin) : subNoZp;
  };
  // The weights and scales are plan constants: the first round goes out
  // before the wait.
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
    fetch(u, begin + u);
  pdlWait();

  for (i64 c0 = begin; c0 < end; c0 += kUnroll) {
    uint4 cur[kUnroll];
    float cs0[kUnroll], cs1[kUnroll];
    uint32_t cz0[kUnroll], cz1[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      cur[u] = raw[u];
      cs0[u] = sa[u];
      cs1[u] = sb[u];
      cz0[u] = za[u];
      cz1[u] = zb[u];
    }
    if (c0 + kUnroll < end) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        fetch(u, c0 + kUnroll + u);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const i64 c = c0 + u;
      if (c >= end)
        break;
      const float s0 = cs0[u], s1 = cs1[u];
      const uint32_t sub0 = cz0[u], sub1 = cz1[u];
      float part[NT][4];
#pragma unroll
      for (int q = 0; q < NT; ++q)
        part[q][0] = part[q][1] = part[q][2] = part[q][3] = 0.0f;
      const uint32_t words[4] = {cur[u].x, cur[u].y, cur[u].z, cur[u].w};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        uint32_t a[4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
          a[i] = sub2<T>(((words[j] >> (4 * i)) & 0x000F000Fu) | kMagic2, (i & 1) ? sub1 : sub0);
        const i64 kk = c * kn::kW4Chunk + j * 16 + 2 * t;
#pragma unroll
        for (int q = 0; q < NT; ++q) {
          const i64 tok = q * 8 + g;
          mma16816<T>(part[q], a, xPair(x, tok, kk, m, k), xPair(x, tok, kk + 8, m, k));
        }
      }
#pragma unroll
      for (int q = 0; q < NT; ++q) {
        acc[q][0] += part[q][0] * s0;
        acc[q][1] += part[q][1] * s0;
        acc[q][2] += part[q][2] * s1;
        acc[q][3] += part[q][3] * s1;
      }
    }
  }
  pdlLaunchDependents(); // the weights are read: the next GEMM may start its own

  // acc[q][i]: row g + 8 (i >> 1) of the block, x row q * 8 + 2 t + (i & 1).
  if (ks > 1) {
#pragma unroll
    for (int q = 0; q < NT; ++q)
#pragma unroll
      for (int i = 0; i < 4; ++i)
        red[warp][q * 8 + 2 * t + (i & 1)][g + 8 * (i >> 1)] = acc[q][i];
    __syncthreads();
    if (slice != 0)
      return;
    for (int s = 1; s < ks; ++s)
#pragma unroll
      for (int q = 0; q < NT; ++q)
#pragma unroll
        for (int i = 0; i < 4; ++i)
          acc[q][i] += red[warp + s][q * 8 + 2 * t + (i & 1)][g + 8 * (i >> 1)];
  }
  if (!active)
    return;
#pragma unroll
  for (int q = 0; q < NT; ++q)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const i64 tok = q * 8 + 2 * t + (i & 1), row = i >> 1 ? r1 : r0;
      if (tok < m && row < n)
        y[tok * n + row] = fromF32<T>(acc[q][i]);
    }
}

/// One thread per 32-bit word of the packed weight (8 values: rows g and
/// g + 8 of its row block, columns 2t, 2t + 1, 2t + 8, 2t + 9 of its k-tile).
template <typename T>
__device__ __forceinline__ void dequantW4(const uint32_t *__restrict__ w,
                                          const float *__restrict__ scale,
                                          const uint8_t *__restrict__ zp, int qmin,
                                          T *__restrict__ out, i64 n, i64 k, i64 scaleRow,
                                          i64 groupChunks) {
  const kn::W4Layout L = kn::w4Layout(n, k);
  const i64 words = L.rowBlocks * L.chunks * 128;
  for (i64 idx = i64(blockIdx.x) * blockDim.x + threadIdx.x; idx < words;
       idx += i64(gridDim.x) * blockDim.x) {
    const int j = int(idx & 3), lane = int((idx >> 2) & 31);
    const i64 bc = idx >> 7; // rowBlock * chunks + chunk
    const i64 rb = bc / L.chunks, c = bc - rb * L.chunks;
    const uint32_t word = w[idx]; // ((bc * 32 + lane) * 4 + j) words in
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const i64 row = rb * 16 + g + 8 * (i & 1);
      if (row >= n)
        continue;
      const i64 si = row * scaleRow + c / groupChunks;
      const float sc = scale[si];
      const int off = zeroOffset(zp, si, qmin);
      const i64 col0 = c * kn::kW4Chunk + j * 16 + 2 * t + 8 * (i >> 1);
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const i64 col = col0 + e;
        if (col < k)
          out[row * k + col] = fromF32<T>(float(int((word >> (4 * i + 16 * e)) & 15u) - off) * sc);
      }
    }
  }
}

} // namespace int4_gemm

#define GEMM_W4_U(T, S, NT, U, SUFFIX)                                                      \
  extern "C" __global__ void __launch_bounds__(int4_gemm::kWarps * 32)                      \
      gemm_w4_##S##_nt##NT##SUFFIX(const T *x, const uint4 *w, const float *scale,           \
                                   const uint8_t *zp, int qmin, T *y, i64 m, i64 n, i64 k,   \
                                   i64 scaleRow, i64 groupChunks, int ks) {                  \
    int4_gemm::gemmW4<T, NT, U>(x, w, scale, zp, qmin, y, m, n, k, scaleRow, groupChunks,   \
                                ks);                                                        \
  }
#define GEMM_W4(T, S, NT) GEMM_W4_U(T, S, NT, int4_gemm::kUnroll, )
GEMM_W4(__nv_bfloat16, bf16, 1)
GEMM_W4(__nv_bfloat16, bf16, 2)
GEMM_W4(__nv_bfloat16, bf16, 4)
GEMM_W4(__nv_bfloat16, bf16, 8)
GEMM_W4(__half, f16, 1)
GEMM_W4(__half, f16, 2)
GEMM_W4(__half, f16, 4)
GEMM_W4(__half, f16, 8)
// Eight chunks in flight per lane, for up to 16 rows (ACCEL_GPU_W4_UNROLL=8:
// twice the bytes in flight per warp, for the decode shapes whose grids
// give each multiprocessor only one or two blocks).
GEMM_W4_U(__nv_bfloat16, bf16, 1, 8, _u8)
GEMM_W4_U(__nv_bfloat16, bf16, 2, 8, _u8)
GEMM_W4_U(__half, f16, 1, 8, _u8)
GEMM_W4_U(__half, f16, 2, 8, _u8)
#undef GEMM_W4
#undef GEMM_W4_U

#define DEQUANT_W4(T, S)                                                                    \
  extern "C" __global__ void dequantize_w4_##S(const uint32_t *w, const float *scale,       \
                                               const uint8_t *zp, int qmin, T *out, i64 n,  \
                                               i64 k, i64 scaleRow, i64 groupChunks) {      \
    int4_gemm::dequantW4<T>(w, scale, zp, qmin, out, n, k, scaleRow, groupChunks);          \
  }
DEQUANT_W4(float, f32)
DEQUANT_W4(__nv_bfloat16, bf16)
DEQUANT_W4(__half, f16)
#undef DEQUANT_W4
