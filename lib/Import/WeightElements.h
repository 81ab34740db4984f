//===- WeightElements.h - the one maker of weight attributes ----*- C++ -*-===//
//
// Internal to lib/Import. Every large weight the importers make (an ONNX
// initializer, a checkpoint tensor) becomes a dense_resource blob here: over
// bytes someone else owns (the parsed protobuf, an mmapped file), without a
// copy, or over bytes the importer had to compute (a transposed or widened
// tensor). One function, so that how weights are held changes in one place.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_LIB_IMPORT_WEIGHTELEMENTS_H
#define ACCEL_LIB_IMPORT_WEIGHTELEMENTS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <vector>

namespace accel::import {

/// A dense_resource attribute named `name` of `type` over `bytes`, which
/// `owner` keeps alive (the blob's deleter holds it: nothing is copied).
/// Bytes not aligned to `elementBytes` are copied once (onnx's external-data
/// writer allows them). `owner` may be null only when `bytes` outlive the
/// context.
mlir::ElementsAttr weightElements(mlir::RankedTensorType type, llvm::StringRef name,
                                  llvm::ArrayRef<char> bytes,
                                  std::shared_ptr<const void> owner, int64_t elementBytes);

/// The same over bytes the importer computed (they move into the blob).
mlir::ElementsAttr weightElements(mlir::RankedTensorType type, llvm::StringRef name,
                                  std::vector<char> &&bytes, int64_t elementBytes);

} // namespace accel::import

#endif // ACCEL_LIB_IMPORT_WEIGHTELEMENTS_H
