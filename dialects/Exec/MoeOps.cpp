//===- MoeOps.cpp - exec.moe ------------------------------------------------===//
//
// The step's views must have the shapes transformer.moe verified; this
// re-checks what the runtime relies on (ranks, experts, hidden size).
//
//===----------------------------------------------------------------------===//
#include "ExecVerify.h"

#include "llvm/Support/InterleavedRange.h"

using namespace mlir;
using namespace accel::exec;
using namespace accel::exec::detail;

LogicalResult MoeOp::verify() {
  if (failed(verifySameType(*this, getX(), "x", getOut(), "out")) ||
      failed(verifyRank(*this, getX(), "x", {2})) ||
      failed(verifyStaticDim(*this, getX(), 1, "x", "hidden size")))
    return failure();
  const int64_t hidden = viewType(getX()).getDimSize(1);
  const int64_t experts = getNumExperts();
  if (experts < 1 || getTopK() < 1 || getTopK() > experts)
    return emitOpError() << "needs 1 <= top_k <= num_experts, got top_k = " << getTopK()
                         << " and num_experts = " << experts;
  if (bool(getGateUp()) == bool(getGate() || getUp()) || bool(getGate()) != bool(getUp()))
    return emitOpError("takes gate_up, or gate and up");
  auto check = [&](Value v, ArrayRef<int64_t> shape, StringRef name) -> LogicalResult {
    ViewType t = viewType(v);
    if (t.getShape() != shape)
      return emitOpError() << name << " must be [" << llvm::interleaved(shape, ", ")
                           << "], got " << t;
    return success();
  };
  if (failed(check(getRouter(), {experts, hidden}, "router")))
    return failure();
  if (getRouterBias() && failed(check(getRouterBias(), {experts}, "router_bias")))
    return failure();
  ViewType down = viewType(getDown());
  if (down.getRank() != 3)
    return emitOpError() << "down must be [" << experts << ", " << hidden << ", I], got " << down;
  const int64_t inter = down.getDimSize(2);
  if (failed(check(getDown(), {experts, hidden, inter}, "down")))
    return failure();
  if (getGateUp()) {
    if (failed(check(getGateUp(), {experts, 2 * inter, hidden}, "gate_up")))
      return failure();
  } else if (failed(check(getGate(), {experts, inter, hidden}, "gate")) ||
             failed(check(getUp(), {experts, inter, hidden}, "up"))) {
    return failure();
  }
  if (bool(getSharedGateUp()) != bool(getSharedDown()))
    return emitOpError("a shared expert needs both shared_gate_up and shared_down");
  if (getSharedGateUp()) {
    ViewType sd = viewType(getSharedDown());
    if (sd.getRank() != 2)
      return emitOpError() << "shared_down must be [" << hidden << ", S], got " << sd;
    const int64_t shared = sd.getDimSize(1);
    if (failed(check(getSharedDown(), {hidden, shared}, "shared_down")) ||
        failed(check(getSharedGateUp(), {2 * shared, hidden}, "shared_gate_up")))
      return failure();
  }
  // Scales of quantised experts: [E, rows of the weight they scale].
  auto checkScale = [&](Value weight, Value scale, StringRef name) -> LogicalResult {
    if (!scale)
      return success();
    if (!weight)
      return emitOpError() << name << "_scale scales a " << name << " weight, and there is none";
    ViewType w = viewType(weight);
    return check(scale, {experts, w.getDimSize(1)}, (name + "_scale").str());
  };
  if (failed(checkScale(getGateUp(), getGateUpScale(), "gate_up")) ||
      failed(checkScale(getGate(), getGateScale(), "gate")) ||
      failed(checkScale(getUp(), getUpScale(), "up")) ||
      failed(checkScale(getDown(), getDownScale(), "down")))
    return failure();
  if (getSharedExpertGate()) {
    if (!getSharedGateUp())
      return emitOpError("shared_expert_gate scales a shared expert, and there is none");
    if (failed(check(getSharedExpertGate(), {1, hidden}, "shared_expert_gate")))
      return failure();
  }
  return success();
}
