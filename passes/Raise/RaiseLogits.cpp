//===- RaiseLogits.cpp - the lm head → transformer.logits -----------------===//
//
// The last projection of a causal LM, onto the vocabulary, and Gemma 2's
// final logit softcapping. Tied embeddings stay one SSA value: the dynamo
// exporter spells a tied head `MatMul(h, Transpose(table))`, which gives the
// table itself; a head stored as a separate transposed copy of the table is
// recognised by comparing the data.
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
#define GEN_PASS_DEF_RAISELOGITS
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::raise;

namespace {

/// `MatMul(h, W)` whose result is the graph output: transformer.logits.
struct LmHeadToLogits : OpRewritePattern<onnx::MatMulOp> {
  LmHeadToLogits(MLIRContext *context, bool detectTied)
      : OpRewritePattern(context), detectTied(detectTied) {}

  LogicalResult matchAndRewrite(onnx::MatMulOp matmul,
                                PatternRewriter &rewriter) const override {
    Value h = matmul.getA(), w = matmul.getB();
    auto hType = dyn_cast<RankedTensorType>(h.getType());
    auto wType = dyn_cast<RankedTensorType>(w.getType());
    if (!hType || !wType || hType.getRank() < 2 || wType.getRank() != 2 ||
        !isFloatElement(hType.getElementType()) ||
        wType.getElementType() != hType.getElementType() ||
        hType.getShape().back() != wType.getDimSize(0))
      return rewriter.notifyMatchFailure(matmul, "not h @ [hidden, vocab]");
    if (!isLmHead(matmul.getResult(), wType.getDimSize(1)))
      return rewriter.notifyMatchFailure(matmul, "not the graph output");

    // The lm head [vocab, hidden]: a tied table when the data says so.
    Value lmHead;
    if (detectTied && getConstant(w))
      for (Value table : findEmbeddingTables(matmul->getParentOp()))
        if (isTransposeOf(w, table)) {
          lmHead = table;
          break;
        }
    if (!lmHead) {
      FailureOr<Value> weight = getTorchLayoutWeight(rewriter, w);
      if (failed(weight))
        return rewriter.notifyMatchFailure(matmul, "weight not a constant");
      lmHead = *weight;
    }

    // Float Casts of the logits (f32 logits of a bf16 model) and a Reshape
    // to [-1, vocab] (a token-major function's output) are absorbed.
    SmallVector<Operation *> chain{matmul};
    Type elementType = hType.getElementType();
    bool flattened = false;
    while (chain.back()->hasOneUse()) {
      Operation *user = *chain.back()->getUsers().begin();
      if (auto castOp = dyn_cast<onnx::CastOp>(user);
          castOp && isFloatTensor(castOp.getType())) {
        elementType = cast<RankedTensorType>(castOp.getType()).getElementType();
      } else if (isTokenFlattenReshape(user)) {
        flattened = true;
      } else {
        break;
      }
      chain.push_back(user);
    }
    Operation *root = chain.back();
    auto resultType = cast<RankedTensorType>(root->getResult(0).getType());
    Location loc = matmul.getLoc();
    Value flat = flattenTokens(rewriter, loc, h);
    auto flatType = cast<RankedTensorType>(flat.getType());
    auto logitsType = RankedTensorType::get(
        {flatType.getDimSize(0), wType.getDimSize(1)}, elementType);
    if (flattened && logitsType != resultType)
      return rewriter.notifyMatchFailure(matmul, "token count types differ");
    Value logits = transformer::LogitsOp::create(
        rewriter, loc, logitsType, flat, lmHead, /*bias=*/Value(),
        /*batch=*/Value(), /*softcap=*/FloatAttr());
    rewriter.replaceOp(root,
                       unflattenTokens(rewriter, loc, logits, h, resultType));
    for (Operation *op : llvm::reverse(ArrayRef(chain).drop_back()))
      rewriter.eraseOp(op);
    return success();
  }

private:
  bool detectTied;
};

/// `Mul(Tanh(Div(unflatten(logits), c)), c)`: the logits' softcap.
struct LogitsSoftcap : OpRewritePattern<onnx::MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::MulOp mul,
                                PatternRewriter &rewriter) const override {
    for (auto [t, c] : {std::pair{mul.getA(), mul.getB()},
                        std::pair{mul.getB(), mul.getA()}}) {
      auto tanh = t.getDefiningOp<onnx::TanhOp>();
      std::optional<double> cap = getScalarConstant(c);
      auto div = tanh ? tanh.getInput().getDefiningOp<onnx::DivOp>() : nullptr;
      if (!div || !cap || !(*cap > 0) ||
          !isScalarConstant(div.getB(), *cap) || !div->hasOneUse() ||
          !tanh->hasOneUse())
        continue;
      Value v = div.getA(), like;
      Value r = peelUnflatten(v, &like);
      auto logits = r ? r.getDefiningOp<transformer::LogitsOp>() : nullptr;
      if (!logits || logits.getSoftcap() || !logits->hasOneUse() ||
          !v.hasOneUse() || mul.getType() != v.getType())
        continue;
      rewriter.modifyOpInPlace(logits, [&] {
        logits.setSoftcapAttr(rewriter.getF64FloatAttr(*cap));
      });
      rewriter.replaceOp(mul, v);
      return success();
    }
    return rewriter.notifyMatchFailure(mul, "not a softcap of logits");
  }
};

struct RaiseLogitsPass : accel::impl::RaiseLogitsBase<RaiseLogitsPass> {
  using RaiseLogitsBase::RaiseLogitsBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaiseLogitsPatterns(patterns, detectTied);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void accel::populateRaiseLogitsPatterns(RewritePatternSet &patterns,
                                        bool detectTied) {
  patterns.add<LmHeadToLogits>(patterns.getContext(), detectTied);
  patterns.add<LogitsSoftcap>(patterns.getContext());
}
