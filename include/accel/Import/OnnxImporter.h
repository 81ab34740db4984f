//===- OnnxImporter.h - ONNX protobuf to the onnx dialect -------*- C++ -*-===//
//
// lib/Import turns an ONNX model into a module of the onnx dialect, one op per
// node, nothing clever (DESIGN.md §1). Initializers become onnx.Constant ops;
// large ones reference their bytes where they already are (the parsed
// protobuf, or the mmap'd external-data file) through dense_resource blobs,
// so that weights are never held twice.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_IMPORT_ONNXIMPORTER_H
#define ACCEL_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace accel {

struct OnnxImportOptions {
  /// Initializers with at most this many bytes are inlined as
  /// DenseElementsAttr (readable in IR, matchable by patterns); larger ones
  /// become dense_resource blobs that reference the model's own bytes.
  int64_t inlineConstantBytes = 256;
  /// Name of the generated function.
  std::string functionName = "main_graph";
};

/// Imports the ONNX model at `path` (external data is resolved relative to
/// its folder). On failure, emits located diagnostics on `context` and
/// returns null.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxFile(mlir::MLIRContext &context, llvm::StringRef path,
               const OnnxImportOptions &options = {});

/// Imports the ONNX model held in `bytes` (which need only live for the
/// call: the parsed protobuf keeps what it needs). `name` stands for the
/// file in locations and messages. A buffer has no folder, so a model whose
/// tensors use external data is refused (external data needs a model file).
/// On failure, emits located diagnostics on `context` and returns null.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxBuffer(mlir::MLIRContext &context, llvm::StringRef bytes, llvm::StringRef name,
                 const OnnxImportOptions &options = {});

} // namespace accel

#endif // ACCEL_IMPORT_ONNXIMPORTER_H
