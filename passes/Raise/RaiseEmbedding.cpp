//===- RaiseEmbedding.cpp - Gather from a table → transformer.embedding ---===//
//
// `Gather(table, ids) {axis = 0}` of a constant `[vocab, hidden]` table, and
// the scalar scale some models apply to the looked-up rows (Gemma's
// `embed_scale = sqrt(hidden)`, which the dynamo export writes as a Mul by
// an initializer).
//
//===----------------------------------------------------------------------===//
#include "RaiseUtils.h"

#include "accel/dialects/Onnx/OnnxOps.h"
#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/Passes.h"
#include "accel/passes/RaisePatterns.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace accel {
#define GEN_PASS_DEF_RAISEEMBEDDING
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::raise;

namespace {

/// `Gather(table, ids) {axis = 0}` with a constant 2-D float table and i32
/// or i64 ids of rank 1 or more.
struct GatherToEmbedding : OpRewritePattern<onnx::GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::GatherOp gather,
                                PatternRewriter &rewriter) const override {
    Value table = gather.getData(), ids = gather.getIndices();
    auto tableType = dyn_cast<RankedTensorType>(table.getType());
    auto idsType = dyn_cast<RankedTensorType>(ids.getType());
    if (!tableType || tableType.getRank() != 2 ||
        !isFloatElement(tableType.getElementType()) || !getConstant(table))
      return rewriter.notifyMatchFailure(gather, "data is not a constant table");
    if (gather.getAxisAttr().getInt() != 0 || !idsType ||
        idsType.getRank() < 1 ||
        !(idsType.getElementType().isSignlessInteger(32) ||
          idsType.getElementType().isSignlessInteger(64)))
      return rewriter.notifyMatchFailure(gather, "not a row lookup by ids");
    Location loc = gather.getLoc();
    Value flatIds = flattenIds(rewriter, loc, ids);
    auto rowsType = RankedTensorType::get(
        {cast<RankedTensorType>(flatIds.getType()).getDimSize(0),
         tableType.getDimSize(1)},
        tableType.getElementType());
    Value rows = transformer::EmbeddingOp::create(rewriter, loc, rowsType,
                                                  table, flatIds, FloatAttr());
    rewriter.replaceOp(gather, unflattenTokens(rewriter, loc, rows, ids,
                                               gather.getType()));
    return success();
  }
};

/// `Mul(unflatten(embedding), s)` with a positive scalar constant s: the
/// embedding's scale.
struct AbsorbEmbeddingScale : OpRewritePattern<onnx::MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::MulOp mul,
                                PatternRewriter &rewriter) const override {
    for (auto [v, s] : {std::pair{mul.getA(), mul.getB()},
                        std::pair{mul.getB(), mul.getA()}}) {
      std::optional<double> scale = getScalarConstant(s);
      Operation *def = v.getDefiningOp();
      Value rows = v;
      if (auto unflatten = dyn_cast_or_null<transformer::UnflattenTokensOp>(def))
        rows = unflatten.getInput();
      auto embedding = rows.getDefiningOp<transformer::EmbeddingOp>();
      if (!scale || !(*scale > 0) || !embedding || !embedding->hasOneUse() ||
          !v.hasOneUse() || mul.getType() != v.getType())
        continue;
      double combined = *scale;
      if (std::optional<APFloat> old = embedding.getScale())
        combined *= old->convertToDouble();
      rewriter.modifyOpInPlace(embedding, [&] {
        embedding.setScaleAttr(rewriter.getF64FloatAttr(combined));
      });
      rewriter.replaceOp(mul, v);
      return success();
    }
    return rewriter.notifyMatchFailure(mul, "not a scaled embedding");
  }
};

struct RaiseEmbeddingPass
    : accel::impl::RaiseEmbeddingBase<RaiseEmbeddingPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaiseEmbeddingPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void accel::populateRaiseEmbeddingPatterns(RewritePatternSet &patterns) {
  patterns.add<GatherToEmbedding, AbsorbEmbeddingScale>(patterns.getContext());
}
