//===- Safetensors.cpp - a checkpoint's safetensors files, mmapped --------===//
#include "Safetensors.h"

#include "core/Json.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstring>

using namespace accel;
using namespace accel::import::ckpt;
using rt::StatusOr;

namespace {
/// Safetensors' header is at most 100 MB (the format's own limit).
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

int64_t dtypeBytes(llvm::StringRef dtype) {
  return llvm::StringSwitch<int64_t>(dtype)
      .Cases("F64", "I64", "U64", 8)
      .Cases("F32", "I32", "U32", 4)
      .Cases("F16", "BF16", "I16", "U16", 2)
      .Cases("I8", "U8", "BOOL", "F8_E4M3", "F8_E5M2", 1)
      .Default(0);
}

rt::Status bad(const std::string &file, const std::string &what) {
  return rt::invalidArgument("safetensors file '" + file + "' " + what);
}
} // namespace

StatusOr<std::unique_ptr<llvm::MemoryBuffer>>
accel::import::ckpt::openInFolder(const std::string &dir, const std::string &name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  if (llvm::sys::path::is_absolute(name))
    return rt::invalidArgument("'" + name + "' is an absolute path; checkpoint files must be "
                               "in the checkpoint folder '" + dir + "'");
  for (auto it = llvm::sys::path::begin(name), e = llvm::sys::path::end(name); it != e; ++it)
    if (*it == "..")
      return rt::invalidArgument("'" + name + "' leads out of the checkpoint folder '" + dir +
                                 "'");
  llvm::sys::fs::file_status st;
  if (std::error_code ec = llvm::sys::fs::status(path, st))
    return rt::notFound("cannot open '" + std::string(path) + "': " + ec.message());
  if (st.type() != llvm::sys::fs::file_type::regular_file)
    return rt::invalidArgument("'" + std::string(path) + "' is not a regular file");
  llvm::SmallString<256> realDir, realFile;
  if (!llvm::sys::fs::real_path(dir, realDir) && !llvm::sys::fs::real_path(path, realFile)) {
    llvm::StringRef d = realDir.str(), f = realFile.str();
    if (!f.starts_with(d) || f.size() <= d.size() || !llvm::sys::path::is_separator(f[d.size()]))
      return rt::invalidArgument("'" + std::string(path) + "' resolves to '" + f.str() +
                                 "', outside the checkpoint folder");
  }
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return rt::notFound("cannot open '" + std::string(path) + "': " +
                        buffer.getError().message());
  return std::move(*buffer);
}

StatusOr<std::shared_ptr<SafetensorsFile>>
SafetensorsFile::open(const std::string &path, const std::string &displayName) {
  llvm::SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  ACCEL_RT_ASSIGN_OR_RETURN(std::unique_ptr<llvm::MemoryBuffer> mapped,
                            openInFolder(dir.empty() ? "." : std::string(dir),
                                         std::string(llvm::sys::path::filename(path))));
  auto file = std::make_shared<SafetensorsFile>();
  file->name_ = displayName;
  file->buffer_ = std::shared_ptr<const llvm::MemoryBuffer>(std::move(mapped));
  const llvm::MemoryBuffer &buf = *file->buffer_;
  const uint64_t size = buf.getBufferSize();
  if (size < 8)
    return bad(displayName, "has " + std::to_string(size) +
                                " bytes, fewer than the 8 of its header length");
  uint64_t headerBytes = 0;
  for (int i = 7; i >= 0; --i)
    headerBytes = (headerBytes << 8) | uint8_t(buf.getBufferStart()[i]);
  if (headerBytes > size - 8)
    return bad(displayName, "declares a " + std::to_string(headerBytes) +
                                "-byte header but has only " + std::to_string(size - 8) +
                                " bytes after the header length");
  if (headerBytes > kMaxHeaderBytes)
    return bad(displayName, "declares a " + std::to_string(headerBytes) +
                                "-byte header, more than safetensors' limit of 100 MB");
  std::string_view text(buf.getBufferStart() + 8, headerBytes);
  StatusOr<rt::json::Value> header = rt::json::parse(text, {/*maxDepth=*/8});
  if (!header)
    return bad(displayName, "has a header that is not valid JSON (" +
                                header.status().message() + ")");
  if (!header->isObject())
    return bad(displayName, "has a header that is not a JSON object");
  const char *data = buf.getBufferStart() + 8 + headerBytes;
  const uint64_t dataBytes = size - 8 - headerBytes;
  for (const rt::json::Member &m : header->members()) {
    if (m.first == "__metadata__")
      continue;
    const std::string &name = m.first;
    auto badTensor = [&](const std::string &what) {
      return bad(displayName, "has tensor '" + name + "' " + what);
    };
    if (!m.second.isObject())
      return badTensor("described by something other than a JSON object");
    const rt::json::Value *dtype = m.second.find("dtype");
    const rt::json::Value *shape = m.second.find("shape");
    const rt::json::Value *offsets = m.second.find("data_offsets");
    if (!dtype || !dtype->isString())
      return badTensor("without a dtype string");
    if (!shape || !shape->isArray())
      return badTensor("without a shape array");
    if (!offsets || !offsets->isArray() || offsets->size() != 2 ||
        !offsets->items()[0].isInteger() || !offsets->items()[1].isInteger())
      return badTensor("without data_offsets [begin, end]");
    StTensor t;
    t.name = name;
    t.dtype = dtype->asString();
    t.elementBytes = dtypeBytes(t.dtype);
    t.file = displayName;
    t.owner = file->buffer_;
    if (t.elementBytes == 0)
      return badTensor("of dtype '" + t.dtype + "', which is not a safetensors dtype");
    for (const rt::json::Value &d : shape->items()) {
      if (!d.isInteger() || d.asInt() < 0)
        return badTensor("with a shape entry that is not a non-negative integer");
      t.shape.push_back(d.asInt());
      if (llvm::MulOverflow(t.numElements, d.asInt(), t.numElements) ||
          t.numElements > (int64_t(1) << 56))
        return badTensor("with too many elements");
    }
    const int64_t begin = offsets->items()[0].asInt(), end = offsets->items()[1].asInt();
    if (begin < 0 || end < begin || uint64_t(end) > dataBytes)
      return badTensor("at data_offsets [" + std::to_string(begin) + ", " +
                       std::to_string(end) + "), outside the " + std::to_string(dataBytes) +
                       " data bytes of the file");
    if (end - begin != t.numElements * t.elementBytes)
      return badTensor("of " + std::to_string(t.numElements) + " " + t.dtype +
                       " elements in " + std::to_string(end - begin) + " bytes (" +
                       std::to_string(t.numElements * t.elementBytes) + " expected)");
    t.bytes = llvm::ArrayRef<char>(data + begin, size_t(end - begin));
    file->index_[name] = file->tensors_.size();
    file->tensors_.push_back(std::move(t));
  }
  // No two tensors share bytes.
  std::vector<const StTensor *> byOffset;
  for (const StTensor &t : file->tensors_)
    if (!t.bytes.empty())
      byOffset.push_back(&t);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const StTensor *a, const StTensor *b) { return a->bytes.data() < b->bytes.data(); });
  for (size_t i = 1; i < byOffset.size(); ++i)
    if (byOffset[i]->bytes.data() < byOffset[i - 1]->bytes.end())
      return bad(displayName, "has tensors '" + byOffset[i - 1]->name + "' and '" +
                                  byOffset[i]->name + "' whose data_offsets overlap");
  return file;
}

const StTensor *SafetensorsFile::find(llvm::StringRef name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

StatusOr<std::shared_ptr<CheckpointTensors>> CheckpointTensors::open(const std::string &dir) {
  auto all = std::make_shared<CheckpointTensors>();
  llvm::SmallString<256> indexPath(dir);
  llvm::sys::path::append(indexPath, "model.safetensors.index.json");
  auto addFile = [&](const std::string &name) -> StatusOr<const SafetensorsFile *> {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    ACCEL_RT_ASSIGN_OR_RETURN(std::shared_ptr<SafetensorsFile> f,
                              SafetensorsFile::open(std::string(p), name));
    all->files_.push_back(f);
    return f.get();
  };
  if (!llvm::sys::fs::exists(indexPath)) {
    all->describe_ = "model.safetensors";
    llvm::SmallString<256> single(dir);
    llvm::sys::path::append(single, "model.safetensors");
    if (!llvm::sys::fs::exists(single))
      return rt::notFound("checkpoint folder '" + dir + "' has neither model.safetensors nor "
                          "model.safetensors.index.json");
    ACCEL_RT_ASSIGN_OR_RETURN(const SafetensorsFile *f, addFile("model.safetensors"));
    for (const StTensor &t : f->tensors())
      all->tensors_[t.name] = &t;
    return all;
  }
  all->describe_ = "the shards of model.safetensors.index.json";
  ACCEL_RT_ASSIGN_OR_RETURN(std::unique_ptr<llvm::MemoryBuffer> indexBuf,
                            openInFolder(dir, "model.safetensors.index.json"));
  StatusOr<rt::json::Value> index = rt::json::parse(indexBuf->getBuffer().str());
  if (!index)
    return rt::invalidArgument("model.safetensors.index.json is not valid JSON (" +
                               index.status().message() + ")");
  const rt::json::Value *map = index->isObject() ? index->find("weight_map") : nullptr;
  if (!map || !map->isObject())
    return rt::invalidArgument("model.safetensors.index.json has no weight_map object");
  llvm::StringMap<const SafetensorsFile *> shards;
  for (const rt::json::Member &m : map->members()) {
    if (!m.second.isString())
      return rt::invalidArgument("model.safetensors.index.json maps tensor '" + m.first +
                                 "' to something other than a file name");
    const std::string &shard = m.second.asString();
    auto it = shards.find(shard);
    if (it == shards.end()) {
      StatusOr<const SafetensorsFile *> f = addFile(shard);
      if (!f)
        return rt::Status(f.status().code(),
                          "shard '" + shard + "' of tensor '" + m.first +
                              "' named in model.safetensors.index.json: " +
                              f.status().message());
      it = shards.insert({shard, *f}).first;
    }
    const StTensor *t = it->second->find(m.first);
    if (!t)
      return rt::invalidArgument("model.safetensors.index.json puts tensor '" + m.first +
                                 "' in shard '" + shard + "', which does not hold it");
    all->tensors_[m.first] = t;
  }
  return all;
}

const StTensor *CheckpointTensors::find(llvm::StringRef name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second;
}
