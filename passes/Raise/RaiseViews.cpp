//===- RaiseViews.cpp - the view glue between raised ops ------------------===//
//
// The last local raise. Raising wraps every token-wise op in flatten_tokens /
// unflatten_tokens and every proved rotary and attention site in the
// transposes and reshapes between the export's [batch, heads, seq, head_dim]
// layout and token-major [tokens, heads, head_dim]. What the export itself
// wrote between them (per-head norms on transposed q/k, fused QKV layouts cut
// by Slice, Split or GatherND) is left as onnx movement ops, which the GPU
// runs as copies and tensor parallelism cannot follow. These patterns turn
// that glue into what it computes, exactly (they only move data, or reorder
// a weight's rows at compile time):
//
//   Transpose(unflatten(rowops(flatten(Transpose(y, p))) like ..), p^-1)
//                                  → unflatten(rowops(flatten(y)) like y)
//       a row-wise op (rms_norm, layer_norm, activation, linear) computes
//       each row alone, so it commutes with any permutation of the rows;
//   Transpose(x, p) moving only size-1 axes → Reshape(x);
//   GatherND(x, [[c]])                     → Slice(x, c:c+1, axis 0);
//   Slice(Transpose(x, p), axis a)         → Transpose(Slice(x, axis p[a]), p);
//   Split(Transpose(x, p), axis a) read only by Transposes back
//                                  → Split(x, axis p[a]);
//   Slice(Reshape(u, [.., G, D]), heads axis) → Reshape(Slice(u, last axis));
//   last-axis Slices / Splits of unflatten(%r) → transformer.split %r;
//   Split(Reshape(unflatten(linear), [.., H, k*D]), last axis) (a fused QKV
//       interleaved per head, GPT-NeoX) → the linear's weight rows permuted
//       to [Q; K; V] and transformer.split;
//   Reshape(unflatten(norm(flatten(x)) like x), [-1, H, D])
//                                  → norm(Reshape(x, [-1, H, D]))
//       (per-head q/k norms, Gemma 3: rank 3, as accel-partition expects);
//   Reshape(r, Concat(Shape(x)[0], .., F))  → unflatten_tokens(r like x);
//   flatten_tokens(Unsqueeze(x)) on token axes → flatten_tokens(x).
//
// Transpose and Reshape canonicalizations run in the same driver, so the
// transposes the rewrites meet compose away.
//
//===----------------------------------------------------------------------===//
#include "IRBuilders.h"
#include "RaiseUtils.h"

#include "accel/dialects/Onnx/OnnxOps.h"
#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/Passes.h"
#include "accel/passes/RaisePatterns.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace accel {
#define GEN_PASS_DEF_RAISEVIEWS
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::raise;
namespace tf = accel::transformer;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

SmallVector<int64_t> permOf(onnx::TransposeOp op) {
  if (std::optional<ArrayRef<int64_t>> perm = op.getPerm())
    return SmallVector<int64_t>(perm->begin(), perm->end());
  SmallVector<int64_t> rev;
  if (auto type = dyn_cast<RankedTensorType>(op.getData().getType()))
    for (int64_t i = type.getRank() - 1; i >= 0; --i)
      rev.push_back(i);
  return rev;
}

/// Whether Transpose(Transpose(x, p), q) is x.
bool composesToIdentity(ArrayRef<int64_t> p, ArrayRef<int64_t> q) {
  if (p.size() != q.size() || p.empty())
    return false;
  for (auto [i, qi] : llvm::enumerate(q))
    if (qi < 0 || qi >= int64_t(p.size()) || p[size_t(qi)] != int64_t(i))
      return false;
  return true;
}

/// The integers of a constant, or nullopt.
std::optional<SmallVector<int64_t>> intConstant(Value v) {
  auto dense = dyn_cast_or_null<DenseIntElementsAttr>(getConstant(v));
  if (!dense)
    return std::nullopt;
  SmallVector<int64_t> out;
  for (const APInt &i : dense.getValues<APInt>())
    out.push_back(i.getSExtValue());
  return out;
}

/// A one-axis, step-1 onnx.Slice with constant operands: its axis (in
/// [0, rank)) and the [begin, end) it keeps of that axis, which must be
/// static.
struct AxisRange {
  int64_t axis = 0, begin = 0, end = 0;
};
std::optional<AxisRange> sliceRange(onnx::SliceOp slice) {
  auto data = dyn_cast<RankedTensorType>(slice.getData().getType());
  std::optional<SmallVector<int64_t>> starts = intConstant(slice.getStarts());
  std::optional<SmallVector<int64_t>> ends = intConstant(slice.getEnds());
  std::optional<SmallVector<int64_t>> axes =
      slice.getAxes() ? intConstant(slice.getAxes()) : SmallVector<int64_t>{0};
  std::optional<SmallVector<int64_t>> steps =
      slice.getSteps() ? intConstant(slice.getSteps()) : SmallVector<int64_t>{1};
  if (!data || !starts || !ends || !axes || !steps || starts->size() != 1 ||
      ends->size() != 1 || axes->size() != 1 || steps->size() != 1 || steps->front() != 1)
    return std::nullopt;
  std::optional<int64_t> axis = normalizeAxis(axes->front(), data.getRank());
  if (!axis || data.isDynamicDim(*axis))
    return std::nullopt;
  const int64_t size = data.getDimSize(*axis);
  auto clampIndex = [&](int64_t i) {
    if (i < 0)
      i += size;
    return std::clamp<int64_t>(i, 0, size);
  };
  AxisRange r{*axis, clampIndex(starts->front()), clampIndex(ends->front())};
  if (r.end <= r.begin)
    return std::nullopt;
  return r;
}

/// The static sizes of the results of an onnx.Split along `axis`, when they
/// are all static.
std::optional<SmallVector<int64_t>> splitSizes(onnx::SplitOp split, int64_t axis) {
  SmallVector<int64_t> sizes;
  for (Value r : split.getOutputs()) {
    auto t = dyn_cast<RankedTensorType>(r.getType());
    if (!t || t.isDynamicDim(axis))
      return std::nullopt;
    sizes.push_back(t.getDimSize(axis));
  }
  return sizes;
}

/// The axis of an onnx.Split, normalised, when its input is ranked.
std::optional<int64_t> splitAxis(onnx::SplitOp split) {
  auto t = dyn_cast<RankedTensorType>(split.getInput().getType());
  if (!t)
    return std::nullopt;
  return normalizeAxis(split.getAxis(), t.getRank());
}

/// Whether `reshape` views `u` ([d0, .., dk, F]) as [d0, .., dk, G, D]:
/// the same leading dims (proved by tracing them), G * D = F, static.
bool splitsLastDim(onnx::ReshapeOp reshape, Value u) {
  auto in = dyn_cast<RankedTensorType>(u.getType());
  auto out = dyn_cast<RankedTensorType>(reshape.getType());
  if (!in || !out || out.getRank() != in.getRank() + 1 || in.getRank() < 2)
    return false;
  const int64_t r = in.getRank();
  if (in.isDynamicDim(r - 1) || out.isDynamicDim(r - 1) || out.isDynamicDim(r) ||
      out.getDimSize(r - 1) * out.getDimSize(r) != in.getDimSize(r - 1))
    return false;
  for (int64_t i = 0; i + 1 < r; ++i)
    if (!sameDim(traceDim(reshape.getResult(), i), traceDim(u, i)))
      return false;
  return true;
}

/// onnx.Reshape of `x` (rank r, last dim G * D) to `type` ([.., G, D], the
/// leading dims x's), with a `[0, .., 0, G, D]` target.
Value splitLastDim(OpBuilder &b, Location loc, Value x, RankedTensorType type) {
  SmallVector<int64_t> shape(size_t(type.getRank() - 2), 0);
  shape.push_back(type.getDimSize(type.getRank() - 2));
  shape.push_back(type.getDimSize(type.getRank() - 1));
  return reshape(b, loc, x, shape, type);
}

/// The unflatten_tokens of a [tokens, features] value defining `v` (either
/// form: `like` the batch-major activations or the token ids), or null.
tf::UnflattenTokensOp featuresUnflatten(Value v) {
  auto u = v.getDefiningOp<tf::UnflattenTokensOp>();
  if (!u || u.getInput().getType().getRank() != 2)
    return {};
  return u;
}

/// Whether `op` computes each row of its rank-2 result from the same row of
/// operand 0 alone (its other operands are weights, not rows).
bool isRowOp(Operation *op) {
  if (op->getNumResults() != 1 || op->getNumOperands() == 0)
    return false;
  auto t = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  auto x = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!t || !x || t.getRank() != 2 || x.getRank() != 2)
    return false;
  if (isa<tf::RmsNormOp, tf::LayerNormOp, tf::ActivationOp>(op))
    return true;
  // A per-token input scale would be a row operand too.
  if (auto linear = dyn_cast<tf::LinearOp>(op))
    return !linear.getInputScale();
  return false;
}

//===----------------------------------------------------------------------===//
// Transposes around row-wise ops
//===----------------------------------------------------------------------===//

/// Transpose(unflatten(R like Transpose(y, p)), q), q∘p = identity, p
/// keeping the last axis, R row ops from flatten_tokens(Transpose(y, p)):
/// the rows R reads are y's rows permuted, and q puts them back, so R may
/// read y's rows in order and no transpose is needed.
struct CancelTransposesAroundRowOps : OpRewritePattern<onnx::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::TransposeOp outer,
                                PatternRewriter &rewriter) const override {
    tf::UnflattenTokensOp unflatten = featuresUnflatten(outer.getData());
    if (!unflatten || !unflatten->hasOneUse())
      return rewriter.notifyMatchFailure(outer, "not a transpose of an unflatten_tokens");
    auto inner = unflatten.getLike().getDefiningOp<onnx::TransposeOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(outer, "the rows are not a transpose's");
    SmallVector<int64_t> p = permOf(inner), q = permOf(outer);
    if (!composesToIdentity(p, q) || p.back() != int64_t(p.size()) - 1)
      return rewriter.notifyMatchFailure(outer, "the transposes do not cancel on the rows");
    // Back from the unflatten through single-use row ops to the flatten.
    Value v = unflatten.getInput();
    tf::FlattenTokensOp flatten;
    for (int steps = 0; steps < 16; ++steps) {
      Operation *def = v.getDefiningOp();
      if (!def || !def->getResult(0).hasOneUse())
        return rewriter.notifyMatchFailure(outer, "the rows are read by other ops");
      if (auto f = dyn_cast<tf::FlattenTokensOp>(def)) {
        flatten = f;
        break;
      }
      if (!isRowOp(def))
        return rewriter.notifyMatchFailure(outer, "an op on the way is not row-wise");
      v = def->getOperand(0);
    }
    if (!flatten || flatten.getInput() != inner.getResult() ||
        flatten.getType().getRank() != 2)
      return rewriter.notifyMatchFailure(outer, "the row ops do not start at the transpose");
    Value y = inner.getData();
    rewriter.modifyOpInPlace(flatten, [&] { flatten.getInputMutable().assign(y); });
    Value rows = unflatten.getInput();
    rewriter.replaceOpWithNewOp<tf::UnflattenTokensOp>(outer, outer.getType(), rows, y);
    return success();
  }
};

/// A transpose that moves only size-1 axes (the others keep their order)
/// keeps the row-major order of the elements: a reshape.
struct TransposeOfUnitAxes : OpRewritePattern<onnx::TransposeOp> {
  TransposeOfUnitAxes(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/0) {}
  LogicalResult matchAndRewrite(onnx::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto in = dyn_cast<RankedTensorType>(op.getData().getType());
    auto out = dyn_cast<RankedTensorType>(op.getType());
    if (!in || !out || in.getRank() != out.getRank())
      return failure();
    SmallVector<int64_t> p = permOf(op);
    int64_t last = -1;
    bool moves = false;
    for (auto [i, axis] : llvm::enumerate(p)) {
      moves |= axis != int64_t(i);
      if (in.getDimSize(axis) == 1)
        continue;
      if (axis < last)
        return rewriter.notifyMatchFailure(op, "it reorders axes that are not size 1");
      last = axis;
    }
    if (!moves)
      return failure();
    // The target: static dims as constants, dynamic ones read off the input.
    Location loc = op.getLoc();
    SmallVector<Value> pieces;
    SmallVector<int64_t> run;
    auto flush = [&] {
      if (!run.empty())
        pieces.push_back(i64Vector(rewriter, loc, run));
      run.clear();
    };
    auto i64x1 = RankedTensorType::get({1}, rewriter.getI64Type());
    for (int64_t axis : p) {
      if (!in.isDynamicDim(axis)) {
        run.push_back(in.getDimSize(axis));
        continue;
      }
      flush();
      pieces.push_back(onnx::ShapeOp::create(rewriter, loc, i64x1, op.getData(),
                                             rewriter.getI64IntegerAttr(axis),
                                             rewriter.getI64IntegerAttr(axis + 1)));
    }
    flush();
    Value shape = pieces.size() == 1
                      ? pieces.front()
                      : onnx::ConcatOp::create(
                            rewriter, loc,
                            RankedTensorType::get({out.getRank()}, rewriter.getI64Type()),
                            pieces, rewriter.getI64IntegerAttr(0))
                            .getResult();
    rewriter.replaceOpWithNewOp<onnx::ReshapeOp>(op, out, op.getData(), shape,
                                                 rewriter.getI64IntegerAttr(1));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Slices and splits of transposes
//===----------------------------------------------------------------------===//

/// GatherND(x, [[c]]) (batch_dims 0) is row c of x, kept as a size-1 axis.
struct GatherOneRow : OpRewritePattern<onnx::GatherNDOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::GatherNDOp op,
                                PatternRewriter &rewriter) const override {
    auto data = dyn_cast<RankedTensorType>(op.getData().getType());
    auto indices = dyn_cast<RankedTensorType>(op.getIndices().getType());
    std::optional<SmallVector<int64_t>> c = intConstant(op.getIndices());
    if (op.getBatchDims() != 0 || !data || data.getRank() < 1 || !indices ||
        indices.getRank() != 2 || indices.getDimSize(0) != 1 || indices.getDimSize(1) != 1 ||
        !c || c->size() != 1)
      return rewriter.notifyMatchFailure(op, "not one constant index on axis 0");
    int64_t begin = c->front(), end;
    if (!data.isDynamicDim(0)) {
      const int64_t n = data.getDimSize(0);
      if (begin < -n || begin >= n)
        return rewriter.notifyMatchFailure(op, "the index is out of range");
      begin = begin < 0 ? begin + n : begin;
      end = begin + 1;
    } else {
      end = begin == -1 ? std::numeric_limits<int64_t>::max() : begin + 1;
    }
    Location loc = op.getLoc();
    rewriter.replaceOpWithNewOp<onnx::SliceOp>(
        op, op.getType(), op.getData(), i64Vector(rewriter, loc, {begin}),
        i64Vector(rewriter, loc, {end}), i64Vector(rewriter, loc, {0}),
        i64Vector(rewriter, loc, {1}));
    return success();
  }
};

/// Slice(Transpose(x, p), axes a) → Transpose(Slice(x, axes p[a]), p), so
/// that the transposes meet (and cancel) and the slice is of x's layout.
struct SliceBeforeTranspose : OpRewritePattern<onnx::SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::SliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto tr = slice.getData().getDefiningOp<onnx::TransposeOp>();
    auto in = tr ? dyn_cast<RankedTensorType>(tr.getData().getType()) : RankedTensorType();
    auto out = dyn_cast<RankedTensorType>(slice.getType());
    if (!in || !out || !slice.getAxes())
      return failure();
    std::optional<SmallVector<int64_t>> axes = intConstant(slice.getAxes());
    if (!axes)
      return failure();
    SmallVector<int64_t> p = permOf(tr);
    SmallVector<int64_t> newAxes;
    for (int64_t a : *axes) {
      std::optional<int64_t> axis = normalizeAxis(a, in.getRank());
      if (!axis)
        return failure();
      newAxes.push_back(p[size_t(*axis)]);
    }
    // The sliced x: x's dims with the result's sizes where they are sliced.
    SmallVector<int64_t> shape(in.getShape());
    for (auto [i, axis] : llvm::enumerate(p))
      shape[size_t(axis)] = out.getDimSize(int64_t(i));
    Location loc = slice.getLoc();
    Value sliced = onnx::SliceOp::create(
        rewriter, loc, RankedTensorType::get(shape, in.getElementType()), tr.getData(),
        slice.getStarts(), slice.getEnds(), i64Vector(rewriter, loc, newAxes), slice.getSteps());
    rewriter.replaceOp(slice, transpose(rewriter, loc, sliced, p, out));
    return success();
  }
};

/// Split(Transpose(x, p), axis a) whose results are read only by
/// Transposes back (q∘p = identity) → Split(x, axis p[a]).
struct SplitBeforeTranspose : OpRewritePattern<onnx::SplitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::SplitOp split,
                                PatternRewriter &rewriter) const override {
    auto inner = split.getInput().getDefiningOp<onnx::TransposeOp>();
    std::optional<int64_t> axis = splitAxis(split);
    if (!inner || !axis)
      return failure();
    SmallVector<int64_t> p = permOf(inner);
    auto in = dyn_cast<RankedTensorType>(inner.getData().getType());
    if (!in)
      return failure();
    SmallVector<Type> types;
    for (Value r : split.getOutputs()) {
      auto rt = dyn_cast<RankedTensorType>(r.getType());
      if (!rt)
        return failure();
      SmallVector<int64_t> shape(in.getShape());
      for (auto [i, a] : llvm::enumerate(p))
        shape[size_t(a)] = rt.getDimSize(int64_t(i));
      Type type = RankedTensorType::get(shape, rt.getElementType());
      for (Operation *user : r.getUsers()) {
        auto back = dyn_cast<onnx::TransposeOp>(user);
        if (!back || !composesToIdentity(p, permOf(back)))
          return rewriter.notifyMatchFailure(split, "a part is read by other than a transpose back");
        type = back.getType(); // as static as the transposes knew
      }
      types.push_back(type);
    }
    auto newSplit = onnx::SplitOp::create(rewriter, split.getLoc(), types, inner.getData(),
                                          split.getSplitInput(), p[size_t(*axis)],
                                          split.getNumOutputsAttr(), split.getSplitAttr());
    for (auto [old, part] : llvm::zip(split.getOutputs(), newSplit.getOutputs()))
      for (Operation *user : llvm::make_early_inc_range(old.getUsers()))
        rewriter.replaceOp(user, part);
    rewriter.eraseOp(split);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Fused QKV layouts → transformer.split
//===----------------------------------------------------------------------===//

/// Slice(Reshape(u, [.., G, D]), G axis, b:e) → Reshape(Slice(u, last axis,
/// b*D:e*D), [.., e-b, D]): heads b..e-1 are columns b*D..e*D of u.
struct HeadSliceToColumns : OpRewritePattern<onnx::SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::SliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto reshape = slice.getData().getDefiningOp<onnx::ReshapeOp>();
    std::optional<AxisRange> range = sliceRange(slice);
    auto out = dyn_cast<RankedTensorType>(slice.getType());
    if (!reshape || !range || !out || !splitsLastDim(reshape, reshape.getData()) ||
        range->axis != out.getRank() - 2)
      return rewriter.notifyMatchFailure(slice, "not a slice of heads of a reshaped last axis");
    Value u = reshape.getData();
    auto ut = cast<RankedTensorType>(u.getType());
    const int64_t d = out.getDimSize(out.getRank() - 1);
    SmallVector<int64_t> shape(ut.getShape());
    shape.back() = (range->end - range->begin) * d;
    Location loc = slice.getLoc();
    Value columns = onnx::SliceOp::create(
        rewriter, loc, RankedTensorType::get(shape, ut.getElementType()), u,
        i64Vector(rewriter, loc, {range->begin * d}), i64Vector(rewriter, loc, {range->end * d}),
        i64Vector(rewriter, loc, {ut.getRank() - 1}), i64Vector(rewriter, loc, {1}));
    rewriter.replaceOp(slice, splitLastDim(rewriter, loc, columns, out));
    return success();
  }
};

/// The column blocks the last-axis Slices and Splits reading
/// `unflatten_tokens(%r like %x)` cut: when they do not overlap, one
/// transformer.split of %r (gaps become results nobody reads) and an
/// unflatten of each part.
struct ColumnSlicesToSplit : OpRewritePattern<tf::UnflattenTokensOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::UnflattenTokensOp unflatten,
                                PatternRewriter &rewriter) const override {
    if (!featuresUnflatten(unflatten.getResult()) || unflatten.use_empty())
      return failure();
    auto rows = cast<RankedTensorType>(unflatten.getInput().getType());
    if (rows.isDynamicDim(1))
      return failure();
    const int64_t width = rows.getDimSize(1);
    const int64_t last = unflatten.getType().getRank() - 1;
    // Each result that reads a column block: (value, begin, end).
    struct Part {
      Value value;
      int64_t begin, end;
    };
    SmallVector<Part> parts;
    SmallVector<Operation *> users;
    for (Operation *user : unflatten->getUsers()) {
      if (llvm::is_contained(users, user))
        continue;
      users.push_back(user);
      if (auto slice = dyn_cast<onnx::SliceOp>(user)) {
        std::optional<AxisRange> r = sliceRange(slice);
        if (slice.getData() != unflatten.getResult() || !r || r->axis != last)
          return rewriter.notifyMatchFailure(unflatten, "a slice is not of the last axis");
        parts.push_back({slice.getResult(), r->begin, r->end});
        continue;
      }
      if (auto split = dyn_cast<onnx::SplitOp>(user)) {
        std::optional<int64_t> axis = splitAxis(split);
        std::optional<SmallVector<int64_t>> sizes =
            axis ? splitSizes(split, *axis) : std::nullopt;
        if (!sizes || *axis != last)
          return rewriter.notifyMatchFailure(unflatten, "a split is not of the last axis");
        int64_t offset = 0;
        for (auto [r, size] : llvm::zip(split.getOutputs(), *sizes)) {
          parts.push_back({r, offset, offset + size});
          offset += size;
        }
        continue;
      }
      return rewriter.notifyMatchFailure(unflatten, "read by other than last-axis slices");
    }
    // Cut points; no block may contain another's boundary.
    SmallVector<int64_t> cuts{0, width};
    for (const Part &p : parts) {
      cuts.push_back(p.begin);
      cuts.push_back(p.end);
    }
    llvm::sort(cuts);
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (const Part &p : parts)
      for (int64_t c : cuts)
        if (c > p.begin && c < p.end)
          return rewriter.notifyMatchFailure(unflatten, "column blocks overlap");
    if (cuts.size() < 3)
      return rewriter.notifyMatchFailure(unflatten, "nothing is cut");
    SmallVector<Type> types;
    for (size_t i = 0; i + 1 < cuts.size(); ++i)
      types.push_back(RankedTensorType::get({rows.getDimSize(0), cuts[i + 1] - cuts[i]},
                                            rows.getElementType()));
    Location loc = unflatten.getLoc();
    rewriter.setInsertionPointAfter(unflatten);
    auto split = tf::SplitOp::create(rewriter, loc, types, unflatten.getInput());
    for (const Part &p : parts) {
      size_t index = size_t(llvm::find(cuts, p.begin) - cuts.begin());
      Value view = tf::UnflattenTokensOp::create(rewriter, loc, p.value.getType(),
                                                 split.getResult(unsigned(index)),
                                                 unflatten.getLike());
      rewriter.replaceAllUsesWith(p.value, view);
    }
    for (Operation *user : users)
      rewriter.eraseOp(user);
    return success();
  }
};

/// GPT-NeoX's query_key_value: a linear whose output, viewed as [.., H,
/// k*D], is split on the last axis into q, k, v of every head. Reordering
/// the weight's rows to [part 0 of every head; part 1; ...] makes each part
/// a block of columns: a transformer.split of the new linear.
struct PerHeadFusedProjection : OpRewritePattern<onnx::SplitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::SplitOp split,
                                PatternRewriter &rewriter) const override {
    auto reshape = split.getInput().getDefiningOp<onnx::ReshapeOp>();
    std::optional<int64_t> axis = splitAxis(split);
    auto heads = reshape ? dyn_cast<RankedTensorType>(reshape.getType()) : RankedTensorType();
    if (!reshape || !axis || !heads || *axis != heads.getRank() - 1 || !reshape->hasOneUse())
      return failure();
    tf::UnflattenTokensOp unflatten = featuresUnflatten(reshape.getData());
    if (!unflatten || !unflatten->hasOneUse() || !splitsLastDim(reshape, unflatten.getResult()))
      return rewriter.notifyMatchFailure(split, "not a split of heads of a token-major value");
    auto linear = unflatten.getInput().getDefiningOp<tf::LinearOp>();
    if (!linear || !linear->hasOneUse() || linear.getWeightScale() ||
        linear.getWeightZeroPoint() || linear.getInputScale() || linear.getGranularityAttr() ||
        linear.getGroupSizeAttr())
      return rewriter.notifyMatchFailure(split, "not the output of a float linear");
    std::optional<SmallVector<int64_t>> sizes = splitSizes(split, *axis);
    const int64_t h = heads.getDimSize(heads.getRank() - 2);
    const int64_t w = heads.getDimSize(heads.getRank() - 1);
    if (!sizes || sizes->size() < 2 || h < 2)
      return failure();
    // Row order of the new weight: part by part, head by head.
    SmallVector<int64_t> order;
    int64_t offset = 0;
    for (int64_t size : *sizes) {
      for (int64_t head = 0; head < h; ++head)
        for (int64_t c = 0; c < size; ++c)
          order.push_back(head * w + offset + c);
      offset += size;
    }
    FailureOr<Value> weight = permuteRows(rewriter, linear.getWeight(), order, ".heads");
    if (failed(weight))
      return rewriter.notifyMatchFailure(split, "the weight is not a float constant");
    Value bias = linear.getBias();
    if (bias) {
      FailureOr<Value> b = permuteRows(rewriter, bias, order, ".heads");
      if (failed(b))
        return rewriter.notifyMatchFailure(split, "the bias is not a float constant");
      bias = *b;
    }
    rewriter.setInsertionPoint(linear);
    Location loc = linear.getLoc();
    auto fused = tf::LinearOp::create(rewriter, loc, linear.getType(), linear.getX(), *weight,
                                      bias, Value(), Value(), Value(),
                                      tf::QuantGranularityAttr(), IntegerAttr(),
                                      linear.getActivationAttr());
    auto rows = cast<RankedTensorType>(linear.getType());
    SmallVector<Type> types;
    for (int64_t size : *sizes)
      types.push_back(RankedTensorType::get({rows.getDimSize(0), h * size}, rows.getElementType()));
    auto parts = tf::SplitOp::create(rewriter, loc, types, fused.getResult());
    rewriter.setInsertionPoint(split);
    SmallVector<Value> views;
    for (auto [part, old] : llvm::zip(parts.getResults(), split.getOutputs())) {
      auto ot = cast<RankedTensorType>(old.getType());
      SmallVector<int64_t> shape(ot.getShape().drop_back(2));
      shape.push_back(ot.getDimSize(ot.getRank() - 2) * ot.getDimSize(ot.getRank() - 1));
      Value columns = tf::UnflattenTokensOp::create(
          rewriter, split.getLoc(), RankedTensorType::get(shape, ot.getElementType()), part,
          unflatten.getLike());
      views.push_back(splitLastDim(rewriter, split.getLoc(), columns, ot));
    }
    Value oldWeight = linear.getWeight(), oldBias = linear.getBias();
    rewriter.replaceOp(split, views);
    rewriter.eraseOp(reshape);
    rewriter.eraseOp(unflatten);
    rewriter.eraseOp(linear);
    for (Value v : {oldWeight, oldBias})
      if (v && v.use_empty())
        rewriter.eraseOp(v.getDefiningOp());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Token views spelled as ONNX ops
//===----------------------------------------------------------------------===//

/// Reshape(r [T, F], Concat(Shape(x)[0], .., Shape(x)[k-1], F)) with x of
/// rank k: r viewed with x's dims as token dims, unflatten_tokens(r like x)
/// (GPT-2's Conv1D writes it after its addmm).
struct ShapeReshapeIsUnflatten : OpRewritePattern<onnx::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    auto rows = dyn_cast<RankedTensorType>(reshape.getData().getType());
    auto out = dyn_cast<RankedTensorType>(reshape.getType());
    auto concat = reshape.getShape().getDefiningOp<onnx::ConcatOp>();
    if (!rows || !out || !concat || rows.getRank() != 2 || rows.isDynamicDim(1) ||
        out.getRank() < 2 || out.getDimSize(out.getRank() - 1) != rows.getDimSize(1) ||
        int64_t(concat.getInputs().size()) != out.getRank())
      return failure();
    Value like;
    for (auto [i, piece] : llvm::enumerate(concat.getInputs().drop_back())) {
      auto shape = piece.getDefiningOp<onnx::ShapeOp>();
      if (!shape || (like && shape.getData() != like))
        return failure();
      like = shape.getData();
      auto lt = dyn_cast<RankedTensorType>(like.getType());
      std::optional<int64_t> end = shape.getEnd();
      if (!lt || lt.getRank() != out.getRank() - 1 || int64_t(shape.getStart()) != int64_t(i) ||
          !end || *end != int64_t(i) + 1)
        return failure();
    }
    std::optional<SmallVector<int64_t>> last = intConstant(concat.getInputs().back());
    if (!like || !last || last->size() != 1 ||
        (last->front() != rows.getDimSize(1) && last->front() != -1))
      return failure();
    rewriter.replaceOpWithNewOp<tf::UnflattenTokensOp>(reshape, out, reshape.getData(), like);
    return success();
  }
};

/// flatten_tokens(Unsqueeze(x)) when the unsqueezed axes are token axes:
/// the same rows as flatten_tokens(x) (GPT-2's position ids, unsqueezed to
/// [1, T] for the position embedding).
struct FlattenOfUnsqueeze : OpRewritePattern<tf::FlattenTokensOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::FlattenTokensOp flatten,
                                PatternRewriter &rewriter) const override {
    auto unsqueeze = flatten.getInput().getDefiningOp<onnx::UnsqueezeOp>();
    if (!unsqueeze)
      return failure();
    auto in = dyn_cast<RankedTensorType>(unsqueeze.getData().getType());
    auto mid = dyn_cast<RankedTensorType>(unsqueeze.getType());
    std::optional<SmallVector<int64_t>> axes;
    if (Value input = unsqueeze.getAxesInput())
      axes = intConstant(input);
    else if (std::optional<ArrayRef<int64_t>> attr = unsqueeze.getAxes())
      axes = SmallVector<int64_t>(attr->begin(), attr->end());
    const bool ids = flatten.getType().getRank() == 1;
    if (!in || !mid || !axes || in.getRank() < 1 || (!ids && in.getRank() < 2))
      return failure();
    for (int64_t a : *axes) {
      std::optional<int64_t> axis = normalizeAxis(a, mid.getRank());
      if (!axis || (!ids && *axis == mid.getRank() - 1))
        return failure();
    }
    Value x = unsqueeze.getData();
    if (x.getType() == flatten.getType()) {
      rewriter.replaceOp(flatten, x);
      return success();
    }
    rewriter.modifyOpInPlace(flatten, [&] { flatten.getInputMutable().assign(x); });
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Per-head norms
//===----------------------------------------------------------------------===//

/// Reshape(unflatten(norm(flatten(x)) like x), [-1, H, D]), x [.., H, D]:
/// the norm of every head row of x, viewed per token → norm(Reshape(x,
/// [-1, H, D])) on [tokens, H, D], the per-head norm accel-partition
/// follows between a projection and its rotary.
struct PerHeadNorm : OpRewritePattern<onnx::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(onnx::ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    auto out = dyn_cast<RankedTensorType>(reshape.getType());
    std::optional<SmallVector<int64_t>> shape = intConstant(reshape.getShape());
    tf::UnflattenTokensOp unflatten = featuresUnflatten(reshape.getData());
    if (!out || out.getRank() != 3 || out.isDynamicDim(1) || out.isDynamicDim(2) || !shape ||
        shape->size() != 3 || (*shape)[0] != -1 || (*shape)[1] != out.getDimSize(1) ||
        (*shape)[2] != out.getDimSize(2) || !unflatten || !unflatten->hasOneUse())
      return failure();
    Operation *norm = unflatten.getInput().getDefiningOp();
    if (!norm || !isa<tf::RmsNormOp, tf::LayerNormOp>(norm) || !norm->hasOneUse())
      return rewriter.notifyMatchFailure(reshape, "not a reshape of a norm's rows");
    auto flatten = norm->getOperand(0).getDefiningOp<tf::FlattenTokensOp>();
    Value x = unflatten.getLike();
    auto xt = dyn_cast<RankedTensorType>(x.getType());
    if (!flatten || flatten.getInput() != x || !flatten->hasOneUse() || !xt ||
        xt.getRank() < 3 || !llvm::equal(xt.getShape().take_back(2), out.getShape().drop_front()))
      return rewriter.notifyMatchFailure(reshape, "the norm's rows are not heads of x");
    Location loc = reshape.getLoc();
    Value headsOfX = raise::reshape(rewriter, loc, x, *shape, out);
    Operation *perHead = rewriter.clone(*norm);
    perHead->setOperand(0, headsOfX);
    perHead->getResult(0).setType(out);
    rewriter.replaceOp(reshape, perHead->getResults());
    return success();
  }
};

struct RaiseViewsPass : accel::impl::RaiseViewsBase<RaiseViewsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaiseViewsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void accel::populateRaiseViewsPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<CancelTransposesAroundRowOps, GatherOneRow, SliceBeforeTranspose,
               SplitBeforeTranspose, HeadSliceToColumns, ColumnSlicesToSplit,
               PerHeadFusedProjection, ShapeReshapeIsUnflatten, FlattenOfUnsqueeze,
               PerHeadNorm>(ctx);
  patterns.add<TransposeOfUnitAxes>(ctx);
  onnx::TransposeOp::getCanonicalizationPatterns(patterns, ctx);
  onnx::ReshapeOp::getCanonicalizationPatterns(patterns, ctx);
}
