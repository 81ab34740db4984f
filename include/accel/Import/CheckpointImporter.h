//===- CheckpointImporter.h - HF checkpoints to the transformer dialect -*- C++ -*-===//
//
// A Hugging Face checkpoint folder (config.json, model.safetensors or the
// shards of model.safetensors.index.json, generation_config.json) imported
// straight into the transformer dialect: the token-major function the raise
// pipeline makes from an ONNX export of the same family, so that every later
// pass works unchanged. Weights are dense_resource blobs over the mmapped
// safetensors files (docs/checkpoints.md).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_IMPORT_CHECKPOINTIMPORTER_H
#define ACCEL_IMPORT_CHECKPOINTIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace accel {

struct CheckpointImportOptions {
  /// Weights of at most this many bytes are inline dense<> (as the ONNX
  /// importer does); larger ones are dense_resource blobs.
  int64_t inlineConstantBytes = 256;
  std::string functionName = "main_graph";
};

/// True when `path` is a folder (accelc then imports it as a checkpoint).
bool isCheckpointDir(llvm::StringRef path);

/// Imports the checkpoint folder `dir`. On failure emits one error (one
/// sentence naming the file, tensor or config field) and returns null.
mlir::OwningOpRef<mlir::ModuleOp>
importCheckpointDir(mlir::MLIRContext &context, llvm::StringRef dir,
                    const CheckpointImportOptions &options = {});

} // namespace accel

#endif // ACCEL_IMPORT_CHECKPOINTIMPORTER_H
