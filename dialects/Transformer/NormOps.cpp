//===- NormOps.cpp - rms_norm, add_rms_norm and layer_norm verifiers ------===//
#include "accel/dialects/Transformer/TransformerOps.h"

#include "VerifyUtils.h"

using namespace mlir;
using namespace accel::transformer;
using namespace accel::transformer::detail;

/// A 1-D per-channel parameter (`weight`, `bias`) has the size of the last,
/// normalised dimension of x.
static LogicalResult verifyNormParameter(Operation *op, StringRef name,
                                         Value x, Value parameter) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto pType = cast<RankedTensorType>(parameter.getType());
  int64_t normalised = xType.getDimSize(xType.getRank() - 1);
  if (!compatible(pType.getDimSize(0), normalised))
    return op->emitOpError()
           << name << " has " << dim(pType.getDimSize(0))
           << " elements but the normalised dimension of x has "
           << dim(normalised);
  return success();
}

//===----------------------------------------------------------------------===//
// RmsNormOp
//===----------------------------------------------------------------------===//

LogicalResult RmsNormOp::verify() {
  if (failed(verifyNormParameter(*this, "weight", getX(), getWeight())))
    return failure();
  return verifyPositive(*this, "epsilon", getEpsilon());
}

//===----------------------------------------------------------------------===//
// AddRmsNormOp
//===----------------------------------------------------------------------===//

LogicalResult AddRmsNormOp::verify() {
  if (failed(verifyNormParameter(*this, "weight", getX(), getWeight())))
    return failure();
  return verifyPositive(*this, "epsilon", getEpsilon());
}

//===----------------------------------------------------------------------===//
// LayerNormOp
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::verify() {
  if (failed(verifyNormParameter(*this, "weight", getX(), getWeight())))
    return failure();
  if (Value bias = getBias())
    if (failed(verifyNormParameter(*this, "bias", getX(), bias)))
      return failure();
  return verifyPositive(*this, "epsilon", getEpsilon());
}
