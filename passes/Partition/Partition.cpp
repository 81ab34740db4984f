//===- Partition.cpp - accel-partition: Megatron tensor parallelism -------===//
//
// Drives the rules of PartitionRules.h over a token-major function, in this
// order: normalise the head glue of every attention site (and erase the
// glue that dies), partition every attention site, every gated_mlp and
// linear→activation→linear MLP (the first linear and the activation may be
// one linear with an activation epilogue), the token embedding and the lm head (in
// that order: a tied table is sharded by the embedding rule and reused by
// the lm head's); then give the KV cache argument the per-rank KV head
// count and mark the function with accel.tp_size. What no rule touches
// (position tables, norms, residual adds, rotary tables, ONNX glue) stays
// replicated: every rank computes it whole, which is exact.
//
//===----------------------------------------------------------------------===//
#include "PartitionRules.h"

#include "accel/dialects/Onnx/OnnxDialect.h"
#include "accel/passes/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace accel {
#define GEN_PASS_DEF_PARTITION
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::partition;
namespace tf = accel::transformer;

namespace {

void eraseDeadOps(Block &block) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (op.use_empty() && !op.hasTrait<OpTrait::IsTerminator>() && isMemoryEffectFree(&op)) {
        op.erase();
        changed = true;
      }
  }
}

struct PartitionPass : accel::impl::PartitionBase<PartitionPass> {
  using PartitionBase::PartitionBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (tpSize < 1) {
      func.emitError() << "-tp must be at least 1, got " << tpSize;
      return signalPassFailure();
    }
    if (tpSize == 1 || func.isExternal())
      return;
    if (func->hasAttr(kTpSizeAttr)) {
      func.emitError() << "@" << func.getSymName() << " is partitioned already";
      return signalPassFailure();
    }
    std::optional<unsigned> cacheArg;
    for (BlockArgument arg : func.getArguments())
      if (isa<tf::KVCacheType>(arg.getType()))
        cacheArg = arg.getArgNumber();
    if (!cacheArg || !func.getBody().hasOneBlock()) {
      func.emitError() << "tensor parallelism needs the token-major function that raising "
                          "makes (with a paged KV cache), and @"
                       << func.getSymName() << " is not one";
      return signalPassFailure();
    }

    // accel-fuse-qkv-rotary runs after partitioning (buildLateFusionPipeline).
    for (auto fused : func.getBody().front().getOps<tf::QkvRotaryOp>()) {
      fused.emitError() << "tensor parallelism partitions the unfused q/k/v split and rotaries; run "
                           "accel-fuse-qkv-rotary after it, not before";
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    Context ctx{rewriter, int64_t(tpSize)};
    Block &body = func.getBody().front();

    SmallVector<tf::AttentionOp> attentions(body.getOps<tf::AttentionOp>());
    for (tf::AttentionOp a : attentions)
      if (failed(checkHeads(ctx, a)))
        return signalPassFailure();
    for (tf::AttentionOp a : attentions)
      if (failed(normalizeHeadLayout(ctx, a)))
        return signalPassFailure();
    eraseDeadOps(body);

    AttentionShards shards;
    for (tf::AttentionOp a : attentions)
      if (failed(partitionAttention(ctx, a, shards)))
        return signalPassFailure();
    for (tf::GatedMlpOp m : llvm::to_vector(body.getOps<tf::GatedMlpOp>()))
      if (failed(partitionGatedMlp(ctx, m)))
        return signalPassFailure();
    for (tf::MoeOp m : llvm::to_vector(body.getOps<tf::MoeOp>()))
      if (failed(partitionMoe(ctx, m)))
        return signalPassFailure();
    SmallVector<Operation *> acts;
    for (Operation &op : body) {
      auto linear = dyn_cast<tf::LinearOp>(op);
      if (isa<tf::ActivationOp, tf::GatedActOp>(op) || (linear && linear.getActivation()))
        acts.push_back(&op);
    }
    for (Operation *act : acts)
      if (failed(partitionLinearMlp(ctx, act)))
        return signalPassFailure();
    for (tf::EmbeddingOp e : llvm::to_vector(body.getOps<tf::EmbeddingOp>()))
      if (failed(partitionEmbedding(ctx, e)))
        return signalPassFailure();
    for (tf::LogitsOp l : llvm::to_vector(body.getOps<tf::LogitsOp>()))
      if (failed(partitionLogits(ctx, l)))
        return signalPassFailure();
    eraseDeadOps(body);

    // The KV cache of one rank.
    if (shards.kvHeadsPerRank) {
      BlockArgument arg = func.getArgument(*cacheArg);
      auto cache = cast<tf::KVCacheType>(arg.getType());
      auto local = tf::KVCacheType::get(&getContext(), cache.getLayers(), shards.kvHeadsPerRank,
                                        cache.getHeadDim(), cache.getBlockSize(),
                                        cache.getElementType());
      arg.setType(local);
      SmallVector<Type> inputs(func.getArgumentTypes());
      inputs[*cacheArg] = local;
      func.setFunctionType(FunctionType::get(&getContext(), inputs, func.getResultTypes()));
    }
    func->setAttr(kTpSizeAttr, rewriter.getI64IntegerAttr(tpSize));
  }
};

} // namespace
