//===- ExecUtils.h - exec dialect helpers --------------------*- C++ -*-===//
//
// What the Layout pass, lib/Plan and the verifiers share: how big a view is,
// and which per-step size binds each of its dynamic dimensions.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_DIALECTS_EXEC_EXECUTILS_H
#define ACCEL_DIALECTS_EXEC_EXECUTILS_H

#include "accel/dialects/Exec/ExecOps.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace accel::exec {

/// The extent of one dimension of a view: a static size, a per-step size
/// (plus a constant), or an unknown dynamic extent (a view that did not come
/// from alloc/slice/step_input, or a view of one).
struct Extent {
  int64_t size = mlir::ShapedType::kDynamic;
  std::optional<StepSizeKind> symbol;
  int64_t addend = 0;

  static Extent fixed(int64_t size) { return {size, std::nullopt, 0}; }
  static Extent symbolic(StepSizeKind kind, int64_t addend = 0) {
    return {mlir::ShapedType::kDynamic, kind, addend};
  }
  static Extent unknown() { return {}; }

  bool isStatic() const { return !mlir::ShapedType::isDynamic(size); }
  /// "4096", "tokens", "seqs + 1" or "?".
  std::string str() const;
};

/// The extent of dimension `dim` of `view`, a value of type !exec.view.
Extent getExtent(mlir::Value view, unsigned dim);

/// Whether two extents may be equal at run time in `schedule`: equal static
/// sizes, or dynamic extents bound to the same step size (in a decode
/// schedule `tokens` and `seqs` are the same size). An unknown dynamic
/// extent agrees with any dynamic one. A null schedule is a mixed one.
bool extentsAgree(const Extent &a, const Extent &b, ScheduleOp schedule);

/// The bytes `view` takes per unit of its one dynamic extent (per token or
/// per sequence), or its bytes when it has a static shape; nullopt when it
/// has more than one dynamic dimension.
std::optional<int64_t> getBytesPerUnit(ViewType type);

/// The views a step op writes (its destinations: `out`, `sum`, q/k/v,
/// outputs, a collective's output, a copy's target, a launch's views), in
/// order; empty for an op that is not a step.
llvm::SmallVector<mlir::Value> getStepOutputs(mlir::Operation *op);
/// The views a step op reads: its other view operands.
llvm::SmallVector<mlir::Value> getStepInputs(mlir::Operation *op);
/// Whether `op` is a runtime step (an exec op of ExecStepOps.td).
bool isStep(mlir::Operation *op);

/// "node_name" of a location the importer made (a NameLoc, or the first
/// inside a FusedLoc), else "" (a file location).
std::string locationName(mlir::Location loc);

/// Whether `type` is an FP8 type exec knows (f8E4M3FN, f8E5M2).
bool isFP8Type(mlir::Type type);
/// Whether `type` is f32, f16 or bf16.
bool isWideFloatType(mlir::Type type);

} // namespace accel::exec

#endif // ACCEL_DIALECTS_EXEC_EXECUTILS_H
