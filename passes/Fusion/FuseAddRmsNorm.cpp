//===- FuseAddRmsNorm.cpp - residual_add + rms_norm → add_rms_norm --------===//
//
// The pre-norm residual stream writes, per layer and sublayer,
//   h' = residual_add(h, branch); n = rms_norm(h', w)
// and h' is the next sublayer's residual. add_rms_norm computes both in one
// pass over the row (vLLM's fused_add_rms_norm): `result` is the norm,
// `residual_out` the sum, which replaces every other use of h'.
//
//===----------------------------------------------------------------------===//
#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/FusionPatterns.h"
#include "accel/passes/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace accel {
#define GEN_PASS_DEF_FUSEADDRMSNORM
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;

namespace {

/// True when `v` is available just before `op`: a block argument of an
/// enclosing block, or the result of an op before `op` (or before the
/// ancestor of `op` in that op's block).
static bool isDefinedBefore(Value v, Operation *op) {
  Block *block = v.getParentBlock();
  Operation *ancestor = block->findAncestorOpInBlock(*op);
  if (!ancestor)
    return false;
  Operation *def = v.getDefiningOp();
  return !def || def->isBeforeInBlock(ancestor);
}

/// rms_norm(residual_add(r, b), w) → add_rms_norm(b, r, w), at the add.
struct AddRmsNorm : OpRewritePattern<transformer::RmsNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(transformer::RmsNormOp norm,
                                PatternRewriter &rewriter) const override {
    auto add = norm.getX().getDefiningOp<transformer::ResidualAddOp>();
    if (!add)
      return rewriter.notifyMatchFailure(norm, "x is not a residual_add");
    if (add->getBlock() != norm->getBlock())
      return rewriter.notifyMatchFailure(norm, "add and norm in different blocks");
    // The fused op sits where the add was, so the weight must be there.
    Value weight = norm.getWeight();
    if (!isDefinedBefore(weight, add)) {
      Operation *def = weight.getDefiningOp();
      // A constant weight defined later (no operands, no effects) moves up.
      if (!def || def->getNumOperands() != 0 || !isMemoryEffectFree(def) ||
          def->getBlock() != add->getBlock())
        return rewriter.notifyMatchFailure(norm, "weight not available at the add");
      rewriter.moveOpBefore(def, add);
    }
    rewriter.setInsertionPoint(add);
    Location loc = rewriter.getFusedLoc({add.getLoc(), norm.getLoc()});
    Type type = add.getType();
    auto fused = transformer::AddRmsNormOp::create(
        rewriter, loc, type, type, add.getBranch(), add.getResidual(), weight,
        norm.getEpsilonAttr(), norm.getWeightOffsetAttr());
    rewriter.replaceOp(norm, fused.getResult());
    rewriter.replaceOp(add, fused.getResidualOut());
    return success();
  }
};

struct FuseAddRmsNormPass
    : accel::impl::FuseAddRmsNormBase<FuseAddRmsNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseAddRmsNormPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void accel::populateFuseAddRmsNormPatterns(RewritePatternSet &patterns) {
  patterns.add<AddRmsNorm>(patterns.getContext());
}
