//===- OnnxShapeOps.cpp - shape and layout op verifiers -------------------===//
#include "OnnxVerifyUtils.h"
#include "accel/dialects/Onnx/OnnxOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace accel::onnx;

/// The static length of a 1-D tensor, when known.
static std::optional<int64_t> staticLength(Value v) {
  std::optional<ArrayRef<int64_t>> s = shapeOf(v);
  if (!s || s->size() != 1 || ShapedType::isDynamic(s->front()))
    return std::nullopt;
  return s->front();
}

/// Checks that `result` (when ranked) has rank `rank`.
static LogicalResult verifyResultRank(Operation *op, Value result, int64_t rank,
                                      StringRef why) {
  std::optional<int64_t> r = rankOf(result);
  if (!r || *r == rank)
    return success();
  return op->emitOpError("result rank ")
         << *r << " does not match " << why << " (" << rank << ")";
}

static LogicalResult verifyResultElementType(Operation *op, Value input) {
  return verifyElementType(op, op->getResult(0), "result",
                           elementTypeOf(input));
}

//===----------------------------------------------------------------------===//
// Reshape
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  if (failed(verifyFlag(*this, "allowzero", asSigned(getAllowzero()))) ||
      failed(verifyI64Vector(*this, getShape(), "operand 'shape'")) ||
      failed(verifyResultElementType(*this, getData())))
    return failure();
  if (std::optional<int64_t> len = staticLength(getShape()))
    if (failed(verifyResultRank(*this, getReshaped(), *len,
                                "the length of 'shape'")))
      return failure();
  std::optional<int64_t> in = numElementsOf(getData());
  std::optional<int64_t> out = numElementsOf(getReshaped());
  if (in && out && *in != *out)
    return emitOpError("result type ")
           << getReshaped().getType() << " has " << *out
           << " elements, operand 'data' has " << *in;
  return success();
}

//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  if (failed(verifyResultElementType(*this, getData())))
    return failure();
  std::optional<ArrayRef<int64_t>> in = shapeOf(getData());
  SmallVector<int64_t> perm;
  if (std::optional<ArrayRef<int64_t>> p = getPerm()) {
    perm.assign(p->begin(), p->end());
    if (in && perm.size() != in->size())
      return emitOpError("attribute 'perm' has ")
             << perm.size() << " entries for rank " << in->size();
    SmallVector<int64_t> sorted(perm);
    llvm::sort(sorted);
    for (auto [i, v] : llvm::enumerate(sorted))
      if (v != static_cast<int64_t>(i))
        return emitOpError("attribute 'perm' ")
               << formatShape(perm) << " is not a permutation of [0, "
               << perm.size() << ")";
  } else if (in) {
    perm = llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(in->size())));
  }
  if (!in)
    return perm.empty() ? success()
                        : verifyResultRank(*this, getTransposed(), perm.size(),
                                           "the length of 'perm'");
  SmallVector<int64_t> expected;
  for (int64_t p : perm)
    expected.push_back((*in)[p]);
  return verifyResultShape(*this, getTransposed(), expected);
}

//===----------------------------------------------------------------------===//
// Concat
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("requires at least one operand");
  Type elt = elementTypeOf(getInputs().front());
  std::optional<ArrayRef<int64_t>> ref;
  size_t refIndex = 0;
  bool allRanked = true;
  for (auto [i, v] : llvm::enumerate(getInputs())) {
    if (elementTypeOf(v) != elt)
      return emitOpError("operand #")
             << i << " has element type " << elementTypeOf(v) << ", expected "
             << elt;
    std::optional<ArrayRef<int64_t>> s = shapeOf(v);
    if (!s) {
      allRanked = false;
      continue;
    }
    if (!ref) {
      ref = s;
      refIndex = i;
      if (failed(verifyAxis(*this, "attribute 'axis'", asSigned(getAxis()),
                            s->size())))
        return failure();
      continue;
    }
    if (s->size() != ref->size())
      return emitOpError("operand #")
             << i << " has rank " << s->size() << ", operand #" << refIndex
             << " has rank " << ref->size();
  }
  if (failed(verifyResultElementType(*this, getInputs().front())))
    return failure();
  if (!ref)
    return success();
  int64_t axis = *normalizeAxis(asSigned(getAxis()), ref->size());
  SmallVector<int64_t> expected(ref->begin(), ref->end());
  expected[axis] = allRanked ? 0 : ShapedType::kDynamic;
  for (auto [i, v] : llvm::enumerate(getInputs())) {
    std::optional<ArrayRef<int64_t>> s = shapeOf(v);
    if (!s)
      continue;
    for (size_t d = 0; d < s->size(); ++d) {
      int64_t dim = (*s)[d];
      if (static_cast<int64_t>(d) == axis) {
        if (ShapedType::isDynamic(dim) || ShapedType::isDynamic(expected[d]))
          expected[d] = ShapedType::kDynamic;
        else
          expected[d] += dim;
      } else if (!dimsAgree(dim, expected[d])) {
        return emitOpError("operand #")
               << i << " has size " << dim << " in dim " << d
               << ", which is not the concatenation axis, but " << expected[d]
               << " before";
      } else if (ShapedType::isDynamic(expected[d])) {
        expected[d] = dim;
      }
    }
  }
  return verifyResultShape(*this, getConcatResult(), expected);
}

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::verify() {
  if (failed(verifyIndexElementType(*this, getStarts(), "operand 'starts'")) ||
      failed(verifyResultElementType(*this, getData())))
    return failure();
  std::optional<int64_t> len = staticLength(getStarts());
  for (auto [v, name] : {std::pair{getStarts(), "starts"},
                         {getEnds(), "ends"},
                         {getAxes(), "axes"},
                         {getSteps(), "steps"}}) {
    if (!v)
      continue;
    std::string what = (Twine("operand '") + name + "'").str();
    if (failed(verifyRank(*this, v, what, {1})) ||
        failed(verifySameElementType(*this, getStarts(), "operands 'starts'", v,
                                     (Twine("'") + name + "'").str())))
      return failure();
    std::optional<int64_t> l = staticLength(v);
    if (len && l && *len != *l)
      return emitOpError("operands 'starts' and '")
             << name << "' have different lengths " << *len << " and " << *l;
  }
  if (std::optional<int64_t> r = rankOf(getData()))
    return verifyResultRank(*this, getOutput(), *r, "the rank of 'data'");
  return success();
}

//===----------------------------------------------------------------------===//
// Split
//===----------------------------------------------------------------------===//

LogicalResult SplitOp::verify() {
  size_t n = getOutputs().size();
  if (n == 0)
    return emitOpError("requires at least one result");
  if (getSplitInput() && getSplit())
    return emitOpError("has both the 'split' input and the 'split' attribute");
  if (getNumOutputs() && (getSplitInput() || getSplit()))
    return emitOpError("has both 'split' and 'num_outputs'");
  if (getNumOutputs() && *getNumOutputs() != n)
    return emitOpError("attribute 'num_outputs' = ")
           << asSigned(*getNumOutputs()) << " does not match the " << n
           << " results";
  if (Value s = getSplitInput()) {
    if (failed(verifyI64Vector(*this, s, "operand 'split'")))
      return failure();
    if (std::optional<int64_t> l = staticLength(s); l && *l != int64_t(n))
      return emitOpError("operand 'split' has length ")
             << *l << " for " << n << " results";
  }
  std::optional<ArrayRef<int64_t>> split = getSplit();
  if (split) {
    if (split->size() != n)
      return emitOpError("attribute 'split' has ")
             << split->size() << " entries for " << n << " results";
    if (llvm::any_of(*split, [](int64_t s) { return s < 0; }))
      return emitOpError("attribute 'split' has a negative size");
  }
  for (Value r : getOutputs())
    if (failed(
            verifyElementType(*this, r, "result", elementTypeOf(getInput()))))
      return failure();

  std::optional<ArrayRef<int64_t>> in = shapeOf(getInput());
  if (!in)
    return success();
  if (failed(verifyAxis(*this, "attribute 'axis'", asSigned(getAxis()),
                        in->size())))
    return failure();
  int64_t axis = *normalizeAxis(asSigned(getAxis()), in->size());
  int64_t dim = (*in)[axis];
  if (split && !ShapedType::isDynamic(dim)) {
    int64_t sum = 0;
    for (int64_t s : *split)
      sum += s;
    if (sum != dim)
      return emitOpError("attribute 'split' sums to ")
             << sum << ", but the split dim has size " << dim;
  }
  for (auto [i, r] : llvm::enumerate(getOutputs())) {
    SmallVector<int64_t> expected(in->begin(), in->end());
    if (split)
      expected[axis] = (*split)[i];
    else if (getSplitInput() || ShapedType::isDynamic(dim) ||
             dim % static_cast<int64_t>(n) != 0)
      expected[axis] = ShapedType::kDynamic;
    else
      expected[axis] = dim / static_cast<int64_t>(n);
    if (failed(verifyResultShape(*this, r, expected)))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Squeeze / Unsqueeze
//===----------------------------------------------------------------------===//

LogicalResult SqueezeOp::verify() {
  if (failed(verifyAxesForms(*this, getAxesInput(), getAxes())) ||
      failed(verifyResultElementType(*this, getData())))
    return failure();
  std::optional<ArrayRef<int64_t>> in = shapeOf(getData());
  if (!in)
    return success();
  int64_t rank = in->size();
  if (Value axes = getAxesInput()) {
    if (std::optional<int64_t> len = staticLength(axes))
      return verifyResultRank(*this, getSqueezed(), rank - *len,
                              "the rank of 'data' minus the number of axes");
    return success();
  }
  SmallVector<int64_t> axes;
  if (std::optional<ArrayRef<int64_t>> attr = getAxes()) {
    FailureOr<SmallVector<int64_t>> norm =
        verifyAxes(*this, "attribute 'axes' entry", *attr, rank);
    if (failed(norm))
      return failure();
    axes = std::move(*norm);
    for (int64_t a : axes)
      if (!ShapedType::isDynamic((*in)[a]) && (*in)[a] != 1)
        return emitOpError("cannot squeeze dim ")
               << a << " of size " << (*in)[a];
  } else {
    // Without axes every size-1 dim goes; a dynamic dim may or may not be 1.
    if (llvm::any_of(*in, ShapedType::isDynamic))
      return success();
    for (int64_t d = 0; d < rank; ++d)
      if ((*in)[d] == 1)
        axes.push_back(d);
  }
  SmallVector<int64_t> expected;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(axes, d))
      expected.push_back((*in)[d]);
  return verifyResultShape(*this, getSqueezed(), expected);
}

LogicalResult UnsqueezeOp::verify() {
  if (failed(verifyAxesForms(*this, getAxesInput(), getAxes())) ||
      failed(verifyResultElementType(*this, getData())))
    return failure();
  if (!getAxesInput() && !getAxes())
    return emitOpError("requires the 'axes' input or the 'axes' attribute");
  std::optional<ArrayRef<int64_t>> in = shapeOf(getData());
  if (!in)
    return success();
  int64_t rank = in->size();
  if (Value axes = getAxesInput()) {
    if (std::optional<int64_t> len = staticLength(axes))
      return verifyResultRank(*this, getExpanded(), rank + *len,
                              "the rank of 'data' plus the number of axes");
    return success();
  }
  int64_t outRank = rank + getAxes()->size();
  FailureOr<SmallVector<int64_t>> axes =
      verifyAxes(*this, "attribute 'axes' entry", *getAxes(), outRank);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> expected;
  const int64_t *next = in->begin();
  for (int64_t d = 0; d < outRank; ++d)
    expected.push_back(llvm::is_contained(*axes, d) ? 1 : *next++);
  return verifyResultShape(*this, getExpanded(), expected);
}

//===----------------------------------------------------------------------===//
// Expand, Tile
//===----------------------------------------------------------------------===//

LogicalResult ExpandOp::verify() {
  if (failed(verifyI64Vector(*this, getShape(), "operand 'shape'")) ||
      failed(verifyResultElementType(*this, getInput())))
    return failure();
  std::optional<ArrayRef<int64_t>> in = shapeOf(getInput());
  std::optional<ArrayRef<int64_t>> out = shapeOf(getOutput());
  if (!in || !out)
    return success();
  std::optional<int64_t> len = staticLength(getShape());
  if (len && failed(verifyResultRank(
                 *this, getOutput(), std::max<int64_t>(in->size(), *len),
                 "the larger of the input rank and the length of 'shape'")))
    return failure();
  // Each input dim that is not 1 survives the broadcast.
  bool ok = in->size() <= out->size();
  for (size_t i = 0; ok && i < in->size(); ++i) {
    int64_t d = (*in)[in->size() - 1 - i];
    ok = d == 1 || dimsAgree(d, (*out)[out->size() - 1 - i]);
  }
  if (ok)
    return success();
  return emitOpError("result type ")
         << getOutput().getType() << " is not a broadcast of operand 'input' "
         << getInput().getType();
}

LogicalResult TileOp::verify() {
  if (failed(verifyI64Vector(*this, getRepeats(), "operand 'repeats'")) ||
      failed(verifyResultElementType(*this, getInput())))
    return failure();
  std::optional<int64_t> rank = rankOf(getInput());
  if (!rank)
    return success();
  if (std::optional<int64_t> len = staticLength(getRepeats());
      len && *len != *rank)
    return emitOpError("operand 'repeats' has length ")
           << *len << " for input rank " << *rank;
  return verifyResultRank(*this, getOutput(), *rank, "the rank of 'input'");
}

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

LogicalResult ShapeOp::verify() {
  if (failed(verifyI64Vector(*this, getShape(), "result 'shape'")))
    return failure();
  std::optional<int64_t> rank = rankOf(getData());
  if (!rank)
    return success();
  auto clamp = [&](int64_t v) {
    if (v < 0)
      v += *rank;
    return std::clamp<int64_t>(v, 0, *rank);
  };
  int64_t start = clamp(asSigned(getStart()));
  int64_t end = getEnd() ? clamp(asSigned(*getEnd())) : *rank;
  return verifyResultShape(*this, getShape(),
                           {std::max<int64_t>(end - start, 0)});
}
