//===- PlanMemory.h - what one GPU of a TP x PP plan holds -*- C++ -*-===//
//
// Before a plan runs: for every pipeline stage and tensor-parallel rank, the
// bytes its GPU keeps for weights (in the form the GPU backend uploads them:
// float weights in the compute dtype, 4-bit ones packed two per byte), for
// the activations arena at a step of `maxTokens` tokens and `maxSeqs`
// sequences, and per token of its share of the KV cache; and, for a device
// of `deviceBytes` at `utilization`, the tokens its KV cache then holds.
// accelc refuses a -tp x -pp split whose weights and activations do not fit
// the target's HBM (docs/passes/partition.md); accelc -v prints the table.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_ENGINE_PLANMEMORY_H
#define ACCEL_RUNTIME_ENGINE_PLANMEMORY_H

#include "core/Status.h"
#include "runtime/plan/PlanFile.h"

#include <cstdint>
#include <string>
#include <vector>

namespace accel::rt::engine {

/// The CUDA context, cuBLASLt's workspace and the CUDA-graph pool: what a
/// GPU gives up outside weights, arena and KV cache (an estimate; the
/// runtime measures it, runtime/engine/MemoryBudget.h).
constexpr int64_t kGpuRuntimeReserveBytes = int64_t(1) << 30;

struct GpuShare {
  int stage = 0, rank = 0;
  int64_t weightBytes = 0;     // constants its steps read, as uploaded
  int64_t activationBytes = 0; // the arena at maxTokens / maxSeqs
  int64_t kvBytesPerToken = 0; // its layers' K and V, its KV heads
  int64_t kvTokens = 0;        // what is left at `utilization`, in tokens (0: none)
  int64_t leftBytes = 0;       // allowed - weights - activations - reserve (may be < 0)
};

struct PlanMemoryOptions {
  int64_t maxTokens = 2048; // accel-run --max-num-batched-tokens
  int64_t maxSeqs = 64;     // accel-run --max-num-seqs
  int64_t deviceBytes = 0;  // the GPU's memory
  double utilization = 0.9; // accel-run --gpu-memory-utilization
};

/// One row per (stage, rank), stages outer.
std::vector<GpuShare> planMemoryByGpu(const plan::PlanFile &plan, const PlanMemoryOptions &options);

/// The table accelc -v prints: one line per GPU.
std::string formatPlanMemory(const std::vector<GpuShare> &shares, const PlanMemoryOptions &options,
                             const std::string &deviceName);

/// "" when every GPU's weights and activations fit `utilization` of the
/// device; otherwise one sentence naming the fullest GPU and the numbers.
std::string checkPlanFits(const std::vector<GpuShare> &shares, const PlanMemoryOptions &options,
                          const std::string &deviceName, int64_t tp, int64_t pp);

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_ENGINE_PLANMEMORY_H
