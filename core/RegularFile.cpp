//===- RegularFile.cpp - open and read only regular files -----------------===//
#include "core/RegularFile.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace accel::rt {

RegularFile &RegularFile::operator=(RegularFile &&o) noexcept {
  if (this != &o) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = o.fd_;
    size_ = o.size_;
    o.fd_ = -1;
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0)
    ::close(fd_);
}

const char *fileKindName(unsigned mode) {
  switch (mode & S_IFMT) {
  case S_IFREG: return "a regular file";
  case S_IFDIR: return "a directory";
  case S_IFIFO: return "a FIFO";
  case S_IFCHR: return "a character device";
  case S_IFBLK: return "a block device";
  case S_IFSOCK: return "a socket";
  case S_IFLNK: return "a symbolic link";
  default: return "not a file";
  }
}

namespace {
Status openError(int err, const std::string &path, std::string_view what) {
  return Status(err == ENOENT || err == ENOTDIR ? StatusCode::kNotFound
                                                : StatusCode::kInvalidArgument,
                "cannot open " + std::string(what) + " '" + path + "': " + std::strerror(err));
}

Status notRegular(unsigned mode, const std::string &path, std::string_view what) {
  return invalidArgument(std::string(what) + " '" + path + "' is " + fileKindName(mode) +
                         ", not a regular file");
}
} // namespace

StatusOr<RegularFile> openRegularFile(const std::string &path, std::string_view what) {
  // stat first: a FIFO is refused before open() could wait for a writer.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return openError(errno, path, what);
  if (!S_ISREG(st.st_mode))
    return notRegular(st.st_mode, path, what);
  // O_NONBLOCK: a FIFO put in the file's place since the stat does not
  // block the open either; the fstat below refuses it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return openError(errno, path, what);
  RegularFile file(fd, 0);
  if (::fstat(fd, &st) != 0)
    return openError(errno, path, what);
  if (!S_ISREG(st.st_mode))
    return notRegular(st.st_mode, path, what);
  // Back to blocking reads (regular files ignore the flag; be plain).
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0)
    (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return RegularFile(file.release(), uint64_t(st.st_size));
}

StatusOr<std::string> readRegularFile(const std::string &path, std::string_view what) {
  StatusOr<RegularFile> file = openRegularFile(path, what);
  if (!file)
    return file.status();
  std::string bytes;
  bytes.resize(size_t(file->size()));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(file->fd(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return dataLoss("cannot read " + std::string(what) + " '" + path +
                      "': " + std::strerror(errno));
    if (n == 0)
      break; // it shrank since it was opened: what is there
    done += size_t(n);
  }
  bytes.resize(done);
  return bytes;
}

} // namespace accel::rt
