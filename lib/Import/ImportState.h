//===- ImportState.h - shared state of one ONNX import ----------*- C++ -*-===//
//
// Internal to lib/Import: what the files of the importer share while one
// model is imported.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_LIB_IMPORT_IMPORTSTATE_H
#define ACCEL_LIB_IMPORT_IMPORTSTATE_H

#include "accel/Import/OnnxImporter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include <onnx/onnx_pb.h>

#include <memory>
#include <string>

namespace accel::import {

/// Maps (or reads) the file at `path` if it is a regular file, up to the
/// size it had when opened: a FIFO, a device (/dev/zero) or a directory is
/// refused at once, never read (core/RegularFile.h). `what` names the file
/// in `why`, one sentence, on failure.
std::unique_ptr<llvm::MemoryBuffer> mapRegularFile(const std::string &path,
                                                   llvm::StringRef what, std::string &why);

/// External-data files, each mapped once and shared by every tensor (and
/// every dense_resource blob) that points into it.
class ExternalDataFiles {
public:
  explicit ExternalDataFiles(std::string modelDir) : modelDir_(std::move(modelDir)) {}
  /// For a model imported from memory: there is no folder, and every
  /// external-data location is refused.
  static ExternalDataFiles none() {
    ExternalDataFiles files("");
    files.allowed_ = false;
    return files;
  }

  /// Resolves `location` (relative to the model's folder, never escaping it)
  /// and maps the file. `why` receives one sentence on failure.
  std::shared_ptr<llvm::MemoryBuffer> open(llvm::StringRef location, std::string &why);

private:
  std::string modelDir_;
  bool allowed_ = true;
  llvm::StringMap<std::shared_ptr<llvm::MemoryBuffer>> files_;
};

/// Everything one import shares.
struct ImportState {
  mlir::MLIRContext *context;
  const OnnxImportOptions &options;
  std::string modelPath;
  /// Keeps the parsed protobuf alive as long as any blob points into it.
  std::shared_ptr<::onnx::ModelProto> model;
  ExternalDataFiles externalData;
  /// Unique blob names: initializer names can repeat across functions.
  llvm::StringMap<unsigned> blobNames;

  /// loc("<model file>":<index>:0) named after the node (or tensor).
  mlir::Location nodeLoc(llvm::StringRef name, int index) const;
};

/// Maps an ONNX TensorProto element type id to an MLIR type (null when the
/// id is not one accel accepts). Shared with the onnx dialect's verifiers.
mlir::Type convertElementType(mlir::MLIRContext *context, int32_t dataType);

/// Human-readable name of a TensorProto element type id ("FLOAT16", "17").
std::string elementTypeName(int32_t dataType);

/// Converts an initializer or a TENSOR attribute into an ElementsAttr. Small
/// tensors are inlined; large ones become dense_resource blobs over the
/// protobuf's or the external file's own bytes. On failure emits an error at
/// `loc` and returns null.
mlir::ElementsAttr importTensor(ImportState &state, const ::onnx::TensorProto &tensor,
                                mlir::Location loc);

/// Converts a node attribute following the onnx dialect's conventions (INT
/// → i64, FLOAT → f32, INTS → array<i64>, FLOATS → array<f32>, STRING →
/// string, STRINGS → [strings], TENSOR → elements). Emits an error at `loc`
/// and returns null for kinds accel does not accept (GRAPH, SPARSE_TENSOR,
/// references to function attributes).
mlir::Attribute importAttribute(ImportState &state, const ::onnx::AttributeProto &attr,
                                mlir::Location loc);

} // namespace accel::import

#endif // ACCEL_LIB_IMPORT_IMPORTSTATE_H
