//===- MemoryPlan.h - liveness-based arena planning -------------*- C++ -*-===//
//
// The analysis behind accel-plan-memory (passes/Layout/PlanMemory.cpp) and
// `accelc -print-memory-plan`: every activation of a function gets a live
// interval over the op order and a 256-byte-aligned offset in one arena, so
// that activations live at the same time never share bytes.
// docs/passes/layout.md describes the rules.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_PASSES_MEMORYPLAN_H
#define ACCEL_PASSES_MEMORYPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <vector>

namespace accel::layout {

/// Every arena offset and every buffer size is a multiple of this.
constexpr int64_t kArenaAlignment = 256;

/// Attribute names the pass writes.
constexpr const char *kArenaAttr = "accel.arena";             // on ops: [[offset, bytes], ...]
constexpr const char *kArenaBytesAttr = "accel.arena_bytes";  // on the function: peak
constexpr const char *kArenaNaiveBytesAttr = "accel.arena_naive_bytes";

/// One planned value: an activation with its own buffer, or a view of one.
struct PlannedValue {
  mlir::Value value;
  /// Index into MemoryPlan::values of the value whose buffer this one uses
  /// (itself for a buffer, the root of the chain for a view).
  unsigned buffer = 0;
  /// Bytes of this value's own type at the token bound (not aligned).
  int64_t bytes = 0;
  /// Buffers: the live interval [start, end] in op indices of the
  /// function's block, inclusive; for a buffer it covers all its views.
  /// Views: their own def .. last use.
  int64_t start = 0, end = 0;
  /// Byte offset in the arena (the buffer's, for a view).
  int64_t offset = 0;

  bool isView(unsigned self) const { return buffer != self; }
};

struct MemoryPlan {
  /// In op order (and result order within an op).
  std::vector<PlannedValue> values;
  /// The arena size: max over buffers of offset + aligned bytes.
  int64_t peakBytes = 0;
  /// One aligned buffer per non-view activation, summed.
  int64_t naiveBytes = 0;
};

/// Rounds `bytes` up to kArenaAlignment.
int64_t alignArena(int64_t bytes);

/// Plans `func` (one block; an external function plans to nothing) with
/// every dynamic dimension taken as `maxTokens`. Emits an error at the op
/// and fails when a size overflows, or when the function has more than one
/// block or maxTokens < 1.
mlir::FailureOr<MemoryPlan> planMemory(mlir::func::FuncOp func, int64_t maxTokens);

/// Writes `plan` as attributes: accel.arena on every op with a planned
/// result, accel.arena_bytes and accel.arena_naive_bytes on `func`.
void writeMemoryPlan(mlir::func::FuncOp func, const MemoryPlan &plan);

} // namespace accel::layout

#endif // ACCEL_PASSES_MEMORYPLAN_H
