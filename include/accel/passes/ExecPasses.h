//===- ExecPasses.h - the exec-level passes as functions ------*- C++ -*-===//
//
// What accelc calls directly (it reports the memory plan, and lowers to exec
// without a pass manager of its own when it writes a plan). The passes
// (accel-lower-to-exec, accel-exec-assign-buffers,
// accel-exec-select-kernels) run the same functions.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_PASSES_EXECPASSES_H
#define ACCEL_PASSES_EXECPASSES_H

#include "accel/dialects/Exec/ExecOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <string>

namespace accel {

namespace conversion {
/// accel-lower-to-exec on `module`.
mlir::LogicalResult lowerToExec(mlir::ModuleOp module);
} // namespace conversion

namespace execpasses {

/// What accel-exec-assign-buffers did: the three regions of the arena it
/// declared (fixed bytes, bytes per token, bytes per sequence) and what one
/// buffer per value would take instead.
struct MemoryPlanSummary {
  int64_t fixed = 0, perToken = 0, perSeq = 0;
  int64_t naiveFixed = 0, naivePerToken = 0, naivePerSeq = 0;
  int64_t buffers = 0;
};

/// accel-exec-assign-buffers on `module`.
mlir::FailureOr<MemoryPlanSummary> assignBuffers(mlir::ModuleOp module, int64_t alignment = 256);

/// accel-exec-remove-dead-steps on one schedule: the steps removed.
int64_t removeDeadSteps(exec::ScheduleOp schedule);

/// accel-exec-select-kernels on `module`: the number of kernels declared
/// (none when `generate` is false: then it only refuses exec.onnx steps,
/// unless `allowOnnx`).
mlir::FailureOr<int64_t> selectKernels(mlir::ModuleOp module, const std::string &chip,
                                       bool allowOnnx, bool generate = true);

} // namespace execpasses
} // namespace accel

#endif // ACCEL_PASSES_EXECPASSES_H
