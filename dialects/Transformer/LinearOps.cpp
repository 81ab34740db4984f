//===- LinearOps.cpp - linear verifier ------------------------------------===//
#include "accel/dialects/Transformer/TransformerOps.h"

#include "VerifyUtils.h"

using namespace mlir;
using namespace accel::transformer;
using namespace accel::transformer::detail;

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

bool LinearOp::hasQuantizedWeight() {
  return isQuantizedElement(getWeight().getType().getElementType());
}

/// The activation side of a W8A8 GEMM: an fp8 x needs an fp8 weight, an i8 x
/// an i8 weight, and either needs a per-tensor or per-token input_scale.
static LogicalResult verifyQuantizedInput(LinearOp op) {
  RankedTensorType x = op.getX().getType();
  Type xElem = x.getElementType();
  Type wElem = op.getWeight().getType().getElementType();
  bool sameFamily = (isFloat8Element(xElem) && isFloat8Element(wElem)) ||
                    (xElem.isSignlessInteger(8) && wElem.isSignlessInteger(8));
  if (!sameFamily)
    return op.emitOpError("a quantized x of ")
           << xElem << " needs a weight of the same kind (fp8 or i8), got "
           << wElem;
  Value inputScale = op.getInputScale();
  if (!inputScale)
    return op.emitOpError("a quantized x of ") << xElem << " needs input_scale";
  auto scale = cast<RankedTensorType>(inputScale.getType());
  if (scale.getRank() == 1 &&
      !compatible(scale.getDimSize(0), x.getDimSize(0)))
    return op.emitOpError("input_scale must be [] (per-tensor) or [tokens] "
                          "(per-token), got ")
           << scale;
  return success();
}

/// The weight side: scale (and zero point) shapes follow the granularity.
static LogicalResult verifyQuantizedWeight(LinearOp op) {
  Type wElem = op.getWeight().getType().getElementType();
  Value weightScale = op.getWeightScale();
  if (!weightScale)
    return op.emitOpError("a quantized weight of ")
           << wElem << " needs weight_scale";
  std::optional<QuantGranularity> granularity = op.getGranularity();
  if (!granularity)
    return op.emitOpError("weight_scale needs a granularity");
  std::optional<uint64_t> groupSize = op.getGroupSize();
  if (groupSize && *granularity != QuantGranularity::PerGroup)
    return op.emitOpError("group_size only applies to per_group granularity");

  int64_t in = op.getInFeatures(), out = op.getOutFeatures();
  SmallVector<int64_t> expected;
  StringRef expectedText;
  switch (*granularity) {
  case QuantGranularity::PerTensor:
    expectedText = "[]";
    break;
  case QuantGranularity::PerChannel:
    expected = {out};
    expectedText = "[out_features]";
    break;
  case QuantGranularity::PerGroup: {
    if (!groupSize)
      return op.emitOpError("per_group granularity needs group_size");
    int64_t group = static_cast<int64_t>(*groupSize);
    if (!ShapedType::isDynamic(in) && in % group != 0)
      return op.emitOpError("group_size ")
             << group << " does not divide in_features " << in;
    expected = {out, ShapedType::isDynamic(in) ? ShapedType::kDynamic
                                               : in / group};
    expectedText = "[out_features, in_features / group_size]";
    break;
  }
  }
  auto scale = cast<RankedTensorType>(weightScale.getType());
  if (!compatible(scale.getShape(), expected))
    return op.emitOpError()
           << stringifyQuantGranularity(*granularity) << " weight_scale must be "
           << expectedText << " = " << shape(expected) << ", got " << scale;

  if (Value zeroPoint = op.getWeightZeroPoint()) {
    auto zp = cast<RankedTensorType>(zeroPoint.getType());
    if (zp.getElementType() != wElem)
      return op.emitOpError("zero_point element type ")
             << zp.getElementType()
             << " does not match the weight element type " << wElem;
    if (zp.getShape() != scale.getShape())
      return op.emitOpError("zero_point shape ")
             << shape(zp.getShape()) << " does not match the weight_scale shape "
             << shape(scale.getShape());
  }
  return success();
}

LogicalResult LinearOp::verify() {
  RankedTensorType x = getX().getType();
  RankedTensorType weight = getWeight().getType();
  RankedTensorType result = getResult().getType();
  int64_t in = getInFeatures(), out = getOutFeatures();
  if (!compatible(x.getDimSize(1), in))
    return emitOpError("x has ")
           << dim(x.getDimSize(1))
           << " in_features but the weight [out_features, in_features] has "
           << dim(in);
  if (!compatible(result.getDimSize(1), out))
    return emitOpError("result has ")
           << dim(result.getDimSize(1))
           << " out_features but the weight [out_features, in_features] has "
           << dim(out);
  if (!compatible(result.getDimSize(0), x.getDimSize(0)))
    return emitOpError("result has ")
           << dim(result.getDimSize(0)) << " tokens but x has "
           << dim(x.getDimSize(0));
  if (Value bias = getBias()) {
    auto biasType = cast<RankedTensorType>(bias.getType());
    if (!compatible(biasType.getDimSize(0), out))
      return emitOpError("bias has ")
             << dim(biasType.getDimSize(0))
             << " elements but out_features is " << dim(out);
  }

  Type xElem = x.getElementType(), wElem = weight.getElementType();
  if (isQuantizedElement(xElem)) {
    if (failed(verifyQuantizedInput(*this)))
      return failure();
    // No backend has a W8A8 GEMM with an epilogue (the plan writer refuses
    // W8A8 linears altogether).
    if (getActivation())
      return emitOpError("an activation epilogue is not supported on a linear with "
                         "quantized activations (input_scale)");
  } else if (getInputScale()) {
    return emitOpError("input_scale only applies to a quantized x, got ")
           << xElem;
  }

  if (hasQuantizedWeight())
    return verifyQuantizedWeight(*this);

  if (getWeightScale() || getWeightZeroPoint() || getGranularity() ||
      getGroupSize())
    return emitOpError("a float weight of ")
           << wElem
           << " takes no weight_scale, zero_point, granularity or group_size";
  if (!isCompatibleFloatWeight(wElem, xElem))
    return emitOpError("x element type ")
           << xElem << " does not match the float weight element type "
           << wElem << " (only f32 x may read f16 or bf16 weights)";
  return success();
}
