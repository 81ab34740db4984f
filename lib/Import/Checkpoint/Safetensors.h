//===- Safetensors.h - a checkpoint's safetensors files, mmapped -*- C++ -*-===//
//
// Internal to lib/Import. A safetensors file is an 8-byte little-endian
// header length, a JSON header {name: {dtype, shape, data_offsets}} and the
// tensors' bytes. The file is mapped once; every offset, dtype, shape and
// size is checked before a tensor is handed out, so a damaged file is one
// sentence naming the file and the tensor, never a read out of bounds.
// CheckpointTensors is every tensor of a checkpoint folder: one
// model.safetensors, or the shards model.safetensors.index.json names.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_LIB_IMPORT_CHECKPOINT_SAFETENSORS_H
#define ACCEL_LIB_IMPORT_CHECKPOINT_SAFETENSORS_H

#include "core/Status.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace accel::import::ckpt {

/// One tensor of a safetensors file, checked: `bytes` lie inside the file
/// and hold exactly product(shape) elements of `dtype`.
struct StTensor {
  std::string name;
  std::string dtype;        ///< safetensors' name: F32, BF16, F16, ...
  int64_t elementBytes = 0; ///< bytes per element
  std::vector<int64_t> shape;
  int64_t numElements = 1;
  llvm::ArrayRef<char> bytes;
  std::string file;                           ///< the file's name, for messages
  std::shared_ptr<const llvm::MemoryBuffer> owner; ///< keeps the mapping alive
};

/// One safetensors file, mapped and its header checked.
class SafetensorsFile {
public:
  /// Maps `path` (a regular file) and checks its header; `displayName` names
  /// it in messages.
  static rt::StatusOr<std::shared_ptr<SafetensorsFile>> open(const std::string &path,
                                                              const std::string &displayName);
  const std::vector<StTensor> &tensors() const { return tensors_; }
  const StTensor *find(llvm::StringRef name) const;
  const std::string &name() const { return name_; }

private:
  std::string name_;
  std::shared_ptr<const llvm::MemoryBuffer> buffer_;
  std::vector<StTensor> tensors_;
  llvm::StringMap<size_t> index_;
};

/// Every tensor of a checkpoint folder.
class CheckpointTensors {
public:
  /// model.safetensors.index.json (its shards, each of which must exist and
  /// hold the tensors the index assigns it), else model.safetensors.
  static rt::StatusOr<std::shared_ptr<CheckpointTensors>> open(const std::string &dir);
  /// Null when the checkpoint has no such tensor.
  const StTensor *find(llvm::StringRef name) const;
  /// "model.safetensors", or "the shards of model.safetensors.index.json".
  const std::string &describe() const { return describe_; }

private:
  std::vector<std::shared_ptr<SafetensorsFile>> files_;
  llvm::StringMap<const StTensor *> tensors_;
  std::string describe_;
};

/// Opens `path` if it is a regular file inside `dir` (symbolic links must
/// not lead out of it); `what` names it in the message.
rt::StatusOr<std::unique_ptr<llvm::MemoryBuffer>> openInFolder(const std::string &dir,
                                                               const std::string &name);

} // namespace accel::import::ckpt

#endif // ACCEL_LIB_IMPORT_CHECKPOINT_SAFETENSORS_H
