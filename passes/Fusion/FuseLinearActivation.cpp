//===- FuseLinearActivation.cpp - linear + activation → linear epilogue ---===//
//
// GPT-2's MLP (and any linear → activation → linear MLP) applies its
// activation to the output of a GEMM and nothing else reads that output.
// With the activation as the linear's `activation` epilogue, the GEMM's
// result is activated before it is written: one plan step instead of two,
// and no pass over the [tokens, intermediate] tensor in between. The kind
// is applied to the same values, in the same element type, as the separate
// transformer.activation did, so nothing changes numerically.
//
//===----------------------------------------------------------------------===//
#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/FusionPatterns.h"
#include "accel/passes/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace accel {
#define GEN_PASS_DEF_FUSELINEARACTIVATION
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;

namespace {

/// activation(linear(..)) → linear(..) {activation = kind}, at the linear.
struct LinearActivation : OpRewritePattern<transformer::ActivationOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(transformer::ActivationOp act,
                                PatternRewriter &rewriter) const override {
    auto linear = act.getInput().getDefiningOp<transformer::LinearOp>();
    if (!linear)
      return rewriter.notifyMatchFailure(act, "input is not a linear");
    if (linear.getActivationAttr())
      return rewriter.notifyMatchFailure(act, "the linear has an activation already");
    if (!linear.getResult().hasOneUse())
      return rewriter.notifyMatchFailure(act, "the linear's result has other uses");
    if (linear.getInputScale())
      return rewriter.notifyMatchFailure(act, "a W8A8 linear takes no epilogue");
    if (linear.getType() != act.getType())
      return rewriter.notifyMatchFailure(act, "element types differ");
    rewriter.modifyOpInPlace(linear, [&] {
      linear.setActivationAttr(act.getKindAttr());
      linear->setLoc(rewriter.getFusedLoc({linear.getLoc(), act.getLoc()}));
    });
    rewriter.replaceOp(act, linear.getResult());
    return success();
  }
};

struct FuseLinearActivationPass
    : accel::impl::FuseLinearActivationBase<FuseLinearActivationPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseLinearActivationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void accel::populateFuseLinearActivationPatterns(RewritePatternSet &patterns) {
  patterns.add<LinearActivation>(patterns.getContext());
}
