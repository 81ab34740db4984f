//===- RaiseResidualAdd.cpp - residual stream adds → residual_add ---------===//
//
// The residual stream is defined from the embedding forward: it starts at
// an embedding lookup (possibly scaled, possibly summed with position
// embeddings) and continues through every add of a same-typed, non-constant
// branch onto it. Only adds with one operand on the stream are raised, so
// the adds of attention (rotary halves, scores + mask) never are.
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
#define GEN_PASS_DEF_RAISERESIDUALADD
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::raise;

namespace {

/// True when `v` is an embedding lookup: a transformer.embedding (behind
/// its unflatten) or an onnx.Gather of rows of a constant float table.
static bool isEmbeddingLookup(Value v) {
  if (auto unflatten = v.getDefiningOp<transformer::UnflattenTokensOp>())
    v = unflatten.getInput();
  if (v.getDefiningOp<transformer::EmbeddingOp>())
    return true;
  auto gather = v.getDefiningOp<onnx::GatherOp>();
  if (!gather || gather.getAxisAttr().getInt() != 0 ||
      !getConstant(gather.getData()))
    return false;
  auto table = dyn_cast<RankedTensorType>(gather.getData().getType());
  auto ids = dyn_cast<RankedTensorType>(gather.getIndices().getType());
  return table && ids && table.getRank() == 2 &&
         isFloatElement(table.getElementType()) &&
         isa<IntegerType>(ids.getElementType());
}

/// True when `v` is on the residual stream: an embedding lookup, a scalar
/// multiple of one, a sum of lookups (token + position embeddings), or the
/// result of a residual add.
static bool isResidualStream(Value v, int depth = 0) {
  if (depth > 8)
    return false;
  if (isEmbeddingLookup(v))
    return true;
  Value inner = v;
  if (auto unflatten = v.getDefiningOp<transformer::UnflattenTokensOp>())
    inner = unflatten.getInput();
  if (inner.getDefiningOp<transformer::ResidualAddOp>())
    return true;
  if (auto mul = v.getDefiningOp<onnx::MulOp>())
    for (auto [a, s] : {std::pair{mul.getA(), mul.getB()},
                        std::pair{mul.getB(), mul.getA()}})
      if (getScalarConstant(s) && isResidualStream(a, depth + 1))
        return true;
  if (auto add = v.getDefiningOp<onnx::AddOp>())
    for (auto [a, b] : {std::pair{add.getA(), add.getB()},
                        std::pair{add.getB(), add.getA()}})
      if (isResidualStream(a, depth + 1) && isEmbeddingLookup(b))
        return true;
  return false;
}

/// Whether `op` is in a token-major function (accel-raise-attention ran):
/// there the batch is one row of tokens, so a leading dim of 1 and a
/// dynamic leading dim hold the same tokens.
static bool isTokenMajor(Operation *op) {
  auto func = op->getParentOfType<func::FuncOp>();
  return func && llvm::any_of(func.getArgumentTypes(),
                              [](Type t) { return isa<transformer::BatchType>(t); });
}

/// `a` and `b` have the same rank and element type, and agree dim by dim
/// except where one says 1 and the other `?` (a batch of one row).
static bool sameTokensAfterBatchOne(Type a, Type b) {
  auto ta = dyn_cast<RankedTensorType>(a), tb = dyn_cast<RankedTensorType>(b);
  if (!ta || !tb || ta.getRank() != tb.getRank() ||
      ta.getElementType() != tb.getElementType())
    return false;
  for (int64_t i = 0; i < ta.getRank(); ++i) {
    int64_t x = ta.getDimSize(i), y = tb.getDimSize(i);
    bool oneAndDynamic = (x == 1 && ShapedType::isDynamic(y)) ||
                         (y == 1 && ShapedType::isDynamic(x));
    if (x != y && !(oneAndDynamic && i + 1 < ta.getRank()))
      return false;
  }
  return true;
}

/// `Add(residual, branch)` of one float type, neither constant, the
/// residual on the stream. In a token-major function the two may differ in
/// a leading 1 vs `?` (GPT-2's token + position embeddings).
struct ResidualAdd : OpRewritePattern<onnx::AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::AddOp add,
                                PatternRewriter &rewriter) const override {
    Type type = add.getType();
    auto ranked = dyn_cast<RankedTensorType>(type);
    if (!ranked || ranked.getRank() < 2 || !isFloatTensor(type) ||
        getConstant(add.getA()) || getConstant(add.getB()))
      return rewriter.notifyMatchFailure(add, "not two float activations");
    if ((add.getA().getType() != type || add.getB().getType() != type) &&
        !(isTokenMajor(add) && sameTokensAfterBatchOne(add.getA().getType(), type) &&
          sameTokensAfterBatchOne(add.getB().getType(), type)))
      return rewriter.notifyMatchFailure(add, "not two same-typed activations");
    for (auto [residual, branch] : {std::pair{add.getA(), add.getB()},
                                    std::pair{add.getB(), add.getA()}}) {
      if (!isResidualStream(residual))
        continue;
      Location loc = add.getLoc();
      Value r = flattenTokens(rewriter, loc, residual);
      Value b = flattenTokens(rewriter, loc, branch);
      Value sum =
          transformer::ResidualAddOp::create(rewriter, loc, r.getType(), r, b);
      rewriter.replaceOp(add, unflattenTokens(rewriter, loc, sum, residual, type));
      return success();
    }
    return rewriter.notifyMatchFailure(add, "no operand on the residual stream");
  }
};

struct RaiseResidualAddPass
    : accel::impl::RaiseResidualAddBase<RaiseResidualAddPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaiseResidualAddPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void accel::populateRaiseResidualAddPatterns(RewritePatternSet &patterns) {
  patterns.add<ResidualAdd>(patterns.getContext());
}
