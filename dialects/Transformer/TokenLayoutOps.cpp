//===- TokenLayoutOps.cpp - flatten_tokens and unflatten_tokens -----------===//
//
// The views between batch-major ONNX activations and token-major transformer
// ones that raising writes around every token-wise op, and the folds that
// remove them between consecutive raised ops.
//
//===----------------------------------------------------------------------===//
#include "accel/dialects/Transformer/TransformerOps.h"

#include "VerifyUtils.h"

using namespace mlir;
using namespace accel::transformer;
using namespace accel::transformer::detail;

/// The product of `dims`, dynamic when any of them is.
static int64_t product(ArrayRef<int64_t> dims) {
  int64_t result = 1;
  for (int64_t d : dims)
    result = mulDims(result, d);
  return result;
}

//===----------------------------------------------------------------------===//
// FlattenTokensOp
//===----------------------------------------------------------------------===//

LogicalResult FlattenTokensOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (result.getElementType() != input.getElementType())
    return emitOpError("result element type ")
           << result.getElementType()
           << " does not match the input element type "
           << input.getElementType();
  ArrayRef<int64_t> in = input.getShape();
  if (result.getRank() == 1) {
    if (in.empty())
      return emitOpError("input must have at least one dimension");
    if (!compatible(result.getDimSize(0), product(in)))
      return emitOpError("result has ")
             << dim(result.getDimSize(0)) << " tokens but the input "
             << shape(in) << " has " << dim(product(in));
    return success();
  }
  if (result.getRank() != 2)
    return emitOpError("result must be [tokens, features] or [tokens], got ")
           << result;
  if (in.size() < 2)
    return emitOpError("a [tokens, features] result needs an input of rank 2 "
                       "or more, got ")
           << input;
  if (!compatible(result.getDimSize(1), in.back()))
    return emitOpError("result has ")
           << dim(result.getDimSize(1)) << " features but the input has "
           << dim(in.back());
  int64_t tokens = product(in.drop_back());
  if (!compatible(result.getDimSize(0), tokens))
    return emitOpError("result has ")
           << dim(result.getDimSize(0)) << " tokens but the input "
           << shape(in) << " has " << dim(tokens);
  return success();
}

OpFoldResult FlattenTokensOp::fold(FoldAdaptor) {
  Value input = getInput();
  // Already token-major: [T, H] -> [T, H], [T] -> [T].
  if (input.getType() == getType())
    return input;
  // flatten_tokens(unflatten_tokens(%r like %x)) -> %r. The unflatten's
  // token dimensions are exactly the dimensions this flatten merges when the
  // two ranks agree (which equal types imply).
  if (auto unflatten = input.getDefiningOp<UnflattenTokensOp>())
    if (unflatten.getInput().getType() == getType())
      return unflatten.getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// UnflattenTokensOp
//===----------------------------------------------------------------------===//

LogicalResult UnflattenTokensOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto like = cast<RankedTensorType>(getLike().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (result.getElementType() != input.getElementType())
    return emitOpError("result element type ")
           << result.getElementType()
           << " does not match the input element type "
           << input.getElementType();
  int64_t tokenDims = getNumTokenDims();
  if (tokenDims < 1 ||
      (tokenDims != like.getRank() && tokenDims != like.getRank() - 1))
    return emitOpError("result rank ")
           << result.getRank() << " must be the rank of like ("
           << like.getRank() << ") or, for ids, that rank + "
           << input.getRank() - 1;
  ArrayRef<int64_t> out = result.getShape();
  for (int64_t i = 0; i < tokenDims; ++i)
    if (!compatible(out[i], like.getDimSize(i)))
      return emitOpError("result dimension ")
             << i << " is " << dim(out[i]) << " but like's is "
             << dim(like.getDimSize(i));
  if (input.getRank() == 2 && !compatible(out.back(), input.getDimSize(1)))
    return emitOpError("result has ")
           << dim(out.back()) << " features but the input has "
           << dim(input.getDimSize(1));
  int64_t tokens = product(out.take_front(tokenDims));
  if (!compatible(input.getDimSize(0), tokens))
    return emitOpError("input has ")
           << dim(input.getDimSize(0)) << " tokens but the result "
           << shape(out) << " has " << dim(tokens);
  return success();
}

OpFoldResult UnflattenTokensOp::fold(FoldAdaptor) {
  // Already batch-major: [T, N] like [T, H] -> [T, N] is the input.
  if (getInput().getType() == getType())
    return getInput();
  // unflatten_tokens(flatten_tokens(%x) like %x) -> %x: the token dimensions
  // flattened are the ones restored.
  if (auto flatten = getInput().getDefiningOp<FlattenTokensOp>())
    if (flatten.getInput() == getLike() && getLike().getType() == getType())
      return getLike();
  // like unflatten_tokens(%r like %x) -> like %x, when this op's token dims
  // are among that unflatten's (which are %x's): every unflatten of a chain
  // of raised ops then names the one batch-major value they all came from.
  if (auto inner = getLike().getDefiningOp<UnflattenTokensOp>()) {
    int64_t tokenDims = getNumTokenDims();
    int64_t rootRank = inner.getLike().getType().getRank();
    if (tokenDims <= inner.getNumTokenDims() &&
        (tokenDims == rootRank || tokenDims == rootRank - 1)) {
      getLikeMutable().assign(inner.getLike());
      return getResult();
    }
  }
  return {};
}
