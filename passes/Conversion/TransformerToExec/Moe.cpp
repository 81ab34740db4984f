//===- Moe.cpp - transformer.moe → exec.moe ---------------------------------===//
//
// One step: the router, the experts (with their scales when quantised) and
// the shared expert are weights of the step, read as they are (the CPU
// kernel gathers each expert's tokens).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "accel/dialects/Transformer/TransformerOps.h"

using namespace mlir;
namespace ex = accel::exec;
namespace tf = accel::transformer;

namespace accel::conversion {

static LogicalResult lowerMoe(tf::MoeOp op, Lowering &l) {
  FailureOr<Value> x = l.view(op.getX(), op), r = l.view(op.getRouter(), op),
                   rb = l.optionalView(op.getRouterBias(), op),
                   gu = l.optionalView(op.getGateUp(), op), g = l.optionalView(op.getGate(), op),
                   u = l.optionalView(op.getUp(), op), d = l.view(op.getDown(), op),
                   sgu = l.optionalView(op.getSharedGateUp(), op),
                   sd = l.optionalView(op.getSharedDown(), op),
                   sg = l.optionalView(op.getSharedExpertGate(), op),
                   gus = l.optionalView(op.getGateUpScale(), op),
                   gs = l.optionalView(op.getGateScale(), op),
                   us = l.optionalView(op.getUpScale(), op),
                   ds = l.optionalView(op.getDownScale(), op);
  for (const FailureOr<Value> &v : {x, r, rb, gu, g, u, d, sgu, sd, sg, gus, gs, us, ds})
    if (failed(v))
      return failure();
  FailureOr<Value> out = l.alloc(op.getResult());
  if (failed(out))
    return failure();
  l.finish(ex::MoeOp::create(l.builder(), op.getLoc(), *x, *r, *rb, *gu, *g, *u, *d, *sgu, *sd,
                             *sg, *gus, *gs, *us, *ds, *out, op.getKindAttr(), op.getRoutingAttr(),
                             op.getNumExpertsAttr(), op.getTopKAttr()),
           op);
  return success();
}

void populateMoeLowerings(LoweringPatterns &patterns) {
  patterns.add<tf::MoeOp>(lowerMoe);
}

} // namespace accel::conversion
