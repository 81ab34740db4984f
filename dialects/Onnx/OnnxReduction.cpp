//===- OnnxReduction.cpp - reduction and CumSum verifiers -----------------===//
#include "OnnxVerifyUtils.h"
#include "accel/dialects/Onnx/OnnxOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace accel::onnx;

/// Shared by ReduceMean, ReduceSum and ReduceMax: the two spellings of
/// `axes`, the flags, and the result shape when the axes are known.
template <typename ReduceOp> static LogicalResult verifyReduce(ReduceOp op) {
  Operation *o = op.getOperation();
  int64_t keepdims = asSigned(op.getKeepdims());
  int64_t noop = asSigned(op.getNoopWithEmptyAxes());
  if (failed(verifyAxesForms(o, op.getAxesInput(), op.getAxes())) ||
      failed(verifyFlag(o, "keepdims", keepdims)) ||
      failed(verifyFlag(o, "noop_with_empty_axes", noop)) ||
      failed(verifyElementType(o, op.getReduced(), "result",
                               elementTypeOf(op.getData()))))
    return failure();
  std::optional<ArrayRef<int64_t>> in = shapeOf(op.getData());
  if (!in)
    return success();
  int64_t rank = in->size();

  // The reduced dims, or nullopt when they depend on the `axes` input's
  // value.
  std::optional<SmallVector<int64_t>> axes;
  if (Value input = op.getAxesInput()) {
    std::optional<ArrayRef<int64_t>> s = shapeOf(input);
    if (!s || ShapedType::isDynamic(s->front()))
      return success();
    if (s->front() != 0) {
      // The axes are unknown; only the result rank is.
      int64_t expected = keepdims ? rank : rank - s->front();
      std::optional<int64_t> r = rankOf(op.getReduced());
      if (r && *r != expected)
        return op.emitOpError("result rank ")
               << *r << " does not match the " << expected
               << " dims left by the reduction";
      return success();
    }
    axes.emplace();
  } else if (std::optional<ArrayRef<int64_t>> attr = op.getAxes()) {
    FailureOr<SmallVector<int64_t>> norm =
        verifyAxes(o, "attribute 'axes' entry", *attr, rank);
    if (failed(norm))
      return failure();
    axes = std::move(*norm);
  } else {
    axes.emplace();
  }
  if (axes->empty() && !noop)
    axes = llvm::to_vector(llvm::seq<int64_t>(rank));
  SmallVector<int64_t> expected;
  for (int64_t d = 0; d < rank; ++d) {
    if (!llvm::is_contained(*axes, d))
      expected.push_back((*in)[d]);
    else if (keepdims)
      expected.push_back(1);
  }
  return verifyResultShape(o, op.getReduced(), expected);
}

LogicalResult ReduceMeanOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceSumOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMaxOp::verify() { return verifyReduce(*this); }

LogicalResult CumSumOp::verify() {
  if (failed(verifyFlag(*this, "exclusive", asSigned(getExclusive()))) ||
      failed(verifyFlag(*this, "reverse", asSigned(getReverse()))) ||
      failed(verifyIndexElementType(*this, getAxis(), "operand 'axis'")) ||
      failed(verifyScalar(*this, getAxis(), "operand 'axis'")))
    return failure();
  return verifySameType(*this, getY(), "result", getX(), "operand 'x'");
}
