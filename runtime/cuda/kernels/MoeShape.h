//===- MoeShape.h - the launch shape of Moe.cu's kernels ---------*- C++ -*-===//
//
// Shared by the kernels (runtime/cuda/kernels/Moe.cu), the runtime that
// launches them (runtime/cuda/ops/Moe.cpp) and their tests.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_KERNELS_MOESHAPE_H
#define ACCEL_RUNTIME_CUDA_KERNELS_MOESHAPE_H

#include <stdint.h>

namespace accel::rt::kernels {

/// The most experts a moe step may have on the GPU (moe_permute scans the
/// per-expert counts in shared memory: 4 KiB).
constexpr int kMoeMaxExperts = 1024;
/// Threads of moe_route_* (one block per token) and moe_permute (one block).
constexpr int kMoeRouteThreads = 256;
constexpr int kMoePermuteThreads = 256;
/// moe_expert_*: a block of kMoeWarps warps makes kMoeWarps output columns
/// of one expert (a warp per column), for every row routed to it, in passes
/// of kMoeRows rows; each lane keeps kMoeUnroll 8-element chunks of the
/// weight row in flight.
constexpr int kMoeWarps = 8;
constexpr int kMoeRows = 8;
constexpr int kMoeUnroll = 4;

/// moe_mma_*: a block of 4 warps makes kMoeMmaCols output columns of one
/// expert (16 a warp) for kMoeMmaRows of its rows at a time.
constexpr int kMoeMmaThreads = 128;
constexpr int kMoeMmaCols = 64;
constexpr int kMoeMmaRows = 64;
inline unsigned moeMmaColumnBlocks(int64_t columns) {
  return unsigned((columns + kMoeMmaCols - 1) / kMoeMmaCols);
}

/// Grid x of moe_expert_*: one block per kMoeWarps output columns.
inline unsigned moeColumnBlocks(int64_t columns) {
  return unsigned((columns + kMoeWarps - 1) / kMoeWarps);
}

} // namespace accel::rt::kernels

#endif // ACCEL_RUNTIME_CUDA_KERNELS_MOESHAPE_H
