//===- Collectives.cpp - all_reduce, all_gather, pp_transfer --------------===//
#include "Lowering.h"

#include "accel/dialects/Transformer/TransformerOps.h"

using namespace mlir;
namespace ex = accel::exec;
namespace tf = accel::transformer;

namespace accel::conversion {

static ex::ReduceKind reduceKind(tf::ReduceKind k) {
  switch (k) {
  case tf::ReduceKind::Sum:
    return ex::ReduceKind::sum;
  case tf::ReduceKind::Max:
    return ex::ReduceKind::max;
  case tf::ReduceKind::Min:
    return ex::ReduceKind::min;
  }
  return ex::ReduceKind::sum;
}

static LogicalResult lowerAllReduce(tf::AllReduceOp op, Lowering &l) {
  FailureOr<Value> in = l.view(op.getInput(), op);
  if (failed(in))
    return failure();
  FailureOr<Value> out = l.alloc(op.getResult());
  if (failed(out))
    return failure();
  MLIRContext *ctx = op.getContext();
  l.finish(ex::CollectiveOp::create(
               l.builder(), op.getLoc(), ex::CollectiveKindAttr::get(ctx, ex::CollectiveKind::all_reduce),
               ex::ReduceKindAttr::get(ctx, reduceKind(op.getKind())), *in, *out,
               l.builder().getI64IntegerAttr(0),
               l.builder().getI64IntegerAttr(int64_t(op.getGroupSize()))),
           op);
  return success();
}

static LogicalResult lowerAllGather(tf::AllGatherOp op, Lowering &l) {
  FailureOr<Value> in = l.view(op.getInput(), op);
  if (failed(in))
    return failure();
  FailureOr<Value> out = l.alloc(op.getResult());
  if (failed(out))
    return failure();
  MLIRContext *ctx = op.getContext();
  l.finish(ex::CollectiveOp::create(
               l.builder(), op.getLoc(), ex::CollectiveKindAttr::get(ctx, ex::CollectiveKind::all_gather),
               ex::ReduceKindAttr(), *in, *out, l.builder().getI64IntegerAttr(int64_t(op.getAxis())),
               l.builder().getI64IntegerAttr(int64_t(op.getGroupSize()))),
           op);
  return success();
}

static LogicalResult lowerPpTransfer(tf::PpTransferOp op, Lowering &l) {
  FailureOr<Value> in = l.view(op.getInput(), op);
  if (failed(in))
    return failure();
  FailureOr<Value> out = l.alloc(op.getResult());
  if (failed(out))
    return failure();
  l.finish(ex::PpTransferOp::create(l.builder(), op.getLoc(), *in, *out,
                                    l.builder().getI64IntegerAttr(int64_t(op.getFromStage())),
                                    l.builder().getI64IntegerAttr(int64_t(op.getToStage()))),
           op);
  return success();
}

void populateCollectiveLowerings(LoweringPatterns &patterns) {
  patterns.add<tf::AllReduceOp>(lowerAllReduce);
  patterns.add<tf::AllGatherOp>(lowerAllGather);
  patterns.add<tf::PpTransferOp>(lowerPpTransfer);
}

} // namespace accel::conversion
