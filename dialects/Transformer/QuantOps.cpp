//===- QuantOps.cpp - quantize and dequantize verifiers -------------------===//
#include "accel/dialects/Transformer/TransformerOps.h"

#include "VerifyUtils.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace accel::transformer;
using namespace accel::transformer::detail;

/// ONNX QuantizeLinear / DequantizeLinear rules. `full` is the float side,
/// `quantized` the f8E4M3FN/f8E5M2/i8/i4 side; they have one shape. The
/// scale's rank says the granularity: 0 per tensor, 1 per axis (`axis`),
/// the input's rank blocked (`axis`, `block_size`).
static LogicalResult verifyQuantization(Operation *op, RankedTensorType full,
                                        RankedTensorType quantized,
                                        Value scaleValue, Value zeroPointValue,
                                        std::optional<uint64_t> axisAttr,
                                        std::optional<uint64_t> blockAttr) {
  Type input = op->getOperand(0).getType(), result = op->getResult(0).getType();
  if (!compatible(full.getShape(), quantized.getShape()))
    return op->emitOpError("result type ")
           << result << " does not have the shape of the input type " << input;

  auto scale = cast<RankedTensorType>(scaleValue.getType());
  int64_t rank = full.getRank();
  auto checkAxis = [&]() -> LogicalResult {
    if (!axisAttr)
      return op->emitOpError(blockAttr ? "block_size needs an axis"
                                       : "a 1-D scale is per-axis and needs an axis");
    if (static_cast<int64_t>(*axisAttr) >= rank)
      return op->emitOpError("axis ")
             << *axisAttr << " is out of range for a rank-" << rank << " input";
    return success();
  };

  if (scale.getRank() == 0) {
    if (axisAttr || blockAttr)
      return op->emitOpError(
          "a scalar scale is per-tensor and takes no axis or block_size");
  } else if (blockAttr) {
    if (failed(checkAxis()))
      return failure();
    if (scale.getRank() != rank)
      return op->emitOpError("a blocked scale must have the input's rank ")
             << rank << ", got " << scale;
    int64_t axis = static_cast<int64_t>(*axisAttr);
    int64_t block = static_cast<int64_t>(*blockAttr);
    SmallVector<int64_t> expected(full.getShape());
    if (!ShapedType::isDynamic(expected[axis]))
      expected[axis] = llvm::divideCeil(expected[axis], block);
    if (!compatible(scale.getShape(), expected))
      return op->emitOpError("a scale blocked by ")
             << block << " along axis " << axis << " must be "
             << shape(expected) << ", got " << scale;
  } else if (scale.getRank() == 1) {
    if (failed(checkAxis()))
      return failure();
    int64_t axisSize = full.getDimSize(static_cast<int64_t>(*axisAttr));
    if (!compatible(scale.getDimSize(0), axisSize))
      return op->emitOpError("a per-axis scale must have ")
             << dim(axisSize) << " elements (input dim " << *axisAttr
             << "), got " << scale;
  } else {
    return op->emitOpError("the scale must be a scalar (per-tensor), 1-D "
                           "(per-axis) or blocked (with block_size), got ")
           << scale;
  }

  if (zeroPointValue) {
    auto zp = cast<RankedTensorType>(zeroPointValue.getType());
    if (zp.getElementType() != quantized.getElementType())
      return op->emitOpError("zero_point element type ")
             << zp.getElementType()
             << " does not match the quantized element type "
             << quantized.getElementType();
    if (zp.getShape() != scale.getShape())
      return op->emitOpError("zero_point shape ")
             << shape(zp.getShape()) << " does not match the scale shape "
             << shape(scale.getShape());
  }
  return success();
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

LogicalResult QuantizeOp::verify() {
  return verifyQuantization(*this, getInput().getType(), getResult().getType(),
                            getScale(), getZeroPoint(), getAxis(),
                            getBlockSize());
}

//===----------------------------------------------------------------------===//
// DequantizeOp
//===----------------------------------------------------------------------===//

LogicalResult DequantizeOp::verify() {
  return verifyQuantization(*this, getResult().getType(), getInput().getType(),
                            getScale(), getZeroPoint(), getAxis(),
                            getBlockSize());
}

//===----------------------------------------------------------------------===//
// DynamicQuantizeOp
//===----------------------------------------------------------------------===//

LogicalResult DynamicQuantizeOp::verify() {
  RankedTensorType input = getInput().getType();
  RankedTensorType result = getResult().getType();
  RankedTensorType scale = getScale().getType();
  if (!compatible(input.getShape(), result.getShape()))
    return emitOpError("result type ")
           << result << " does not have the shape of the input type " << input;
  if (scale.getRank() == 1 &&
      !compatible(scale.getDimSize(0), input.getDimSize(0)))
    return emitOpError("scale must be [] (per-tensor) or [tokens] "
                       "(per-token), got ")
           << scale;
  return success();
}
