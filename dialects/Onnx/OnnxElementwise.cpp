//===- OnnxElementwise.cpp - elementwise onnx op verifiers ----------------===//
#include "OnnxVerifyUtils.h"
#include "accel/dialects/Onnx/OnnxOps.h"
#include "accel/dialects/Onnx/OnnxTypes.h"

using namespace mlir;
using namespace accel::onnx;

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

LogicalResult NotOp::verify() {
  return verifyElementType(*this, getX(), "operand 'X'",
                           IntegerType::get(getContext(), 1));
}

LogicalResult GeluOp::verify() {
  if (getApproximate() == "none" || getApproximate() == "tanh")
    return success();
  return emitOpError("attribute 'approximate' must be \"none\" or \"tanh\", "
                     "got \"")
         << getApproximate() << "\"";
}

LogicalResult IsNaNOp::verify() {
  if (!isa<FloatType>(elementTypeOf(getX())))
    return emitOpError("operand 'X' must have a floating-point element type, "
                       "got ")
           << elementTypeOf(getX());
  return verifyElementType(*this, getY(), "result 'Y'",
                           IntegerType::get(getContext(), 1));
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

/// A and B of one element type, broadcast together; C of `resultElt` (their
/// element type when null) and of their broadcast shape.
static LogicalResult verifyBinary(Operation *op, Type resultElt = {}) {
  Value a = op->getOperand(0), b = op->getOperand(1), c = op->getResult(0);
  if (failed(verifySameElementType(op, a, "operands 'A'", b, "'B'")))
    return failure();
  if (failed(verifyElementType(op, c, "result 'C'",
                               resultElt ? resultElt : elementTypeOf(a))))
    return failure();
  return verifyBroadcast(op, {a, b}, c);
}

/// Comparisons: the result is boolean.
static LogicalResult verifyCompare(Operation *op) {
  return verifyBinary(op, IntegerType::get(op->getContext(), 1));
}

/// Logical ops: boolean in, boolean out.
static LogicalResult verifyLogical(Operation *op) {
  Type i1 = IntegerType::get(op->getContext(), 1);
  if (failed(verifyElementType(op, op->getOperand(0), "operand 'A'", i1)))
    return failure();
  return verifyBinary(op, i1);
}

LogicalResult AddOp::verify() { return verifyBinary(*this); }
LogicalResult SubOp::verify() { return verifyBinary(*this); }
LogicalResult MulOp::verify() { return verifyBinary(*this); }
LogicalResult DivOp::verify() { return verifyBinary(*this); }

LogicalResult ModOp::verify() {
  if (failed(verifyFlag(*this, "fmod", asSigned(getFmod()))))
    return failure();
  if (isa<FloatType>(elementTypeOf(getA())) && getFmod() != 1)
    return emitOpError(
        "attribute 'fmod' must be 1 for floating-point operands");
  return verifyBinary(*this);
}

LogicalResult PowOp::verify() {
  if (failed(verifyElementType(*this, getZ(), "result 'Z'",
                               elementTypeOf(getX()))))
    return failure();
  return verifyBroadcast(*this, {getX(), getY()}, getZ());
}

LogicalResult EqualOp::verify() { return verifyCompare(*this); }
LogicalResult GreaterOp::verify() { return verifyCompare(*this); }
LogicalResult GreaterOrEqualOp::verify() { return verifyCompare(*this); }
LogicalResult LessOp::verify() { return verifyCompare(*this); }
LogicalResult LessOrEqualOp::verify() { return verifyCompare(*this); }

LogicalResult AndOp::verify() { return verifyLogical(*this); }
LogicalResult OrOp::verify() { return verifyLogical(*this); }
LogicalResult XorOp::verify() { return verifyLogical(*this); }

//===----------------------------------------------------------------------===//
// Where, Max / Min / Sum
//===----------------------------------------------------------------------===//

LogicalResult WhereOp::verify() {
  if (failed(verifyElementType(*this, getCondition(), "operand 'condition'",
                               IntegerType::get(getContext(), 1))) ||
      failed(verifySameElementType(*this, getX(), "operands 'X'", getY(),
                                   "'Y'")) ||
      failed(verifyElementType(*this, getOutput(), "result 'output'",
                               elementTypeOf(getX()))))
    return failure();
  return verifyBroadcast(*this, getOperands(), getOutput());
}

/// One or more inputs of one element type, broadcast together into the
/// result.
static LogicalResult verifyVariadic(Operation *op) {
  if (op->getNumOperands() == 0)
    return op->emitOpError("requires at least one operand");
  Type elt = elementTypeOf(op->getOperand(0));
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (elementTypeOf(v) != elt)
      return op->emitOpError("operand #")
             << i << " has element type " << elementTypeOf(v) << ", expected "
             << elt;
  if (failed(verifyElementType(op, op->getResult(0), "result", elt)))
    return failure();
  return verifyBroadcast(op, op->getOperands(), op->getResult(0));
}

LogicalResult MaxOp::verify() { return verifyVariadic(*this); }
LogicalResult MinOp::verify() { return verifyVariadic(*this); }
LogicalResult SumOp::verify() { return verifyVariadic(*this); }

//===----------------------------------------------------------------------===//
// Clip, Cast
//===----------------------------------------------------------------------===//

LogicalResult ClipOp::verify() {
  for (auto [v, name] : {std::pair{getMin(), "min"}, {getMax(), "max"}}) {
    if (!v)
      continue;
    std::string what = (Twine("operand '") + name + "'").str();
    if (failed(verifyScalar(*this, v, what)) ||
        failed(verifySameElementType(*this, getInput(), "operands 'input'", v,
                                     (Twine("'") + name + "'").str())))
      return failure();
  }
  return verifySameType(*this, getOutput(), "result", getInput(),
                        "operand 'input'");
}

LogicalResult CastOp::verify() {
  int64_t to = asSigned(getTo());
  Type target = convertOnnxDataType(getContext(), static_cast<int32_t>(to));
  if (!target || to != static_cast<int32_t>(to))
    return emitOpError("attribute 'to' = ")
           << to << " is not a supported ONNX data type";
  if (failed(verifyFlag(*this, "saturate", asSigned(getSaturate()))))
    return failure();
  if (elementTypeOf(getOutput()) != target)
    return emitOpError("result element type ")
           << elementTypeOf(getOutput()) << " does not match 'to' = " << to
           << " (" << target << ")";
  return success();
}
