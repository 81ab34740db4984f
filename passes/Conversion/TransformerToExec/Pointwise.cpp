//===- Pointwise.cpp - residual_add, activation, gated_act, gated_mlp -----===//
#include "Lowering.h"

#include "accel/dialects/Transformer/TransformerOps.h"

using namespace mlir;
namespace ex = accel::exec;
namespace tf = accel::transformer;

namespace accel::conversion {

static LogicalResult lowerResidualAdd(tf::ResidualAddOp op, Lowering &l) {
  FailureOr<Value> r = l.view(op.getResidual(), op), b = l.view(op.getBranch(), op);
  if (failed(r) || failed(b))
    return failure();
  FailureOr<Value> out = l.alloc(op.getResult());
  if (failed(out))
    return failure();
  l.finish(ex::ResidualAddOp::create(l.builder(), op.getLoc(), *r, *b, *out, FlatSymbolRefAttr()),
           op);
  return success();
}

static LogicalResult lowerActivation(tf::ActivationOp op, Lowering &l) {
  FailureOr<Value> x = l.view(op.getInput(), op);
  if (failed(x))
    return failure();
  FailureOr<Value> out = l.alloc(op.getResult());
  if (failed(out))
    return failure();
  l.finish(ex::ActivationOp::create(l.builder(), op.getLoc(), *x, *out, op.getKindAttr(),
                                    FlatSymbolRefAttr()),
           op);
  return success();
}

static LogicalResult lowerGatedAct(tf::GatedActOp op, Lowering &l) {
  FailureOr<Value> x = l.view(op.getInput(), op);
  if (failed(x))
    return failure();
  FailureOr<Value> out = l.alloc(op.getResult());
  if (failed(out))
    return failure();
  l.finish(ex::GatedActOp::create(l.builder(), op.getLoc(), *x, *out, op.getKindAttr(),
                                  FlatSymbolRefAttr()),
           op);
  return success();
}

static LogicalResult lowerGatedMlp(tf::GatedMlpOp op, Lowering &l) {
  FailureOr<Value> x = l.view(op.getX(), op), gu = l.optionalView(op.getGateUp(), op),
                   g = l.optionalView(op.getGate(), op), u = l.optionalView(op.getUp(), op),
                   d = l.view(op.getDown(), op);
  if (failed(x) || failed(gu) || failed(g) || failed(u) || failed(d))
    return failure();
  FailureOr<Value> out = l.alloc(op.getResult());
  if (failed(out))
    return failure();
  l.finish(ex::GatedMlpOp::create(l.builder(), op.getLoc(), *x, *gu, *g, *u, *d, *out,
                                  op.getKindAttr(), FlatSymbolRefAttr()),
           op);
  return success();
}

void populatePointwiseLowerings(LoweringPatterns &patterns) {
  patterns.add<tf::ResidualAddOp>(lowerResidualAdd);
  patterns.add<tf::ActivationOp>(lowerActivation);
  patterns.add<tf::GatedActOp>(lowerGatedAct);
  patterns.add<tf::GatedMlpOp>(lowerGatedMlp);
}

} // namespace accel::conversion
