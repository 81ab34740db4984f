//===- Norms.cpp - rms_norm, add_rms_norm, layer_norm ---------------------===//
#include "Lowering.h"

#include "accel/dialects/Transformer/TransformerOps.h"

using namespace mlir;
namespace ex = accel::exec;
namespace tf = accel::transformer;

namespace accel::conversion {

static FloatAttr f64(Lowering &l, const APFloat &v) {
  return l.builder().getF64FloatAttr(v.convertToDouble());
}

static LogicalResult lowerRmsNorm(tf::RmsNormOp op, Lowering &l) {
  FailureOr<Value> x = l.view(op.getX(), op), w = l.view(op.getWeight(), op);
  if (failed(x) || failed(w))
    return failure();
  FailureOr<Value> out = l.alloc(op.getResult());
  if (failed(out))
    return failure();
  auto step = ex::RmsNormOp::create(l.builder(), op.getLoc(), *x, *w, *out,
                                    f64(l, op.getEpsilon()), FloatAttr(), FlatSymbolRefAttr());
  if (std::optional<APFloat> off = op.getWeightOffset())
    step.setWeightOffsetAttr(f64(l, *off));
  l.finish(step, op);
  return success();
}

static LogicalResult lowerAddRmsNorm(tf::AddRmsNormOp op, Lowering &l) {
  FailureOr<Value> x = l.view(op.getX(), op), r = l.view(op.getResidual(), op),
                   w = l.view(op.getWeight(), op);
  if (failed(x) || failed(r) || failed(w))
    return failure();
  FailureOr<Value> out = l.alloc(op.getResult()), sum = l.alloc(op.getResidualOut());
  if (failed(out) || failed(sum))
    return failure();
  auto step = ex::AddRmsNormOp::create(l.builder(), op.getLoc(), *x, *r, *w, *out, *sum,
                                       f64(l, op.getEpsilon()), FloatAttr(), FlatSymbolRefAttr());
  if (std::optional<APFloat> off = op.getWeightOffset())
    step.setWeightOffsetAttr(f64(l, *off));
  l.finish(step, op);
  return success();
}

static LogicalResult lowerLayerNorm(tf::LayerNormOp op, Lowering &l) {
  FailureOr<Value> x = l.view(op.getX(), op), w = l.view(op.getWeight(), op),
                   b = l.optionalView(op.getBias(), op);
  if (failed(x) || failed(w) || failed(b))
    return failure();
  FailureOr<Value> out = l.alloc(op.getResult());
  if (failed(out))
    return failure();
  l.finish(ex::LayerNormOp::create(l.builder(), op.getLoc(), *x, *w, *b, *out,
                                   f64(l, op.getEpsilon())),
           op);
  return success();
}

void populateNormLowerings(LoweringPatterns &patterns) {
  patterns.add<tf::RmsNormOp>(lowerRmsNorm);
  patterns.add<tf::AddRmsNormOp>(lowerAddRmsNorm);
  patterns.add<tf::LayerNormOp>(lowerLayerNorm);
}

} // namespace accel::conversion
