//===- ExternalData.cpp - ONNX external-data files ------------------------===//
//
// External data lives in files beside the model, named by a location
// relative to the model's folder. A location that is absolute or that leads
// out of that folder (through "..", or a symbolic link) is refused: a model
// file must not make the compiler read arbitrary files. Only regular files
// are read (mapRegularFile): a FIFO or a device in the folder is refused.
//
//===----------------------------------------------------------------------===//
#include "ImportState.h"

#include "core/RegularFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace accel::import;

std::unique_ptr<llvm::MemoryBuffer>
accel::import::mapRegularFile(const std::string &path, llvm::StringRef what, std::string &why) {
  accel::rt::StatusOr<accel::rt::RegularFile> file = accel::rt::openRegularFile(path, what);
  if (!file) {
    why = file.status().message();
    return nullptr;
  }
  // The size the file had when it was opened bounds what is mapped or read.
  auto buffer = llvm::MemoryBuffer::getOpenFile(file->fd(), path, file->size(),
                                                /*RequiresNullTerminator=*/false);
  if (!buffer) {
    why = "cannot read " + what.str() + " '" + path + "': " + buffer.getError().message();
    return nullptr;
  }
  return std::move(*buffer);
}

std::shared_ptr<llvm::MemoryBuffer>
ExternalDataFiles::open(llvm::StringRef location, std::string &why) {
  if (location.empty()) {
    why = "external data has an empty location";
    return nullptr;
  }
  if (!allowed_) {
    why = "external data location '" + location.str() +
          "' cannot be read: the model was imported from memory, and external "
          "data needs a model file";
    return nullptr;
  }
  if (llvm::sys::path::is_absolute(location) ||
      llvm::sys::path::has_root_name(location)) {
    why = "external data location '" + location.str() +
          "' is absolute; it must be relative to the model's folder";
    return nullptr;
  }
  for (auto it = llvm::sys::path::begin(location), e = llvm::sys::path::end(location);
       it != e; ++it)
    if (*it == "..") {
      why = "external data location '" + location.str() +
            "' leads out of the model's folder";
      return nullptr;
    }
  auto cached = files_.find(location);
  if (cached != files_.end())
    return cached->second;

  llvm::SmallString<256> path(modelDir_);
  llvm::sys::path::append(path, location);
  // Symbolic links must not lead out of the folder either.
  llvm::SmallString<256> realDir, realFile;
  if (!llvm::sys::fs::real_path(modelDir_.empty() ? "." : modelDir_, realDir) &&
      !llvm::sys::fs::real_path(path, realFile)) {
    llvm::StringRef dir = realDir.str(), file = realFile.str();
    if (!file.starts_with(dir) || file.size() <= dir.size() ||
        !llvm::sys::path::is_separator(file[dir.size()])) {
      why = "external data file '" + path.str().str() + "' resolves to '" +
            file.str() + "', outside the model's folder";
      return nullptr;
    }
  }
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      mapRegularFile(path.str().str(), "external data file", why);
  if (!buffer)
    return nullptr;
  std::shared_ptr<llvm::MemoryBuffer> shared(std::move(buffer));
  files_[location] = shared;
  return shared;
}
