//===- RaiseRmsNorm.cpp - RMS norms → transformer.rms_norm ----------------===//
//
// The decomposed RMS norm of torch exports (HF LlamaRMSNorm and its
// relatives: Qwen2, Mistral, Phi3, Gemma's `1 + w` variant), opset-23
// RMSNormalization, and onnxruntime's SimplifiedLayerNormalization and
// SkipSimplifiedLayerNormalization.
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
#define GEN_PASS_DEF_RAISERMSNORM
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::raise;

namespace {

/// What a norm subgraph reduces to.
struct RmsNorm {
  Value x;      // the input, in its own (batch-major) type
  Value weight; // 1-D, the size of x's last dim
  double epsilon = 0;
  std::optional<double> weightOffset;
};

/// True when `w` can be an rms_norm weight for `x`: a 1-D float tensor of
/// the size of x's last dim.
static bool isNormWeightFor(Value w, Value x) {
  auto wType = dyn_cast<RankedTensorType>(w.getType());
  auto xType = dyn_cast<RankedTensorType>(x.getType());
  if (!wType || !xType || wType.getRank() != 1 || xType.getRank() < 2 ||
      !isFloatElement(wType.getElementType()))
    return false;
  int64_t h = xType.getShape().back();
  return !ShapedType::isDynamic(h) && wType.getDimSize(0) == h;
}

/// Matches `n = x32 * rsqrt(mean(x32^2) + eps)` (or `x32 / sqrt(..)`),
/// either Mul order; sets x32 and eps.
static bool matchNormalized(Value n, Value &x32, double &eps) {
  auto fromRoot = [&](Value numerator, Value s) {
    Value meanInput, squared;
    if (!matchMeanPlusEps(s, meanInput, eps) ||
        !matchSquare(meanInput, squared) || squared != numerator)
      return false;
    // x - mean(x): a layer norm, which raise-layer-norm takes whole.
    if (auto sub = numerator.getDefiningOp<onnx::SubOp>())
      if (Operation *mean = sub.getB().getDefiningOp())
        if (isLastAxisMean(mean) &&
            cast<onnx::ReduceMeanOp>(mean).getData() == sub.getA())
          return false;
    x32 = numerator;
    return true;
  };
  if (auto mul = n.getDefiningOp<onnx::MulOp>()) {
    for (auto [a, b] : {std::pair{mul.getA(), mul.getB()},
                        std::pair{mul.getB(), mul.getA()}}) {
      Value s;
      if (matchRsqrt(b, s) && fromRoot(a, s))
        return true;
    }
    return false;
  }
  if (auto div = n.getDefiningOp<onnx::DivOp>()) {
    auto sqrt = div.getB().getDefiningOp<onnx::SqrtOp>();
    return sqrt && fromRoot(div.getA(), sqrt.getX());
  }
  return false;
}

/// Matches `Mul(weight, n)` (either order, `n` possibly cast back to the
/// input type) with `n` a normalised x; fills `norm`.
static bool matchWeightedNorm(onnx::MulOp mul, RmsNorm &norm) {
  for (auto [w, n] : {std::pair{mul.getA(), mul.getB()},
                      std::pair{mul.getB(), mul.getA()}}) {
    Value x32;
    double eps;
    if (!matchNormalized(stripFloatCast(n), x32, eps))
      continue;
    Value x = stripFloatCast(x32);
    // Gemma's `1 + w`, when the exporter left it unfolded.
    Value weight = w;
    std::optional<double> offset;
    if (auto add = w.getDefiningOp<onnx::AddOp>()) {
      for (auto [a, b] : {std::pair{add.getA(), add.getB()},
                          std::pair{add.getB(), add.getA()}})
        if (isScalarConstant(b, 1.0) && isNormWeightFor(stripFloatCast(a), x)) {
          weight = stripFloatCast(a);
          offset = 1.0;
          break;
        }
    }
    if (!offset)
      weight = stripFloatCast(weight);
    if (!isNormWeightFor(weight, x))
      continue;
    norm = RmsNorm{x, weight, eps, offset};
    return true;
  }
  return false;
}

/// True when `result` is x's type or refines it: the same element type and
/// rank, and every static dim of x static and equal in `result` (shape
/// inference may know more about the norm's result than about its input, e.g.
/// [1, ?, 4096] for [?, ?, 4096] in a torch 2.11 export; unflatten_tokens
/// gives the result type back).
static bool sameOrRefines(Type result, Type x) {
  if (result == x)
    return true;
  auto r = dyn_cast<RankedTensorType>(result);
  auto t = dyn_cast<RankedTensorType>(x);
  if (!r || !t || r.getElementType() != t.getElementType() || r.getRank() != t.getRank())
    return false;
  for (int64_t i = 0; i < t.getRank(); ++i)
    if (!t.isDynamicDim(i) && r.getDimSize(i) != t.getDimSize(i))
      return false;
  return true;
}

/// Replaces `root` (of x's type, or one that refines it) by
/// unflatten(rms_norm(flatten(x))).
static void replaceWithRmsNorm(PatternRewriter &rewriter, Operation *root,
                               const RmsNorm &norm) {
  Location loc = root->getLoc();
  Value flat = flattenTokens(rewriter, loc, norm.x);
  Value result = transformer::RmsNormOp::create(
      rewriter, loc, flat.getType(), flat, norm.weight,
      rewriter.getF64FloatAttr(norm.epsilon),
      norm.weightOffset ? rewriter.getF64FloatAttr(*norm.weightOffset)
                        : FloatAttr());
  rewriter.replaceOp(root, unflattenTokens(rewriter, loc, result, norm.x,
                                           root->getResult(0).getType()));
}

/// The decomposed norm, rooted at the weight Mul.
struct DecomposedRmsNorm : OpRewritePattern<onnx::MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::MulOp mul,
                                PatternRewriter &rewriter) const override {
    RmsNorm norm;
    if (!matchWeightedNorm(mul, norm))
      return rewriter.notifyMatchFailure(mul, "not a weighted RMS norm");
    if (!sameOrRefines(mul.getType(), norm.x.getType()))
      return rewriter.notifyMatchFailure(
          mul, "result type differs from the input's (cast after the weight?)");
    replaceWithRmsNorm(rewriter, mul, norm);
    return success();
  }
};

/// The decomposed norm computed in f32 and cast back after the weight Mul
/// (Gemma: `(norm(x.float()) * (1 + w.float())).type_as(x)`).
struct CastRmsNorm : OpRewritePattern<onnx::CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::CastOp cast,
                                PatternRewriter &rewriter) const override {
    auto mul = cast.getInput().getDefiningOp<onnx::MulOp>();
    RmsNorm norm;
    if (!mul || !matchWeightedNorm(mul, norm))
      return rewriter.notifyMatchFailure(cast, "not a cast RMS norm");
    if (!sameOrRefines(cast.getType(), norm.x.getType()))
      return rewriter.notifyMatchFailure(cast, "does not cast back to x's type");
    replaceWithRmsNorm(rewriter, cast, norm);
    return success();
  }
};

/// True when `axis` is the last axis of `x`.
static bool isLastAxis(int64_t axis, Value x) {
  auto type = dyn_cast<RankedTensorType>(x.getType());
  return type && normalizeAxis(axis, type.getRank()) == type.getRank() - 1;
}

/// opset-23 RMSNormalization over the last axis.
struct RmsNormalization : OpRewritePattern<onnx::RMSNormalizationOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::RMSNormalizationOp op,
                                PatternRewriter &rewriter) const override {
    double eps = op.getEpsilon().convertToDouble();
    if (!isLastAxis(op.getAxisAttr().getInt(), op.getX()) ||
        !isNormWeightFor(op.getScale(), op.getX()) || !(eps > 0) ||
        op.getType() != op.getX().getType() || !isFloatTensor(op.getType()))
      return rewriter.notifyMatchFailure(op, "not a last-axis norm of x's type");
    replaceWithRmsNorm(rewriter, op, RmsNorm{op.getX(), op.getScale(), eps, {}});
    return success();
  }
};

/// ms_SimplifiedLayerNormalization over the last axis.
struct SimplifiedLayerNorm
    : OpRewritePattern<onnx::MsSimplifiedLayerNormalizationOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::MsSimplifiedLayerNormalizationOp op,
                                PatternRewriter &rewriter) const override {
    double eps = op.getEpsilon().convertToDouble();
    if (!isLastAxis(op.getAxisAttr().getInt(), op.getX()) ||
        !isNormWeightFor(op.getScale(), op.getX()) || !(eps > 0) ||
        (op.getInvStdVar() && !op.getInvStdVar().use_empty()) ||
        op.getY().getType() != op.getX().getType() ||
        !isFloatTensor(op.getX().getType()))
      return rewriter.notifyMatchFailure(op, "not a last-axis norm of x's type");
    Location loc = op.getLoc();
    Value flat = flattenTokens(rewriter, loc, op.getX());
    Value result = transformer::RmsNormOp::create(
        rewriter, loc, flat.getType(), flat, op.getScale(),
        rewriter.getF64FloatAttr(eps), FloatAttr());
    rewriter.replaceAllUsesWith(
        op.getY(),
        unflattenTokens(rewriter, loc, result, op.getX(), op.getY().getType()));
    rewriter.eraseOp(op);
    return success();
  }
};

/// ms_SkipSimplifiedLayerNormalization without bias: the residual add and
/// the norm of the sum.
struct SkipSimplifiedLayerNorm
    : OpRewritePattern<onnx::MsSkipSimplifiedLayerNormalizationOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::MsSkipSimplifiedLayerNormalizationOp op,
                                PatternRewriter &rewriter) const override {
    const char *why = nullptr;
    std::optional<double> eps = checkSkipNorm(op, why);
    if (!eps)
      return rewriter.notifyMatchFailure(op, why);
    Value input = op.getInput();
    if (!isNormWeightFor(op.getGamma(), input))
      return rewriter.notifyMatchFailure(op, "gamma does not fit");
    rewriteSkipNorm(op, rewriter, [&](Value sum) -> Value {
      return transformer::RmsNormOp::create(rewriter, op.getLoc(), sum.getType(), sum,
                                            op.getGamma(), rewriter.getF64FloatAttr(*eps),
                                            FloatAttr());
    });
    return success();
  }
};

struct RaiseRmsNormPass : accel::impl::RaiseRmsNormBase<RaiseRmsNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaiseRmsNormPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void accel::populateRaiseRmsNormPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposedRmsNorm, CastRmsNorm, RmsNormalization,
               SimplifiedLayerNorm, SkipSimplifiedLayerNorm>(
      patterns.getContext());
}
