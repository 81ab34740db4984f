//===- DecodeAttentionKP.cu - key-parallel paged decode attention ---------===//
//
// decode_attention_kp_g<G>_d<D>_<T><_kv8>: a decode step (one query per
// sequence) over the paged KV pool, with decode_attention's semantics and
// launch (DecodeAttention.cu: grid (sequences, KV heads, splits), 4 warps,
// the same split-KV partials), for bf16/f16 plans whose KV heads serve at
// most G query heads (G = 1, or 4 for 2..4).
//
// decode_attention spreads one key row over the 32 lanes of a warp, so each
// (key, query head) score costs a 5-step shuffle reduction and every lane
// repeats the softmax of every key: at large batches the kernel is bound by
// instructions, not by the KV bytes it reads. Here a key row is split over
// D / 16 lanes (16 channels, 32 bytes, each; 4, 8 or 16 lanes), so a warp
// scores 32 / (D / 16) keys per load round in 2-4 shuffle steps, and each
// lane evaluates the softmax of its own key only. The probabilities go
// through shared memory to the P.V product, where a lane owns D / 32
// channels of every key as in decode_attention. A warp keeps 16 keys (8 at
// D = 256) of K and V in flight per iteration, all block-table lookups of an
// iteration done by one load per lane; the query, pre-scaled, stays in
// registers.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"
#include "runtime/cuda/kernels/KvScales.h"

#include <math_constants.h>
#include <type_traits>

namespace decode_kp {

using accel_kernels::i64;

constexpr int kWarps = 4;

/// N bytes in registers, loaded with the widest aligned vector loads.
template <int N> struct Raw {
  static_assert(N == 2 || N == 4 || N == 8 || N % 16 == 0, "unsupported row piece");
  uint32_t w[(N + 3) / 4];
};

template <int N> __device__ __forceinline__ void loadRaw(const void *p, Raw<N> &r) {
  if constexpr (N % 16 == 0) {
#pragma unroll
    for (int i = 0; i < N / 16; ++i) {
      const uint4 v = reinterpret_cast<const uint4 *>(p)[i];
      r.w[4 * i] = v.x, r.w[4 * i + 1] = v.y, r.w[4 * i + 2] = v.z, r.w[4 * i + 3] = v.w;
    }
  } else if constexpr (N == 8) {
    const uint2 v = *reinterpret_cast<const uint2 *>(p);
    r.w[0] = v.x, r.w[1] = v.y;
  } else if constexpr (N == 4) {
    r.w[0] = *reinterpret_cast<const uint32_t *>(p);
  } else {
    r.w[0] = *reinterpret_cast<const uint16_t *>(p);
  }
}

template <int N> __device__ __forceinline__ void zeroRaw(Raw<N> &r) {
#pragma unroll
  for (int i = 0; i < (N + 3) / 4; ++i)
    r.w[i] = 0u;
}

/// The E elements of type C held in r, as floats.
template <typename C, int E>
__device__ __forceinline__ void toFloats(const Raw<E * int(sizeof(C))> &r, float (&out)[E]) {
  if constexpr (sizeof(C) == 2) {
#pragma unroll
    for (int i = 0; i < E / 2; ++i) {
      const uint32_t w = r.w[i];
      if constexpr (std::is_same_v<C, __nv_bfloat16>) {
        out[2 * i] = __uint_as_float(w << 16);
        out[2 * i + 1] = __uint_as_float(w & 0xffff0000u);
      } else {
        __half2 h;
        *reinterpret_cast<uint32_t *>(&h) = w;
        const float2 f = __half22float2(h);
        out[2 * i] = f.x, out[2 * i + 1] = f.y;
      }
    }
  } else { // f8E4M3FN, two at a time through f16x2
#pragma unroll
    for (int i = 0; i < E / 2; ++i) {
      const uint32_t w = r.w[i / 2] >> (16 * (i % 2));
      const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t(w & 0xffffu), __NV_E4M3);
      const float2 f = __half22float2(__half2(h));
      out[2 * i] = f.x, out[2 * i + 1] = f.y;
    }
  }
}

/// Variants (ACCEL_GPU_DECODE_KP_VARIANT, for measuring them side by side):
/// PF looks up the next iteration's KV slots before this iteration's
/// arithmetic (the block-table load leaves the loop's dependency chain); QP
/// keeps the scaled query in shared memory, read at each use, instead of in
/// registers (64 fewer at G = 4), which with __launch_bounds__' minimum of
/// MINB blocks per multiprocessor lets more blocks share one; KPIV (when not 0) sets the keys
/// a warp keeps in flight per iteration (fewer: fewer registers).
template <typename T, typename C, int D, int G, bool PF = false, bool QP = false, int KPIV = 0>
__device__ __forceinline__ void decodeAttentionKP(
    const T *q, const C *kCache, const C *vCache, const int *qsl, const int *seqLens,
    const int *blockTables, i64 tableWidth, T *out, float *partM, float *partL, float *partAcc,
    i64 heads, i64 kvHeads, i64 blockSize, float scale, i64 window, float softcap, int numSplits,
    i64 splitSize, const int *splitSizeDev, const accel::rt::kernels::KvScales &kvs) {
  constexpr int CH = 16;                       // K channels per lane (scores)
  constexpr int LPK = D / CH;                  // lanes per key: 4, 8, 16
  constexpr int KPW = 32 / LPK;                // keys per warp load round: 8, 4, 2
  constexpr int KPI = KPIV ? KPIV : D <= 128 ? 16 : 8; // keys per warp iteration
  constexpr int R = KPI / KPW;                 // load rounds per iteration
  constexpr int VE = D / 32;                   // V channels per lane (P.V)
  constexpr int KB = CH * int(sizeof(C));      // K bytes per lane and key
  constexpr int VB = VE * int(sizeof(C));      // V bytes per lane and key
  static_assert(KPI <= 32 && R >= 1 && KPI % KPW == 0 && KPW * LPK == 32, "bad geometry");

  __shared__ float sP[kWarps][KPI][G];
  __shared__ float sM[kWarps][G], sL[kWarps][G];
  __shared__ float sAcc[kWarps][G][D];

  const i64 seq = blockIdx.x, kvh = blockIdx.y;
  const int split = blockIdx.z;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int sub = lane % LPK, kq = lane / LPK;
  const int group = int(heads / kvHeads);
  const float vScale = kvs.vAt(kvh);
  scale *= kvs.kAt(kvh);
  const i64 t = qsl[seq];
  const i64 len = seqLens[seq];
  i64 kb = window > 0 ? max(i64(0), len - window) : 0;
  i64 ke = len - 1;
  if (numSplits > 1) {
    const i64 size = splitSizeDev ? i64(*splitSizeDev) : splitSize;
    kb = max(kb, i64(split) * size);
    ke = min(ke, i64(split + 1) * size - 1);
  }

  // The query's CH channels of this lane, scaled (softcap applies to the
  // scaled score, as in decode_attention).
  float qr[QP ? 1 : G][CH];
  __shared__ __align__(16) float sQ[QP ? G : 1][QP ? D : 4];
  if constexpr (QP) {
    for (int i = threadIdx.x; i < G * D; i += blockDim.x) {
      const int g = i / D, c = i % D;
      sQ[g][c] = g < group ? accel_kernels::toF32(q[((t * heads) + kvh * group + g) * D + c]) * scale
                           : 0.0f;
    }
    __syncthreads();
  } else {
#pragma unroll
    for (int g = 0; g < G; ++g) {
      if (g < group) {
        Raw<CH * 2> raw;
        loadRaw<CH * 2>(q + ((t * heads) + kvh * group + g) * D + sub * CH, raw);
        toFloats<T, CH>(raw, qr[g]);
#pragma unroll
        for (int c = 0; c < CH; ++c)
          qr[g][c] *= scale;
      } else {
#pragma unroll
        for (int c = 0; c < CH; ++c)
          qr[g][c] = 0.0f;
      }
    }
  }
  float m[G], l[G], acc[G][VE];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    m[g] = -CUDART_INF_F;
    l[g] = 0.0f;
#pragma unroll
    for (int e = 0; e < VE; ++e)
      acc[g][e] = 0.0f;
  }

  const int *table = blockTables + seq * tableWidth;
  const i64 rowElems = kvHeads * D;
  const C *kBase = kCache + kvh * D + sub * CH;
  const C *vBase = vCache + kvh * D + lane * VE;
  // Lane j < KPI looks up key k0 + j's slot; the others read it by shuffle.
  auto slotOf = [&](i64 k0) -> i64 {
    if (lane < KPI && k0 + lane <= ke) {
      const i64 p = k0 + lane;
      return i64(table[p / blockSize]) * blockSize + p % blockSize;
    }
    return 0;
  };
  i64 nextSlot = PF ? slotOf(kb + i64(warp) * KPI) : 0;
  for (i64 k0 = kb + i64(warp) * KPI; k0 <= ke; k0 += i64(kWarps) * KPI) {
    i64 mySlot;
    if constexpr (PF) {
      mySlot = nextSlot;
      nextSlot = slotOf(k0 + i64(kWarps) * KPI);
    } else {
      mySlot = slotOf(k0);
    }
    Raw<KB> kr[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int j = r * KPW + kq;
      const i64 slot = __shfl_sync(0xffffffffu, mySlot, j);
      if (k0 + j <= ke)
        loadRaw<KB>(kBase + slot * rowElems, kr[r]);
      else
        zeroRaw<KB>(kr[r]);
    }
    Raw<VB> vr[KPI];
#pragma unroll
    for (int j = 0; j < KPI; ++j) {
      const i64 slot = __shfl_sync(0xffffffffu, mySlot, j);
      if (k0 + j <= ke)
        loadRaw<VB>(vBase + slot * rowElems, vr[j]);
      else
        zeroRaw<VB>(vr[j]);
    }

    // Scores of this lane's keys (one per round), whole after the reduction
    // over the key's LPK lanes.
    float s[R][G];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float kf[CH];
      toFloats<C, CH>(kr[r], kf);
#pragma unroll
      for (int g = 0; g < G; ++g) {
        float dot = 0.0f;
        if constexpr (QP) {
          // Read from shared memory at each use (volatile: not hoisted
          // into registers for the whole loop).
          const float *qs = &sQ[g][sub * CH];
#pragma unroll
          for (int c = 0; c < CH; c += 4) {
            float4 v;
            asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                         : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                         : "r"(unsigned(__cvta_generic_to_shared(qs + c))));
            dot += v.x * kf[c] + v.y * kf[c + 1] + v.z * kf[c + 2] + v.w * kf[c + 3];
          }
        } else {
#pragma unroll
          for (int c = 0; c < CH; ++c)
            dot += qr[g][c] * kf[c];
        }
        s[r][g] = dot;
      }
    }
#pragma unroll
    for (int o = 1; o < LPK; o <<= 1)
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int g = 0; g < G; ++g)
          s[r][g] += __shfl_xor_sync(0xffffffffu, s[r][g], o);

#pragma unroll
    for (int g = 0; g < G; ++g) {
      float mx = -CUDART_INF_F;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float sc = s[r][g];
        if (softcap > 0.0f)
          sc = softcap * tanhf(sc / softcap);
        sc = k0 + r * KPW + kq <= ke ? sc : -CUDART_INF_F;
        s[r][g] = sc;
        mx = fmaxf(mx, sc);
      }
#pragma unroll
      for (int o = LPK; o < 32; o <<= 1)
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
      mx = fmaxf(mx, m[g]); // finite: key k0 is in range
      const float alpha = __expf(m[g] - mx); // 0 while m is -inf
      l[g] *= alpha;
#pragma unroll
      for (int e = 0; e < VE; ++e)
        acc[g][e] *= alpha;
      m[g] = mx;
#pragma unroll
      for (int r = 0; r < R; ++r)
        s[r][g] = __expf(s[r][g] - mx); // 0 for keys out of range
    }
    if (sub == 0) {
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int g = 0; g < G; ++g)
          sP[warp][r * KPW + kq][g] = s[r][g];
    }
    __syncwarp();
#pragma unroll
    for (int j = 0; j < KPI; ++j) {
      float vf[VE];
      toFloats<C, VE>(vr[j], vf);
      float p[G];
      if constexpr (G == 4) {
        const float4 p4 = *reinterpret_cast<const float4 *>(&sP[warp][j][0]);
        p[0] = p4.x, p[1] = p4.y, p[2] = p4.z, p[3] = p4.w;
      } else {
#pragma unroll
        for (int g = 0; g < G; ++g)
          p[g] = sP[warp][j][g];
      }
#pragma unroll
      for (int g = 0; g < G; ++g) {
        l[g] += p[g];
#pragma unroll
        for (int e = 0; e < VE; ++e)
          acc[g][e] += p[g] * vf[e];
      }
    }
    __syncwarp(); // sP is rewritten by the next iteration
  }

  // Merge the warps' states (as decode_attention does).
#pragma unroll
  for (int g = 0; g < G; ++g) {
    if (g >= group)
      break;
    if (lane == 0) {
      sM[warp][g] = m[g];
      sL[warp][g] = l[g];
    }
#pragma unroll
    for (int e = 0; e < VE; ++e)
      sAcc[warp][g][lane * VE + e] = acc[g][e];
  }
  __syncthreads();
  for (int i = threadIdx.x; i < group * D; i += blockDim.x) {
    const int g = i / D, c = i % D;
    float mx = -CUDART_INF_F;
#pragma unroll
    for (int w = 0; w < kWarps; ++w)
      mx = fmaxf(mx, sM[w][g]);
    float total = 0.0f, a = 0.0f;
    if (mx != -CUDART_INF_F) {
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        const float f = __expf(sM[w][g] - mx);
        total += sL[w][g] * f;
        a += sAcc[w][g][c] * f;
      }
    }
    a *= vScale;
    const i64 h = kvh * group + g;
    if (numSplits == 1) {
      out[(t * heads + h) * D + c] =
          accel_kernels::fromF32<T>(total > 0.0f ? a / total : 0.0f);
    } else {
      const i64 idx = (t * heads + h) * numSplits + split;
      if (c == 0) {
        partM[idx] = mx;
        partL[idx] = total;
      }
      partAcc[idx * D + c] = a;
    }
  }
}

} // namespace decode_kp

// VN: the kernel name's variant part ("" or "v1_"); MINB, PF, QP as above.
#define DECODE_ATTENTION_KP_V(VN, MINB, PF, QP, KPIV, T, S, C, CS, G, D)                         \
  extern "C" __global__ void __launch_bounds__(decode_kp::kWarps * 32, MINB)                 \
      decode_attention_kp_##VN##g##G##_d##D##_##S##CS(                                       \
          const T *q, const C *kCache, const C *vCache, const int *qsl, const int *seqLens,  \
          const int *blockTables, accel_kernels::i64 tableWidth, T *out, float *partM,       \
          float *partL, float *partAcc, accel_kernels::i64 heads,                            \
          accel_kernels::i64 kvHeads, accel_kernels::i64 blockSize, float scale,             \
          accel_kernels::i64 window, float softcap, int numSplits,                           \
          accel_kernels::i64 splitSize, const int *splitSizeDev,                             \
          accel::rt::kernels::KvScales kvs) {                                                \
    accel_kernels::pdlPrologue();                                                            \
    decode_kp::decodeAttentionKP<T, C, D, G, PF, QP, KPIV>(                                 \
        q, kCache, vCache, qsl, seqLens, blockTables, tableWidth, out, partM, partL, partAcc, \
        heads, kvHeads, blockSize, scale, window, softcap, numSplits, splitSize,             \
        splitSizeDev, kvs);                                                                  \
  }
#define DECODE_ATTENTION_KP_GD(VN, MINB, PF, QP, KPIV, T, S, C, CS)                           \
  DECODE_ATTENTION_KP_V(VN, MINB, PF, QP, KPIV, T, S, C, CS, 1, 64)                                \
  DECODE_ATTENTION_KP_V(VN, MINB, PF, QP, KPIV, T, S, C, CS, 1, 128)                               \
  DECODE_ATTENTION_KP_V(VN, MINB, PF, QP, KPIV, T, S, C, CS, 1, 256)                               \
  DECODE_ATTENTION_KP_V(VN, MINB, PF, QP, KPIV, T, S, C, CS, 4, 64)                                \
  DECODE_ATTENTION_KP_V(VN, MINB, PF, QP, KPIV, T, S, C, CS, 4, 128)                               \
  DECODE_ATTENTION_KP_V(VN, MINB, PF, QP, KPIV, T, S, C, CS, 4, 256)
// The variants: "" (v0) as first measured; v1 prefetches the slots, with a
// packed query, at 3 blocks per multiprocessor; v2 the same with 8 keys in
// flight per warp at 4 blocks; v3 8 keys at 3 blocks.
#define DECODE_ATTENTION_KP_ALL(T, S, C, CS)                                                 \
  DECODE_ATTENTION_KP_GD(, 1, false, false, 0, T, S, C, CS)                                  \
  DECODE_ATTENTION_KP_GD(v1_, 3, true, true, 0, T, S, C, CS)                                 \
  DECODE_ATTENTION_KP_GD(v2_, 4, true, true, 8, T, S, C, CS)                                 \
  DECODE_ATTENTION_KP_GD(v3_, 3, true, true, 8, T, S, C, CS)
DECODE_ATTENTION_KP_ALL(__nv_bfloat16, bf16, __nv_bfloat16, )
DECODE_ATTENTION_KP_ALL(__half, f16, __half, )
DECODE_ATTENTION_KP_ALL(__nv_bfloat16, bf16, __nv_fp8_e4m3, _kv8)
DECODE_ATTENTION_KP_ALL(__half, f16, __nv_fp8_e4m3, _kv8)
