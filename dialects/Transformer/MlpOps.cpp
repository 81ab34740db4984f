//===- MlpOps.cpp - gated_act and gated_mlp verifiers ---------------------===//
#include "accel/dialects/Transformer/TransformerOps.h"

#include "VerifyUtils.h"

using namespace mlir;
using namespace accel::transformer;
using namespace accel::transformer::detail;

//===----------------------------------------------------------------------===//
// GatedActOp
//===----------------------------------------------------------------------===//

LogicalResult GatedActOp::verify() {
  RankedTensorType input = getInput().getType();
  RankedTensorType result = getResult().getType();
  int64_t features = input.getDimSize(1);
  if (!ShapedType::isDynamic(features) && features % 2 != 0)
    return emitOpError("input has ")
           << features << " features; gate and up halves need an even number";
  int64_t half =
      ShapedType::isDynamic(features) ? ShapedType::kDynamic : features / 2;
  if (!compatible(result.getDimSize(1), half))
    return emitOpError("result has ")
           << dim(result.getDimSize(1))
           << " features but half the input features is " << dim(half);
  if (!compatible(result.getDimSize(0), input.getDimSize(0)))
    return emitOpError("result has ")
           << dim(result.getDimSize(0)) << " tokens but the input has "
           << dim(input.getDimSize(0));
  if (result.getElementType() != input.getElementType())
    return emitOpError("result element type ")
           << result.getElementType()
           << " does not match the input element type "
           << input.getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// GatedMlpOp
//===----------------------------------------------------------------------===//

LogicalResult GatedMlpOp::verify() {
  RankedTensorType x = getX().getType();
  int64_t hidden = x.getDimSize(1);
  Value gateUp = getGateUp(), gate = getGate(), up = getUp();
  if (gateUp && (gate || up))
    return emitOpError("takes gate_up or gate and up, not both");
  if (!gateUp && !(gate && up))
    return emitOpError("needs gate_up, or both gate and up");

  int64_t intermediate;
  if (gateUp) {
    auto type = cast<RankedTensorType>(gateUp.getType());
    int64_t rows = type.getDimSize(0);
    if (!compatible(type.getDimSize(1), hidden) ||
        (!ShapedType::isDynamic(rows) && rows % 2 != 0))
      return emitOpError("gate_up must be [2 * intermediate, hidden = ")
             << dim(hidden) << "], got " << type;
    intermediate = ShapedType::isDynamic(rows) ? rows : rows / 2;
  } else {
    if (gate.getType() != up.getType())
      return emitOpError("gate and up must have the same type, got ")
             << gate.getType() << " and " << up.getType();
    auto type = cast<RankedTensorType>(gate.getType());
    if (!compatible(type.getDimSize(1), hidden))
      return emitOpError("gate and up must be [intermediate, hidden = ")
             << dim(hidden) << "], got " << type;
    intermediate = type.getDimSize(0);
  }
  RankedTensorType down = getDown().getType();
  if (!compatible(down.getDimSize(0), hidden) ||
      !compatible(down.getDimSize(1), intermediate))
    return emitOpError("down must be [hidden = ")
           << dim(hidden) << ", intermediate = " << dim(intermediate)
           << "], got " << down;

  for (Value weight : {gateUp, gate, up, Value(getDown())}) {
    if (!weight)
      continue;
    Type elem = cast<RankedTensorType>(weight.getType()).getElementType();
    if (!isCompatibleFloatWeight(elem, x.getElementType()))
      return emitOpError("weight element type ")
             << elem << " does not match the x element type "
             << x.getElementType() << " (only f32 x may read f16 or bf16 weights)";
  }
  return success();
}
