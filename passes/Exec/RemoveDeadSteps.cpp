//===- RemoveDeadSteps.cpp - accel-exec-remove-dead-steps ------------------===//
//
// The lowering makes a step of every op it meets; some results are never
// read (a value handed to the next pipeline stage only for its shape, the
// reshape of the token ids a shape computation started from). This pass
// removes such steps, then the buffers and views nothing uses any more.
//
//===----------------------------------------------------------------------===//
#include "accel/passes/ExecPasses.h"
#include "accel/passes/Passes.h"

#include "accel/dialects/Exec/ExecOps.h"
#include "accel/dialects/Exec/ExecUtils.h"

namespace accel {
#define GEN_PASS_DEF_REMOVEDEADSTEPS
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
namespace ex = accel::exec;

namespace accel::execpasses {

/// The buffer a view's bytes belong to (through exec.view).
static Value rootOf(Value v) {
  while (auto view = v.getDefiningOp<ex::ViewOp>())
    v = view.getSource();
  return v;
}

/// Whether an op other than `step` (and the exec.view ops between) uses the
/// bytes of `root`.
static bool readElsewhere(Value root, Operation *step) {
  SmallVector<Value> work{root};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (auto view = dyn_cast<ex::ViewOp>(user)) {
        work.push_back(view.getResult());
        continue;
      }
      if (user != step)
        return true;
    }
  }
  return false;
}

/// Removes steps whose results nothing reads (a shape tensor's reshape the
/// lowering made a view of and a pipeline stage then never read, say),
/// with their buffers. Kept: steps that write the KV cache, and steps
/// whose output is not a buffer of their own (a weight, a step input).
int64_t removeDeadSteps(ex::ScheduleOp schedule) {
  int64_t removed = 0;
  Block &body = schedule.getBody().front();
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body))) {
      if (isa<ex::ViewOp, ex::AllocOp>(op) && op.use_empty()) {
        op.erase();
        changed = true;
        continue;
      }
      if (!ex::isStep(&op) || isa<ex::KVWriteOp, ex::QkvRotaryKvWriteOp>(op))
        continue;
      SmallVector<Value> outs = ex::getStepOutputs(&op);
      if (outs.empty())
        continue;
      bool dead = llvm::all_of(outs, [&](Value o) {
        Value r = rootOf(o);
        return r.getDefiningOp<ex::AllocOp>() && !readElsewhere(r, &op);
      });
      if (!dead)
        continue;
      op.erase();
      ++removed;
      changed = true;
    }
  }
  return removed;
}

} // namespace accel::execpasses

namespace {

struct RemoveDeadStepsPass : accel::impl::RemoveDeadStepsBase<RemoveDeadStepsPass> {
  void runOnOperation() override {
    for (auto schedule : getOperation().getOps<ex::ScheduleOp>())
      accel::execpasses::removeDeadSteps(schedule);
  }
};

} // namespace
