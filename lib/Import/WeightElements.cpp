//===- WeightElements.cpp - the one maker of weight attributes ------------===//
#include "WeightElements.h"

#include "accel/Weights/Weights.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstdint>

using namespace mlir;

ElementsAttr accel::import::weightElements(RankedTensorType type, llvm::StringRef name,
                                           llvm::ArrayRef<char> bytes,
                                           std::shared_ptr<const void> owner,
                                           int64_t elementBytes, bool fileBacked) {
  const size_t align = elementBytes > 0 ? size_t(elementBytes) : 1;
  const bool misaligned = reinterpret_cast<uintptr_t>(bytes.data()) % align != 0;
  if (misaligned || !owner) {
    AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, align);
    return DenseResourceElementsAttr::get(type, name, std::move(blob));
  }
  return weights::fromBytes(type, name, bytes, std::move(owner), align, fileBacked);
}

ElementsAttr accel::import::weightElements(RankedTensorType type, llvm::StringRef name,
                                           std::vector<char> &&bytes, int64_t elementBytes) {
  auto held = std::make_shared<std::vector<char>>(std::move(bytes));
  llvm::ArrayRef<char> view(held->data(), held->size());
  // std::vector's storage is aligned for any scalar type.
  return weightElements(type, name, view, std::shared_ptr<const void>(held, held.get()),
                        elementBytes);
}
