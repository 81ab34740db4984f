//===- FlashPrefill.cu - tensor-core prefill attention over the paged KV cache ===//
//
// FlashAttention-2 style attention for prefill (and mixed) steps in bf16/f16,
// with the semantics of paged_attention_* (Attention.cu) and
// runtime/cpu/transformer/PagedAttention.h: sequence i's queries are rows
// [qsl[i], qsl[i + 1]) of q; with n queries and context L, query j sits at
// position L - n + j and sees keys [lo, hi], lo = max(0, pos - W + 1) with a
// sliding window W (else 0), hi = pos when causal (else L - 1); scores are
// (q . k) * scale, softcapped (c tanh(s / c)) when c > 0; softmax in f32.
//
// Tiling: one CTA (4 warps, 128 threads) per (64 query rows, KV head). The
// rows of a CTA are (token, query head) pairs of ONE sequence and ONE KV
// head's GQA group, flattened as row = token * G + head_in_group (G = heads /
// kv_heads), so the G query heads that read the same K/V share every K/V
// tile the CTA loads (a 64-row tile is 16 tokens x 4 heads for GQA 4:1, 64
// tokens for MHA). Each warp owns 16 rows.
//
//   - Keys in tiles of 64 gathered row by row from the paged pool through
//     the sequence's block table (cp.async 16 B chunks, zero-filled past the
//     CTA's last key; the table is read two tiles ahead of the copies).
//     Shared memory: two K buffers and one V buffer, 3 x 64 x D x 2 B =
//     48 KiB for D = 128 (static, no opt-in), 24 KiB for D = 64. The Q tile
//     passes through V's buffer into registers (ldmatrix) once; the output
//     tile through K's at the end. Schedule per key tile j: barrier; V(j)
//     copy starts; S = Q K(j)^T; softmax; wait for V(j) (and K(j + 1),
//     started a tile earlier); barrier; K(j + 2) copy starts into K(j)'s
//     buffer; O += P V(j). Rows of 16 B chunks are XOR-swizzled (chunk ^
//     (row & 7)): ldmatrix and cp.async are bank-conflict free.
//   - mma.sync m16n8k16 (bf16 or f16 operands, f32 accumulators): S from
//     ldmatrix'd K fragments, P (rounded to the activation dtype) reused
//     straight from the S accumulators as the A operand, V through
//     ldmatrix.trans. Online softmax in f32 in the log2 domain (ex2.approx,
//     the scale pre-multiplied by log2 e); each thread keeps partial row
//     sums, reduced across its quad at the end.
//   - Masking (causal by absolute position, window, sequence end) only on
//     tiles that need it; keys before the window's start of the CTA's first
//     row and after the causal end of its last row are never loaded.
//   - The output is written with 16 B coalesced stores, in the activation
//     dtype, [tokens, heads, D].
//
// Work list without host metadata: sequence i owns the CTA slots [V_i,
// V_{i+1}) with V_i = floor(qsl[i] * G / 64) + i, which always holds its
// ceil(n_i * G / 64) tiles (surplus slots return at once); the grid is
// floor(tokens * G / 64) + seqs slots. CTAs take slots in reverse order so
// the longest causal tiles of a sequence start first.
//
// Requirements (the host checks them, runtime/cuda/GpuFlashPrefill.cpp):
// q, out and the pool 16 B aligned, seq_lens[i] >= n_i for real rows (a
// query with no key writes zeros), D = 64 or 128.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"
#include "runtime/cuda/kernels/Mma.cuh"

#include <math_constants.h>

namespace flash_prefill {

using accel_kernels::i64;
using accel_kernels::mma16816;

constexpr int kThreads = 128; // 4 warps x 16 query rows
constexpr int kBlockM = 64;   // query rows per CTA
constexpr int kBlockN = 64;   // keys per tile
constexpr float kLog2e = 1.4426950408889634f;

template <typename T> __device__ __forceinline__ uint32_t packPair(float lo, float hi);
template <> __device__ __forceinline__ uint32_t packPair<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi); // .x (lo) in the low half
  return *reinterpret_cast<uint32_t *>(&v);
}
template <> __device__ __forceinline__ uint32_t packPair<__half>(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t *>(&v);
}

__device__ __forceinline__ void ldmatrixX4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrixX4Trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

/// 2^x (MUFU.EX2; -inf -> +0, results below 2^-126 flush to 0).
__device__ __forceinline__ float fastExp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

/// 16 bytes global -> shared; zero-filled (nothing read) when !valid.
__device__ __forceinline__ void cpAsync16(uint32_t dst, const void *src, bool valid) {
  const int bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void cpAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
__device__ __forceinline__ void cpAsyncWaitAll() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}
__device__ __forceinline__ void cpAsyncWaitGroup1() {
  asm volatile("cp.async.wait_group 1;\n" ::: "memory");
}

/// Byte offset of 16 B chunk `chunk` of row `row` in a [rows, D] tile of
/// 16-bit elements, swizzled: chunk ^ (row & 7).
template <int D> __device__ __forceinline__ uint32_t tileOffset(int row, int chunk) {
  return uint32_t((row * D + ((chunk ^ (row & 7)) << 3)) * 2);
}

template <typename T, int D>
__device__ __forceinline__ void flashPrefill(const T *__restrict__ q, const T *__restrict__ kCache,
                                             const T *__restrict__ vCache,
                                             const int *__restrict__ qsl,
                                             const int *__restrict__ seqLens,
                                             const int *__restrict__ blockTables, i64 tableWidth,
                                             T *__restrict__ out, i64 numSeqs, i64 heads,
                                             i64 kvHeads, i64 blockSize, int blockShift,
                                             float scale, int causal, i64 window, float softcap) {
  static_assert(D % 64 == 0 && D <= 128, "head_dim 64 or 128");
  constexpr int kChunks = D / 8;                 // 16 B chunks per row
  constexpr int kRowsPerPass = kThreads / kChunks; // rows one load pass covers
  constexpr int kPasses = kBlockM / kRowsPerPass;  // (kBlockM == kBlockN)
  // K(j) in sK[j & 1], V(j) in sV. Q passes through sV before V(0); the
  // output tile through sK at the end.
  __shared__ __align__(128) uint16_t sK[2 * kBlockN * D];
  __shared__ __align__(128) uint16_t sV[kBlockN * D];

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int G = int(heads / kvHeads);
  const int kvh = int(blockIdx.y);

  // This CTA's slot: the sequence whose slots [V_i, V_{i+1}) hold it.
  const int slot = int(gridDim.x) - 1 - int(blockIdx.x);
  int lo = 0, hi = int(numSeqs) - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if ((qsl[mid] * G) / kBlockM + mid <= slot)
      lo = mid;
    else
      hi = mid - 1;
  }
  const int seq = lo;
  const int qStart = qsl[seq];
  const int n = qsl[seq + 1] - qStart;
  const int rows = n * G;
  const int row0 = (slot - ((qStart * G) / kBlockM + seq)) * kBlockM;
  if (row0 >= rows)
    return; // a surplus slot (uniform over the CTA)

  const int len = seqLens[seq];
  const int posBase = len - n; // query j sits at posBase + j
  const int rowEnd = min(row0 + kBlockM, rows);
  const int minPos = posBase + row0 / G;
  const int maxPos = posBase + (rowEnd - 1) / G;
  const int wnd = int(min(window, i64(0x40000000)));
  const int kEnd = causal ? min(maxPos + 1, len) : len;
  const int kBegin = wnd > 0 ? max(0, minPos - wnd + 1) : 0;
  const int nTiles = kEnd > kBegin ? (kEnd - kBegin + kBlockN - 1) / kBlockN : 0;

  const i64 tokenStride = heads * D; // elements between tokens of q / out
  const i64 qOff = (i64(qStart) * heads + i64(kvh) * G) * D;
  const T *qBase = q + qOff;
  T *oBase = out + qOff;
  const int *table = blockTables + i64(seq) * tableWidth;
  const i64 slotStride = kvHeads * D; // elements between slots of the pool
  const T *kHead = kCache + i64(kvh) * D;
  const T *vHead = vCache + i64(kvh) * D;

  const uint32_t sKAddr = uint32_t(__cvta_generic_to_shared(sK));
  constexpr uint32_t kTileBytes = kBlockN * D * 2;
  const uint32_t sVAddr = uint32_t(__cvta_generic_to_shared(sV));
  const int ldChunk = tid % kChunks, ldRow = tid / kChunks;

  // Q rows of the tile (zeros past the sequence's rows).
#pragma unroll
  for (int i = 0; i < kPasses; ++i) {
    const int r = ldRow + i * kRowsPerPass;
    const int f = row0 + r;
    const bool ok = f < rows;
    const T *src = ok ? qBase + i64(f / G) * tokenStride + i64(f % G) * D + ldChunk * 8 : q;
    cpAsync16(sVAddr + tileOffset<D>(r, ldChunk), src, ok);
  }
  // The pool slots of the rows this thread copies of keys [k0, k0 + 64)
  // (-1 from kEnd on), looked up well before the copies that use them so
  // that the block-table reads are off the critical path: at iteration j,
  // slotCur holds tile j's (V(j)), then tile j + 1's; slotNext tile j + 2's
  // (K(j + 2)). Slots fit in int (the pool has fewer than 2^31; the host
  // checks).
  int slotCur[kPasses], slotNext[kPasses];
#pragma unroll
  for (int i = 0; i < kPasses; ++i)
    slotCur[i] = slotNext[i] = -1;
  auto lookup = [&](int(&sl)[kPasses], int k0) {
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const int p = k0 + ldRow + i * kRowsPerPass;
      int v = -1;
      if (p < kEnd) {
        const int blk = blockShift >= 0 ? table[p >> blockShift] : table[p / int(blockSize)];
        const int in = blockShift >= 0 ? (p & int(blockSize - 1)) : p % int(blockSize);
        v = blk * int(blockSize) + in;
      }
      sl[i] = v;
    }
  };
  // Those rows of K or V into a tile (zeros for slot -1).
  auto loadKv = [&](uint32_t dst, const T *head, const int(&sl)[kPasses]) {
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const int r = ldRow + i * kRowsPerPass;
      const bool ok = sl[i] >= 0;
      const T *src = ok ? head + i64(sl[i]) * slotStride + ldChunk * 8 : head;
      cpAsync16(dst + tileOffset<D>(r, ldChunk), src, ok);
    }
  };
  if (nTiles > 0) {
    lookup(slotCur, kBegin);
    loadKv(sKAddr, kHead, slotCur);
  }
  cpAsyncCommit(); // Q and K(0)
  if (nTiles > 1) {
    lookup(slotNext, kBegin + kBlockN);
    loadKv(sKAddr + kTileBytes, kHead, slotNext);
  }
  cpAsyncCommit(); // K(1)

  // This thread's rows (the mma accumulator layout): g and g + 8 of the warp.
  const int g = lane >> 2, t = lane & 3;
  const int fA = row0 + warp * 16 + g, fB = fA + 8;
  const int posA = posBase + fA / G, posB = posBase + fB / G;

  // Scores are kept raw (times scale when no softcap); `mult` takes them to
  // the log2 domain.
  const bool capped = softcap > 0.0f;
  const float mult = capped ? kLog2e : scale * kLog2e;
  const float capScale = capped ? scale / softcap : 0.0f;

  uint32_t qf[D / 16][4];
  float o[D / 8][4];
#pragma unroll
  for (int i = 0; i < D / 8; ++i)
    o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.0f;
  float mA = -CUDART_INF_F, mB = -CUDART_INF_F, lA = 0.0f, lB = 0.0f;

  if (nTiles > 0) {
    cpAsyncWaitGroup1(); // Q and K(0) landed (K(1) may be in flight)
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const int r = warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
      ldmatrixX4(qf[kk], sVAddr + tileOffset<D>(r, kk * 2 + (lane >> 4)));
    }
  }

  for (int j = 0; j < nTiles; ++j) {
    const int k0 = kBegin + j * kBlockN;
    const uint32_t sKj = sKAddr + uint32_t(j & 1) * kTileBytes;
    // Every warp is done with sV (V(j - 1), or Q at j == 0); K(j) landed
    // before the previous iteration's barrier (or the one above).
    __syncthreads();
    loadKv(sVAddr, vHead, slotCur);
    cpAsyncCommit(); // V(j)
#pragma unroll
    for (int i = 0; i < kPasses; ++i)
      slotCur[i] = slotNext[i]; // tile j + 1
    if (j + 2 < nTiles)
      lookup(slotNext, k0 + 2 * kBlockN);

    // S = Q K^T: 16 rows x 64 keys per warp.
    float s[kBlockN / 8][4];
#pragma unroll
    for (int i = 0; i < kBlockN / 8; ++i)
      s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
      for (int np = 0; np < kBlockN / 16; ++np) {
        uint32_t b[4];
        const int r = np * 16 + (lane & 7) + (lane >> 4) * 8;
        ldmatrixX4(b, sKj + tileOffset<D>(r, kk * 2 + ((lane >> 3) & 1)));
        mma16816<T>(s[2 * np], qf[kk], b[0], b[1]);
        mma16816<T>(s[2 * np + 1], qf[kk], b[2], b[3]);
      }
    }

    if (capped) {
#pragma unroll
      for (int i = 0; i < kBlockN / 8; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          s[i][e] = softcap * tanhf(s[i][e] * capScale);
    }
    const bool needMask = k0 + kBlockN > kEnd || (causal && k0 + kBlockN - 1 > minPos) ||
                          (wnd > 0 && k0 < maxPos - wnd + 1);
    if (needMask) {
#pragma unroll
      for (int i = 0; i < kBlockN / 8; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = k0 + i * 8 + 2 * t + (e & 1);
          const int pos = e < 2 ? posA : posB;
          const bool ok = key < kEnd && (!causal || key <= pos) && (wnd == 0 || key > pos - wnd);
          if (!ok)
            s[i][e] = -CUDART_INF_F;
        }
    }

    // Online softmax (rows A = g, B = g + 8; a quad of lanes shares a row).
    float mxA = mA, mxB = mB;
#pragma unroll
    for (int i = 0; i < kBlockN / 8; ++i) {
      mxA = fmaxf(mxA, fmaxf(s[i][0], s[i][1]));
      mxB = fmaxf(mxB, fmaxf(s[i][2], s[i][3]));
    }
    mxA = fmaxf(mxA, __shfl_xor_sync(0xffffffffu, mxA, 1));
    mxA = fmaxf(mxA, __shfl_xor_sync(0xffffffffu, mxA, 2));
    mxB = fmaxf(mxB, __shfl_xor_sync(0xffffffffu, mxB, 1));
    mxB = fmaxf(mxB, __shfl_xor_sync(0xffffffffu, mxB, 2));
    // A row with no key yet keeps max -inf: subtract 0 instead (p = 0).
    const float subA = mxA == -CUDART_INF_F ? 0.0f : mxA * mult;
    const float subB = mxB == -CUDART_INF_F ? 0.0f : mxB * mult;
    const float alphaA = fastExp2(mA * mult - subA); // 0 while mA is -inf
    const float alphaB = fastExp2(mB * mult - subB);
    mA = mxA;
    mB = mxB;
    float sumA = 0.0f, sumB = 0.0f;
#pragma unroll
    for (int i = 0; i < kBlockN / 8; ++i) {
      s[i][0] = fastExp2(fmaf(s[i][0], mult, -subA));
      s[i][1] = fastExp2(fmaf(s[i][1], mult, -subA));
      s[i][2] = fastExp2(fmaf(s[i][2], mult, -subB));
      s[i][3] = fastExp2(fmaf(s[i][3], mult, -subB));
      sumA += s[i][0] + s[i][1];
      sumB += s[i][2] + s[i][3];
    }
    lA = lA * alphaA + sumA;
    lB = lB * alphaB + sumB;
#pragma unroll
    for (int i = 0; i < D / 8; ++i) {
      o[i][0] *= alphaA;
      o[i][1] *= alphaA;
      o[i][2] *= alphaB;
      o[i][3] *= alphaB;
    }

    cpAsyncWaitAll(); // V(j) and K(j + 1) landed
    __syncthreads();  // ... for every thread; every warp is done with K(j)
    if (j + 2 < nTiles) {
      loadKv(sKj, kHead, slotNext); // K(j + 2) into K(j)'s buffer
      cpAsyncCommit();
    }

    // O += P V: P's accumulators of keys [16 kk, 16 kk + 16) are the A
    // fragment of one k-step.
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      uint32_t pa[4];
      pa[0] = packPair<T>(s[2 * kk][0], s[2 * kk][1]);
      pa[1] = packPair<T>(s[2 * kk][2], s[2 * kk][3]);
      pa[2] = packPair<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
      pa[3] = packPair<T>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {
        uint32_t b[4];
        const int r = kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
        ldmatrixX4Trans(b, sVAddr + tileOffset<D>(r, dp * 2 + (lane >> 4)));
        mma16816<T>(o[2 * dp], pa, b[0], b[1]);
        mma16816<T>(o[2 * dp + 1], pa, b[2], b[3]);
      }
    }
  }

  lA += __shfl_xor_sync(0xffffffffu, lA, 1);
  lA += __shfl_xor_sync(0xffffffffu, lA, 2);
  lB += __shfl_xor_sync(0xffffffffu, lB, 1);
  lB += __shfl_xor_sync(0xffffffffu, lB, 2);
  const float invA = lA > 0.0f ? 1.0f / lA : 0.0f;
  const float invB = lB > 0.0f ? 1.0f / lB : 0.0f;

  // The output tile through sK (every warp is done with K; with no tile the
  // Q copy may still be in flight).
  cpAsyncWaitAll();
  __syncthreads();
  {
    const int rA = warp * 16 + g, rB = rA + 8;
    unsigned char *base = reinterpret_cast<unsigned char *>(sK);
#pragma unroll
    for (int i = 0; i < D / 8; ++i) {
      *reinterpret_cast<uint32_t *>(base + tileOffset<D>(rA, i) + t * 4) =
          packPair<T>(o[i][0] * invA, o[i][1] * invA);
      *reinterpret_cast<uint32_t *>(base + tileOffset<D>(rB, i) + t * 4) =
          packPair<T>(o[i][2] * invB, o[i][3] * invB);
    }
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kPasses; ++i) {
    const int r = ldRow + i * kRowsPerPass;
    const int f = row0 + r;
    if (f < rows)
      *reinterpret_cast<uint4 *>(oBase + i64(f / G) * tokenStride + i64(f % G) * D + ldChunk * 8) =
          *reinterpret_cast<const uint4 *>(reinterpret_cast<const unsigned char *>(sK) +
                                           tileOffset<D>(r, ldChunk));
  }
}

} // namespace flash_prefill

// flash_prefill_d{64,128}_{bf16,f16}: grid (floor(tokens * G / 64) + seqs,
// kv_heads), 128 threads, static shared memory only. blockShift is
// log2(blockSize) when it is a power of two, else -1.
#define ACCEL_FLASH_PREFILL(T, S, D)                                                          \
  extern "C" __global__ void __launch_bounds__(flash_prefill::kThreads)                       \
      flash_prefill_d##D##_##S(const T *q, const T *kCache, const T *vCache, const int *qsl,  \
                               const int *seqLens, const int *blockTables,                   \
                               accel_kernels::i64 tableWidth, T *out,                         \
                               accel_kernels::i64 numSeqs, accel_kernels::i64 heads,          \
                               accel_kernels::i64 kvHeads, accel_kernels::i64 blockSize,      \
                               int blockShift, float scale, int causal,                       \
                               accel_kernels::i64 window, float softcap) {                    \
    flash_prefill::flashPrefill<T, D>(q, kCache, vCache, qsl, seqLens, blockTables,            \
                                      tableWidth, out, numSeqs, heads, kvHeads, blockSize,     \
                                      blockShift, scale, causal, window, softcap);            \
  }
ACCEL_FLASH_PREFILL(__nv_bfloat16, bf16, 64)
ACCEL_FLASH_PREFILL(__nv_bfloat16, bf16, 128)
ACCEL_FLASH_PREFILL(__half, f16, 64)
ACCEL_FLASH_PREFILL(__half, f16, 128)
#undef ACCEL_FLASH_PREFILL
