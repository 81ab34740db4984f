//===- PadGemmDims.cpp - accel-pad-gemm-dims: aligned MLP intermediates ---===//
//
// Rounds a feed-forward block's intermediate size up to the target's GEMM
// multiple by padding its weights with zeros (docs/passes/layout.md,
// "Padding GEMM dimensions"). Exact: the padded intermediate columns are
// zero, or meet zero weights only.
//
//===----------------------------------------------------------------------===//
#include "../Fusion/FusionUtils.h"

#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace accel {
#define GEN_PASS_DEF_PADGEMMDIMS
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
namespace tf = accel::transformer;
using accel::fusion::eraseIfDead;
using accel::fusion::getFloatConstant;
using accel::fusion::insertZeros;

namespace {

using Inserts = SmallVector<std::pair<int64_t, int64_t>>;

/// Replaces `operand` by its constant with zeros inserted; false (nothing
/// changed) when it is not a float constant.
bool padOperand(IRRewriter &rewriter, Operation *user, OpOperand &operand, int64_t axis,
                const Inserts &inserts) {
  Value old = operand.get();
  rewriter.setInsertionPoint(user);
  FailureOr<Value> padded = insertZeros(rewriter, old, axis, inserts, ".pad");
  if (failed(padded))
    return false;
  operand.set(*padded);
  eraseIfDead(rewriter, old);
  return true;
}

int64_t roundUp(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

/// gated_mlp: gate_up (or gate and up) rows and down columns.
void padGatedMlp(IRRewriter &rewriter, tf::GatedMlpOp mlp, int64_t multiple) {
  auto down = cast<RankedTensorType>(mlp.getDown().getType());
  const int64_t inter = down.getDimSize(1), padded = roundUp(inter, multiple);
  const int64_t pad = padded - inter;
  if (pad == 0)
    return;
  // Every weight must be a float constant before any is touched.
  SmallVector<Value> weights{mlp.getDown()};
  for (Value w : {mlp.getGateUp(), mlp.getGate(), mlp.getUp()})
    if (w)
      weights.push_back(w);
  for (Value w : weights)
    if (!getFloatConstant(w))
      return;
  if (mlp.getGateUp())
    padOperand(rewriter, mlp, mlp.getGateUpMutable()[0], 0, {{inter, pad}, {2 * inter, pad}});
  if (mlp.getGate())
    padOperand(rewriter, mlp, mlp.getGateMutable()[0], 0, {{inter, pad}});
  if (mlp.getUp())
    padOperand(rewriter, mlp, mlp.getUpMutable()[0], 0, {{inter, pad}});
  padOperand(rewriter, mlp, mlp.getDownMutable(), 1, {{inter, pad}});
}

/// A float linear with no scales (its weight a float constant).
bool floatLinear(tf::LinearOp l) {
  return !l.getWeightScale() && !l.getInputScale() && getFloatConstant(l.getWeight()) &&
         (!l.getBias() || getFloatConstant(l.getBias()));
}

/// linear A → linear B (GPT-2's c_fc → c_proj): A's rows and bias, B's
/// columns, A's result type.
void padLinearPair(IRRewriter &rewriter, tf::LinearOp a, int64_t multiple) {
  if (!a->hasOneUse() || !floatLinear(a))
    return;
  auto b = dyn_cast<tf::LinearOp>(*a->user_begin());
  if (!b || b.getX() != a.getResult() || !floatLinear(b))
    return;
  auto result = cast<RankedTensorType>(a.getResult().getType());
  auto aw = cast<RankedTensorType>(a.getWeight().getType());
  auto bw = cast<RankedTensorType>(b.getWeight().getType());
  const int64_t inter = aw.getDimSize(0);
  if (result.getRank() != 2 || result.getDimSize(1) != inter || bw.getDimSize(1) != inter)
    return;
  const int64_t pad = roundUp(inter, multiple) - inter;
  if (pad == 0)
    return;
  padOperand(rewriter, a, a.getWeightMutable(), 0, {{inter, pad}});
  if (a.getBias())
    padOperand(rewriter, a, a.getBiasMutable()[0], 0, {{inter, pad}});
  a.getResult().setType(
      RankedTensorType::get({result.getDimSize(0), inter + pad}, result.getElementType()));
  padOperand(rewriter, b, b.getWeightMutable(), 1, {{inter, pad}});
}

struct PadGemmDimsPass : accel::impl::PadGemmDimsBase<PadGemmDimsPass> {
  using PadGemmDimsBase::PadGemmDimsBase;

  void runOnOperation() override {
    if (multiple < 0) {
      getOperation().emitError() << "accel-pad-gemm-dims needs a multiple of 0 or more, got "
                                 << int64_t(multiple);
      return signalPassFailure();
    }
    if (multiple <= 1)
      return;
    IRRewriter rewriter(&getContext());
    SmallVector<tf::GatedMlpOp> mlps;
    SmallVector<tf::LinearOp> linears;
    getOperation().walk([&](Operation *op) {
      if (auto mlp = dyn_cast<tf::GatedMlpOp>(op))
        mlps.push_back(mlp);
      else if (auto linear = dyn_cast<tf::LinearOp>(op))
        linears.push_back(linear);
    });
    for (tf::GatedMlpOp mlp : mlps)
      padGatedMlp(rewriter, mlp, multiple);
    for (tf::LinearOp linear : linears)
      padLinearPair(rewriter, linear, multiple);
  }
};

} // namespace
