//===- OnnxMatMul.cpp - MatMul and Gemm verifiers -------------------------===//
#include "OnnxVerifyUtils.h"
#include "accel/dialects/Onnx/OnnxOps.h"

using namespace mlir;
using namespace accel::onnx;

static LogicalResult verifyContraction(Operation *op, int64_t kA, int64_t kB) {
  if (dimsAgree(kA, kB))
    return success();
  return op->emitOpError("contracting dim of 'A' (")
         << kA << ") does not match that of 'B' (" << kB << ")";
}

LogicalResult MatMulOp::verify() {
  if (failed(verifySameElementType(*this, getA(), "operands 'A'", getB(),
                                   "'B'")) ||
      failed(verifyElementType(*this, getY(), "result 'Y'",
                               elementTypeOf(getA()))))
    return failure();
  std::optional<ArrayRef<int64_t>> a = shapeOf(getA()), b = shapeOf(getB());
  if ((a && a->empty()) || (b && b->empty()))
    return emitOpError("operands must have rank >= 1");
  if (!a || !b)
    return success();
  int64_t kA = a->back();
  int64_t kB = b->size() == 1 ? b->front() : (*b)[b->size() - 2];
  if (failed(verifyContraction(*this, kA, kB)))
    return failure();
  ArrayRef<int64_t> batchA = a->drop_back(std::min<size_t>(a->size(), 2));
  ArrayRef<int64_t> batchB = b->drop_back(std::min<size_t>(b->size(), 2));
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(batchA, batchB);
  if (failed(shape))
    return emitOpError("batch dims ")
           << formatShape(batchA) << " and " << formatShape(batchB)
           << " are not broadcastable";
  if (a->size() >= 2)
    shape->push_back((*a)[a->size() - 2]);
  if (b->size() >= 2)
    shape->push_back(b->back());
  return verifyResultShape(*this, getY(), *shape);
}

LogicalResult GemmOp::verify() {
  bool transA = getTransA() != 0, transB = getTransB() != 0;
  if (failed(verifyFlag(*this, "transA", asSigned(getTransA()))) ||
      failed(verifyFlag(*this, "transB", asSigned(getTransB()))) ||
      failed(verifyRank(*this, getA(), "operand 'A'", {2})) ||
      failed(verifyRank(*this, getB(), "operand 'B'", {2})) ||
      failed(verifySameElementType(*this, getA(), "operands 'A'", getB(),
                                   "'B'")) ||
      failed(verifyElementType(*this, getY(), "result 'Y'",
                               elementTypeOf(getA()))))
    return failure();
  int64_t m = ShapedType::kDynamic, n = ShapedType::kDynamic;
  int64_t kA = ShapedType::kDynamic, kB = ShapedType::kDynamic;
  if (std::optional<ArrayRef<int64_t>> a = shapeOf(getA())) {
    m = (*a)[transA ? 1 : 0];
    kA = (*a)[transA ? 0 : 1];
  }
  if (std::optional<ArrayRef<int64_t>> b = shapeOf(getB())) {
    kB = (*b)[transB ? 1 : 0];
    n = (*b)[transB ? 0 : 1];
  }
  if (failed(verifyContraction(*this, kA, kB)))
    return failure();
  if (Value c = getC()) {
    if (failed(verifySameElementType(*this, getA(), "operands 'A'", c, "'C'")))
      return failure();
    if (std::optional<ArrayRef<int64_t>> cs = shapeOf(c))
      if (failed(verifyUnidirectionalBroadcast(*this, "operand 'C'", *cs,
                                               "result", {m, n})))
        return failure();
  }
  return verifyResultShape(*this, getY(), {m, n});
}
