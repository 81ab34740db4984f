//===- FuseQkvRotary.cpp - split + head views + rotaries → qkv_rotary ----===//
//
// Between a fused QKV projection and transformer.attention, every layer of
// a Llama-like model has a column split into q, k and v, per-head views of
// each, and a rotary of q and of k: on the GPU three copies, two rotaries and
// the KV-cache write, six launches of glue. transformer.qkv_rotary is all of
// that but the write in one op, and the plan writer folds the write into it
// too (docs/plan-format.md). The rewrite is exact: the op computes every
// element with the rotary kernels' arithmetic, and the rest only moves data.
//
// The views looked through, from each of attention's q, k (below their
// rotaries) and v back to columns of one 2-D value `qkv`:
//
//   transformer.split_heads %part                      %part = split #i of %qkv
//   onnx.Reshape %part, [-1, H, D]                      (the same, as exported)
//   onnx.Reshape (unflatten_tokens %part like %x), [-1, H, D]
//   onnx.Reshape (onnx.Slice (unflatten_tokens %qkv like %x), last axis), [-1, H, D]
//
// (the last one: Phi3's qkv_proj, sliced by the model itself). The three
// column ranges must be q, k, v in this order and cover `qkv`; every op on
// the way must be used only by the chain, so that the whole of it goes.
// The pass runs after partitioning (lib/Driver/Pipeline.cpp's
// buildLateFusionPipeline): accel-partition and accel-pipeline-stages
// never see the op.
//
//===----------------------------------------------------------------------===//
#include "FusionUtils.h"

#include "accel/dialects/Onnx/OnnxOps.h"
#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace accel {
#define GEN_PASS_DEF_FUSEQKVROTARY
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
namespace tf = accel::transformer;

namespace {

/// Columns [offset, offset + width) of the 2-D value `base`, reached
/// through the ops of `chain`.
struct Columns {
  Value base;
  int64_t offset = 0;
  int64_t width = 0;
  llvm::SmallVector<Operation *, 4> chain;
};

/// The integers of an integer onnx.Constant (or any constant-foldable value).
std::optional<llvm::SmallVector<int64_t>> intConstant(Value v) {
  DenseIntElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr))) {
    auto c = v.getDefiningOp<onnx::ConstantOp>();
    attr = c ? dyn_cast_or_null<DenseIntElementsAttr>(c.getValueAttr()) : nullptr;
  }
  if (!attr)
    return std::nullopt;
  llvm::SmallVector<int64_t> out;
  for (const APInt &i : attr.getValues<APInt>())
    out.push_back(i.getSExtValue());
  return out;
}

/// The static last dimension of `v`, or nullopt.
std::optional<int64_t> lastDim(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || t.getRank() == 0 || t.isDynamicDim(t.getRank() - 1))
    return std::nullopt;
  return t.getDimSize(t.getRank() - 1);
}

/// `v` (token-major, 2-D) as columns of a 2-D value: a result of
/// transformer.split.
std::optional<Columns> splitColumns(Value v) {
  auto split = v.getDefiningOp<tf::SplitOp>();
  if (!split)
    return std::nullopt;
  Columns c;
  c.base = split.getInput();
  for (Value r : split.getResults()) {
    std::optional<int64_t> w = lastDim(r);
    if (!w)
      return std::nullopt;
    if (r == v) {
      c.width = *w;
      c.chain.push_back(split);
      return c;
    }
    c.offset += *w;
  }
  return std::nullopt;
}

/// `v` (batch-major `[d0, ..., features]`) as columns of a 2-D value:
/// unflatten_tokens of a split result or of the value itself, or a
/// last-axis onnx.Slice of such an unflatten_tokens.
std::optional<Columns> batchMajorColumns(Value v) {
  if (auto unflatten = v.getDefiningOp<tf::UnflattenTokensOp>()) {
    // The features form: the input's columns are the result's last axis.
    if (unflatten.getInput().getType().getRank() != 2)
      return std::nullopt;
    std::optional<Columns> c = splitColumns(unflatten.getInput());
    if (!c) {
      std::optional<int64_t> w = lastDim(unflatten.getInput());
      if (!w)
        return std::nullopt;
      c = Columns{unflatten.getInput(), 0, *w, {}};
    }
    c->chain.push_back(unflatten);
    return c;
  }
  if (auto slice = v.getDefiningOp<onnx::SliceOp>()) {
    auto data = dyn_cast<RankedTensorType>(slice.getData().getType());
    std::optional<int64_t> width = lastDim(v), full = lastDim(slice.getData());
    if (!data || !width || !full)
      return std::nullopt;
    std::optional<llvm::SmallVector<int64_t>> starts = intConstant(slice.getStarts());
    std::optional<llvm::SmallVector<int64_t>> axes =
        slice.getAxes() ? intConstant(slice.getAxes()) : llvm::SmallVector<int64_t>{0};
    std::optional<llvm::SmallVector<int64_t>> steps =
        slice.getSteps() ? intConstant(slice.getSteps()) : llvm::SmallVector<int64_t>{1};
    if (!starts || !axes || !steps || starts->size() != 1 || axes->size() != 1 ||
        steps->size() != 1 || steps->front() != 1)
      return std::nullopt;
    int64_t axis = axes->front() < 0 ? axes->front() + data.getRank() : axes->front();
    if (axis != data.getRank() - 1)
      return std::nullopt;
    int64_t start = starts->front() < 0 ? starts->front() + *full : starts->front();
    if (start < 0 || start + *width > *full)
      return std::nullopt;
    std::optional<Columns> c = batchMajorColumns(slice.getData());
    if (!c || c->offset != 0 || c->width != *full)
      return std::nullopt;
    c->offset = start;
    c->width = *width;
    c->chain.push_back(slice);
    return c;
  }
  return std::nullopt;
}

/// `heads` (`[tokens, H, D]`) as columns [offset, offset + H * D) of a 2-D
/// value, through the view ops the file comment lists.
std::optional<Columns> headColumns(Value heads) {
  auto type = dyn_cast<RankedTensorType>(heads.getType());
  if (!type || type.getRank() != 3 || type.isDynamicDim(1) || type.isDynamicDim(2))
    return std::nullopt;
  const int64_t features = type.getDimSize(1) * type.getDimSize(2);
  std::optional<Columns> c;
  Operation *view = heads.getDefiningOp();
  if (auto sh = dyn_cast_or_null<tf::SplitHeadsOp>(view)) {
    c = splitColumns(sh.getInput());
  } else if (auto reshape = dyn_cast_or_null<onnx::ReshapeOp>(view)) {
    // A per-token split of heads: [-1, H, D] of rows of H * D elements.
    std::optional<llvm::SmallVector<int64_t>> shape = intConstant(reshape.getShape());
    if (!shape || shape->size() != 3 || (*shape)[0] != -1 ||
        (*shape)[1] != type.getDimSize(1) || (*shape)[2] != type.getDimSize(2) ||
        lastDim(reshape.getData()) != features)
      return std::nullopt;
    auto data = cast<RankedTensorType>(reshape.getData().getType());
    c = data.getRank() == 2 ? splitColumns(reshape.getData())
                            : batchMajorColumns(reshape.getData());
  }
  if (!c || c->width != features)
    return std::nullopt;
  c->chain.push_back(view);
  return c;
}

/// Whether two rotaries rotate by the same angles.
bool sameRotation(tf::RotaryOp a, tf::RotaryOp b) {
  return a.getPositions() == b.getPositions() && a.getCosCache() == b.getCosCache() &&
         a.getSinCache() == b.getSinCache() && a.getStyle() == b.getStyle() &&
         a.getRotaryDim() == b.getRotaryDim() && a.getThetaAttr() == b.getThetaAttr() &&
         a.getScalingAttr() == b.getScalingAttr();
}

/// Replaces the split, views and rotaries feeding `attention` by one
/// transformer.qkv_rotary when they have the form the file comment gives.
LogicalResult fuse(RewriterBase &rewriter, tf::AttentionOp attention) {
  auto rq = attention.getQ().getDefiningOp<tf::RotaryOp>();
  auto rk = attention.getK().getDefiningOp<tf::RotaryOp>();
  if (!rq || !rk || rq == rk || !rq->hasOneUse() || !rk->hasOneUse() || !sameRotation(rq, rk))
    return failure();
  const int64_t h = int64_t(attention.getNumHeads());
  const int64_t hkv = int64_t(attention.getNumKvHeads());
  const int64_t d = int64_t(attention.getHeadDim());
  std::optional<Columns> q = headColumns(rq.getInput());
  std::optional<Columns> k = headColumns(rk.getInput());
  std::optional<Columns> v = headColumns(attention.getV());
  if (!q || !k || !v || q->base != k->base || q->base != v->base)
    return failure();
  if (q->offset != 0 || q->width != h * d || k->offset != h * d || k->width != hkv * d ||
      v->offset != (h + hkv) * d || v->width != hkv * d ||
      lastDim(q->base) != (h + 2 * hkv) * d)
    return failure();

  // Every op on the way is used only by the chains (and the rotaries only
  // by the attention), so all of it is dead once attention reads the new op.
  llvm::SetVector<Operation *> chain;
  for (Columns *c : {&*q, &*k, &*v})
    chain.insert(c->chain.begin(), c->chain.end());
  for (Operation *op : chain)
    for (Operation *user : op->getUsers())
      if (!chain.contains(user) && user != rq && user != rk && user != attention)
        return failure();

  rewriter.setInsertionPoint(attention);
  auto qType = cast<RankedTensorType>(rq.getType());
  auto kType = cast<RankedTensorType>(rk.getType());
  auto vType = cast<RankedTensorType>(attention.getV().getType());
  Location loc = rewriter.getFusedLoc({rq.getLoc(), rk.getLoc()});
  auto fused = tf::QkvRotaryOp::create(
      rewriter, loc, TypeRange{qType, kType, vType}, q->base, rq.getPositions(),
      rq.getCosCache(), rq.getSinCache(), attention.getNumHeadsAttr(),
      attention.getNumKvHeadsAttr(), attention.getHeadDimAttr(), rq.getStyleAttr(),
      rq.getRotaryDimAttr(), rq.getThetaAttr(), rq.getScalingAttr());
  // A pipeline stage (accel-pipeline-stages) is the layer's.
  if (Attribute stage = attention->getAttr("accel.pp_stage"))
    fused->setAttr("accel.pp_stage", stage);
  rewriter.modifyOpInPlace(attention, [&] {
    attention.getQMutable().assign(fused.getQ());
    attention.getKMutable().assign(fused.getK());
    attention.getVMutable().assign(fused.getV());
  });
  // The reshapes' shape constants, the slices' starts and ends.
  llvm::SetVector<Value> operands;
  for (Operation *op : chain)
    for (Value v : op->getOperands())
      if (v.getDefiningOp<onnx::ConstantOp>())
        operands.insert(v);
  rewriter.eraseOp(rq);
  rewriter.eraseOp(rk);
  // Backwards: in `chain`, an op comes after the chain ops it reads.
  for (Operation *op : llvm::reverse(chain.getArrayRef()))
    if (op->use_empty())
      rewriter.eraseOp(op);
  for (Value v : operands)
    fusion::eraseIfDead(rewriter, v);
  return success();
}

struct FuseQkvRotaryPass : accel::impl::FuseQkvRotaryBase<FuseQkvRotaryPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<tf::AttentionOp> attentions;
    getOperation()->walk([&](tf::AttentionOp op) { attentions.push_back(op); });
    for (tf::AttentionOp op : attentions)
      (void)fuse(rewriter, op);
  }
};

} // namespace
