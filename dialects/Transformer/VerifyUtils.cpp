//===- VerifyUtils.cpp - shared helpers of transformer verifiers ----------===//
#include "VerifyUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace accel::transformer::detail {

bool compatible(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip_equal(a, b))
    if (!compatible(x, y))
      return false;
  return true;
}

std::string dim(int64_t size) {
  return ShapedType::isDynamic(size) ? std::string("?") : std::to_string(size);
}

std::string shape(ArrayRef<int64_t> sizes) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << '[';
  llvm::interleaveComma(sizes, os, [&](int64_t s) { os << dim(s); });
  os << ']';
  return out;
}

int64_t mulDims(int64_t a, int64_t b) {
  if (ShapedType::isDynamic(a) || ShapedType::isDynamic(b))
    return ShapedType::kDynamic;
  return a * b;
}

bool isFloatElement(Type type) {
  return type.isF32() || type.isF16() || type.isBF16();
}

bool isFloat8Element(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

bool isQuantizedElement(Type type) {
  return isFloat8Element(type) || type.isSignlessInteger(8) ||
         type.isSignlessInteger(4);
}

bool isCompatibleFloatWeight(Type weight, Type x) {
  return weight == x || (x.isF32() && (weight.isF16() || weight.isBF16()));
}

LogicalResult verifyPositive(Operation *op, StringRef name,
                             std::optional<llvm::APFloat> value) {
  if (value && !(value->convertToDouble() > 0.0))
    return op->emitOpError() << name << " must be positive";
  return success();
}

} // namespace accel::transformer::detail
