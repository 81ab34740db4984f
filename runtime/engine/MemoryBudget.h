//===- MemoryBudget.h - how much of the GPU the paged KV cache gets -*- C++ -*-===//
//
// vLLM's --gpu-memory-utilization: after the weights are uploaded and a
// profiling step at --max-num-batched-tokens (plus the CUDA-graph pool's
// largest decode step) has reserved its activation memory, the KV cache
// gets what is left of `utilization` x the device's total memory. Pure
// arithmetic (header-only, checked by CPU unit tests).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_ENGINE_MEMORYBUDGET_H
#define ACCEL_RUNTIME_ENGINE_MEMORYBUDGET_H

#include "core/Status.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <string>

namespace accel::rt::engine {

struct MemoryBudgetInput {
  int64_t totalBytes = 0;  // the device's memory (cuMemGetInfo's total)
  int64_t freeBytes = 0;   // free now: weights, activations, graph pool already taken
  double utilization = 0.9;
  int64_t reserveBytes = 0; // still to be taken outside the KV cache
  int64_t bytesPerBlock = 0; // one KV block, all layers, K and V, on the device
  int64_t blockSize = 16;    // tokens per block
  int64_t maxModelLen = 0;   // one sequence of this length must fit
};

struct MemoryBudget {
  int64_t kvBytes = 0;   // bytes for the KV pool (numBlocks * bytesPerBlock)
  int64_t numBlocks = 0;
  int64_t maxTokens = 0; // numBlocks * blockSize: tokens cached at once
};

inline std::string formatGiB(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f GiB", double(bytes) / double(int64_t(1) << 30));
  return buf;
}

/// `bytes` in the largest unit that keeps it at 1 or more (GiB, MiB, KiB,
/// bytes), so that a small model's sizes do not all read "0.00 GiB".
inline std::string formatBytes(int64_t bytes) {
  const char *units[] = {"GiB", "MiB", "KiB"};
  for (int i = 0; i < 3; ++i) {
    const double unit = double(int64_t(1) << (30 - 10 * i));
    if (double(bytes) >= unit) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.2f %s", double(bytes) / unit, units[i]);
      return buf;
    }
  }
  return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

/// The KV blocks that fit, or kResourceExhausted (one sentence) when not even
/// one sequence of maxModelLen tokens fits.
inline StatusOr<MemoryBudget> kvMemoryBudget(const MemoryBudgetInput &in) {
  if (!(in.utilization > 0.0 && in.utilization <= 1.0))
    return Status(StatusCode::kInvalidArgument,
                  "--gpu-memory-utilization must be in (0, 1], got " +
                      std::to_string(in.utilization));
  if (in.bytesPerBlock <= 0 || in.blockSize <= 0)
    return Status(StatusCode::kInvalidArgument, "the KV cache geometry is empty");
  const int64_t used = in.totalBytes - in.freeBytes;
  const int64_t allowed = int64_t(in.utilization * double(in.totalBytes));
  const int64_t avail = allowed - used - in.reserveBytes;
  const int64_t needBlocks = (std::max<int64_t>(in.maxModelLen, 1) + in.blockSize - 1) / in.blockSize;
  MemoryBudget b;
  b.numBlocks = avail > 0 ? avail / in.bytesPerBlock : 0;
  b.numBlocks = std::min<int64_t>(b.numBlocks, INT32_MAX / in.blockSize); // slots are i32
  if (b.numBlocks < needBlocks)
    return Status(StatusCode::kResourceExhausted,
                  "the GPU has " + formatBytes(std::max<int64_t>(avail, 0)) +
                      " left for the KV cache at --gpu-memory-utilization " +
                      std::to_string(in.utilization).substr(0, 4) + " (" +
                      formatBytes(used + in.reserveBytes) + " of " + formatBytes(in.totalBytes) +
                      " already used by weights, activations and others), less than the " +
                      formatBytes(needBlocks * in.bytesPerBlock) + " one sequence of " +
                      std::to_string(in.maxModelLen) +
                      " tokens needs; raise --gpu-memory-utilization or lower --max-model-len");
  b.kvBytes = b.numBlocks * in.bytesPerBlock;
  b.maxTokens = b.numBlocks * in.blockSize;
  return b;
}

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_ENGINE_MEMORYBUDGET_H
