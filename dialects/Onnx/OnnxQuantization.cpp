//===- OnnxQuantization.cpp - (de)quantization verifiers ------------------===//
#include "OnnxVerifyUtils.h"
#include "accel/dialects/Onnx/OnnxOps.h"
#include "accel/dialects/Onnx/OnnxTypes.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace accel::onnx;

/// The element type an ONNX data type attribute names; failure (with an
/// error) when it names none. 0 means "not set" and gives a null type.
static FailureOr<Type> dataTypeAttr(Operation *op, StringRef name, int64_t id) {
  if (id == 0)
    return Type();
  Type t = convertOnnxDataType(op->getContext(), static_cast<int32_t>(id));
  if (!t || id != static_cast<int32_t>(id))
    return op->emitOpError("attribute '")
           << name << "' = " << id << " is not a supported ONNX data type";
  return t;
}

/// The granularity rules shared by QuantizeLinear and DequantizeLinear: the
/// scale is a scalar (per tensor), a 1-D tensor of x.shape[axis] (per axis),
/// or, with block_size > 0, x's shape with ceil(x.shape[axis] / block_size)
/// at `axis` (blocked); the zero point has the scale's shape.
static LogicalResult verifyQuantParams(Operation *op, Value x, Value scale,
                                       StringRef scaleName, Value zeroPoint,
                                       StringRef zeroPointName, int64_t axis,
                                       int64_t blockSize) {
  if (blockSize < 0)
    return op->emitOpError("attribute 'block_size' must be >= 0, got ")
           << blockSize;
  if (!isa<FloatType>(elementTypeOf(scale)))
    return op->emitOpError("operand '")
           << scaleName << "' must have a floating-point element type, got "
           << elementTypeOf(scale);
  if (zeroPoint &&
      failed(verifyCompatibleShape(zeroPoint.getType(), scale.getType())))
    return op->emitOpError("operand '")
           << zeroPointName << "' type " << zeroPoint.getType()
           << " does not have the shape of '" << scaleName << "' "
           << scale.getType();
  std::optional<ArrayRef<int64_t>> xs = shapeOf(x), ss = shapeOf(scale);
  if (!xs || !ss)
    return success();
  int64_t rank = xs->size();
  if (blockSize == 0) {
    std::optional<int64_t> n = numElementsOf(scale);
    if (ss->empty() || (ss->size() == 1 && n && *n == 1))
      return success(); // Per tensor.
    if (ss->size() != 1)
      return op->emitOpError("operand '")
             << scaleName
             << "' must be a scalar or 1-D without 'block_size', got rank "
             << ss->size();
    if (failed(verifyAxis(op, "attribute 'axis'", axis, rank)))
      return failure();
    int64_t dim = (*xs)[*normalizeAxis(axis, rank)];
    if (!dimsAgree(ss->front(), dim))
      return op->emitOpError("per-axis '")
             << scaleName << "' has " << ss->front()
             << " entries, but the quantization axis has size " << dim;
    return success();
  }
  if (static_cast<int64_t>(ss->size()) != rank)
    return op->emitOpError("blocked quantization needs '")
           << scaleName << "' of the input's rank " << rank << ", got rank "
           << ss->size();
  if (failed(verifyAxis(op, "attribute 'axis'", axis, rank)))
    return failure();
  int64_t a = *normalizeAxis(axis, rank);
  SmallVector<int64_t> expected(xs->begin(), xs->end());
  if (!ShapedType::isDynamic(expected[a]))
    expected[a] = llvm::divideCeil(expected[a], blockSize);
  for (int64_t d = 0; d < rank; ++d)
    if (!dimsAgree((*ss)[d], expected[d]))
      return op->emitOpError("blocked '")
             << scaleName << "' shape " << formatShape(*ss)
             << " does not match the expected " << formatShape(expected);
  return success();
}

//===----------------------------------------------------------------------===//
// QuantizeLinear / DequantizeLinear
//===----------------------------------------------------------------------===//

LogicalResult QuantizeLinearOp::verify() {
  Operation *op = *this;
  if (failed(verifyFlag(op, "saturate", asSigned(getSaturate()))) ||
      failed(dataTypeAttr(op, "precision", asSigned(getPrecision()))) ||
      failed(verifyQuantParams(op, getX(), getYScale(), "y_scale",
                               getYZeroPoint(), "y_zero_point",
                               asSigned(getAxis()), asSigned(getBlockSize()))))
    return failure();
  if (failed(verifyCompatibleShape(getY().getType(), getX().getType())))
    return emitOpError("result 'y' type ")
           << getY().getType() << " does not have the shape of operand 'x' "
           << getX().getType();
  FailureOr<Type> dtype =
      dataTypeAttr(op, "output_dtype", asSigned(getOutputDtype()));
  if (failed(dtype))
    return failure();
  Type y = elementTypeOf(getY());
  if (*dtype && y != *dtype)
    return emitOpError("result 'y' must have element type ")
           << *dtype << " (output_dtype = " << asSigned(getOutputDtype())
           << "), got " << y;
  if (Value zp = getYZeroPoint(); zp && y != elementTypeOf(zp))
    return emitOpError("result 'y' must have the element type of "
                       "'y_zero_point' (")
           << elementTypeOf(zp) << "), got " << y;
  Type u8 = IntegerType::get(getContext(), 8, IntegerType::Unsigned);
  if (!*dtype && !getYZeroPoint() && y != u8)
    return emitOpError("result 'y' must have element type 'ui8' (no "
                       "'y_zero_point', no 'output_dtype'), got ")
           << y;
  return success();
}

LogicalResult DequantizeLinearOp::verify() {
  Operation *op = *this;
  if (failed(verifyQuantParams(op, getX(), getXScale(), "x_scale",
                               getXZeroPoint(), "x_zero_point",
                               asSigned(getAxis()), asSigned(getBlockSize()))))
    return failure();
  if (Value zp = getXZeroPoint())
    if (failed(verifySameElementType(op, getX(), "operands 'x'", zp,
                                     "'x_zero_point'")))
      return failure();
  if (failed(verifyCompatibleShape(getY().getType(), getX().getType())))
    return emitOpError("result 'y' type ")
           << getY().getType() << " does not have the shape of operand 'x' "
           << getX().getType();
  FailureOr<Type> dtype =
      dataTypeAttr(op, "output_dtype", asSigned(getOutputDtype()));
  if (failed(dtype))
    return failure();
  Type y = elementTypeOf(getY());
  if (*dtype && y != *dtype)
    return emitOpError("result 'y' must have element type ")
           << *dtype << " (output_dtype = " << asSigned(getOutputDtype())
           << "), got " << y;
  if (!*dtype && y != elementTypeOf(getXScale()))
    return emitOpError("result 'y' must have the element type of 'x_scale' (")
           << elementTypeOf(getXScale()) << "), got " << y;
  return success();
}

//===----------------------------------------------------------------------===//
// ms_MatMulNBits
//===----------------------------------------------------------------------===//

LogicalResult MsMatMulNBitsOp::verify() {
  Operation *op = *this;
  int64_t k = asSigned(getK()), n = asSigned(getN());
  int64_t bits = asSigned(getBits()), blockSize = asSigned(getBlockSize());
  if (k <= 0 || n <= 0)
    return emitOpError("attributes 'K' and 'N' must be > 0, got ")
           << k << " and " << n;
  if (bits < 2 || bits > 8)
    return emitOpError("attribute 'bits' must be in [2, 8], got ") << bits;
  if (blockSize < 16 || !llvm::isPowerOf2_64(blockSize))
    return emitOpError("attribute 'block_size' must be a power of 2 >= 16, "
                       "got ")
           << blockSize;
  if (failed(verifyElementType(
          op, getB(), "operand 'B'",
          IntegerType::get(getContext(), 8, IntegerType::Unsigned))) ||
      failed(verifySameElementType(op, getA(), "operands 'A'", getScales(),
                                   "'scales'")) ||
      failed(
          verifyElementType(op, getY(), "result 'Y'", elementTypeOf(getA()))) ||
      failed(verifyRank(op, getB(), "operand 'B'", {3})))
    return failure();
  int64_t kBlocks = llvm::divideCeil(k, blockSize);
  int64_t blob = blockSize * bits / 8;
  if (std::optional<ArrayRef<int64_t>> b = shapeOf(getB())) {
    SmallVector<int64_t> expected = {n, kBlocks, blob};
    for (int64_t d = 0; d < 3; ++d)
      if (!dimsAgree((*b)[d], expected[d]))
        return emitOpError("operand 'B' type ")
               << getB().getType()
               << " does not match [N, ceil(K / block_size), block_size * "
                  "bits / 8] = "
               << formatShape(expected);
  }
  if (std::optional<int64_t> count = numElementsOf(getScales());
      count && *count != n * kBlocks)
    return emitOpError("operand 'scales' has ")
           << *count
           << " elements, expected N * ceil(K / block_size) = " << n * kBlocks;
  if (Value bias = getBias()) {
    if (failed(verifyRank(op, bias, "operand 'bias'", {1})) ||
        failed(
            verifySameElementType(op, getA(), "operands 'A'", bias, "'bias'")))
      return failure();
    if (std::optional<ArrayRef<int64_t>> s = shapeOf(bias);
        s && !dimsAgree(s->front(), n))
      return emitOpError("operand 'bias' has size ")
             << s->front() << ", expected N = " << n;
  }
  std::optional<ArrayRef<int64_t>> a = shapeOf(getA());
  if (!a)
    return success();
  if (a->empty())
    return emitOpError("operand 'A' must have rank >= 1");
  if (!dimsAgree(a->back(), k))
    return emitOpError("the last dim of 'A' (")
           << a->back() << ") does not match 'K' (" << k << ")";
  SmallVector<int64_t> expected(a->drop_back());
  expected.push_back(n);
  return verifyResultShape(op, getY(), expected);
}
