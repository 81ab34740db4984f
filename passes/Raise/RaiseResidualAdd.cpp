//===- RaiseResidualAdd.cpp - residual stream adds → residual_add ---------===//
//
// The residual stream is defined from the embedding forward: it starts at
// an embedding lookup (possibly scaled, possibly summed with position
// embeddings) and continues through every add of a same-typed, non-constant
// branch onto it. Only adds with one operand on the stream are raised, so
// the adds of attention (rotary halves, scores + mask) never are; and the
// add of two branches that is itself added to the stream (a parallel
// residual: x + (attn + mlp)), whose sum is a branch, not the stream.
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

static bool isResidualStream(Value v, int depth = 0, bool shallow = false);

/// True when `add` sums two branches, neither on the stream: the
/// `attn + mlp` of a parallel residual (GPT-NeoX, Falcon, GPT-J), whose sum
/// is then added to the stream. Its operands are looked at shallowly (a
/// residual add counts as the stream without looking further back).
static bool isBranchSum(transformer::ResidualAddOp add) {
  return !isResidualStream(add.getResidual(), 0, /*shallow=*/true) &&
         !isResidualStream(add.getBranch(), 0, /*shallow=*/true);
}

/// True when `v` (or the batch-major value a flatten_tokens views) is on the
/// residual stream: an embedding lookup, a scalar multiple of one, a sum of
/// lookups (token + position embeddings), or the result of a residual add
/// that is not a sum of branches (any residual add, when `shallow`).
static bool isResidualStream(Value v, int depth, bool shallow) {
  if (depth > 8)
    return false;
  if (auto flatten = v.getDefiningOp<transformer::FlattenTokensOp>())
    v = flatten.getInput();
  if (isEmbeddingLookup(v))
    return true;
  Value inner = v;
  if (auto unflatten = v.getDefiningOp<transformer::UnflattenTokensOp>())
    inner = unflatten.getInput();
  if (auto add = inner.getDefiningOp<transformer::ResidualAddOp>())
    return shallow || !isBranchSum(add);
  if (auto mul = v.getDefiningOp<onnx::MulOp>())
    for (auto [a, s] : {std::pair{mul.getA(), mul.getB()},
                        std::pair{mul.getB(), mul.getA()}})
      if (getScalarConstant(s) && isResidualStream(a, depth + 1, shallow))
        return true;
  if (auto add = v.getDefiningOp<onnx::AddOp>())
    for (auto [a, b] : {std::pair{add.getA(), add.getB()},
                        std::pair{add.getB(), add.getA()}})
      if (isResidualStream(a, depth + 1, shallow) && isEmbeddingLookup(b))
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

/// A parallel residual, `x + (attn + mlp)` (HF GPT-NeoX with
/// use_parallel_residual, Falcon with parallel_attn): the inner
/// `Add(attn, mlp)` of two same-typed float activations, neither on the
/// stream nor constant, whose only reader adds it to the stream (an
/// onnx.Add with the other operand on it, or the branch of a residual_add)
/// → residual_add of the two branches, so that no onnx.Add is left. The sum
/// is the same one (f32 addition commutes), and it stays a branch: the
/// outer add's residual is `x`.
struct ParallelBranches : OpRewritePattern<onnx::AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::AddOp add,
                                PatternRewriter &rewriter) const override {
    Type type = add.getType();
    auto ranked = dyn_cast<RankedTensorType>(type);
    if (!ranked || ranked.getRank() < 2 || !isFloatTensor(type) ||
        add.getA().getType() != type || add.getB().getType() != type ||
        getConstant(add.getA()) || getConstant(add.getB()) || !add->hasOneUse())
      return rewriter.notifyMatchFailure(add, "not two same-typed float activations");
    if (isResidualStream(add.getA()) || isResidualStream(add.getB()))
      return rewriter.notifyMatchFailure(add, "an operand is on the residual stream");
    Operation *user = *add->getUsers().begin();
    bool ontoStream = false;
    if (auto outer = dyn_cast<onnx::AddOp>(user)) {
      Value other = outer.getA() == add.getResult() ? outer.getB() : outer.getA();
      ontoStream = other != add.getResult() && isResidualStream(other);
    } else if (auto flatten = dyn_cast<transformer::FlattenTokensOp>(user)) {
      ontoStream = flatten->hasOneUse() &&
                   llvm::any_of(flatten->getUsers(), [&](Operation *u) {
                     auto r = dyn_cast<transformer::ResidualAddOp>(u);
                     return r && r.getBranch() == flatten.getResult() &&
                            isResidualStream(r.getResidual());
                   });
    }
    if (!ontoStream)
      return rewriter.notifyMatchFailure(add, "the sum is not added to the residual stream");
    Location loc = add.getLoc();
    Value a = flattenTokens(rewriter, loc, add.getA());
    Value b = flattenTokens(rewriter, loc, add.getB());
    Value sum = transformer::ResidualAddOp::create(rewriter, loc, a.getType(), a, b);
    rewriter.replaceOp(add, unflattenTokens(rewriter, loc, sum, add.getA(), type));
    return success();
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
  patterns.add<ResidualAdd, ParallelBranches>(patterns.getContext());
}
