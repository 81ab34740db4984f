//===- RaiseMlp.cpp - gated MLPs → transformer.gated_mlp ------------------===//
//
// The gated feed-forward block of Llama, Qwen2, Mistral, Gemma (separate
// gate and up projections) and Phi3 (one gate_up projection split in
// halves), recognised on raised transformer.linear / activation ops: the
// elementwise product between them stays an onnx.Mul on batch-major values
// (there is no token-major Mul), which this pattern looks through.
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
#define GEN_PASS_DEF_RAISEMLP
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::raise;

namespace {

/// A float linear without bias or quantisation: a projection gated_mlp can
/// hold.
static transformer::LinearOp getPlainLinear(Value v) {
  auto linear = v ? v.getDefiningOp<transformer::LinearOp>() : nullptr;
  if (!linear || linear.getBias() || linear.hasQuantizedWeight() ||
      linear.getType() != RankedTensorType::get(
                              linear.getType().getShape(),
                              linear.getX().getType().getElementType()))
    return {};
  return linear;
}

/// True when `a` and `b` are the same token-major value: equal, or
/// flatten_tokens of one batch-major value.
static bool sameTokens(Value a, Value b) {
  if (a == b)
    return true;
  auto fa = a.getDefiningOp<transformer::FlattenTokensOp>();
  auto fb = b.getDefiningOp<transformer::FlattenTokensOp>();
  return fa && fb && fa.getInput() == fb.getInput() &&
         fa.getType() == fb.getType();
}

/// The sizes of a Split's results, if known.
static std::optional<SmallVector<int64_t>> splitSizes(onnx::SplitOp split,
                                                      int64_t total) {
  SmallVector<int64_t> sizes;
  if (std::optional<ArrayRef<int64_t>> attr = split.getSplit()) {
    sizes.assign(attr->begin(), attr->end());
  } else if (Value input = split.getSplitInput()) {
    auto c = dyn_cast_or_null<DenseIntElementsAttr>(getConstant(input));
    if (!c)
      return std::nullopt;
    for (const APInt &s : c.getValues<APInt>())
      sizes.push_back(s.getSExtValue());
  } else {
    int64_t n = split->getNumResults();
    if (total % n != 0)
      return std::nullopt;
    sizes.assign(n, total / n); // num_outputs: equal parts
  }
  return sizes;
}

/// The tensor `P` (last dim 2I, static) of which `v` is half `index` along
/// the last axis: [0, I) for 0, [I, 2I) for 1, taken by an onnx.Split in two
/// equal results or by an onnx.Slice with unit steps. Null otherwise.
static Value halfOf(Value v, unsigned index) {
  auto lastDim = [](Value p) -> std::optional<int64_t> {
    auto type = dyn_cast<RankedTensorType>(p.getType());
    if (!type || type.getRank() < 1 || type.isDynamicDim(type.getRank() - 1) ||
        type.getShape().back() % 2 != 0)
      return std::nullopt;
    return type.getShape().back();
  };
  auto isLastAxis = [](int64_t axis, Value p) {
    int64_t rank = cast<RankedTensorType>(p.getType()).getRank();
    return normalizeAxis(axis, rank) == rank - 1;
  };
  if (auto result = dyn_cast<OpResult>(v)) {
    if (auto split = dyn_cast<onnx::SplitOp>(result.getOwner())) {
      Value p = split.getInput();
      std::optional<int64_t> total = lastDim(p);
      if (!total || split->getNumResults() != 2 ||
          result.getResultNumber() != index ||
          !isLastAxis(split.getAxisAttr().getInt(), p))
        return {};
      std::optional<SmallVector<int64_t>> sizes = splitSizes(split, *total);
      if (!sizes || sizes->size() != 2 || (*sizes)[0] != *total / 2 ||
          (*sizes)[1] != *total / 2)
        return {};
      return p;
    }
  }
  auto slice = v.getDefiningOp<onnx::SliceOp>();
  if (!slice)
    return {};
  Value p = slice.getData();
  std::optional<int64_t> total = lastDim(p);
  auto scalar = [](Value c) -> std::optional<int64_t> {
    auto attr = dyn_cast_or_null<DenseIntElementsAttr>(getConstant(c));
    if (!attr || attr.getNumElements() != 1)
      return std::nullopt;
    return (*attr.getValues<APInt>().begin()).getSExtValue();
  };
  std::optional<int64_t> start = scalar(slice.getStarts());
  std::optional<int64_t> end = scalar(slice.getEnds());
  std::optional<int64_t> axis =
      slice.getAxes() ? scalar(slice.getAxes()) : std::optional<int64_t>(0);
  std::optional<int64_t> step =
      slice.getSteps() ? scalar(slice.getSteps()) : std::optional<int64_t>(1);
  if (!total || !start || !end || !axis || step != 1 ||
      !isLastAxis(*axis, p))
    return {};
  auto clamp = [&](int64_t i) {
    if (i < 0)
      i += *total;
    return std::clamp<int64_t>(i, 0, *total);
  };
  int64_t half = *total / 2;
  int64_t from = clamp(*start), to = clamp(*end);
  bool ok = index == 0 ? (from == 0 && to == half) : (from == half && to == *total);
  return ok ? p : Value();
}

/// The token-major value behind `v`: `r` for `v = unflatten_tokens(r like
/// L)` when `like` is unset (then set to L) or is L; `v` itself when it is
/// token-major already.
static Value tokenMajor(Value v, Value &like) {
  if (auto unflatten = v.getDefiningOp<transformer::UnflattenTokensOp>()) {
    Value vLike;
    Value r = peelUnflatten(v, &vLike);
    if (!r)
      return {};
    if (!like)
      like = vLike;
    return like == vLike ? r : Value();
  }
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() == 2 ? v : Value();
}

/// Points the unflatten_tokens views of `down`'s result that are like the
/// product (which the gated_mlp makes dead) at `like`, a batch-major value
/// with the same token dimensions that stays alive.
static void relikeUnflattens(PatternRewriter &rewriter,
                             transformer::LinearOp down, Value product,
                             Value like) {
  if (!like)
    return;
  for (Operation *user : llvm::make_early_inc_range(down->getUsers()))
    if (auto unflatten = dyn_cast<transformer::UnflattenTokensOp>(user))
      if (unflatten.getLike() == product)
        rewriter.modifyOpInPlace(
            unflatten, [&] { unflatten.getLikeMutable().assign(like); });
}

/// `linear_down(act(gate) * up)`, rooted at the down projection.
struct GatedMlp : OpRewritePattern<transformer::LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(transformer::LinearOp down,
                                PatternRewriter &rewriter) const override {
    if (!getPlainLinear(down.getResult()))
      return rewriter.notifyMatchFailure(down, "down is not a plain linear");
    // The product, batch-major (flattened into down) or already [T, I].
    Value product = down.getX();
    if (auto flatten = product.getDefiningOp<transformer::FlattenTokensOp>())
      product = flatten.getInput();
    auto mul = product.getDefiningOp<onnx::MulOp>();
    if (!mul || mul.getA().getType() != mul.getType() ||
        mul.getB().getType() != mul.getType())
      return rewriter.notifyMatchFailure(down, "x is not act(gate) * up");

    for (auto [actSide, upSide] : {std::pair{mul.getA(), mul.getB()},
                                   std::pair{mul.getB(), mul.getA()}}) {
      Value like;
      Value actValue = tokenMajor(actSide, like);
      auto act = actValue ? actValue.getDefiningOp<transformer::ActivationOp>()
                          : nullptr;
      if (!act)
        continue;
      transformer::ActivationKind kind = act.getKind();

      // Separate projections: act(linear_gate(x)) * linear_up(x).
      transformer::LinearOp gate = getPlainLinear(act.getInput());
      transformer::LinearOp up = getPlainLinear(tokenMajor(upSide, like));
      if (gate && up && sameTokens(gate.getX(), up.getX()) &&
          gate.getWeight().getType() == up.getWeight().getType()) {
        Value x = gate.getX();
        if (x.getType() != down.getType())
          continue;
        relikeUnflattens(rewriter, down, product, like);
        rewriter.replaceOpWithNewOp<transformer::GatedMlpOp>(
            down, x.getType(), x, /*gate_up=*/Value(), gate.getWeight(),
            up.getWeight(), down.getWeight(), kind);
        return success();
      }

      // Fused: unflatten(linear_gate_up(x)) split in halves (Split or two
      // Slices), the activation on the first (gate rows first, as
      // gated_mlp's gate_up wants).
      Value gateHalf = act.getInput();
      if (auto flatten = gateHalf.getDefiningOp<transformer::FlattenTokensOp>())
        gateHalf = flatten.getInput();
      Value fused = halfOf(gateHalf, 0);
      if (!fused || halfOf(upSide, 1) != fused)
        continue;
      // The halves have the fused value's token dims, as the activation's
      // unflatten (like the gate half) does: the product is row-aligned.
      Value fusedLike;
      transformer::LinearOp gateUp =
          getPlainLinear(peelUnflatten(fused, &fusedLike));
      if (!gateUp || gateUp.getX().getType() != down.getType())
        continue;
      relikeUnflattens(rewriter, down, product,
                       fusedLike != fused ? fusedLike : Value());
      rewriter.replaceOpWithNewOp<transformer::GatedMlpOp>(
          down, down.getType(), gateUp.getX(), gateUp.getWeight(),
          /*gate=*/Value(), /*up=*/Value(), down.getWeight(), kind);
      return success();
    }
    return rewriter.notifyMatchFailure(down, "not a gated MLP");
  }
};

struct RaiseMlpPass : accel::impl::RaiseMlpBase<RaiseMlpPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaiseMlpPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void accel::populateRaiseMlpPatterns(RewritePatternSet &patterns) {
  patterns.add<GatedMlp>(patterns.getContext());
}
