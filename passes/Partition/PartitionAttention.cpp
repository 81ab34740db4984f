//===- PartitionAttention.cpp - attention heads per rank ------------------===//
//
// Megatron's attention split. With N ranks, H query heads and KV key/value
// heads of head_dim d:
//
//   - q, k and v projections are column-parallel: rank r computes its H/N
//     query heads [r*H/N, (r+1)*H/N) and its key/value heads. When KV >= N,
//     those are KV/N heads [r*KV/N, (r+1)*KV/N); when KV < N (and N is a
//     multiple of KV) every rank keeps the one KV head its query heads read,
//     head (r*H/N) / (H/KV): KV heads are replicated, N/KV ranks each.
//     A fused QKV weight ([Q; K; V] rows, from accel-fuse-qkv or the model)
//     is cut per rank as [Q_r; K_r; V_r], not in contiguous row blocks;
//     its bias likewise.
//   - attention runs on the rank's heads and its own KV cache shard (the
//     cache argument's kv_heads becomes the per-rank count).
//   - o_proj is row-parallel: rank r multiplies its heads' columns of the
//     weight, an all_reduce (sum) follows, and a bias is kept by rank 0 only
//     (zeros elsewhere), so it is added once.
//
//===----------------------------------------------------------------------===//
#include "PartitionRules.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace accel;
using namespace accel::partition;
namespace tf = accel::transformer;

namespace {

enum class Role { Q, K, V };

/// q, k or v from its projection to the attention op.
struct Chain {
  Role role;
  Value projected;               // a linear result or a transformer.split result
  tf::SplitHeadsOp splitHeads;   // projected → [tokens, heads, head_dim]
  SmallVector<Operation *> headwise; // rotary, per-head norms, in order
};

} // namespace

LogicalResult accel::partition::checkHeads(Context &ctx, tf::AttentionOp attention) {
  const int64_t tp = ctx.tp;
  const int64_t heads = int64_t(attention.getNumHeads());
  const int64_t kvHeads = int64_t(attention.getNumKvHeads());
  const std::string layer = describeLayer(attention);
  if (heads % tp != 0)
    return attention.emitError() << "-tp=" << tp << " does not divide the " << heads
                                 << " attention heads of " << layer;
  if (kvHeads >= tp && kvHeads % tp != 0)
    return attention.emitError() << "-tp=" << tp << " does not divide the " << kvHeads
                                 << " KV heads of " << layer;
  if (kvHeads < tp && tp % kvHeads != 0)
    return attention.emitError()
           << "-tp=" << tp << " is not a multiple of the " << kvHeads << " KV heads of "
           << layer << ", so its KV heads cannot be replicated evenly across the ranks";
  return success();
}

LogicalResult accel::partition::partitionAttention(Context &ctx, tf::AttentionOp attention,
                                                   AttentionShards &shards) {
  RewriterBase &rewriter = ctx.rewriter;
  const int64_t tp = ctx.tp;
  const int64_t heads = int64_t(attention.getNumHeads());
  const int64_t kvHeads = int64_t(attention.getNumKvHeads());
  const int64_t d = int64_t(attention.getHeadDim());
  const std::string layer = describeLayer(attention);
  if (failed(checkHeads(ctx, attention)))
    return failure();
  const int64_t headsPerRank = heads / tp;
  const int64_t kvPerRank = kvHeads >= tp ? kvHeads / tp : 1;
  const int64_t group = heads / kvHeads;
  auto kvStart = [&](int64_t r) {
    return kvHeads >= tp ? r * kvPerRank : (r * headsPerRank) / group;
  };
  if (shards.kvHeadsPerRank && shards.kvHeadsPerRank != kvPerRank)
    return attention.emitError() << "tensor parallelism needs every layer to keep the same "
                                    "number of KV heads per rank, and "
                                 << layer << " keeps " << kvPerRank << " where others keep "
                                 << shards.kvHeadsPerRank;
  shards.kvHeadsPerRank = kvPerRank;

  // The three chains.
  auto fail = [&](const Twine &why) {
    return attention.emitError() << "tensor parallelism does not recognise the projections of "
                                 << layer << ": " << why;
  };
  SmallVector<Chain> chains;
  for (auto [role, operand] :
       {std::pair{Role::Q, attention.getQ()}, {Role::K, attention.getK()},
        {Role::V, attention.getV()}}) {
    Chain c{role, {}, {}, {}};
    Value v = operand;
    while (Operation *def = v.getDefiningOp()) {
      if (!v.hasOneUse())
        return fail("a per-head value has more than one reader");
      if (isa<tf::RotaryOp>(def) ||
          (isa<tf::RmsNormOp>(def) &&
           cast<RankedTensorType>(def->getOperand(0).getType()).getRank() == 3)) {
        c.headwise.insert(c.headwise.begin(), def);
        v = def->getOperand(0);
        continue;
      }
      break;
    }
    c.splitHeads = v.getDefiningOp<tf::SplitHeadsOp>();
    if (!c.splitHeads || !v.hasOneUse())
      return fail("q, k and v must be split_heads of a projection");
    c.projected = c.splitHeads.getInput();
    if (!c.projected.hasOneUse())
      return fail("a projection of q, k or v has more than one reader");
    chains.push_back(std::move(c));
  }

  auto roleRanges = [&](Role role) {
    RankRanges ranges(size_t(tp), {});
    for (int64_t r = 0; r < tp; ++r) {
      if (role == Role::Q)
        ranges[size_t(r)].push_back({r * headsPerRank * d, (r + 1) * headsPerRank * d});
      else
        ranges[size_t(r)].push_back({kvStart(r) * d, (kvStart(r) + kvPerRank) * d});
    }
    return ranges;
  };
  auto localWidth = [&](Role role) { return (role == Role::Q ? headsPerRank : kvPerRank) * d; };

  // The projections: one linear per chain, or one linear + split for all.
  llvm::MapVector<Operation *, SmallVector<Chain *>> byLinear;
  for (Chain &c : chains) {
    Value out = c.projected;
    if (auto split = out.getDefiningOp<tf::SplitOp>())
      out = split.getInput();
    auto linear = out.getDefiningOp<tf::LinearOp>();
    if (!linear)
      return fail("q, k and v must come from linear layers");
    byLinear[linear].push_back(&c);
  }
  for (auto &[op, parts] : byLinear) {
    auto linear = cast<tf::LinearOp>(op);
    auto split = parts.front()->projected.getDefiningOp<tf::SplitOp>();
    RankRanges ranges;
    int64_t local = 0;
    if (split) {
      if (!linear.getResult().hasOneUse())
        return fail("a fused q/k/v projection has readers besides its split");
      int64_t offset = 0;
      for (Value part : split.getResults()) {
        Chain *c = nullptr;
        for (Chain *p : parts)
          if (p->projected == part)
            c = p;
        if (!c)
          return fail("a fused projection has a part that is not q, k or v");
        RankRanges rr = roleRanges(c->role);
        for (auto &rank : rr)
          for (Range &range : rank)
            range = {range.first + offset, range.second + offset};
        append(ranges, rr);
        offset += cast<RankedTensorType>(part.getType()).getDimSize(1);
        part.setType(withDim(part.getType(), 1, localWidth(c->role)));
        local += localWidth(c->role);
      }
    } else {
      if (parts.size() != 1)
        return fail("two of q, k and v read one projection without a split");
      ranges = roleRanges(parts.front()->role);
      local = localWidth(parts.front()->role);
    }
    if (failed(shardLinearWeight(ctx, linear, 0, ranges, "q/k/v weight")))
      return failure();
    rewriter.setInsertionPoint(linear);
    Value oldBias = linear.getBias();
    if (oldBias) {
      FailureOr<Value> b = shardConstant(ctx, linear, oldBias, 0, ranges, "q/k/v bias");
      if (failed(b))
        return failure();
      linear.getBiasMutable().assign(*b);
    }
    linear.getResult().setType(withDim(linear.getType(), 1, local));
    eraseIfDead(rewriter, oldBias);
  }
  for (Chain &c : chains) {
    int64_t n = c.role == Role::Q ? headsPerRank : kvPerRank;
    c.splitHeads.getResult().setType(withDim(c.splitHeads.getType(), 1, n));
    for (Operation *op : c.headwise)
      op->getResult(0).setType(withDim(op->getResult(0).getType(), 1, n));
  }

  // Attention on the rank's heads. Per-KV-head FP8 cache scales list every
  // rank's heads, rank-major (one attribute for every rank; the runtime
  // reads its rank's part).
  attention->setAttr("num_heads", rewriter.getI64IntegerAttr(headsPerRank));
  attention->setAttr("num_kv_heads", rewriter.getI64IntegerAttr(kvPerRank));
  for (StringRef name : {"k_head_scales", "v_head_scales"})
    if (auto list = attention->getAttrOfType<DenseF64ArrayAttr>(name)) {
      if (int64_t(list.size()) != kvHeads)
        return attention.emitError() << "internal error: " << name << " of " << layer
                                     << " has " << list.size() << " entries for " << kvHeads
                                     << " KV heads";
      SmallVector<double> ranked;
      for (int64_t r = 0; r < tp; ++r)
        for (int64_t j = 0; j < kvPerRank; ++j)
          ranked.push_back(list[size_t(kvStart(r) + j)]);
      attention->setAttr(name, rewriter.getDenseF64ArrayAttr(ranked));
    }
  attention.getResult().setType(withDim(attention.getType(), 1, headsPerRank));

  // o_proj, row-parallel.
  Value out = attention.getResult();
  if (!out.hasOneUse())
    return fail("its result has more than one reader");
  auto merge = dyn_cast<tf::MergeHeadsOp>(*out.getUsers().begin());
  if (!merge || !merge.getResult().hasOneUse())
    return fail("its result must reach the output projection through merge_heads");
  // W8A8: the rank's columns are quantised on their way in (a static scale
  // quantises them as TP=1 does; a dynamic one takes each token's range
  // over the rank's columns only).
  Value projIn = merge.getResult();
  Operation *quantize = *projIn.getUsers().begin();
  if (isa<tf::QuantizeOp, tf::DynamicQuantizeOp>(quantize) && quantize->getOperand(0) == projIn) {
    if (!quantize->getResult(0).hasOneUse())
      return fail("its quantised result has more than one reader");
    projIn = quantize->getResult(0);
  } else {
    quantize = nullptr;
  }
  auto proj = dyn_cast<tf::LinearOp>(*projIn.getUsers().begin());
  if (!proj || proj.getX() != projIn)
    return fail("its result must feed a linear output projection");
  merge.getResult().setType(withDim(merge.getType(), 1, headsPerRank * d));
  if (quantize)
    projIn.setType(withDim(projIn.getType(), 1, headsPerRank * d));
  if (failed(shardLinearWeight(ctx, proj, 1, evenBlocks(tp, heads * d),
                               "output projection weight")))
    return failure();
  rewriter.setInsertionPoint(proj);
  Value oldBias = proj.getBias();
  if (oldBias) {
    FailureOr<Value> b = rankZeroConstant(ctx, proj, oldBias);
    if (failed(b))
      return failure();
    proj.getBiasMutable().assign(*b);
  }
  eraseIfDead(rewriter, oldBias);
  allReduceAfter(ctx, proj);
  return success();
}
