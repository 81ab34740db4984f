//===- WeightElements.h - the one maker of weight attributes ----*- C++ -*-===//
//
// Internal to lib/Import. Every large weight the importers make (an ONNX
// initializer, a checkpoint tensor) becomes a dense_resource blob here: over
// bytes someone else owns (the parsed protobuf, an mmapped file), without a
// copy, or over bytes the importer had to compute (a transposed or widened
// tensor). One function, so that how weights are held changes in one place:
// it makes them through accel/Weights's fromBytes, the representation the
// passes transform lazily and the plan writer streams.
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
/// context. `fileBacked`: the bytes are a read-only mapping of a file, whose
/// pages the plan writer drops once read (accel/Weights/Weights.h).
mlir::ElementsAttr weightElements(mlir::RankedTensorType type, llvm::StringRef name,
                                  llvm::ArrayRef<char> bytes,
                                  std::shared_ptr<const void> owner, int64_t elementBytes,
                                  bool fileBacked = false);

/// The same over bytes the importer computed (they move into the blob).
mlir::ElementsAttr weightElements(mlir::RankedTensorType type, llvm::StringRef name,
                                  std::vector<char> &&bytes, int64_t elementBytes);

} // namespace accel::import

#endif // ACCEL_LIB_IMPORT_WEIGHTELEMENTS_H
