//===- CollectiveOps.cpp - all_gather and pp_transfer verifiers -----------===//
//
// all_reduce has no invariants beyond its ODS constraints (one type in and
// out, group_size >= 1).
//
//===----------------------------------------------------------------------===//
#include "accel/dialects/Transformer/TransformerOps.h"

#include "VerifyUtils.h"

using namespace mlir;
using namespace accel::transformer;
using namespace accel::transformer::detail;

//===----------------------------------------------------------------------===//
// AllGatherOp
//===----------------------------------------------------------------------===//

LogicalResult AllGatherOp::verify() {
  RankedTensorType input = getInput().getType();
  RankedTensorType result = getResult().getType();
  int64_t axis = static_cast<int64_t>(getAxis());
  int64_t group = static_cast<int64_t>(getGroupSize());
  if (axis >= input.getRank())
    return emitOpError("axis ") << axis << " is out of range for a rank-"
                                << input.getRank() << " input";
  if (result.getRank() != input.getRank())
    return emitOpError("result rank ")
           << result.getRank() << " does not match the input rank "
           << input.getRank();
  if (result.getElementType() != input.getElementType())
    return emitOpError("result element type ")
           << result.getElementType()
           << " does not match the input element type "
           << input.getElementType();
  for (int64_t i = 0; i < input.getRank(); ++i) {
    int64_t in = input.getDimSize(i), out = result.getDimSize(i);
    if (i == axis) {
      if (!compatible(out, mulDims(in, group)))
        return emitOpError("result dim ")
               << i << " is " << dim(out) << " but group_size * input dim "
               << i << " is " << group << " * " << dim(in) << " = "
               << dim(mulDims(in, group));
    } else if (!compatible(out, in)) {
      return emitOpError("result dim ")
             << i << " is " << dim(out) << " but input dim " << i << " is "
             << dim(in);
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// PpTransferOp
//===----------------------------------------------------------------------===//

LogicalResult PpTransferOp::verify() {
  if (getToStage() <= getFromStage())
    return emitOpError("sends from stage ")
           << getFromStage() << " to stage " << getToStage()
           << "; a value only goes to a later stage";
  return success();
}
