//===- OnnxConstants.cpp - Constant and ConstantOfShape verifiers ---------===//
#include "OnnxVerifyUtils.h"
#include "accel/dialects/Onnx/OnnxOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace accel::onnx;

LogicalResult ConstantOp::verify() {
  int present = (getValueAttr() ? 1 : 0) + (getValueFloatAttr() ? 1 : 0) +
                (getValueFloatsAttr() ? 1 : 0) + (getValueIntAttr() ? 1 : 0) +
                (getValueIntsAttr() ? 1 : 0);
  if (present != 1)
    return emitOpError("requires exactly one of 'value', 'value_float', "
                       "'value_floats', 'value_int', 'value_ints', got ")
           << present;
  Builder b(getContext());
  Type expected;
  StringRef name;
  if (ElementsAttr value = getValueAttr()) {
    expected = value.getShapedType();
    name = "value";
  } else if (getValueFloatAttr()) {
    expected = RankedTensorType::get({}, b.getF32Type());
    name = "value_float";
  } else if (DenseF32ArrayAttr floats = getValueFloatsAttr()) {
    expected = RankedTensorType::get({floats.size()}, b.getF32Type());
    name = "value_floats";
  } else if (getValueIntAttr()) {
    expected = RankedTensorType::get({}, b.getI64Type());
    name = "value_int";
  } else {
    expected =
        RankedTensorType::get({getValueIntsAttr().size()}, b.getI64Type());
    name = "value_ints";
  }
  Type actual = getOutput().getType();
  if (getElementTypeOrSelf(expected) == getElementTypeOrSelf(actual) &&
      succeeded(verifyCompatibleShape(expected, actual)))
    return success();
  return emitOpError("result type ")
         << actual << " does not match the type " << expected
         << " of attribute '" << name << "'";
}

LogicalResult ConstantOfShapeOp::verify() {
  if (failed(verifyI64Vector(*this, getInput(), "operand 'input'")))
    return failure();
  Type elt = Float32Type::get(getContext());
  if (ElementsAttr value = getValueAttr()) {
    if (value.getNumElements() != 1)
      return emitOpError("attribute 'value' must hold exactly one element, "
                         "got ")
             << value.getNumElements();
    elt = value.getElementType();
  }
  if (failed(verifyElementType(*this, getOutput(), "result", elt)))
    return failure();
  std::optional<ArrayRef<int64_t>> in = shapeOf(getInput());
  std::optional<int64_t> rank = rankOf(getOutput());
  if (in && rank && !ShapedType::isDynamic(in->front()) && in->front() != *rank)
    return emitOpError("result rank ")
           << *rank << " does not match the length of 'input' (" << in->front()
           << ")";
  return success();
}
