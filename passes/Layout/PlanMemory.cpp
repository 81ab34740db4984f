//===- PlanMemory.cpp - accel-plan-memory: one arena for the activations --===//
//
// Runs planMemory() (MemoryPlan.cpp) on the function and writes the result
// as attributes (docs/passes/layout.md).
//
//===----------------------------------------------------------------------===//
#include "accel/passes/MemoryPlan.h"
#include "accel/passes/Passes.h"

namespace accel {
#define GEN_PASS_DEF_PLANMEMORY
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;

namespace {

struct PlanMemoryPass : accel::impl::PlanMemoryBase<PlanMemoryPass> {
  using PlanMemoryBase::PlanMemoryBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    FailureOr<accel::layout::MemoryPlan> plan = accel::layout::planMemory(func, maxTokens);
    if (failed(plan))
      return signalPassFailure();
    if (func.isExternal())
      return;
    accel::layout::writeMemoryPlan(func, *plan);
  }
};

} // namespace
