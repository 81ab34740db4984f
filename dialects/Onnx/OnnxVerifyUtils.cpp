//===- OnnxVerifyUtils.cpp - shared onnx op verifier helpers --------------===//
#include "OnnxVerifyUtils.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;

namespace accel::onnx {

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

std::optional<ArrayRef<int64_t>> shapeOf(Value v) {
  if (!v)
    return std::nullopt;
  if (auto t = dyn_cast<RankedTensorType>(v.getType()))
    return t.getShape();
  return std::nullopt;
}

std::optional<int64_t> rankOf(Value v) {
  if (!v)
    return std::nullopt;
  if (auto t = dyn_cast<RankedTensorType>(v.getType()))
    return t.getRank();
  return std::nullopt;
}

Type elementTypeOf(Value v) { return getElementTypeOrSelf(v.getType()); }

std::optional<int64_t> numElementsOf(Value v) {
  if (!v)
    return std::nullopt;
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape())
    return std::nullopt;
  return t.getNumElements();
}

bool dimsAgree(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << '?';
    else
      os << d;
  });
  os << ']';
  return s;
}

FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    int64_t &o = out[rank - 1 - i];
    if (x == 1)
      o = y;
    else if (y == 1)
      o = x;
    else if (ShapedType::isDynamic(x))
      o = y; // y is static (not 1) or dynamic: either way the broadcast is y.
    else if (ShapedType::isDynamic(y) || x == y)
      o = x;
    else
      return failure();
  }
  return out;
}

LogicalResult verifyResultShape(Operation *op, Value result,
                                ArrayRef<int64_t> expected) {
  std::optional<ArrayRef<int64_t>> shape = shapeOf(result);
  if (!shape)
    return success();
  if (shape->size() == expected.size() &&
      llvm::all_of(llvm::zip_equal(*shape, expected), [](auto p) {
        return dimsAgree(std::get<0>(p), std::get<1>(p));
      }))
    return success();
  return op->emitOpError("result type ")
         << result.getType() << " does not agree with the inferred shape "
         << formatShape(expected);
}

LogicalResult verifyBroadcast(Operation *op, ValueRange operands,
                              Value result) {
  SmallVector<int64_t> shape;
  std::optional<Value> first;
  bool anyUnranked = false;
  for (Value v : operands) {
    std::optional<ArrayRef<int64_t>> s = shapeOf(v);
    if (!s) {
      anyUnranked = true; // Nothing is known about its contribution.
      continue;
    }
    if (!first) {
      first = v;
      shape.assign(s->begin(), s->end());
      continue;
    }
    FailureOr<SmallVector<int64_t>> b = broadcastShapes(shape, *s);
    if (failed(b))
      return op->emitOpError("operand shapes ")
             << first->getType() << " and " << v.getType()
             << " are not broadcastable";
    shape = std::move(*b);
  }
  if (anyUnranked || !first)
    return success();
  return verifyResultShape(op, result, shape);
}

LogicalResult verifyUnidirectionalBroadcast(Operation *op, StringRef fromName,
                                            ArrayRef<int64_t> from,
                                            StringRef toName,
                                            ArrayRef<int64_t> to) {
  bool ok = from.size() <= to.size();
  for (size_t i = 0; ok && i < from.size(); ++i) {
    int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    ok = f == 1 || dimsAgree(f, t);
  }
  if (ok)
    return success();
  return op->emitOpError() << fromName << " shape " << formatShape(from)
                           << " does not broadcast to " << toName << " shape "
                           << formatShape(to);
}

//===----------------------------------------------------------------------===//
// Axes
//===----------------------------------------------------------------------===//

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

LogicalResult verifyAxis(Operation *op, StringRef what, int64_t axis,
                         int64_t rank) {
  if (normalizeAxis(axis, rank))
    return success();
  return op->emitOpError() << what << " " << axis << " is out of range ["
                           << -rank << ", " << rank - 1 << "]";
}

FailureOr<SmallVector<int64_t>> verifyAxes(Operation *op, StringRef what,
                                           ArrayRef<int64_t> axes,
                                           int64_t rank) {
  SmallVector<int64_t> out;
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t a : axes) {
    if (failed(verifyAxis(op, what, a, rank)))
      return failure();
    int64_t n = *normalizeAxis(a, rank);
    if (!seen.insert(n).second)
      return op->emitOpError() << what << " " << a << " is repeated";
    out.push_back(n);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Operands, element types and attribute values
//===----------------------------------------------------------------------===//

LogicalResult verifyAxesForms(Operation *op, Value input,
                              std::optional<ArrayRef<int64_t>> attr) {
  if (input && attr)
    return op->emitOpError(
        "has both the 'axes' input and the 'axes' attribute");
  if (input)
    return verifyI64Vector(op, input, "operand 'axes'");
  return success();
}

LogicalResult verifyRank(Operation *op, Value v, StringRef name,
                         ArrayRef<int64_t> ranks) {
  std::optional<int64_t> rank = rankOf(v);
  if (!rank || llvm::is_contained(ranks, *rank))
    return success();
  InFlightDiagnostic diag = op->emitOpError() << name << " must have rank ";
  llvm::interleave(
      ranks, [&](int64_t r) { diag << r; }, [&] { diag << " or "; });
  return diag << ", got " << *rank;
}

LogicalResult verifyElementType(Operation *op, Value v, StringRef name,
                                Type expected) {
  Type actual = elementTypeOf(v);
  if (actual == expected)
    return success();
  return op->emitOpError() << name << " must have element type " << expected
                           << ", got " << actual;
}

LogicalResult verifySameElementType(Operation *op, Value a, StringRef aName,
                                    Value b, StringRef bName) {
  Type ta = elementTypeOf(a), tb = elementTypeOf(b);
  if (ta == tb)
    return success();
  return op->emitOpError() << aName << " and " << bName
                           << " have different element types " << ta << " and "
                           << tb;
}

LogicalResult verifyIndexElementType(Operation *op, Value v, StringRef name) {
  Type t = elementTypeOf(v);
  if (t.isSignlessInteger(32) || t.isSignlessInteger(64))
    return success();
  return op->emitOpError() << name << " must have element type i32 or i64, got "
                           << t;
}

LogicalResult verifyI64Vector(Operation *op, Value v, StringRef name) {
  if (failed(verifyElementType(op, v, name,
                               IntegerType::get(op->getContext(), 64))))
    return failure();
  return verifyRank(op, v, name, {1});
}

LogicalResult verifyScalar(Operation *op, Value v, StringRef name) {
  std::optional<int64_t> n = numElementsOf(v);
  if (!n || *n == 1)
    return success();
  return op->emitOpError() << name << " must be a scalar, got " << v.getType();
}

LogicalResult verifyFlag(Operation *op, StringRef name, int64_t value) {
  if (value == 0 || value == 1)
    return success();
  return op->emitOpError() << "attribute '" << name << "' must be 0 or 1, got "
                           << value;
}

LogicalResult verifySameType(Operation *op, Value result, StringRef resultName,
                             Value input, StringRef inputName) {
  if (elementTypeOf(result) == elementTypeOf(input) &&
      succeeded(verifyCompatibleShape(result.getType(), input.getType())))
    return success();
  return op->emitOpError() << resultName << " type " << result.getType()
                           << " does not match " << inputName << " type "
                           << input.getType();
}

} // namespace accel::onnx
