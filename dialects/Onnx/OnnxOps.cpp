//===- OnnxOps.cpp - onnx dialect op verifiers ----------------------------===//
#include "accel/dialects/Onnx/OnnxOps.h"

using namespace mlir;
using namespace accel::onnx;

/// Checks numpy-style (multidirectional) broadcasting between two ranked
/// tensor types; dynamic dims are accepted.
static LogicalResult verifyBroadcastable(Operation *op, Type lhs, Type rhs) {
  auto a = dyn_cast<RankedTensorType>(lhs), b = dyn_cast<RankedTensorType>(rhs);
  if (!a || !b)
    return success();
  if (a.getElementType() != b.getElementType())
    return op->emitOpError("operands have different element types ")
           << a.getElementType() << " and " << b.getElementType();
  ArrayRef<int64_t> sa = a.getShape(), sb = b.getShape();
  for (size_t i = 0, n = std::min(sa.size(), sb.size()); i < n; ++i) {
    int64_t x = sa[sa.size() - 1 - i], y = sb[sb.size() - 1 - i];
    if (ShapedType::isDynamic(x) || ShapedType::isDynamic(y) || x == y ||
        x == 1 || y == 1)
      continue;
    return op->emitOpError("operand shapes ")
           << a << " and " << b << " are not broadcastable";
  }
  return success();
}

LogicalResult AddOp::verify() {
  return verifyBroadcastable(*this, getA().getType(), getB().getType());
}

#define GET_OP_CLASSES
#include "dialects/Onnx/OnnxOps.cpp.inc"
