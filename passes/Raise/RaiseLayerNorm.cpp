//===- RaiseLayerNorm.cpp - layer norms → transformer.layer_norm ----------===//
//
// LayerNormalization (GPT-2's dynamo export), its decomposition (older
// exporters and opset < 17), and onnxruntime's SkipLayerNormalization.
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
#define GEN_PASS_DEF_RAISELAYERNORM
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::raise;

namespace {

/// True when `p` can be a layer_norm weight or bias for `x`: a 1-D float
/// tensor of the size of x's (static) last dim.
static bool isNormParameterFor(Value p, Value x) {
  auto pType = dyn_cast<RankedTensorType>(p.getType());
  auto xType = dyn_cast<RankedTensorType>(x.getType());
  if (!pType || !xType || pType.getRank() != 1 || xType.getRank() < 2 ||
      !isFloatElement(pType.getElementType()))
    return false;
  int64_t h = xType.getShape().back();
  return !ShapedType::isDynamic(h) && pType.getDimSize(0) == h;
}

/// True when `axis` is the last axis of `x`.
static bool isLastAxis(int64_t axis, Value x) {
  auto type = dyn_cast<RankedTensorType>(x.getType());
  return type && normalizeAxis(axis, type.getRank()) == type.getRank() - 1;
}

/// Replaces `root` by unflatten(layer_norm(flatten(x), w, b)) like x.
static void replaceWithLayerNorm(PatternRewriter &rewriter, Operation *root,
                                 Value rootResult, Value x, Value weight,
                                 Value bias, double eps) {
  Location loc = root->getLoc();
  Value flat = flattenTokens(rewriter, loc, x);
  Value norm = transformer::LayerNormOp::create(
      rewriter, loc, flat.getType(), flat, weight, bias,
      rewriter.getF64FloatAttr(eps));
  rewriter.replaceAllUsesWith(
      rootResult, unflattenTokens(rewriter, loc, norm, x, rootResult.getType()));
  rewriter.eraseOp(root);
}

/// LayerNormalization over the last axis.
struct LayerNormalization : OpRewritePattern<onnx::LayerNormalizationOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::LayerNormalizationOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getX();
    double eps = op.getEpsilon().convertToDouble();
    if (!isLastAxis(op.getAxisAttr().getInt(), x) || !(eps > 0) ||
        !isFloatTensor(x.getType()) || op.getY().getType() != x.getType() ||
        !isNormParameterFor(op.getScale(), x) ||
        (op.getB() && !isNormParameterFor(op.getB(), x)))
      return rewriter.notifyMatchFailure(op, "not a last-axis norm of x's type");
    if ((op.getMean() && !op.getMean().use_empty()) ||
        (op.getInvStdDev() && !op.getInvStdDev().use_empty()))
      return rewriter.notifyMatchFailure(op, "Mean or InvStdDev is used");
    replaceWithLayerNorm(rewriter, op, op.getY(), x, op.getScale(), op.getB(),
                         eps);
    return success();
  }
};

/// Matches `n = (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps)` (or the
/// Mul-by-rsqrt spelling); sets x (possibly an f32 upcast) and eps.
static bool matchStandardised(Value n, Value &x, double &eps) {
  Value centred, s;
  if (auto div = n.getDefiningOp<onnx::DivOp>()) {
    auto sqrt = div.getB().getDefiningOp<onnx::SqrtOp>();
    if (!sqrt)
      return false;
    centred = div.getA();
    s = sqrt.getX();
  } else if (auto mul = n.getDefiningOp<onnx::MulOp>()) {
    bool found = false;
    for (auto [a, b] : {std::pair{mul.getA(), mul.getB()},
                        std::pair{mul.getB(), mul.getA()}})
      if (!found && matchRsqrt(b, s)) {
        centred = a;
        found = true;
      }
    if (!found)
      return false;
  } else {
    return false;
  }
  auto sub = centred.getDefiningOp<onnx::SubOp>();
  if (!sub || !isLastAxisMean(sub.getB().getDefiningOp()) ||
      cast<onnx::ReduceMeanOp>(sub.getB().getDefiningOp()).getData() !=
          sub.getA())
    return false;
  Value varianceInput, squared;
  if (!matchMeanPlusEps(s, varianceInput, eps) ||
      !matchSquare(varianceInput, squared) || squared != centred)
    return false;
  x = sub.getA();
  return true;
}

/// Matches `Mul(w, n)` (either order, n possibly cast back) with n
/// standardised; sets x (without the f32 upcast), weight and eps.
static bool matchScaled(Value v, Value &x, Value &weight, double &eps) {
  auto mul = v.getDefiningOp<onnx::MulOp>();
  if (!mul)
    return false;
  for (auto [w, n] : {std::pair{mul.getA(), mul.getB()},
                      std::pair{mul.getB(), mul.getA()}}) {
    Value x32;
    if (!matchStandardised(stripFloatCast(n), x32, eps))
      continue;
    x = stripFloatCast(x32);
    weight = stripFloatCast(w);
    if (isNormParameterFor(weight, x))
      return true;
  }
  return false;
}

/// The decomposed norm rooted at its weight Mul (no bias; a bias Add that
/// follows is absorbed by AbsorbLayerNormBias).
struct DecomposedLayerNorm : OpRewritePattern<onnx::MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::MulOp mul,
                                PatternRewriter &rewriter) const override {
    Value x, weight;
    double eps;
    if (!matchScaled(mul, x, weight, eps))
      return rewriter.notifyMatchFailure(mul, "not a scaled layer norm");
    if (mul.getType() != x.getType())
      return rewriter.notifyMatchFailure(mul, "result type differs from x's");
    replaceWithLayerNorm(rewriter, mul, mul.getResult(), x, weight, Value(),
                         eps);
    return success();
  }
};

/// The decomposed norm computed in f32 and cast back after the weight Mul
/// (and the bias Add).
struct CastLayerNorm : OpRewritePattern<onnx::CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::CastOp cast,
                                PatternRewriter &rewriter) const override {
    Value inner = cast.getInput(), bias;
    if (auto add = inner.getDefiningOp<onnx::AddOp>()) {
      for (auto [m, b] : {std::pair{add.getA(), add.getB()},
                          std::pair{add.getB(), add.getA()}})
        if (m.getDefiningOp<onnx::MulOp>()) {
          inner = m;
          bias = stripFloatCast(b);
          break;
        }
    }
    Value x, weight;
    double eps;
    if (!matchScaled(inner, x, weight, eps) || cast.getType() != x.getType() ||
        (bias && !isNormParameterFor(bias, x)))
      return rewriter.notifyMatchFailure(cast, "not a cast layer norm");
    replaceWithLayerNorm(rewriter, cast, cast.getResult(), x, weight, bias,
                         eps);
    return success();
  }
};

/// `Add(unflatten(layer_norm(x, w)), b)` with a 1-D b: the norm's bias.
struct AbsorbLayerNormBias : OpRewritePattern<onnx::AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::AddOp add,
                                PatternRewriter &rewriter) const override {
    for (auto [v, b] : {std::pair{add.getA(), add.getB()},
                        std::pair{add.getB(), add.getA()}}) {
      Value like;
      Value r = peelUnflatten(v, &like);
      auto norm = r ? r.getDefiningOp<transformer::LayerNormOp>() : nullptr;
      if (!norm || norm.getBias() || !norm->hasOneUse() || !v.hasOneUse() ||
          add.getType() != v.getType() || !isNormParameterFor(b, v))
        continue;
      rewriter.modifyOpInPlace(norm,
                               [&] { norm.getBiasMutable().assign(b); });
      rewriter.replaceOp(add, v);
      return success();
    }
    return rewriter.notifyMatchFailure(add, "not a bias after a layer_norm");
  }
};

/// ms_SkipLayerNormalization without bias: the residual add and the norm
/// of the sum.
struct SkipLayerNorm : OpRewritePattern<onnx::MsSkipLayerNormalizationOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::MsSkipLayerNormalizationOp op,
                                PatternRewriter &rewriter) const override {
    const char *why = nullptr;
    std::optional<double> eps = checkSkipNorm(op, why);
    if (!eps)
      return rewriter.notifyMatchFailure(op, why);
    Value input = op.getInput();
    if (!isNormParameterFor(op.getGamma(), input) ||
        (op.getBeta() && !isNormParameterFor(op.getBeta(), input)))
      return rewriter.notifyMatchFailure(op, "gamma or beta does not fit");
    rewriteSkipNorm(op, rewriter, [&](Value sum) -> Value {
      return transformer::LayerNormOp::create(rewriter, op.getLoc(), sum.getType(), sum,
                                              op.getGamma(), op.getBeta(),
                                              rewriter.getF64FloatAttr(*eps));
    });
    return success();
  }
};

struct RaiseLayerNormPass
    : accel::impl::RaiseLayerNormBase<RaiseLayerNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaiseLayerNormPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void accel::populateRaiseLayerNormPatterns(RewritePatternSet &patterns) {
  patterns.add<LayerNormalization, DecomposedLayerNorm, CastLayerNorm,
               AbsorbLayerNormBias, SkipLayerNorm>(patterns.getContext());
}
