//===- PartitionMoe.cpp - the mixture of experts per rank -----------------===//
//
// Megatron's MLP split applied to every expert (vLLM's tensor-parallel
// FusedMoE): each of N ranks holds every expert's 1/N of the intermediate
// size I.
//
//   - gate_up [E, 2I, H]: each expert's rows cut as gated_mlp's, [gate_r;
//     up_r], giving [E, 2I/N, H]; separate gate and up [E, I, H] take rows
//     [r*I/N, (r+1)*I/N) of each expert;
//   - down [E, H, I]: the same columns of each expert, [E, H, I/N];
//   - the shared expert like a gated_mlp (shared_gate_up [gate_r; up_r],
//     shared_down the same columns);
//   - quantised experts' scales [E, rows] follow their weight's rows:
//     gate_up_scale as gate_up, gate_scale and up_scale as gate and up;
//     down_scale (per output row, H) is replicated;
//   - the router, its bias and the shared expert's gate are replicated:
//     every rank routes every token the same way, so each rank's sum over
//     the selected experts (and its shared expert, scaled by the same
//     sigmoid gate) is a partial sum of the whole result, and an all_reduce
//     (sum) follows, as after a dense MLP.
//
//===----------------------------------------------------------------------===//
#include "PartitionRules.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace accel;
using namespace accel::partition;
namespace tf = accel::transformer;

namespace {

LogicalResult shard(Context &ctx, tf::MoeOp moe, OpOperand &operand, int64_t axis,
                    const RankRanges &ranges, StringRef what) {
  Value old = operand.get();
  ctx.rewriter.setInsertionPoint(moe);
  FailureOr<Value> w = shardConstant(ctx, moe, old, axis, ranges, what);
  if (failed(w))
    return failure();
  operand.set(*w);
  eraseIfDead(ctx.rewriter, old);
  return success();
}

} // namespace

LogicalResult accel::partition::partitionMoe(Context &ctx, tf::MoeOp moe) {
  auto down = cast<RankedTensorType>(moe.getDown().getType());
  const int64_t inter = down.getDimSize(2);
  if (inter % ctx.tp != 0)
    return moe.emitError() << "-tp=" << ctx.tp << " does not divide the intermediate size "
                           << inter << " of the experts";
  if (moe.getGateUp()) {
    if (failed(shard(ctx, moe, moe.getGateUpMutable()[0], 1, gateUpRows(ctx.tp, inter),
                     "experts' gate_up weight")))
      return failure();
    if (moe.getGateUpScale() && failed(shard(ctx, moe, moe.getGateUpScaleMutable()[0], 1,
                                             gateUpRows(ctx.tp, inter), "experts' gate_up scales")))
      return failure();
  } else if (failed(shard(ctx, moe, moe.getGateMutable()[0], 1, evenBlocks(ctx.tp, inter),
                          "experts' gate weight")) ||
             failed(shard(ctx, moe, moe.getUpMutable()[0], 1, evenBlocks(ctx.tp, inter),
                          "experts' up weight"))) {
    return failure();
  } else if ((moe.getGateScale() &&
              failed(shard(ctx, moe, moe.getGateScaleMutable()[0], 1, evenBlocks(ctx.tp, inter),
                           "experts' gate scales"))) ||
             (moe.getUpScale() && failed(shard(ctx, moe, moe.getUpScaleMutable()[0], 1,
                                               evenBlocks(ctx.tp, inter), "experts' up scales")))) {
    return failure();
  }
  if (failed(shard(ctx, moe, moe.getDownMutable(), 2, evenBlocks(ctx.tp, inter),
                   "experts' down weight")))
    return failure();
  if (moe.getSharedGateUp()) {
    auto sharedDown = cast<RankedTensorType>(moe.getSharedDown().getType());
    const int64_t shared = sharedDown.getDimSize(1);
    if (shared % ctx.tp != 0)
      return moe.emitError() << "-tp=" << ctx.tp << " does not divide the intermediate size "
                             << shared << " of the shared expert";
    if (failed(shard(ctx, moe, moe.getSharedGateUpMutable()[0], 0, gateUpRows(ctx.tp, shared),
                     "shared expert's gate_up weight")) ||
        failed(shard(ctx, moe, moe.getSharedDownMutable()[0], 1, evenBlocks(ctx.tp, shared),
                     "shared expert's down weight")))
      return failure();
  }
  allReduceAfter(ctx, moe);
  return success();
}
