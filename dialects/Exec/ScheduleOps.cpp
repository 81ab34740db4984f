//===- ScheduleOps.cpp - exec.schedule, exec.step_size, exec.step_output ---===//
#include "ExecVerify.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace accel::exec;

//===----------------------------------------------------------------------===//
// ScheduleOp
//===----------------------------------------------------------------------===//

/// Emits an error on `op` if `kind` was already declared in the schedule.
template <typename OpTy, typename KindT>
static LogicalResult checkUnique(OpTy op, KindT kind,
                                 llvm::DenseMap<unsigned, Operation *> &seen,
                                 StringRef what) {
  auto [it, inserted] = seen.try_emplace(static_cast<unsigned>(kind), op);
  if (inserted)
    return success();
  InFlightDiagnostic diag = op.emitOpError()
                            << what << " '" << stringifyEnum(kind)
                            << "' is declared twice in the schedule";
  diag.attachNote(it->second->getLoc()) << "first declared here";
  return diag;
}

LogicalResult ScheduleOp::verifyRegions() {
  llvm::DenseMap<unsigned, Operation *> sizes, inputs, outputs;
  llvm::StringMap<WeightOp> weights;
  for (Operation &op : getBody().front()) {
    // The runtime and the plan writer know exec ops only.
    if (op.getDialect() != (*this)->getDialect())
      return emitOpError() << "may hold only exec ops; '" << op.getName()
                           << "' is not one";
    LogicalResult result =
        llvm::TypeSwitch<Operation *, LogicalResult>(&op)
            .Case([&](StepSizeOp size) {
              return checkUnique(size, size.getKind(), sizes, "step size");
            })
            .Case([&](StepInputOp input) {
              return checkUnique(input, input.getKind(), inputs,
                                 "step input");
            })
            .Case([&](StepOutputOp output) {
              return checkUnique(output, output.getKind(), outputs,
                                 "step output");
            })
            .Case([&](WeightOp weight) -> LogicalResult {
              auto [it, inserted] =
                  weights.try_emplace(weight.getName(), weight);
              if (inserted)
                return success();
              WeightOp first = it->second;
              if (first.getArena() == weight.getArena() &&
                  first.getOffset() == weight.getOffset() &&
                  first.getType() == weight.getType())
                return success();
              InFlightDiagnostic diag =
                  weight.emitOpError()
                  << "weight '" << weight.getName()
                  << "' is bound to two different places or types";
              diag.attachNote(first.getLoc()) << "first bound here";
              return diag;
            })
            .Default([](Operation *) { return success(); });
    if (failed(result))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// StepOutputOp
//===----------------------------------------------------------------------===//

LogicalResult StepOutputOp::verify() {
  ViewType type = detail::viewType(getView());
  if (type.getRank() != 2 || !isWideFloatType(type.getElementType()))
    return emitOpError() << "a " << stringifyStepOutputKind(getKind())
                         << " output is a rank-2 f32, f16 or bf16 view, got "
                         << type;
  return success();
}
