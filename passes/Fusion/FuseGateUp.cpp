//===- FuseGateUp.cpp - gated_mlp gate(..) up(..) → gate_up(..) -----------===//
//
// A gated MLP with separate gate and up projections runs two GEMMs on one
// input; with the weights stacked, gate rows first (`[2 * intermediate,
// hidden]`, the layout of Phi3's gate_up_proj and of what the CPU and GPU
// gated_mlp kernels read), it is one. Every column is the same dot product
// as before, so nothing changes numerically.
//
//===----------------------------------------------------------------------===//
#include "FusionUtils.h"

#include "accel/dialects/Onnx/OnnxDialect.h"
#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/FusionPatterns.h"
#include "accel/passes/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace accel {
#define GEN_PASS_DEF_FUSEGATEUP
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::fusion;

namespace {

struct GateUp : OpRewritePattern<transformer::GatedMlpOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(transformer::GatedMlpOp op,
                                PatternRewriter &rewriter) const override {
    Value gate = op.getGate(), up = op.getUp();
    if (!gate || !up)
      return rewriter.notifyMatchFailure(op, "gate_up already");
    if (!getFloatConstant(gate) || !getFloatConstant(up))
      return rewriter.notifyMatchFailure(op, "gate or up is not a constant");
    rewriter.setInsertionPoint(op);
    FailureOr<Value> gateUp = concatConstants(rewriter, {gate, up}, ".gate_up");
    if (failed(gateUp))
      return rewriter.notifyMatchFailure(op, "gate and up do not stack");
    auto fused = transformer::GatedMlpOp::create(
        rewriter, op.getLoc(), op.getType(), op.getX(), *gateUp, Value(),
        Value(), op.getDown(), op.getKindAttr());
    rewriter.replaceOp(op, fused.getResult());
    eraseIfDead(rewriter, gate);
    eraseIfDead(rewriter, up);
    return success();
  }
};

struct FuseGateUpPass : accel::impl::FuseGateUpBase<FuseGateUpPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseGateUpPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void accel::populateFuseGateUpPatterns(RewritePatternSet &patterns) {
  patterns.add<GateUp>(patterns.getContext());
}
