//===- HeadLayoutOps.cpp - split_heads, merge_heads and split -------------===//
#include "accel/dialects/Transformer/TransformerOps.h"

#include "VerifyUtils.h"

using namespace mlir;
using namespace accel::transformer;
using namespace accel::transformer::detail;

/// Checks that `flat` ([tokens, features]) and `heads` ([tokens, heads,
/// head_dim]) describe the same data; `flatName` and `headsName` say which
/// is the input and which the result.
static LogicalResult verifyHeadView(Operation *op, RankedTensorType flat,
                                    StringRef flatName, RankedTensorType heads,
                                    StringRef headsName) {
  if (!compatible(flat.getDimSize(0), heads.getDimSize(0)))
    return op->emitOpError()
           << "the " << headsName << " has " << dim(heads.getDimSize(0))
           << " tokens but the " << flatName << " has "
           << dim(flat.getDimSize(0));
  if (heads.isDynamicDim(1) || heads.isDynamicDim(2))
    return op->emitOpError()
           << "the " << headsName << " must have static heads and head_dim, got "
           << heads;
  int64_t product = heads.getDimSize(1) * heads.getDimSize(2);
  if (!compatible(flat.getDimSize(1), product))
    return op->emitOpError()
           << "the " << headsName << " has heads * head_dim = "
           << heads.getDimSize(1) << " * " << heads.getDimSize(2) << " = "
           << product << " but the " << flatName << " has "
           << dim(flat.getDimSize(1)) << " features";
  if (flat.getElementType() != heads.getElementType())
    return op->emitOpError()
           << "result element type does not match the input element type";
  return success();
}

//===----------------------------------------------------------------------===//
// SplitHeadsOp
//===----------------------------------------------------------------------===//

LogicalResult SplitHeadsOp::verify() {
  return verifyHeadView(*this, getInput().getType(), "input",
                        getResult().getType(), "result");
}

OpFoldResult SplitHeadsOp::fold(FoldAdaptor) {
  // split_heads(merge_heads(x)) -> x.
  if (auto merge = getInput().getDefiningOp<MergeHeadsOp>())
    if (merge.getInput().getType() == getType())
      return merge.getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// MergeHeadsOp
//===----------------------------------------------------------------------===//

LogicalResult MergeHeadsOp::verify() {
  return verifyHeadView(*this, getResult().getType(), "result",
                        getInput().getType(), "input");
}

OpFoldResult MergeHeadsOp::fold(FoldAdaptor) {
  // merge_heads(split_heads(x)) -> x.
  if (auto split = getInput().getDefiningOp<SplitHeadsOp>())
    if (split.getInput().getType() == getType())
      return split.getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// SplitOp
//===----------------------------------------------------------------------===//

LogicalResult SplitOp::verify() {
  RankedTensorType input = getInput().getType();
  if (getResults().size() < 2)
    return emitOpError("needs at least two results, got ")
           << getResults().size();
  int64_t sum = 0;
  for (auto [index, result] : llvm::enumerate(getResults())) {
    auto type = cast<RankedTensorType>(result.getType());
    if (!compatible(type.getDimSize(0), input.getDimSize(0)))
      return emitOpError("result #")
             << index << " has " << dim(type.getDimSize(0))
             << " tokens but the input has " << dim(input.getDimSize(0));
    if (type.getElementType() != input.getElementType())
      return emitOpError("result #")
             << index << " element type " << type.getElementType()
             << " does not match the input element type "
             << input.getElementType();
    sum = type.isDynamicDim(1) || ShapedType::isDynamic(sum)
              ? ShapedType::kDynamic
              : sum + type.getDimSize(1);
  }
  if (!compatible(sum, input.getDimSize(1)))
    return emitOpError("result features sum to ")
           << sum << " but the input has " << dim(input.getDimSize(1));
  return success();
}
