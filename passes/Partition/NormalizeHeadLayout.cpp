//===- NormalizeHeadLayout.cpp - ONNX head glue → split / split_heads -----===//
//
// Raising leaves the exporter's own reshapes around attention: q, k and v
// reach transformer.attention through unflatten_tokens, onnx.Reshape to
// [-1, heads, head_dim], onnx.Split or onnx.Slice of a packed projection;
// the result reaches o_proj through onnx.Reshape back to [batch, seq, -1]
// and flatten_tokens. Every one of these only reinterprets the row-major
// elements of a token-major value, so each value on such a chain is
// "columns [begin, end) of a token-major source" (a ColumnView). This file
// replaces each chain by what it computes, in transformer ops whose types
// the partition rules rewrite: transformer.split of the source into the
// column blocks that are read, split_heads to [tokens, heads, head_dim],
// and merge_heads back. The rewrite is exact at any rank count; the old
// glue dies and is erased.
//
//===----------------------------------------------------------------------===//
#include "PartitionRules.h"

#include "accel/dialects/Onnx/OnnxOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace accel;
using namespace accel::partition;
namespace tf = accel::transformer;

namespace {

/// Row-major, the value's elements are source[t, begin:end] for every token
/// t of the token-major `source` ([tokens, features] or [tokens, heads,
/// head_dim], read as [tokens, heads * head_dim]).
struct ColumnView {
  Value source;
  int64_t begin = 0, end = 0;
};

/// The number of features of a token-major value (dim 0 dynamic, the others
/// static), or nullopt.
std::optional<int64_t> tokenMajorFeatures(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || t.getRank() < 2 || t.getRank() > 3 || !t.isDynamicDim(0))
    return std::nullopt;
  int64_t f = 1;
  for (int64_t i = 1; i < t.getRank(); ++i) {
    if (t.isDynamicDim(i))
      return std::nullopt;
    f *= t.getDimSize(i);
  }
  return f;
}

/// True when some static suffix of `type`'s dims, leaving at least one
/// leading (token) dim, has `features` elements.
bool hasFeatureSuffix(Type type, int64_t features) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t)
    return false;
  int64_t p = 1;
  for (int64_t i = t.getRank() - 1; i >= 1; --i) {
    if (t.isDynamicDim(i))
      return false;
    p *= t.getDimSize(i);
    if (p == features)
      return true;
    if (p > features)
      return false;
  }
  return false;
}

/// The single integer of a one-element integer onnx.Constant.
std::optional<int64_t> scalarConstant(Value v) {
  DenseIntElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr))) {
    auto c = v ? v.getDefiningOp<onnx::ConstantOp>() : nullptr;
    if (!c || !c.getValueAttr())
      return std::nullopt;
    attr = dyn_cast<DenseIntElementsAttr>(c.getValueAttr());
  }
  if (!attr || attr.getNumElements() != 1)
    return std::nullopt;
  return (*attr.begin()).getSExtValue();
}

bool isViewOp(Operation *op) {
  return isa<onnx::ReshapeOp, onnx::IdentityOp, onnx::SplitOp, onnx::SliceOp,
             tf::FlattenTokensOp, tf::UnflattenTokensOp, tf::SplitHeadsOp, tf::MergeHeadsOp,
             tf::SplitOp>(op);
}

std::optional<ColumnView> columnView(Value v);

/// `v` viewing the same columns as `data` (a reshape of it).
std::optional<ColumnView> through(Value v, Value data) {
  std::optional<ColumnView> inner = columnView(data);
  if (!inner || !hasFeatureSuffix(v.getType(), inner->end - inner->begin))
    return std::nullopt;
  return inner;
}

/// The columns of result `index` of a split of `data` along its last axis,
/// which must be its only feature dim.
std::optional<ColumnView> lastAxisPart(Value data, int64_t start, int64_t size) {
  auto t = dyn_cast<RankedTensorType>(data.getType());
  if (!t || t.getRank() < 2 || t.isDynamicDim(t.getRank() - 1))
    return std::nullopt;
  std::optional<ColumnView> inner = columnView(data);
  int64_t last = t.getDimSize(t.getRank() - 1);
  if (!inner || inner->end - inner->begin != last || start < 0 || start + size > last)
    return std::nullopt;
  return ColumnView{inner->source, inner->begin + start, inner->begin + start + size};
}

std::optional<ColumnView> columnView(Value v) {
  Operation *op = v.getDefiningOp();
  if (op && isViewOp(op)) {
    if (auto r = dyn_cast<onnx::ReshapeOp>(op))
      return through(v, r.getData());
    if (auto i = dyn_cast<onnx::IdentityOp>(op))
      return through(v, i->getOperand(0));
    if (isa<tf::FlattenTokensOp, tf::UnflattenTokensOp, tf::SplitHeadsOp, tf::MergeHeadsOp>(op))
      return through(v, op->getOperand(0));
    unsigned index = cast<OpResult>(v).getResultNumber();
    auto lastDim = [](Value x) {
      auto t = cast<RankedTensorType>(x.getType());
      return t.getDimSize(t.getRank() - 1);
    };
    if (auto split = dyn_cast<tf::SplitOp>(op)) {
      int64_t offset = 0;
      for (unsigned i = 0; i < index; ++i)
        offset += lastDim(split.getResult(i));
      return lastAxisPart(split.getInput(), offset, lastDim(v));
    }
    if (auto split = dyn_cast<onnx::SplitOp>(op)) {
      auto t = dyn_cast<RankedTensorType>(split.getInput().getType());
      if (!t)
        return std::nullopt;
      int64_t axis = split.getAxis();
      if (axis < 0)
        axis += t.getRank();
      if (axis != t.getRank() - 1)
        return std::nullopt;
      int64_t offset = 0;
      for (unsigned i = 0; i < index; ++i) {
        auto rt = dyn_cast<RankedTensorType>(split.getResult(i).getType());
        if (!rt || rt.isDynamicDim(rt.getRank() - 1))
          return std::nullopt;
        offset += rt.getDimSize(rt.getRank() - 1);
      }
      auto vt = dyn_cast<RankedTensorType>(v.getType());
      if (!vt || vt.isDynamicDim(vt.getRank() - 1))
        return std::nullopt;
      return lastAxisPart(split.getInput(), offset, vt.getDimSize(vt.getRank() - 1));
    }
    if (auto slice = dyn_cast<onnx::SliceOp>(op)) {
      auto t = dyn_cast<RankedTensorType>(slice.getData().getType());
      auto vt = dyn_cast<RankedTensorType>(v.getType());
      if (!t || !vt || vt.isDynamicDim(vt.getRank() - 1) || t.isDynamicDim(t.getRank() - 1))
        return std::nullopt;
      std::optional<int64_t> start = scalarConstant(slice.getStarts());
      std::optional<int64_t> axis =
          slice.getAxes() ? scalarConstant(slice.getAxes()) : std::optional<int64_t>(0);
      std::optional<int64_t> step =
          slice.getSteps() ? scalarConstant(slice.getSteps()) : std::optional<int64_t>(1);
      if (!start || !axis || !step || *step != 1)
        return std::nullopt;
      int64_t a = *axis < 0 ? *axis + t.getRank() : *axis;
      int64_t last = t.getDimSize(t.getRank() - 1);
      if (a != t.getRank() - 1)
        return std::nullopt;
      int64_t s = *start < 0 ? *start + last : *start;
      s = std::clamp<int64_t>(s, 0, last);
      return lastAxisPart(slice.getData(), s, vt.getDimSize(vt.getRank() - 1));
    }
    return std::nullopt;
  }
  if (std::optional<int64_t> f = tokenMajorFeatures(v))
    return ColumnView{v, 0, *f};
  return std::nullopt;
}

/// An operand to be replaced by the transformer form of its view.
struct Request {
  OpOperand *use;
  ColumnView view;
};

bool isHeadwise(Operation *op) {
  if (isa<tf::RotaryOp>(op))
    return true;
  if (auto norm = dyn_cast<tf::RmsNormOp>(op))
    return cast<RankedTensorType>(norm.getX().getType()).getRank() == 3;
  return false;
}

} // namespace

std::string accel::partition::describeLayer(tf::AttentionOp attention) {
  return "layer " + std::to_string(attention.getLayer());
}

LogicalResult accel::partition::normalizeHeadLayout(Context &ctx, tf::AttentionOp attention) {
  RewriterBase &rewriter = ctx.rewriter;
  SmallVector<Request> requests;

  // q, k, v back to their producers, through head-wise ops.
  SmallVector<OpOperand *> worklist{&attention.getQMutable(), &attention.getKMutable(),
                                    &attention.getVMutable()};
  while (!worklist.empty()) {
    OpOperand *use = worklist.pop_back_val();
    std::optional<ColumnView> view = columnView(use->get());
    if (!view)
      return attention.emitError()
             << "tensor parallelism cannot follow the heads of " << describeLayer(attention)
             << " from their projection (an operand of '" << use->getOwner()->getName()
             << "' is not a reshape, split or slice of a token-major value)";
    requests.push_back({use, *view});
    Operation *producer = view->source.getDefiningOp();
    if (producer && isHeadwise(producer))
      worklist.push_back(&producer->getOpOperand(0));
  }

  // The result forward to o_proj, through reshapes.
  OpOperand *consumer = nullptr;
  SmallVector<Value> frontier{attention.getResult()};
  while (!frontier.empty()) {
    Value v = frontier.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      bool viewData = isViewOp(user) && use.getOperandNumber() == 0 &&
                      !isa<onnx::SplitOp, onnx::SliceOp, tf::SplitOp>(user);
      if (viewData) {
        frontier.append(user->result_begin(), user->result_end());
        continue;
      }
      if (consumer)
        return attention.emitError()
               << "tensor parallelism needs the result of " << describeLayer(attention)
               << " to feed one output projection, but it has more readers";
      consumer = &use;
    }
  }
  // The projection reads the result, or (W8A8) its quantised form.
  Operation *owner = consumer ? consumer->getOwner() : nullptr;
  tf::LinearOp proj;
  if (owner && isa<tf::QuantizeOp, tf::DynamicQuantizeOp>(owner)) {
    Value q = owner->getResult(0);
    if (q.hasOneUse())
      proj = dyn_cast<tf::LinearOp>(*q.getUsers().begin());
    if (proj && proj.getX() != q)
      proj = {};
  } else if (owner) {
    proj = dyn_cast<tf::LinearOp>(owner);
  }
  std::optional<ColumnView> outView = consumer ? columnView(consumer->get()) : std::nullopt;
  auto qType = cast<RankedTensorType>(attention.getQ().getType());
  int64_t width = qType.getDimSize(1) * qType.getDimSize(2);
  if (!proj || consumer->getOperandNumber() != 0 || !outView ||
      outView->source != attention.getResult() || outView->begin != 0 || outView->end != width)
    return attention.emitError() << "tensor parallelism needs the result of "
                                 << describeLayer(attention)
                                 << " to reach a linear output projection unchanged (through "
                                    "reshapes only)";

  // One transformer.split per source, at the column boundaries read.
  // A request for the whole of a source of its own type is the source.
  llvm::erase_if(requests, [](const Request &r) {
    std::optional<int64_t> features = tokenMajorFeatures(r.view.source);
    if (r.view.begin != 0 || r.view.end != features ||
        r.use->get().getType() != r.view.source.getType())
      return false;
    r.use->set(r.view.source);
    return true;
  });
  llvm::MapVector<Value, SmallVector<int64_t>> bounds;
  for (const Request &r : requests) {
    SmallVector<int64_t> &b = bounds[r.view.source];
    b.push_back(r.view.begin);
    b.push_back(r.view.end);
  }
  llvm::DenseMap<std::pair<Value, int64_t>, Value> tiles; // (source, begin) → columns
  for (auto &[source, b] : bounds) {
    int64_t features = *tokenMajorFeatures(source);
    b.push_back(0);
    b.push_back(features);
    llvm::sort(b);
    b.erase(std::unique(b.begin(), b.end()), b.end());
    rewriter.setInsertionPointAfterValue(source);
    Value flat = source;
    auto st = cast<RankedTensorType>(source.getType());
    Type elem = st.getElementType();
    if (st.getRank() == 3)
      flat = tf::MergeHeadsOp::create(rewriter, source.getLoc(),
                                      RankedTensorType::get({ShapedType::kDynamic, features}, elem),
                                      source);
    if (b.size() == 2) {
      tiles[{source, 0}] = flat;
      continue;
    }
    SmallVector<Type> parts;
    for (size_t i = 0; i + 1 < b.size(); ++i)
      parts.push_back(RankedTensorType::get({ShapedType::kDynamic, b[i + 1] - b[i]}, elem));
    auto split = tf::SplitOp::create(rewriter, source.getLoc(), parts, flat);
    for (size_t i = 0; i + 1 < b.size(); ++i)
      tiles[{source, b[i]}] = split.getResult(unsigned(i));
  }
  for (const Request &r : requests) {
    Value part = tiles.lookup({r.view.source, r.view.begin});
    auto pt = part ? cast<RankedTensorType>(part.getType()) : RankedTensorType();
    if (!part || pt.getDimSize(1) != r.view.end - r.view.begin)
      return attention.emitError() << "tensor parallelism cannot split the projection of "
                                   << describeLayer(attention)
                                   << ": q, k and v read overlapping columns";
    auto target = cast<RankedTensorType>(r.use->get().getType());
    rewriter.setInsertionPoint(r.use->getOwner());
    Value replacement = part;
    if (target.getRank() == 3)
      replacement = tf::SplitHeadsOp::create(rewriter, r.use->getOwner()->getLoc(), target, part);
    else if (target != pt)
      return attention.emitError() << "internal error: cannot rebuild an operand of "
                                   << describeLayer(attention);
    r.use->set(replacement);
  }
  rewriter.setInsertionPointAfter(attention);
  auto merged = tf::MergeHeadsOp::create(
      rewriter, attention.getLoc(),
      RankedTensorType::get({ShapedType::kDynamic, width}, qType.getElementType()),
      attention.getResult());
  consumer->set(merged);
  return success();
}
