//===- RaiseLinear.cpp - MatMul / Gemm → transformer.linear ---------------===//
//
// Dense layers as the exporters write them: `MatMul(x, W)` with a constant
// `[in, out]` weight (the dynamo exporter's `aten.linear`), `Add` of a bias
// after it, and GPT-2's Conv1D as `Gemm` between two Reshapes (`[B, S, H]
// -> [-1, H]` and back).
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
#define GEN_PASS_DEF_RAISELINEAR
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::raise;

namespace {

/// Creates `transformer.linear %x, %weight (bias)` with a `[rows(x), out]`
/// result.
static Value createLinear(OpBuilder &b, Location loc, Value x, Value weight,
                          Value bias) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(weight.getType());
  auto type = RankedTensorType::get({xType.getDimSize(0), wType.getDimSize(0)},
                                    xType.getElementType());
  return transformer::LinearOp::create(
      b, loc, type, x, weight, bias, /*weight_scale=*/Value(),
      /*weight_zero_point=*/Value(), /*input_scale=*/Value(),
      /*granularity=*/transformer::QuantGranularityAttr(),
      /*group_size=*/IntegerAttr(), /*activation=*/transformer::ActivationKindAttr());
}

/// The in and out features of a `[in, out]` MatMul weight, if constant
/// (directly or as the Transpose of a constant).
static bool isConstantWeight(Value w) {
  if (auto transpose = w.getDefiningOp<onnx::TransposeOp>())
    w = transpose.getData();
  ElementsAttr attr = getConstant(w);
  auto type = attr ? dyn_cast<RankedTensorType>(attr.getType()) : nullptr;
  return type && type.getRank() == 2 && isFloatElement(type.getElementType());
}

/// `MatMul(x, W)` with a constant 2-D weight and x of rank 2 or more.
struct MatMulToLinear : OpRewritePattern<onnx::MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::MatMulOp matmul,
                                PatternRewriter &rewriter) const override {
    Value x = matmul.getA(), w = matmul.getB();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    auto wType = dyn_cast<RankedTensorType>(w.getType());
    auto yType = dyn_cast<RankedTensorType>(matmul.getType());
    if (!xType || !wType || !yType || xType.getRank() < 2 ||
        wType.getRank() != 2 || !isFloatElement(xType.getElementType()) ||
        wType.getElementType() != xType.getElementType() ||
        xType.getShape().back() != wType.getDimSize(0) ||
        !isConstantWeight(w))
      return rewriter.notifyMatchFailure(matmul, "not x @ constant [in, out]");
    if (isLmHead(matmul.getResult(), wType.getDimSize(1)))
      return rewriter.notifyMatchFailure(matmul, "the lm head: raise-logits");
    FailureOr<Value> weight = getTorchLayoutWeight(rewriter, w);
    if (failed(weight))
      return rewriter.notifyMatchFailure(matmul, "weight not readable");
    Location loc = matmul.getLoc();
    Value flat = flattenTokens(rewriter, loc, x);
    Value linear = createLinear(rewriter, loc, flat, *weight, Value());
    rewriter.replaceOp(matmul, unflattenTokens(rewriter, loc, linear, x, yType));
    return success();
  }
};

/// `Gemm(A, B, C)` with alpha = beta = 1, no transA, a constant B and an
/// optional 1-D bias C.
struct GemmToLinear : OpRewritePattern<onnx::GemmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::GemmOp gemm,
                                PatternRewriter &rewriter) const override {
    auto aType = dyn_cast<RankedTensorType>(gemm.getA().getType());
    auto bType = dyn_cast<RankedTensorType>(gemm.getB().getType());
    if (!aType || !bType || aType.getRank() != 2 || bType.getRank() != 2 ||
        !isFloatElement(aType.getElementType()) ||
        bType.getElementType() != aType.getElementType() ||
        gemm.getAlpha().convertToDouble() != 1.0 ||
        gemm.getBeta().convertToDouble() != 1.0 ||
        gemm.getTransAAttr().getInt() != 0 || gemm.getType() != [&] {
          bool transB = gemm.getTransBAttr().getInt() != 0;
          return RankedTensorType::get(
              {aType.getDimSize(0), bType.getDimSize(transB ? 0 : 1)},
              aType.getElementType());
        }())
      return rewriter.notifyMatchFailure(gemm, "not A @ B (+ C) on matrices");
    bool transB = gemm.getTransBAttr().getInt() != 0;
    int64_t out = bType.getDimSize(transB ? 0 : 1);
    Value bias = gemm.getC();
    if (bias) {
      auto cType = dyn_cast<RankedTensorType>(bias.getType());
      if (!cType || cType.getRank() != 1 || cType.getDimSize(0) != out ||
          cType.getElementType() != aType.getElementType())
        return rewriter.notifyMatchFailure(gemm, "C is not a 1-D bias");
    }
    FailureOr<Value> weight = transB ? getConstantMatrix(gemm.getB())
                                     : getTorchLayoutWeight(rewriter, gemm.getB());
    if (failed(weight))
      return rewriter.notifyMatchFailure(gemm, "B is not a constant matrix");
    rewriter.replaceOp(gemm, createLinear(rewriter, gemm.getLoc(), gemm.getA(),
                                          *weight, bias));
    return success();
  }
};

/// `Add(unflatten(linear(x, W)), b)` with b 1-D of out_features: the bias.
struct AbsorbLinearBias : OpRewritePattern<onnx::AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::AddOp add,
                                PatternRewriter &rewriter) const override {
    for (auto [v, b] : {std::pair{add.getA(), add.getB()},
                        std::pair{add.getB(), add.getA()}}) {
      Value r = peelUnflatten(v);
      auto linear = r ? r.getDefiningOp<transformer::LinearOp>() : nullptr;
      auto bType = dyn_cast<RankedTensorType>(b.getType());
      if (!linear || linear.getBias() || linear.hasQuantizedWeight() ||
          !linear->hasOneUse() || !v.hasOneUse() ||
          add.getType() != v.getType() || !bType || bType.getRank() != 1 ||
          bType.getDimSize(0) != linear.getOutFeatures() ||
          bType.getElementType() != linear.getType().getElementType())
        continue;
      rewriter.modifyOpInPlace(linear,
                               [&] { linear.getBiasMutable().assign(b); });
      rewriter.replaceOp(add, v);
      return success();
    }
    return rewriter.notifyMatchFailure(add, "not a bias after a linear");
  }
};

/// `Reshape(x, [-1, K])` of x `[.., K]` (rank 3 or more) feeding only
/// projections: flatten_tokens.
struct FlattenReshape : OpRewritePattern<onnx::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    Value x = reshape.getData();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    std::optional<SmallVector<ShapePiece>> pieces =
        getShapePieces(reshape.getShape());
    if (!xType || xType.getRank() < 3 || xType.isDynamicDim(xType.getRank() - 1) ||
        !pieces || pieces->size() != 2 || (*pieces)[0].constant != -1 ||
        (*pieces)[1].constant != xType.getShape().back())
      return rewriter.notifyMatchFailure(reshape, "not [.., K] -> [-1, K]");
    if (!llvm::all_of(reshape->getUsers(), [](Operation *user) {
          return isa<onnx::GemmOp, onnx::MatMulOp, transformer::LinearOp>(user);
        }))
      return rewriter.notifyMatchFailure(reshape, "feeds more than projections");
    Value flat = flattenTokens(rewriter, reshape.getLoc(), x);
    if (flat.getType() != reshape.getType())
      return rewriter.notifyMatchFailure(reshape, "result type differs");
    rewriter.replaceOp(reshape, flat);
    return success();
  }
};

/// `Reshape(r, [d0, .., dn, N])` of a token-major `[T, N]` value flattened
/// from x, whose d_i provably are x's leading dims: unflatten_tokens.
struct UnflattenReshape : OpRewritePattern<onnx::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    Value r = reshape.getData();
    auto rType = dyn_cast<RankedTensorType>(r.getType());
    Value x = rType && rType.getRank() == 2 ? getTokenOrigin(r) : Value();
    auto yType = dyn_cast<RankedTensorType>(reshape.getType());
    std::optional<SmallVector<ShapePiece>> pieces =
        getShapePieces(reshape.getShape());
    if (!x || !yType || !pieces)
      return rewriter.notifyMatchFailure(reshape, "not a token-major input");
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    if (yType.getRank() != rank || static_cast<int64_t>(pieces->size()) != rank)
      return rewriter.notifyMatchFailure(reshape, "rank differs from origin's");
    bool allowZero = reshape.getAllowzeroAttr().getInt() != 0;
    for (int64_t i = 0; i + 1 < rank; ++i) {
      const ShapePiece &piece = (*pieces)[i];
      std::optional<DimSource> source = piece.source;
      if (!source && piece.constant && *piece.constant > 0)
        source = DimSource{*piece.constant, Value(), -1};
      if (!sameDim(source, traceDim(x, i)))
        return rewriter.notifyMatchFailure(reshape, "dims not x's leading dims");
    }
    const ShapePiece &last = pieces->back();
    int64_t n = rType.getDimSize(1);
    bool lastOk = (last.constant && (*last.constant == n ||
                                     (*last.constant == -1 && rank > 1))) ||
                  (last.source && last.source->isStatic() &&
                   last.source->size == n);
    if (!lastOk || (last.constant && *last.constant == 0 && !allowZero))
      return rewriter.notifyMatchFailure(reshape, "last dim is not N");
    rewriter.replaceOpWithNewOp<transformer::UnflattenTokensOp>(reshape, yType,
                                                                r, x);
    return success();
  }
};

/// A Reshape whose target provably is its input's shape.
struct IdentityReshape : OpRewritePattern<onnx::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    Value x = reshape.getData();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    if (!xType || xType != reshape.getType())
      return rewriter.notifyMatchFailure(reshape, "types differ");
    for (int64_t i = 0; i < xType.getRank(); ++i)
      if (!sameDim(traceDim(reshape.getResult(), i), traceDim(x, i)))
        return rewriter.notifyMatchFailure(reshape, "a dim may change");
    rewriter.replaceOp(reshape, x);
    return success();
  }
};

/// `flatten_tokens(Reshape(y, *))` of y's type is y: a Reshape keeps the
/// row-major order, and both sides merge all token dims (ids form) or all
/// but the same last dim (features form).
struct FlattenOfReshape : OpRewritePattern<transformer::FlattenTokensOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(transformer::FlattenTokensOp flatten,
                                PatternRewriter &rewriter) const override {
    auto reshape = flatten.getInput().getDefiningOp<onnx::ReshapeOp>();
    if (!reshape || reshape.getData().getType() != flatten.getType())
      return rewriter.notifyMatchFailure(flatten, "not of a reshaped value");
    rewriter.replaceOp(flatten, reshape.getData());
    return success();
  }
};

/// `Reshape(unflatten_tokens(r like x), [-1, N])` of r's type is r.
struct TokenReshapeOfUnflatten : OpRewritePattern<onnx::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    auto unflatten =
        reshape.getData().getDefiningOp<transformer::UnflattenTokensOp>();
    if (!unflatten || !isTokenFlattenReshape(reshape) ||
        unflatten.getInput().getType() != reshape.getType())
      return rewriter.notifyMatchFailure(reshape, "not a view of [T, N]");
    rewriter.replaceOp(reshape, unflatten.getInput());
    return success();
  }
};

struct RaiseLinearPass : accel::impl::RaiseLinearBase<RaiseLinearPass> {
  using RaiseLinearBase::RaiseLinearBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaiseLinearPatterns(patterns, absorbBias);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void accel::populateRaiseLinearPatterns(RewritePatternSet &patterns,
                                        bool absorbBias) {
  patterns.add<MatMulToLinear, GemmToLinear, FlattenReshape, UnflattenReshape,
               IdentityReshape, FlattenOfReshape, TokenReshapeOfUnflatten>(
      patterns.getContext());
  if (absorbBias)
    patterns.add<AbsorbLinearBias>(patterns.getContext());
}
