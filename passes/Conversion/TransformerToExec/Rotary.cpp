//===- Rotary.cpp - transformer.rotary, transformer.qkv_rotary ------------===//
//
// A qkv_rotary whose k and v one attention alone reads becomes
// exec.qkv_rotary_kv_write (Attention.cpp then writes no cache); any other
// becomes exec.qkv_rotary with q, k and v buffers.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "accel/dialects/Transformer/TransformerOps.h"

using namespace mlir;
namespace ex = accel::exec;
namespace tf = accel::transformer;

namespace accel::conversion {

tf::AttentionOp fusedAttention(tf::QkvRotaryOp op) {
  if (!op.getK().hasOneUse() || !op.getV().hasOneUse())
    return {};
  auto attention = dyn_cast<tf::AttentionOp>(*op.getK().getUsers().begin());
  if (!attention || attention.getK() != op.getK() || attention.getV() != op.getV())
    return {};
  return attention;
}

/// Sets the rotation attributes of `step` from `op` (rotary or qkv_rotary).
template <typename StepT, typename OpT> static void rotation(StepT step, OpT op, Lowering &l) {
  step.setStyleAttr(op.getStyleAttr());
  step.setRotaryDimAttr(l.builder().getI64IntegerAttr(int64_t(op.getRotaryDim())));
  if (std::optional<APFloat> theta = op.getTheta())
    step.setThetaAttr(l.builder().getF64FloatAttr(theta->convertToDouble()));
  if (tf::RopeScalingAttr s = op.getScalingAttr())
    step.setScalingAttr(s);
}

/// Sets an FP8 cache's scales of `step` from the attention that uses them.
template <typename StepT> void kvScales(StepT step, tf::AttentionOp op, Lowering &l) {
  OpBuilder &b = l.builder();
  if (std::optional<APFloat> s = op.getKScale())
    step.setKScaleAttr(b.getF64FloatAttr(s->convertToDouble()));
  if (std::optional<APFloat> s = op.getVScale())
    step.setVScaleAttr(b.getF64FloatAttr(s->convertToDouble()));
  if (std::optional<ArrayRef<double>> s = op.getKHeadScales())
    step.setKHeadScalesAttr(b.getDenseF64ArrayAttr(*s));
  if (std::optional<ArrayRef<double>> s = op.getVHeadScales())
    step.setVHeadScalesAttr(b.getDenseF64ArrayAttr(*s));
}
template void kvScales<ex::KVWriteOp>(ex::KVWriteOp, tf::AttentionOp, Lowering &);
template void kvScales<ex::AttentionOp>(ex::AttentionOp, tf::AttentionOp, Lowering &);

static LogicalResult lowerRotary(tf::RotaryOp op, Lowering &l) {
  FailureOr<Value> x = l.view(op.getInput(), op), pos = l.view(op.getPositions(), op),
                   cos = l.optionalView(op.getCosCache(), op),
                   sin = l.optionalView(op.getSinCache(), op);
  if (failed(x) || failed(pos) || failed(cos) || failed(sin))
    return failure();
  FailureOr<Value> out = l.alloc(op.getResult());
  if (failed(out))
    return failure();
  auto step = ex::RotaryOp::create(l.builder(), op.getLoc(), *x, *pos, *cos, *sin, *out,
                                   op.getStyleAttr(), l.builder().getI64IntegerAttr(1),
                                   FloatAttr(), tf::RopeScalingAttr(), FlatSymbolRefAttr());
  rotation(step, op, l);
  l.finish(step, op);
  return success();
}

static LogicalResult lowerQkvRotary(tf::QkvRotaryOp op, Lowering &l) {
  FailureOr<Value> qkv = l.view(op.getQkv(), op), pos = l.view(op.getPositions(), op),
                   cos = l.optionalView(op.getCosCache(), op),
                   sin = l.optionalView(op.getSinCache(), op);
  if (failed(qkv) || failed(pos) || failed(cos) || failed(sin))
    return failure();
  OpBuilder &b = l.builder();
  auto heads = b.getI64IntegerAttr(int64_t(op.getNumHeads()));
  auto kvHeads = b.getI64IntegerAttr(int64_t(op.getNumKvHeads()));
  auto headDim = b.getI64IntegerAttr(int64_t(op.getHeadDim()));
  FailureOr<Value> q = l.alloc(op.getQ());
  if (failed(q))
    return failure();
  if (tf::AttentionOp attention = fusedAttention(op)) {
    auto step = ex::QkvRotaryKvWriteOp::create(
        b, op.getLoc(), *qkv, *pos, *cos, *sin, *q, l.pool(),
        b.getI64IntegerAttr(int64_t(attention.getLayer())), heads, kvHeads, headDim,
        op.getStyleAttr(), b.getI64IntegerAttr(1), FloatAttr(), tf::RopeScalingAttr(),
        FloatAttr(), FloatAttr(), DenseF64ArrayAttr(), DenseF64ArrayAttr());
    rotation(step, op, l);
    kvScales(step, attention, l);
    l.finish(step, op);
    return success();
  }
  FailureOr<Value> k = l.alloc(op.getK()), v = l.alloc(op.getV());
  if (failed(k) || failed(v))
    return failure();
  auto step = ex::QkvRotaryOp::create(b, op.getLoc(), *qkv, *pos, *cos, *sin, *q, *k, *v, heads,
                                      kvHeads, headDim, op.getStyleAttr(), b.getI64IntegerAttr(1),
                                      FloatAttr(), tf::RopeScalingAttr());
  rotation(step, op, l);
  l.finish(step, op);
  return success();
}

template void kvScales<ex::QkvRotaryKvWriteOp>(ex::QkvRotaryKvWriteOp, tf::AttentionOp,
                                               Lowering &);

void populateRotaryLowerings(LoweringPatterns &patterns) {
  patterns.add<tf::RotaryOp>(lowerRotary);
  patterns.add<tf::QkvRotaryOp>(lowerQkvRotary);
}

} // namespace accel::conversion
