//===- RegularFile.h - open and read only regular files ---------*- C++ -*-===//
//
// Every input file accel reads by path (an ONNX model and its external
// data, a plan, a tokenizer.json, a config, an .npy) goes through here, so
// that a hostile path cannot hang or exhaust the process: a FIFO would
// block open() or read() forever, /dev/zero never ends, a directory or a
// socket is no file. Only regular files are opened: the path is stat'ed
// before it is opened, opened with O_NONBLOCK (so that a FIFO swapped in
// between cannot block) and fstat'ed again; reads stop at the size the
// file had when it was opened.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_CORE_REGULARFILE_H
#define ACCEL_CORE_REGULARFILE_H

#include "core/Status.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace accel::rt {

/// An open regular file: its descriptor (closed with the object) and its
/// size when it was opened.
class RegularFile {
public:
  RegularFile() = default;
  RegularFile(int fd, uint64_t size) : fd_(fd), size_(size) {}
  RegularFile(RegularFile &&o) noexcept : fd_(o.fd_), size_(o.size_) { o.fd_ = -1; }
  RegularFile &operator=(RegularFile &&o) noexcept;
  RegularFile(const RegularFile &) = delete;
  RegularFile &operator=(const RegularFile &) = delete;
  ~RegularFile();

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  /// Gives up the descriptor (the caller closes it).
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

/// Opens `path` for reading if it is a regular file. `what` names the file
/// in errors ("plan", "ONNX model", ...). Errors are one sentence:
/// kNotFound "cannot open <what> '<path>': No such file or directory";
/// kInvalidArgument "<what> '<path>' is a FIFO, not a regular file" (or a
/// directory, a character device, ...) and other open errors.
StatusOr<RegularFile> openRegularFile(const std::string &path, std::string_view what);

/// The bytes of the regular file `path` (at most its size when opened),
/// with openRegularFile's errors; kDataLoss when a read fails.
StatusOr<std::string> readRegularFile(const std::string &path, std::string_view what);

/// "a FIFO", "a directory", "a character device", ... for a st_mode.
const char *fileKindName(unsigned mode);

} // namespace accel::rt

#endif // ACCEL_CORE_REGULARFILE_H
