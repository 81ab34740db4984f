//===- Views.cpp - reshapes without a copy, and splits --------------------===//
//
// split_heads, merge_heads, flatten_tokens, unflatten_tokens and the ONNX
// reshapes (Reshape, Flatten, Squeeze, Unsqueeze, Identity, a Cast to the
// same type) become exec.view: no step, the result shares its source's
// bytes. transformer.split and an ONNX Split of the last axis become
// exec.split (a copy per part).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "accel/dialects/Onnx/OnnxOps.h"
#include "accel/dialects/Transformer/TransformerOps.h"

using namespace mlir;
namespace ex = accel::exec;
namespace tf = accel::transformer;

namespace accel::conversion {

/// The result of `op` is operand 0's bytes with another shape.
static LogicalResult lowerAsView(Operation *op, Lowering &l) {
  FailureOr<Value> source = l.view(op->getOperand(0), op);
  if (failed(source))
    return failure();
  FailureOr<ex::ViewType> type = l.viewType(op->getResult(0), op);
  if (failed(type))
    return failure();
  if (cast<ex::ViewType>(source->getType()).getElementType() != type->getElementType())
    return op->emitError() << "views " << source->getType() << " as " << *type
                           << ", which changes the element type";
  l.map(op->getResult(0), *source);
  return success();
}

/// Splits `input` along its last axis into `results` with exec.split.
static LogicalResult lowerSplitLast(Operation *op, Value input, ValueRange results, Lowering &l) {
  FailureOr<Value> in = l.view(input, op);
  if (failed(in))
    return failure();
  SmallVector<Value> outs;
  for (Value r : results) {
    FailureOr<Value> out = l.alloc(r);
    if (failed(out))
      return failure();
    outs.push_back(*out);
  }
  l.finish(ex::SplitOp::create(l.builder(), op->getLoc(), *in, outs), op);
  return success();
}

void populateViewLowerings(LoweringPatterns &patterns) {
  for (StringRef name :
       {StringRef(tf::SplitHeadsOp::getOperationName()),
        StringRef(tf::MergeHeadsOp::getOperationName()),
        StringRef(tf::FlattenTokensOp::getOperationName()),
        StringRef(tf::UnflattenTokensOp::getOperationName()),
        StringRef("onnx.Reshape"), StringRef("onnx.Flatten"), StringRef("onnx.Squeeze"),
        StringRef("onnx.Unsqueeze"), StringRef("onnx.Identity")})
    patterns.add(name, lowerAsView);
  patterns.add<tf::SplitOp>([](tf::SplitOp op, Lowering &l) {
    return lowerSplitLast(op, op.getInput(), op.getResults(), l);
  });
  // A Cast to the same element type is a view; another Cast, and a Split of
  // an inner axis, run as ONNX operators.
  patterns.add("onnx.Cast", [](Operation *op, Lowering &l) -> LogicalResult {
    auto in = cast<ShapedType>(op->getOperand(0).getType());
    auto out = cast<ShapedType>(op->getResult(0).getType());
    if (in.getElementType() == out.getElementType())
      return lowerAsView(op, l);
    return lowerOnnxOperator(op, l);
  });
  patterns.add("onnx.Split", [](Operation *op, Lowering &l) -> LogicalResult {
    auto split = cast<accel::onnx::SplitOp>(op);
    auto type = cast<ShapedType>(split.getInput().getType());
    int64_t axis = split.getAxis();
    if (axis < 0)
      axis += type.getRank();
    if (axis == type.getRank() - 1)
      return lowerSplitLast(op, split.getInput(), split.getOutputs(), l);
    return lowerOnnxOperator(op, l);
  });
}

} // namespace accel::conversion
