//===- Attention.cpp - transformer.attention: kv_write + attention --------===//
//
// A paged attention writes this step's k and v into the cache
// (exec.kv_write, unless the qkv_rotary that made them does it: Rotary.cpp)
// and attends (exec.attention).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "accel/dialects/Transformer/TransformerOps.h"

using namespace mlir;
namespace ex = accel::exec;
namespace tf = accel::transformer;

namespace accel::conversion {

tf::AttentionOp fusedAttention(tf::QkvRotaryOp op);
template <typename StepT> void kvScales(StepT step, tf::AttentionOp op, Lowering &l);

static LogicalResult lowerAttention(tf::AttentionOp op, Lowering &l) {
  if (!l.pool())
    return op.emitError("attends over a KV cache the function does not take");
  OpBuilder &b = l.builder();
  auto layer = b.getI64IntegerAttr(int64_t(op.getLayer()));
  auto qkv = op.getK().getDefiningOp<tf::QkvRotaryOp>();
  if (!qkv || fusedAttention(qkv) != op) {
    FailureOr<Value> k = l.view(op.getK(), op), v = l.view(op.getV(), op);
    if (failed(k) || failed(v))
      return failure();
    auto write = ex::KVWriteOp::create(b, op.getLoc(), *k, *v, l.pool(), layer, FloatAttr(),
                                       FloatAttr(), DenseF64ArrayAttr(), DenseF64ArrayAttr());
    kvScales(write, op, l);
    l.finish(write, op);
  }
  FailureOr<Value> q = l.view(op.getQ(), op);
  if (failed(q))
    return failure();
  FailureOr<Value> out = l.alloc(op.getResult());
  if (failed(out))
    return failure();
  auto step = ex::AttentionOp::create(
      b, op.getLoc(), *q, l.pool(), layer, *out, b.getI64IntegerAttr(int64_t(op.getNumKvHeads())),
      b.getF64FloatAttr(op.getScale().convertToDouble()),
      op.getCausal() ? b.getUnitAttr() : UnitAttr(), IntegerAttr(),
      FloatAttr(), FloatAttr(), FloatAttr(), DenseF64ArrayAttr(), DenseF64ArrayAttr());
  if (std::optional<uint64_t> w = op.getSlidingWindow())
    step.setSlidingWindowAttr(b.getI64IntegerAttr(int64_t(*w)));
  if (std::optional<APFloat> c = op.getSoftcap())
    step.setSoftcapAttr(b.getF64FloatAttr(c->convertToDouble()));
  kvScales(step, op, l);
  l.finish(step, op);
  return success();
}

void populateAttentionLowerings(LoweringPatterns &patterns) {
  patterns.add<tf::AttentionOp>(lowerAttention);
}

} // namespace accel::conversion
