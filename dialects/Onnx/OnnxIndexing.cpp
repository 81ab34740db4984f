//===- OnnxIndexing.cpp - gather, scatter, Trilu and Range verifiers ------===//
#include "OnnxVerifyUtils.h"
#include "accel/dialects/Onnx/OnnxOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace accel::onnx;

//===----------------------------------------------------------------------===//
// Gather / GatherND
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::verify() {
  if (failed(
          verifyIndexElementType(*this, getIndices(), "operand 'indices'")) ||
      failed(verifyElementType(*this, getOutput(), "result",
                               elementTypeOf(getData()))))
    return failure();
  std::optional<ArrayRef<int64_t>> data = shapeOf(getData());
  if (!data)
    return success();
  if (failed(verifyAxis(*this, "attribute 'axis'", asSigned(getAxis()),
                        data->size())))
    return failure();
  std::optional<ArrayRef<int64_t>> indices = shapeOf(getIndices());
  if (!indices)
    return success();
  int64_t axis = *normalizeAxis(asSigned(getAxis()), data->size());
  SmallVector<int64_t> expected(data->take_front(axis));
  llvm::append_range(expected, *indices);
  llvm::append_range(expected, data->drop_front(axis + 1));
  return verifyResultShape(*this, getOutput(), expected);
}

LogicalResult GatherNDOp::verify() {
  if (failed(verifyElementType(*this, getIndices(), "operand 'indices'",
                               IntegerType::get(getContext(), 64))) ||
      failed(verifyElementType(*this, getOutput(), "result",
                               elementTypeOf(getData()))))
    return failure();
  int64_t b = asSigned(getBatchDims());
  if (b < 0)
    return emitOpError("attribute 'batch_dims' must be >= 0, got ") << b;
  std::optional<ArrayRef<int64_t>> data = shapeOf(getData());
  std::optional<ArrayRef<int64_t>> indices = shapeOf(getIndices());
  if (!data || !indices)
    return success();
  int64_t r = data->size(), q = indices->size();
  if (b >= std::min(r, q))
    return emitOpError("attribute 'batch_dims' = ")
           << b << " must be less than the ranks of 'data' (" << r
           << ") and 'indices' (" << q << ")";
  int64_t k = indices->back();
  if (ShapedType::isDynamic(k))
    return success();
  if (k < 1 || k > r - b)
    return emitOpError("the last dim of 'indices' (")
           << k << ") must be in [1, " << r - b
           << "], the rank of 'data' minus 'batch_dims'";
  SmallVector<int64_t> expected(indices->drop_back());
  llvm::append_range(expected, data->drop_front(b + k));
  return verifyResultShape(*this, getOutput(), expected);
}

//===----------------------------------------------------------------------===//
// ScatterND
//===----------------------------------------------------------------------===//

LogicalResult ScatterNDOp::verify() {
  StringRef reduction = getReduction();
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction))
    return emitOpError("attribute 'reduction' must be one of \"none\", "
                       "\"add\", \"mul\", \"max\", \"min\", got \"")
           << reduction << "\"";
  if (failed(verifyElementType(*this, getIndices(), "operand 'indices'",
                               IntegerType::get(getContext(), 64))) ||
      failed(verifySameElementType(*this, getData(), "operands 'data'",
                                   getUpdates(), "'updates'")) ||
      failed(verifySameType(*this, getOutput(), "result", getData(),
                            "operand 'data'")))
    return failure();
  std::optional<ArrayRef<int64_t>> data = shapeOf(getData());
  std::optional<ArrayRef<int64_t>> indices = shapeOf(getIndices());
  std::optional<ArrayRef<int64_t>> updates = shapeOf(getUpdates());
  if (!data || !indices || !updates)
    return success();
  if (indices->empty())
    return emitOpError("operand 'indices' must have rank >= 1");
  int64_t k = indices->back();
  if (ShapedType::isDynamic(k))
    return success();
  if (k < 1 || k > static_cast<int64_t>(data->size()))
    return emitOpError("the last dim of 'indices' (")
           << k << ") must be in [1, " << data->size()
           << "], the rank of 'data'";
  SmallVector<int64_t> expected(indices->drop_back());
  llvm::append_range(expected, data->drop_front(k));
  bool ok = updates->size() == expected.size() &&
            llvm::all_of(llvm::zip_equal(*updates, expected), [](auto p) {
              return dimsAgree(std::get<0>(p), std::get<1>(p));
            });
  if (ok)
    return success();
  return emitOpError("operand 'updates' type ")
         << getUpdates().getType() << " does not agree with the shape "
         << formatShape(expected)
         << " = indices.shape[:-1] + data.shape[indices.shape[-1]:]";
}

//===----------------------------------------------------------------------===//
// Trilu
//===----------------------------------------------------------------------===//

LogicalResult TriluOp::verify() {
  if (failed(verifyFlag(*this, "upper", asSigned(getUpper()))))
    return failure();
  if (std::optional<int64_t> r = rankOf(getInput()); r && *r < 2)
    return emitOpError("operand 'input' must have rank >= 2, got ") << *r;
  if (Value k = getK())
    if (failed(verifyElementType(*this, k, "operand 'k'",
                                 IntegerType::get(getContext(), 64))) ||
        failed(verifyScalar(*this, k, "operand 'k'")))
      return failure();
  return verifySameType(*this, getOutput(), "result", getInput(),
                        "operand 'input'");
}

//===----------------------------------------------------------------------===//
// Range
//===----------------------------------------------------------------------===//

LogicalResult RangeOp::verify() {
  for (auto [v, name] : {std::pair{getStart(), "start"},
                         {getLimit(), "limit"},
                         {getDelta(), "delta"}}) {
    if (failed(
            verifyScalar(*this, v, (Twine("operand '") + name + "'").str())) ||
        failed(verifySameElementType(*this, getStart(), "operands 'start'", v,
                                     (Twine("'") + name + "'").str())))
      return failure();
  }
  if (failed(verifyElementType(*this, getOutput(), "result",
                               elementTypeOf(getStart()))))
    return failure();
  return verifyRank(*this, getOutput(), "result", {1});
}
