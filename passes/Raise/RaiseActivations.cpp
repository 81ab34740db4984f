//===- RaiseActivations.cpp - activation formulas → transformer.activation ===//
//
// SiLU (`x * sigmoid(x)`), quick GELU, the tanh and erf GELU formulas in
// whatever association the exporter wrote (GPT-2's `gelu_new` spells it out
// in Python; torch's tanh GELU is decomposed by the dynamo exporter in
// another order), onnx.Gelu and ReLU.
//
// The GELU matchers do not follow op shapes: they read the root Mul as a
// product of factors and the Tanh / Erf argument as a polynomial in x, so
// `0.5 * x * (1 + tanh(c * (x + k * x^3)))`, `x * (0.5 * (1 + tanh(c*x +
// c*k*x^3)))` and the like all match.
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

#include <array>
#include <cmath>

namespace accel {
#define GEN_PASS_DEF_RAISEACTIVATIONS
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::raise;
using transformer::ActivationKind;

namespace {

/// A polynomial in one value x of degree at most 4.
struct Poly {
  std::array<double, 5> c{};
};

/// `v` as a polynomial in `x`, through Add, Sub, Neg, Mul, Div by a
/// constant and Pow with a small integer exponent; nullopt otherwise.
static std::optional<Poly> asPoly(Value v, Value x, int depth = 0) {
  if (depth > 12)
    return std::nullopt;
  Poly p;
  if (v == x) {
    p.c[1] = 1;
    return p;
  }
  if (std::optional<double> k = getScalarConstant(v)) {
    p.c[0] = *k;
    return p;
  }
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt;
  auto binary = [&](Value a, Value b)
      -> std::optional<std::pair<Poly, Poly>> {
    std::optional<Poly> pa = asPoly(a, x, depth + 1);
    std::optional<Poly> pb = pa ? asPoly(b, x, depth + 1) : std::nullopt;
    if (!pb)
      return std::nullopt;
    return std::pair{*pa, *pb};
  };
  if (auto add = dyn_cast<onnx::AddOp>(op)) {
    auto ab = binary(add.getA(), add.getB());
    if (!ab)
      return std::nullopt;
    for (int i = 0; i < 5; ++i)
      p.c[i] = ab->first.c[i] + ab->second.c[i];
    return p;
  }
  if (auto sub = dyn_cast<onnx::SubOp>(op)) {
    auto ab = binary(sub.getA(), sub.getB());
    if (!ab)
      return std::nullopt;
    for (int i = 0; i < 5; ++i)
      p.c[i] = ab->first.c[i] - ab->second.c[i];
    return p;
  }
  if (auto neg = dyn_cast<onnx::NegOp>(op)) {
    std::optional<Poly> a = asPoly(neg.getX(), x, depth + 1);
    if (!a)
      return std::nullopt;
    for (int i = 0; i < 5; ++i)
      p.c[i] = -a->c[i];
    return p;
  }
  if (auto mul = dyn_cast<onnx::MulOp>(op)) {
    auto ab = binary(mul.getA(), mul.getB());
    if (!ab)
      return std::nullopt;
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 5; ++j) {
        double term = ab->first.c[i] * ab->second.c[j];
        if (term == 0)
          continue;
        if (i + j > 4)
          return std::nullopt;
        p.c[i + j] += term;
      }
    return p;
  }
  if (auto div = dyn_cast<onnx::DivOp>(op)) {
    std::optional<double> k = getScalarConstant(div.getB());
    std::optional<Poly> a =
        k && *k != 0 ? asPoly(div.getA(), x, depth + 1) : std::nullopt;
    if (!a)
      return std::nullopt;
    for (int i = 0; i < 5; ++i)
      p.c[i] = a->c[i] / *k;
    return p;
  }
  if (auto pow = dyn_cast<onnx::PowOp>(op)) {
    std::optional<double> k = getScalarConstant(pow.getY());
    if (!k || *k < 1 || *k > 4 || *k != std::floor(*k))
      return std::nullopt;
    std::optional<Poly> a = asPoly(pow.getX(), x, depth + 1);
    if (!a)
      return std::nullopt;
    Poly result;
    result.c[0] = 1;
    for (int n = 0; n < static_cast<int>(*k); ++n) {
      Poly next;
      for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 5; ++j) {
          double term = result.c[i] * a->c[j];
          if (term == 0)
            continue;
          if (i + j > 4)
            return std::nullopt;
          next.c[i + j] += term;
        }
      result = next;
    }
    return result;
  }
  return std::nullopt;
}

/// True when `p` is `expected` within the relative tolerance (coefficients
/// expected to be 0 must be exactly 0).
static bool polyEquals(const Poly &p, const Poly &expected, double tol) {
  for (int i = 0; i < 5; ++i) {
    if (expected.c[i] == 0 ? p.c[i] != 0
                           : !approxEqual(p.c[i], expected.c[i], tol))
      return false;
  }
  return true;
}

/// `v` without Mul-by-scalar-constant ops around it; their product is
/// multiplied into `scale`.
static Value peelScale(Value v, double &scale) {
  for (int depth = 0; depth < 8; ++depth) {
    auto mul = v.getDefiningOp<onnx::MulOp>();
    if (!mul)
      return v;
    if (std::optional<double> k = getScalarConstant(mul.getB())) {
      scale *= *k;
      v = mul.getA();
    } else if (std::optional<double> k = getScalarConstant(mul.getA())) {
      scale *= *k;
      v = mul.getB();
    } else {
      return v;
    }
  }
  return v;
}

/// Replaces `root` by unflatten(activation(flatten(x))) like x.
static void replaceWithActivation(PatternRewriter &rewriter, Operation *root,
                                  Value x, ActivationKind kind) {
  Location loc = root->getLoc();
  auto type = cast<RankedTensorType>(x.getType());
  Value input = type.getRank() >= 2 ? flattenTokens(rewriter, loc, x) : x;
  Value act = transformer::ActivationOp::create(
      rewriter, loc, input.getType(), input,
      transformer::ActivationKindAttr::get(rewriter.getContext(), kind));
  rewriter.replaceOp(root, unflattenTokens(rewriter, loc, act, x, type));
}

/// The common checks of an activation root: x is a float tensor of the
/// root's type.
static bool isActivationOf(Operation *root, Value x) {
  return isFloatTensor(x.getType()) && root->getResult(0).getType() == x.getType();
}

/// `x * Sigmoid(k * x)`: silu (k = 1) or quick_gelu (k = 1.702).
struct SigmoidGated : OpRewritePattern<onnx::MulOp> {
  SigmoidGated(MLIRContext *context, double tol)
      : OpRewritePattern(context), tol(tol) {}
  LogicalResult matchAndRewrite(onnx::MulOp mul,
                                PatternRewriter &rewriter) const override {
    for (auto [x, s] : {std::pair{mul.getA(), mul.getB()},
                        std::pair{mul.getB(), mul.getA()}}) {
      auto sigmoid = s.getDefiningOp<onnx::SigmoidOp>();
      if (!sigmoid || !isActivationOf(mul, x))
        continue;
      std::optional<Poly> arg = asPoly(sigmoid.getX(), x);
      if (!arg)
        continue;
      Poly silu, quick;
      silu.c[1] = 1;
      quick.c[1] = 1.702;
      if (polyEquals(*arg, silu, tol)) {
        replaceWithActivation(rewriter, mul, x, ActivationKind::Silu);
        return success();
      }
      if (polyEquals(*arg, quick, tol)) {
        replaceWithActivation(rewriter, mul, x, ActivationKind::QuickGelu);
        return success();
      }
    }
    return rewriter.notifyMatchFailure(mul, "not x * sigmoid(k x)");
  }
  double tol;
};

/// `0.5 * x * (1 + Tanh(sqrt(2/pi) (x + 0.044715 x^3)))` (gelu_tanh) and
/// `0.5 * x * (1 + Erf(x / sqrt(2)))` (gelu), rooted at the outer Mul.
struct GeluFormula : OpRewritePattern<onnx::MulOp> {
  GeluFormula(MLIRContext *context, double tol)
      : OpRewritePattern(context), tol(tol) {}
  LogicalResult matchAndRewrite(onnx::MulOp mul,
                                PatternRewriter &rewriter) const override {
    // root = k0 * (k1 * x) * (k2 * g), the constants in any place.
    double scale = 1;
    auto product = peelScale(mul.getResult(), scale).getDefiningOp<onnx::MulOp>();
    if (!product)
      return rewriter.notifyMatchFailure(mul, "not a product");
    for (auto [xScaled, gScaled] :
         {std::pair{product.getA(), product.getB()},
          std::pair{product.getB(), product.getA()}}) {
      double total = scale;
      Value x = peelScale(xScaled, total);
      Value g = peelScale(gScaled, total);
      if (!approxEqual(total, 0.5, tol) || !isActivationOf(mul, x))
        continue;
      // g = 1 + f(u), either order.
      auto add = g.getDefiningOp<onnx::AddOp>();
      if (!add)
        continue;
      Value f = isScalarConstant(add.getA(), 1.0) ? add.getB()
                : isScalarConstant(add.getB(), 1.0) ? add.getA()
                                                    : Value();
      if (!f)
        continue;
      if (auto tanh = f.getDefiningOp<onnx::TanhOp>()) {
        std::optional<Poly> u = asPoly(tanh.getInput(), x);
        Poly expected;
        double c = std::sqrt(2.0 / M_PI);
        expected.c[1] = c;
        expected.c[3] = c * 0.044715;
        if (u && polyEquals(*u, expected, tol)) {
          replaceWithActivation(rewriter, mul, x, ActivationKind::GeluTanh);
          return success();
        }
      }
      if (auto erf = f.getDefiningOp<onnx::ErfOp>()) {
        std::optional<Poly> u = asPoly(erf.getInput(), x);
        Poly expected;
        expected.c[1] = 1.0 / std::sqrt(2.0);
        if (u && polyEquals(*u, expected, tol)) {
          replaceWithActivation(rewriter, mul, x, ActivationKind::Gelu);
          return success();
        }
      }
    }
    return rewriter.notifyMatchFailure(mul, "not a GELU formula");
  }
  double tol;
};

/// onnx.Gelu, approximate = "none" or "tanh".
struct OnnxGelu : OpRewritePattern<onnx::GeluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::GeluOp gelu,
                                PatternRewriter &rewriter) const override {
    if (!isActivationOf(gelu, gelu.getX()))
      return rewriter.notifyMatchFailure(gelu, "not a float activation");
    StringRef approximate = gelu.getApproximate();
    if (approximate != "none" && approximate != "tanh")
      return rewriter.notifyMatchFailure(gelu, "unknown approximation");
    replaceWithActivation(rewriter, gelu, gelu.getX(),
                          approximate == "tanh" ? ActivationKind::GeluTanh
                                                : ActivationKind::Gelu);
    return success();
  }
};

/// `Relu(x)^2` as `Pow(Relu(x), 2)` or `Mul(r, r)`: relu_squared.
struct ReluSquared : OpRewritePattern<onnx::ReluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::ReluOp relu,
                                PatternRewriter &rewriter) const override {
    if (!relu->hasOneUse() || !isActivationOf(relu, relu.getX()))
      return rewriter.notifyMatchFailure(relu, "not a single-use float relu");
    Operation *user = *relu->getUsers().begin();
    Value squared;
    if (user->getNumResults() != 1 ||
        !matchSquare(user->getResult(0), squared) || squared != relu.getY() ||
        user->getResult(0).getType() != relu.getType())
      return rewriter.notifyMatchFailure(relu, "not squared");
    replaceWithActivation(rewriter, user, relu.getX(),
                          ActivationKind::ReluSquared);
    rewriter.eraseOp(relu);
    return success();
  }
};

/// A Relu that is not squared.
struct PlainRelu : OpRewritePattern<onnx::ReluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::ReluOp relu,
                                PatternRewriter &rewriter) const override {
    if (!isActivationOf(relu, relu.getX()))
      return rewriter.notifyMatchFailure(relu, "not a float relu");
    for (Operation *user : relu->getUsers()) {
      Value squared;
      if (user->getNumResults() == 1 &&
          matchSquare(user->getResult(0), squared) && squared == relu.getY())
        return rewriter.notifyMatchFailure(relu, "squared: relu_squared");
    }
    replaceWithActivation(rewriter, relu, relu.getX(), ActivationKind::Relu);
    return success();
  }
};

struct RaiseActivationsPass
    : accel::impl::RaiseActivationsBase<RaiseActivationsPass> {
  using RaiseActivationsBase::RaiseActivationsBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaiseActivationsPatterns(patterns, tolerance);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void accel::populateRaiseActivationsPatterns(RewritePatternSet &patterns,
                                             double tolerance) {
  MLIRContext *context = patterns.getContext();
  patterns.add<SigmoidGated, GeluFormula>(context, tolerance);
  patterns.add<OnnxGelu, PlainRelu>(context);
  patterns.add<ReluSquared>(context, /*benefit=*/2);
}
