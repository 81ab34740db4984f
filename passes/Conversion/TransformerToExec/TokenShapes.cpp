//===- TokenShapes.cpp - symbolic shapes of a token-major function ---------===//
//
// One forward pass over the function's block. Every value gets a SymShape
// (its rank from its type, each dimension a constant, k x T, k x S or
// unknown); small integer tensors computed from shapes also get their
// contents, so that a Reshape whose target shape was assembled by
// Shape/Gather/Concat has a known result. Rules that do not apply leave
// dimensions unknown; the lowering refuses to place a buffer it cannot size.
//
//===----------------------------------------------------------------------===//
#include "TokenShapes.h"

#include "accel/dialects/Onnx/OnnxOps.h"
#include "accel/dialects/Transformer/TransformerOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
namespace tf = accel::transformer;
namespace ox = accel::onnx;

namespace accel::conversion {

std::string SymDim::str() const {
  switch (kind) {
  case kConst:
    return std::to_string(value);
  case kScaled:
    return (value == 1 ? std::string() : std::to_string(value)) +
           (unit == StepUnit::tokens ? "T" : "S");
  case kUnknown:
    return "?";
  }
  return "?";
}

SymDim product(ArrayRef<SymDim> dims) {
  int64_t constant = 1;
  std::optional<SymDim> scaled;
  for (const SymDim &d : dims) {
    if (d.isConst()) {
      constant *= d.value;
    } else if (d.isScaled() && !scaled) {
      scaled = d;
    } else {
      return SymDim::unknown();
    }
  }
  if (!scaled)
    return SymDim::constant(constant);
  if (constant == 0)
    return SymDim::constant(0);
  return SymDim::scaled(scaled->value * constant, scaled->unit);
}

namespace {

/// a * b, a / b, a + b, a - b on dimensions (affine in one unit only).
SymDim mul(SymDim a, SymDim b) { return product({a, b}); }
SymDim div(SymDim a, SymDim b) {
  if (a.isConst() && b.isConst() && b.value != 0)
    return SymDim::constant(a.value / b.value);
  if (a.isScaled() && b.isConst() && b.value > 0 && a.value % b.value == 0)
    return SymDim::scaled(a.value / b.value, a.unit);
  if (a.isScaled() && b.isScaled() && a.unit == b.unit && a.value % b.value == 0)
    return SymDim::constant(a.value / b.value);
  return SymDim::unknown();
}
SymDim add(SymDim a, SymDim b) {
  if (a.isConst() && b.isConst())
    return SymDim::constant(a.value + b.value);
  if (a.isScaled() && b.isConst() && b.value == 0)
    return a;
  if (b.isScaled() && a.isConst() && a.value == 0)
    return b;
  if (a.isScaled() && b.isScaled() && a.unit == b.unit)
    return SymDim::scaled(a.value + b.value, a.unit);
  return SymDim::unknown();
}
SymDim sub(SymDim a, SymDim b) {
  if (a.isConst() && b.isConst())
    return SymDim::constant(a.value - b.value);
  if (a.isScaled() && b.isConst() && b.value == 0)
    return a;
  if (a.isScaled() && b.isScaled() && a.unit == b.unit && a.value > b.value)
    return SymDim::scaled(a.value - b.value, a.unit);
  if (a.isScaled() && b.isScaled() && a.unit == b.unit && a.value == b.value)
    return SymDim::constant(0);
  return SymDim::unknown();
}

/// Numpy broadcasting of two shapes (right-aligned).
std::optional<SymShape> broadcast(const SymShape &a, const SymShape &b) {
  size_t rank = std::max(a.size(), b.size());
  SymShape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    SymDim da = i < rank - a.size() ? SymDim::constant(1) : a[i - (rank - a.size())];
    SymDim db = i < rank - b.size() ? SymDim::constant(1) : b[i - (rank - b.size())];
    if (da.isConst() && da.value == 1)
      out[i] = db;
    else if (db.isConst() && db.value == 1)
      out[i] = da;
    else if (da == db)
      out[i] = da;
    else if (!da.isKnown() || !db.isKnown())
      out[i] = da.isKnown() ? da : db; // one side unknown: trust the other
    else
      return std::nullopt;
  }
  return out;
}

/// Normalises an ONNX axis against `rank`.
std::optional<int64_t> axisOf(int64_t axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return std::nullopt;
  return axis;
}

/// The integer elements of a constant tensor operand (onnx.Constant's
/// value, value_int, value_ints), when it is one.
std::optional<SmallVector<int64_t>> constInts(Value v) {
  if (!v)
    return std::nullopt;
  auto c = v.getDefiningOp<ox::ConstantOp>();
  if (!c)
    return std::nullopt;
  SmallVector<int64_t> out;
  if (auto i = c->getAttrOfType<IntegerAttr>("value_int"))
    return SmallVector<int64_t>{i.getInt()};
  if (auto is = c->getAttrOfType<DenseI64ArrayAttr>("value_ints"))
    return SmallVector<int64_t>(is.asArrayRef());
  auto attr = c->getAttrOfType<DenseIntElementsAttr>("value");
  if (!attr || attr.getNumElements() > 64)
    return std::nullopt;
  for (const APInt &x : attr.getValues<APInt>())
    out.push_back(x.getSExtValue());
  return out;
}

bool isElementwise(StringRef name) {
  static constexpr StringLiteral kOps[] = {
      "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Equal", "Greater", "GreaterOrEqual", "Less",
      "LessOrEqual", "And", "Or", "Xor", "Where", "Max", "Min", "Sum", "Sqrt", "Reciprocal", "Neg",
      "Sin", "Cos", "Tanh", "Sigmoid", "Erf", "Relu", "Abs", "Exp", "Log", "Floor", "Ceil",
      "Identity", "Not", "Gelu", "IsNaN", "Clip", "Cast", "Softmax", "Trilu", "CumSum",
      "RMSNormalization"};
  return llvm::is_contained(kOps, name);
}

} // namespace

TokenShapes::TokenShapes(func::FuncOp func) {
  if (func.isExternal())
    return;
  // The token ids: the first tensor argument, [T].
  for (BlockArgument arg : func.getArguments())
    if (auto t = dyn_cast<RankedTensorType>(arg.getType())) {
      set(arg, SymShape(t.getRank(), SymDim::scaled(1, StepUnit::tokens)));
      break;
    }
  for (Operation &op : func.getBody().front())
    inferOp(&op);
}

std::optional<SymShape> TokenShapes::shape(Value value) const {
  auto it = shapes_.find(value);
  if (it != shapes_.end())
    return it->second;
  if (auto t = dyn_cast<RankedTensorType>(value.getType()); t && t.hasStaticShape())
    return fromType(value, SymDim::unknown());
  return std::nullopt;
}

std::optional<SymShape> TokenShapes::contents(Value value) const {
  auto it = contents_.find(value);
  if (it == contents_.end() || !llvm::all_of(it->second, [](SymDim d) { return d.isKnown(); }))
    return std::nullopt;
  return it->second;
}

bool TokenShapes::isKnown(Value value) const {
  std::optional<SymShape> s = shape(value);
  return s && llvm::all_of(*s, [](SymDim d) { return d.isKnown(); });
}

SymShape TokenShapes::fromType(Value value, SymDim fill) const {
  SymShape s;
  auto t = dyn_cast<RankedTensorType>(value.getType());
  if (!t)
    return s;
  for (int64_t d : t.getShape())
    s.push_back(ShapedType::isDynamic(d) ? fill : SymDim::constant(d));
  return s;
}

void TokenShapes::inferOp(Operation *op) {
  StringRef name = op->getName().getStringRef();
  if (name.consume_front("onnx."))
    inferOnnx(op, name);
  else if (isa<tf::TransformerDialect>(op->getDialect()))
    inferTransformer(op);
  // Whatever a rule did not cover: static types are known.
  for (Value r : op->getResults())
    if (!shapes_.count(r))
      set(r, fromType(r, SymDim::unknown()));
}

void TokenShapes::inferTransformer(Operation *op) {
  auto rowsOf = [&](Value v) -> SymDim {
    std::optional<SymShape> s = shape(v);
    return s && !s->empty() ? (*s)[0] : SymDim::unknown();
  };
  // Each dynamic result dimension from `rows`, static ones from the type.
  auto withRows = [&](Value r, SymDim rows) { set(r, fromType(r, rows)); };

  if (auto p = dyn_cast<tf::PositionsOp>(op))
    return withRows(p.getResult(), SymDim::scaled(1, StepUnit::tokens));
  if (auto e = dyn_cast<tf::EmbeddingOp>(op))
    return withRows(e.getResult(), product(*shape(e.getIds())));
  if (auto l = dyn_cast<tf::LogitsOp>(op))
    return withRows(l.getResult(),
                    l.getBatch() ? SymDim::scaled(1, StepUnit::seqs) : rowsOf(l.getHidden()));
  if (auto f = dyn_cast<tf::FlattenTokensOp>(op)) {
    std::optional<SymShape> in = shape(f.getInput());
    if (!in || in->empty())
      return;
    SymShape s;
    auto rt = f.getResult().getType();
    if (rt.getRank() == 1) {
      s.push_back(product(*in));
    } else {
      s.push_back(product(ArrayRef<SymDim>(*in).drop_back()));
      s.push_back(in->back());
    }
    return set(f.getResult(), s);
  }
  if (auto u = dyn_cast<tf::UnflattenTokensOp>(op)) {
    std::optional<SymShape> like = shape(u.getLike()), in = shape(u.getInput());
    if (!like || !in)
      return;
    int64_t n = u.getNumTokenDims();
    SymShape s(like->begin(), like->begin() + std::min<int64_t>(n, like->size()));
    s.append(in->begin() + 1, in->end());
    return set(u.getResult(), s);
  }
  if (auto t = dyn_cast<tf::PpTransferOp>(op)) {
    // Another stage's value, shape tensors included (accelc -pp hands the
    // shapes a stage's Reshapes read over with the activations).
    if (std::optional<SymShape> in = shape(t.getInput()))
      set(t.getResult(), *in);
    if (std::optional<SymShape> c = contents(t.getInput()))
      setContents(t.getResult(), *c);
    return;
  }
  if (auto g = dyn_cast<tf::AllGatherOp>(op)) {
    std::optional<SymShape> in = shape(g.getInput());
    if (!in)
      return;
    SymShape s = *in;
    if (std::optional<int64_t> axis = axisOf(int64_t(g.getAxis()), s.size()))
      s[*axis] = mul(s[*axis], SymDim::constant(int64_t(g.getGroupSize())));
    return set(g.getResult(), s);
  }
  // Everything else is token-wise: dynamic dimensions are operand 0's rows.
  SymDim rows = op->getNumOperands() ? rowsOf(op->getOperand(0)) : SymDim::unknown();
  for (Value r : op->getResults())
    withRows(r, rows);
}

void TokenShapes::inferOnnx(Operation *op, StringRef name) {
  auto shapeOf = [&](unsigned i) -> std::optional<SymShape> {
    return i < op->getNumOperands() ? shape(op->getOperand(i)) : std::nullopt;
  };
  auto contentsOf = [&](Value v) -> std::optional<SymShape> {
    if (!v)
      return std::nullopt;
    if (std::optional<SymShape> c = contents(v))
      return c;
    if (std::optional<SmallVector<int64_t>> ints = constInts(v)) {
      SymShape c;
      for (int64_t x : *ints)
        c.push_back(SymDim::constant(x));
      return c;
    }
    return std::nullopt;
  };
  auto rankedResult = [&](unsigned i) {
    return dyn_cast<RankedTensorType>(op->getResult(i).getType());
  };

  if (auto c = dyn_cast<ox::ConstantOp>(op)) {
    if (std::optional<SmallVector<int64_t>> ints = constInts(c.getResult());
        ints && ints->size() <= 64) {
      SymShape s;
      for (int64_t x : *ints)
        s.push_back(SymDim::constant(x));
      setContents(c.getResult(), s);
    }
    return;
  }
  if (auto s = dyn_cast<ox::ShapeOp>(op)) {
    std::optional<SymShape> in = shape(s.getData());
    if (!in)
      return;
    int64_t rank = in->size(), start = s.getStart(), end = s.getEnd().value_or(rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    SymShape c(in->begin() + start, in->begin() + std::max(start, end));
    set(s.getResult(), {SymDim::constant(int64_t(c.size()))});
    setContents(s.getResult(), c);
    return;
  }
  if (auto r = dyn_cast<ox::ReshapeOp>(op)) {
    std::optional<SymShape> in = shape(r.getData()), target = contentsOf(r.getShape());
    if (!in || !target) {
      // Without the target's contents the result type may still say it all.
      if (in)
        if (RankedTensorType t = rankedResult(0); t && t.getNumDynamicDims() == 1 &&
                                                 product(*in).isKnown()) {
          SymShape s = fromType(r.getResult(), SymDim::unknown());
          SymDim known = product(llvm::to_vector(llvm::make_filter_range(
              s, [](SymDim d) { return d.isKnown(); })));
          for (SymDim &d : s)
            if (!d.isKnown())
              d = div(product(*in), known);
          set(r.getResult(), s);
        }
      return;
    }
    SymShape s;
    int64_t inferred = -1;
    for (auto [i, d] : llvm::enumerate(*target)) {
      if (d.isConst() && d.value == 0 && !r.getAllowzero() && i < in->size())
        s.push_back((*in)[i]);
      else if (d.isConst() && d.value == -1) {
        inferred = int64_t(i);
        s.push_back(SymDim::unknown());
      } else
        s.push_back(d);
    }
    if (inferred >= 0) {
      SmallVector<SymDim> others;
      for (auto [i, d] : llvm::enumerate(s))
        if (int64_t(i) != inferred)
          others.push_back(d);
      s[inferred] = div(product(*in), product(others));
    }
    set(r.getResult(), s);
    if (std::optional<SymShape> c = contentsOf(r.getData()))
      setContents(r.getResult(), *c);
    return;
  }
  if (auto t = dyn_cast<ox::TransposeOp>(op)) {
    std::optional<SymShape> in = shape(t.getData());
    if (!in)
      return;
    SmallVector<int64_t> perm;
    if (std::optional<ArrayRef<int64_t>> p = t.getPerm())
      perm.assign(p->begin(), p->end());
    else
      for (int64_t i = int64_t(in->size()) - 1; i >= 0; --i)
        perm.push_back(i);
    if (perm.size() != in->size())
      return;
    SymShape s;
    for (int64_t p : perm)
      s.push_back(p >= 0 && p < int64_t(in->size()) ? (*in)[p] : SymDim::unknown());
    set(t.getResult(), s);
    return;
  }
  if (auto c = dyn_cast<ox::ConcatOp>(op)) {
    SmallVector<SymShape> ins;
    for (Value v : c.getInputs()) {
      std::optional<SymShape> s = shape(v);
      if (!s)
        return;
      ins.push_back(*s);
    }
    if (ins.empty())
      return;
    std::optional<int64_t> axis = axisOf(c.getAxis(), ins.front().size());
    if (!axis)
      return;
    SymShape s = ins.front();
    for (size_t i = 1; i < ins.size(); ++i)
      s[*axis] = add(s[*axis], ins[i][*axis]);
    set(c.getResult(), s);
    if (s.size() == 1) {
      SymShape all;
      for (Value v : c.getInputs()) {
        std::optional<SymShape> part = contentsOf(v);
        if (!part)
          return;
        all.append(*part);
      }
      setContents(c.getResult(), all);
    }
    return;
  }
  if (auto g = dyn_cast<ox::GatherOp>(op)) {
    std::optional<SymShape> data = shape(g.getData()), idx = shape(g.getIndices());
    if (!data || !idx)
      return;
    std::optional<int64_t> axis = axisOf(g.getAxis(), data->size());
    if (!axis)
      return;
    SymShape s(data->begin(), data->begin() + *axis);
    s.append(*idx);
    s.append(data->begin() + *axis + 1, data->end());
    set(g.getResult(), s);
    std::optional<SymShape> c = contentsOf(g.getData());
    std::optional<SmallVector<int64_t>> which = constInts(g.getIndices());
    if (c && which && data->size() == 1) {
      SymShape picked;
      for (int64_t i : *which) {
        if (i < 0)
          i += c->size();
        if (i < 0 || i >= int64_t(c->size()))
          return;
        picked.push_back((*c)[i]);
      }
      setContents(g.getResult(), picked);
    }
    return;
  }
  if (auto sl = dyn_cast<ox::SliceOp>(op)) {
    std::optional<SymShape> in = shape(sl.getData());
    std::optional<SmallVector<int64_t>> starts = constInts(sl.getStarts()),
                                        ends = constInts(sl.getEnds());
    if (!in || !starts || !ends || starts->size() != ends->size())
      return;
    SmallVector<int64_t> axes, steps(starts->size(), 1);
    if (sl.getAxes()) {
      std::optional<SmallVector<int64_t>> a = constInts(sl.getAxes());
      if (!a)
        return;
      axes = *a;
    } else {
      for (size_t i = 0; i < starts->size(); ++i)
        axes.push_back(int64_t(i));
    }
    if (sl.getSteps()) {
      std::optional<SmallVector<int64_t>> st = constInts(sl.getSteps());
      if (!st)
        return;
      steps = *st;
    }
    SymShape s = *in;
    std::optional<SymShape> c = contentsOf(sl.getData());
    for (size_t i = 0; i < axes.size(); ++i) {
      std::optional<int64_t> axis = axisOf(axes[i], in->size());
      if (!axis || steps[i] != 1)
        return;
      SymDim &d = s[*axis];
      int64_t b = (*starts)[i], e = (*ends)[i];
      if (d.isConst()) {
        int64_t n = d.value;
        b = std::clamp<int64_t>(b < 0 ? b + n : b, 0, n);
        e = std::clamp<int64_t>(e < 0 ? e + n : e, 0, n);
        d = SymDim::constant(std::max<int64_t>(0, e - b));
        if (c && in->size() == 1)
          c = SymShape(c->begin() + b, c->begin() + std::max(b, e));
      } else if (b == 0 && e >= (int64_t(1) << 31)) {
        // the whole scaled dimension
      } else {
        d = SymDim::unknown();
        c.reset();
      }
    }
    set(sl.getResult(), s);
    if (c && in->size() == 1)
      setContents(sl.getResult(), *c);
    return;
  }
  if (isa<ox::UnsqueezeOp, ox::SqueezeOp>(op)) {
    bool unsqueeze = isa<ox::UnsqueezeOp>(op);
    Value data = op->getOperand(0);
    std::optional<SymShape> in = shape(data);
    if (!in)
      return;
    SmallVector<int64_t> axes;
    if (auto u = dyn_cast<ox::UnsqueezeOp>(op)) {
      if (u.getAxesInput()) {
        std::optional<SmallVector<int64_t>> a = constInts(u.getAxesInput());
        if (!a)
          return;
        axes = *a;
      } else if (std::optional<ArrayRef<int64_t>> a = u.getAxes()) {
        axes.assign(a->begin(), a->end());
      }
    } else if (auto sq = dyn_cast<ox::SqueezeOp>(op)) {
      if (sq.getAxesInput()) {
        std::optional<SmallVector<int64_t>> a = constInts(sq.getAxesInput());
        if (!a)
          return;
        axes = *a;
      } else if (std::optional<ArrayRef<int64_t>> a = sq.getAxes()) {
        axes.assign(a->begin(), a->end());
      }
    }
    SymShape s;
    if (unsqueeze) {
      int64_t rank = int64_t(in->size() + axes.size());
      SmallVector<bool> inserted(rank, false);
      for (int64_t a : axes) {
        std::optional<int64_t> ax = axisOf(a, rank);
        if (!ax)
          return;
        inserted[*ax] = true;
      }
      size_t next = 0;
      for (int64_t i = 0; i < rank; ++i)
        s.push_back(inserted[i] ? SymDim::constant(1)
                                : (next < in->size() ? (*in)[next++] : SymDim::unknown()));
    } else {
      SmallVector<bool> removed(in->size(), axes.empty());
      if (axes.empty())
        for (size_t i = 0; i < in->size(); ++i)
          removed[i] = (*in)[i].isConst() && (*in)[i].value == 1;
      for (int64_t a : axes) {
        std::optional<int64_t> ax = axisOf(a, in->size());
        if (!ax)
          return;
        removed[*ax] = true;
      }
      for (size_t i = 0; i < in->size(); ++i)
        if (!removed[i])
          s.push_back((*in)[i]);
    }
    set(op->getResult(0), s);
    if (std::optional<SymShape> c = contentsOf(data))
      setContents(op->getResult(0), *c);
    return;
  }
  if (auto sp = dyn_cast<ox::SplitOp>(op)) {
    std::optional<SymShape> in = shape(sp.getInput());
    if (!in)
      return;
    std::optional<int64_t> axis = axisOf(sp.getAxis(), in->size());
    if (!axis)
      return;
    SmallVector<int64_t> sizes;
    if (sp.getSplitInput()) {
      std::optional<SmallVector<int64_t>> s = constInts(sp.getSplitInput());
      if (!s)
        return;
      sizes = *s;
    } else if (std::optional<ArrayRef<int64_t>> s = sp.getSplit()) {
      sizes.assign(s->begin(), s->end());
    } else if ((*in)[*axis].isConst()) {
      int64_t n = sp.getOutputs().size(), total = (*in)[*axis].value;
      int64_t each = (total + n - 1) / n;
      for (int64_t i = 0; i < n; ++i)
        sizes.push_back(std::min(each, total - i * each));
    }
    if (sizes.size() != sp.getOutputs().size())
      return;
    for (auto [r, n] : llvm::zip(sp.getOutputs(), sizes)) {
      SymShape s = *in;
      s[*axis] = SymDim::constant(n);
      set(r, s);
    }
    return;
  }
  if (auto m = dyn_cast<ox::MatMulOp>(op)) {
    std::optional<SymShape> a = shapeOf(0), b = shapeOf(1);
    if (!a || !b || a->size() < 2 || b->size() < 1)
      return;
    SymShape batchA(a->begin(), a->end() - 2), batchB;
    if (b->size() > 2)
      batchB.assign(b->begin(), b->end() - 2);
    std::optional<SymShape> batch = broadcast(batchA, batchB);
    if (!batch)
      return;
    SymShape s = *batch;
    s.push_back((*a)[a->size() - 2]);
    if (b->size() >= 2)
      s.push_back(b->back());
    set(m.getResult(), s);
    return;
  }
  if (auto e = dyn_cast<ox::ExpandOp>(op)) {
    std::optional<SymShape> in = shapeOf(0), target = contentsOf(op->getOperand(1));
    if (!in || !target)
      return;
    if (std::optional<SymShape> s = broadcast(*in, *target))
      set(op->getResult(0), *s);
    return;
  }
  if (auto c = dyn_cast<ox::ConstantOfShapeOp>(op)) {
    if (std::optional<SymShape> target = contentsOf(op->getOperand(0)))
      set(op->getResult(0), *target);
    return;
  }
  if (isElementwise(name) && op->getNumResults() == 1) {
    std::optional<SymShape> s;
    for (Value v : op->getOperands()) {
      std::optional<SymShape> vs = shape(v);
      if (!vs)
        return;
      s = s ? broadcast(*s, *vs) : vs;
      if (!s)
        return;
    }
    if (!s)
      return;
    set(op->getResult(0), *s);
    // Arithmetic on shape values (Cast, Mul, Div, Add, Sub of scalars).
    if (s->size() <= 1) {
      SmallVector<SymShape> cs;
      for (Value v : op->getOperands()) {
        std::optional<SymShape> c = contentsOf(v);
        if (!c)
          return;
        cs.push_back(*c);
      }
      size_t n = 0;
      for (const SymShape &c : cs)
        n = std::max(n, c.size());
      SymShape out;
      for (size_t i = 0; i < n; ++i) {
        auto at = [&](size_t k) { return cs[k].size() == 1 ? cs[k][0] : cs[k][i]; };
        if ((name == "Cast" || name == "Identity") && cs.size() == 1)
          out.push_back(at(0));
        else if (name == "Mul" && cs.size() == 2)
          out.push_back(mul(at(0), at(1)));
        else if (name == "Div" && cs.size() == 2)
          out.push_back(div(at(0), at(1)));
        else if (name == "Add" && cs.size() == 2)
          out.push_back(add(at(0), at(1)));
        else if (name == "Sub" && cs.size() == 2)
          out.push_back(sub(at(0), at(1)));
        else
          return;
      }
      setContents(op->getResult(0), out);
    }
    return;
  }
  // Reductions, GatherND and the rest: only their static dimensions.
}

} // namespace accel::conversion
