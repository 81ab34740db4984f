//===- Linear.cpp - linear, logits, and the quantisation W8A8 folds in ----===//
//
// transformer.linear becomes exec.gemm (the library call; the runtime picks
// cuBLASLt or a GEMV by the step's rows). A W8A8 linear reads the f32 input
// of the transformer.quantize (static scale) or transformer.dynamic_quantize
// (per-token scales) that feeds it, and the gemm quantises it itself
// (`quantize_to`); such a quantize lowers to nothing. transformer.logits
// becomes exec.logits.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "accel/dialects/Transformer/TransformerOps.h"

using namespace mlir;
namespace ex = accel::exec;
namespace tf = accel::transformer;

namespace accel::conversion {

/// A transformer.quantize a W8A8 gemm does itself: f32 to i8 or f8E4M3FN,
/// per-tensor f32 scale, no zero point, read only by linears with that scale.
static bool foldedQuantize(tf::QuantizeOp q) {
  auto in = cast<ShapedType>(q.getInput().getType());
  auto out = cast<ShapedType>(q.getResult().getType());
  auto scale = cast<ShapedType>(q.getScale().getType());
  const Type qt = out.getElementType();
  if (!in.getElementType().isF32() || !(qt.isInteger(8) || isa<Float8E4M3FNType>(qt)) ||
      q.getZeroPoint() || scale.getRank() != 0 || !scale.getElementType().isF32())
    return false;
  return llvm::all_of(q.getResult().getUses(), [&](OpOperand &u) {
    auto l = dyn_cast<tf::LinearOp>(u.getOwner());
    return l && l.getX() == q.getResult() && l.getInputScale() == q.getScale();
  });
}

/// A transformer.dynamic_quantize whose results only W8A8 linears read.
static bool foldedDynamicQuantize(tf::DynamicQuantizeOp q) {
  auto in = cast<ShapedType>(q.getInput().getType());
  const Type qt = cast<ShapedType>(q.getResult().getType()).getElementType();
  if (!in.getElementType().isF32() || !(qt.isInteger(8) || isa<Float8E4M3FNType>(qt)) ||
      q.getScale().getType().getRank() != 1)
    return false;
  auto readByLinears = [&](Value v) {
    return llvm::all_of(v.getUses(), [&](OpOperand &u) {
      auto l = dyn_cast<tf::LinearOp>(u.getOwner());
      return l && l.getX() == q.getResult() && l.getInputScale() == q.getScale();
    });
  };
  return readByLinears(q.getResult()) && readByLinears(q.getScale());
}

static LogicalResult lowerQuantize(tf::QuantizeOp op, Lowering &) {
  if (foldedQuantize(op))
    return success();
  return op.emitError("a transformer.quantize is lowered only into the W8A8 linears it feeds "
                      "(f32 to i8 or f8E4M3FN, a per-tensor f32 scale, no zero point)");
}

static LogicalResult lowerDynamicQuantize(tf::DynamicQuantizeOp op, Lowering &) {
  if (foldedDynamicQuantize(op))
    return success();
  return op.emitError("a transformer.dynamic_quantize is lowered only into the W8A8 linears it "
                      "feeds (f32 to i8 or f8E4M3FN with per-token scales)");
}

static LogicalResult lowerLinear(tf::LinearOp op, Lowering &l) {
  OpBuilder &b = l.builder();
  Value x = op.getX(), inputScale;
  TypeAttr quantizeTo;
  bool dynamicInput = false;
  if (Value xs = op.getInputScale()) {
    quantizeTo = TypeAttr::get(cast<ShapedType>(x.getType()).getElementType());
    if (auto dq = x.getDefiningOp<tf::DynamicQuantizeOp>();
        dq && dq.getScale() == xs && foldedDynamicQuantize(dq)) {
      x = dq.getInput();
      dynamicInput = true;
    } else if (auto q = x.getDefiningOp<tf::QuantizeOp>();
               q && q.getScale() == xs && foldedQuantize(q)) {
      x = q.getInput();
      inputScale = xs;
    } else {
      return op.emitError("a linear with quantised activations is lowered only when its i8 or "
                          "f8E4M3FN x is a transformer.quantize (or dynamic_quantize) of an f32 "
                          "tensor by the linear's input_scale");
    }
  }
  FailureOr<Value> xv = l.view(x, op), w = l.view(op.getWeight(), op),
                   bias = l.optionalView(op.getBias(), op),
                   ws = l.optionalView(op.getWeightScale(), op),
                   zp = l.optionalView(op.getWeightZeroPoint(), op),
                   is = l.optionalView(inputScale, op);
  if (failed(xv) || failed(w) || failed(bias) || failed(ws) || failed(zp) || failed(is))
    return failure();
  FailureOr<Value> out = l.alloc(op.getResult());
  if (failed(out))
    return failure();
  auto step = ex::GemmOp::create(b, op.getLoc(), *xv, *w, *bias, *ws, *zp, *is, *out,
                                 op.getGranularityAttr(), IntegerAttr(), op.getActivationAttr(),
                                 quantizeTo, dynamicInput);
  if (std::optional<uint64_t> g = op.getGroupSize())
    step.setGroupSizeAttr(b.getI64IntegerAttr(int64_t(*g)));
  l.finish(step, op);
  return success();
}

static LogicalResult lowerLogits(tf::LogitsOp op, Lowering &l) {
  FailureOr<Value> h = l.view(op.getHidden(), op), lm = l.view(op.getLmHead(), op),
                   bias = l.optionalView(op.getBias(), op);
  if (failed(h) || failed(lm) || failed(bias))
    return failure();
  FailureOr<Value> out = l.alloc(op.getResult());
  if (failed(out))
    return failure();
  auto step = ex::LogitsOp::create(l.builder(), op.getLoc(), *h, *lm, *bias, *out, FloatAttr(),
                                   static_cast<bool>(op.getBatch()));
  if (std::optional<APFloat> c = op.getSoftcap())
    step.setSoftcapAttr(l.builder().getF64FloatAttr(c->convertToDouble()));
  l.finish(step, op);
  return success();
}

void populateLinearLowerings(LoweringPatterns &patterns) {
  patterns.add<tf::LinearOp>(lowerLinear);
  patterns.add<tf::LogitsOp>(lowerLogits);
  patterns.add<tf::QuantizeOp>(lowerQuantize);
  patterns.add<tf::DynamicQuantizeOp>(lowerDynamicQuantize);
}

} // namespace accel::conversion
