//===- PartitionMlp.cpp - the feed-forward block per rank -----------------===//
//
// Megatron's MLP split, intermediate size I over N ranks (I/N each):
//
//   - gated_mlp: gate and up are column-parallel (rows [r*I/N, (r+1)*I/N)
//     of each); a fused gate_up weight ([gate; up] rows) is cut per rank as
//     [gate_r; up_r]; down is row-parallel (the same columns) and an
//     all_reduce (sum) follows.
//   - linear → activation → linear (GPT-2's c_fc, gelu, c_proj) and linear →
//     gated_act → linear: the first linear is column-parallel with its bias
//     (for gated_act its [gate; up] rows as above), the activation runs on
//     the rank's columns, the second is row-parallel with its bias on rank 0
//     only, and an all_reduce follows. A first linear with the activation as
//     its epilogue (accel-fuse-linear-activation) keeps it: it is
//     elementwise, so it runs on the rank's columns just the same.
//
//===----------------------------------------------------------------------===//
#include "PartitionRules.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace accel;
using namespace accel::partition;
namespace tf = accel::transformer;

namespace {

LogicalResult checkIntermediate(Context &ctx, Operation *op, int64_t inter) {
  if (inter % ctx.tp != 0)
    return op->emitError() << "-tp=" << ctx.tp << " does not divide the intermediate size "
                           << inter << " of this MLP";
  return success();
}

/// Replaces `operand` by a sharded copy of its constant.
LogicalResult shardOperand(Context &ctx, Operation *user, OpOperand &operand, int64_t axis,
                           const RankRanges &ranges, StringRef what) {
  Value old = operand.get();
  ctx.rewriter.setInsertionPoint(user);
  FailureOr<Value> w = shardConstant(ctx, user, old, axis, ranges, what);
  if (failed(w))
    return failure();
  operand.set(*w);
  eraseIfDead(ctx.rewriter, old);
  return success();
}

LogicalResult rankZeroOperand(Context &ctx, Operation *user, OpOperand &operand) {
  Value old = operand.get();
  ctx.rewriter.setInsertionPoint(user);
  FailureOr<Value> b = rankZeroConstant(ctx, user, old);
  if (failed(b))
    return failure();
  operand.set(*b);
  eraseIfDead(ctx.rewriter, old);
  return success();
}

} // namespace

LogicalResult accel::partition::partitionGatedMlp(Context &ctx, tf::GatedMlpOp mlp) {
  auto down = cast<RankedTensorType>(mlp.getDown().getType());
  int64_t inter = down.getDimSize(1);
  if (failed(checkIntermediate(ctx, mlp, inter)))
    return failure();
  if (mlp.getGateUp()) {
    if (failed(shardOperand(ctx, mlp, mlp.getGateUpMutable()[0], 0, gateUpRows(ctx.tp, inter),
                            "gate_up weight")))
      return failure();
  } else {
    if (failed(shardOperand(ctx, mlp, mlp.getGateMutable()[0], 0, evenBlocks(ctx.tp, inter),
                            "gate weight")) ||
        failed(shardOperand(ctx, mlp, mlp.getUpMutable()[0], 0, evenBlocks(ctx.tp, inter),
                            "up weight")))
      return failure();
  }
  if (failed(shardOperand(ctx, mlp, mlp.getDownMutable(), 1, evenBlocks(ctx.tp, inter),
                          "down weight")))
    return failure();
  allReduceAfter(ctx, mlp);
  return success();
}

LogicalResult accel::partition::partitionLinearMlp(Context &ctx, Operation *act) {
  // The fused form: the linear is its own activation (none left when an
  // earlier MLP made it row-parallel and moved it past the all_reduce).
  auto fused = dyn_cast<tf::LinearOp>(act);
  if (fused && !fused.getActivation())
    return success();
  Value in = fused ? fused.getResult() : act->getOperand(0), out = act->getResult(0);
  auto up = fused ? fused : in.getDefiningOp<tf::LinearOp>();
  if (!up || !in.hasOneUse() || !out.hasOneUse())
    return success();
  // W8A8: the activation's rank columns are quantised on their way into
  // down (see PartitionAttention.cpp's output projection).
  Value downIn = out;
  Operation *quantize = *out.getUsers().begin();
  if (isa<tf::QuantizeOp, tf::DynamicQuantizeOp>(quantize) && quantize->getOperand(0) == out &&
      quantize->getResult(0).hasOneUse())
    downIn = quantize->getResult(0);
  else
    quantize = nullptr;
  auto down = dyn_cast<tf::LinearOp>(*downIn.getUsers().begin());
  if (!down || down.getX() != downIn)
    return success();
  const bool gated = isa<tf::GatedActOp>(act);
  auto outType = cast<RankedTensorType>(out.getType());
  int64_t inter = outType.getDimSize(1);
  if (ShapedType::isDynamic(inter) || failed(checkIntermediate(ctx, act, inter)))
    return failure();
  RankRanges rows = gated ? gateUpRows(ctx.tp, inter) : evenBlocks(ctx.tp, inter);
  if (failed(shardLinearWeight(ctx, up, 0, rows, "MLP input weight")))
    return failure();
  if (up.getBias() &&
      failed(shardOperand(ctx, up, up.getBiasMutable()[0], 0, rows, "MLP input bias")))
    return failure();
  int64_t local = inter / ctx.tp;
  up.getResult().setType(withDim(up.getType(), 1, gated ? 2 * local : local));
  out.setType(withDim(out.getType(), 1, local));
  if (quantize)
    downIn.setType(withDim(downIn.getType(), 1, local));
  if (failed(shardLinearWeight(ctx, down, 1, evenBlocks(ctx.tp, inter), "MLP output weight")))
    return failure();
  if (down.getBias() && failed(rankZeroOperand(ctx, down, down.getBiasMutable()[0])))
    return failure();
  allReduceAfter(ctx, down);
  return success();
}
