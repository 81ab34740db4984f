//===- GemvShape.h - the launch shape of Gemv.cu's batch-1 GEMV -*- C++ -*-===//
//
// Shared by the kernels (runtime/cuda/kernels/Gemv.cu), the runtime that
// launches them (runtime/cuda/ops/Linear.cpp) and their tests: a block of
// kGemvWarps warps makes kGemvWarps / ks output columns, ks warps splitting
// each row of the weight along K.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_KERNELS_GEMVSHAPE_H
#define ACCEL_RUNTIME_CUDA_KERNELS_GEMVSHAPE_H

#include <stdint.h>

namespace accel::rt::kernels {

constexpr int kGemvWarps = 8;  // warps per block
constexpr int kGemvUnroll = 4; // 16-byte chunks in flight per lane

struct GemvShape {
  unsigned blocks = 0; // grid size (x)
  int ks = 1;          // warps per output column: 1, 2, 4 or 8
};

/// The split for y[n] = w[n, k] x: the smallest power of two ks <= 8 that
/// gives at least `targetWarps` warps in all, as long as every warp keeps
/// at least kGemvMinChunks chunks of its row (one round of kGemvUnroll loads
/// per lane). The runtime's target is 49152 with the single-round kernels
/// (gemv_m1_sr_*): Llama-3-8B's qkv and o_proj get ks = 4, gate_up 2, down
/// 8, the LM head 1, and a 32-layer batch-1 decode step took 4.49 ms on the
/// H200 (2026-11-30, docs/performance.md; in an A/B of the same session
/// with another attention variant the single-round kernels gave 4.73 ms,
/// the double-buffered ones at 8192 4.96 ms). This function's default,
/// 8192, suits the double-buffered kernels (qkv, o_proj and down ks = 2,
/// gate_up and the LM head 1); a target of 131072 with them gave 5.32 ms
/// and ks = 1 everywhere 5.02 ms in an earlier session. `forceKs` (1, 2, 4
/// or 8) overrides the choice. `gated`: gemv_m1_gated's shape for `n` =
/// 2 * intermediate rows of w (a block holds whole gate/up pairs, so
/// ks <= 4).
constexpr int64_t kGemvMinChunks = 32 * kGemvUnroll;

inline GemvShape gemvShape(int64_t n, int64_t k, int64_t targetWarps = 8192, int forceKs = 0,
                           bool gated = false) {
  GemvShape s;
  const int64_t chunks = k / 8;
  const int maxKs = gated ? kGemvWarps / 2 : kGemvWarps;
  if ((forceKs == 1 || forceKs == 2 || forceKs == 4 || forceKs == 8) && forceKs <= maxKs) {
    s.ks = forceKs;
  } else {
    while (s.ks < maxKs && n * s.ks < targetWarps && chunks / (s.ks * 2) >= kGemvMinChunks)
      s.ks *= 2;
  }
  const int64_t cols = kGemvWarps / s.ks;
  s.blocks = unsigned((n + cols - 1) / cols);
  return s;
}

} // namespace accel::rt::kernels

#endif // ACCEL_RUNTIME_CUDA_KERNELS_GEMVSHAPE_H
