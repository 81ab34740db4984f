//===- Status.h - the runtime's error type ----------------------*- C++ -*-===//
//
// A small status value: a code and one sentence naming what failed and where.
// The runtime never throws across its boundary and never aborts on user input.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CORE_STATUS_H
#define ACCEL_RUNTIME_CORE_STATUS_H

#include <string>
#include <utility>

namespace accel::rt {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument, // bad input from the user: flags, requests, prompts
  kNotFound,        // a file, model or device that is not there
  kDataLoss,        // a corrupt or truncated file, a checksum mismatch
  kUnavailable,     // a device or library that cannot be used on this machine
  kResourceExhausted, // out of memory, KV blocks, queue slots
  kUnimplemented,   // a feature that does not exist yet
  kInternal,        // a bug in accel
};

const char *statusCodeName(StatusCode code);

class [[nodiscard]] Status {
public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }
  bool isOk() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return isOk(); }
  StatusCode code() const { return code_; }
  const std::string &message() const { return message_; }
  /// "<code name>: <message>", or "ok".
  std::string toString() const;

private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

/// A value or the Status saying why there is none.
template <typename T> class [[nodiscard]] StatusOr {
public:
  StatusOr(T value) : value_(std::move(value)), has_(true) {}
  StatusOr(Status status) : status_(std::move(status)) {
    if (status_.isOk())
      status_ = Status(StatusCode::kInternal, "StatusOr built from an ok Status");
  }
  bool isOk() const { return has_; }
  explicit operator bool() const { return has_; }
  const Status &status() const { return status_; }
  T &value() & { return value_; }
  const T &value() const & { return value_; }
  T &&value() && { return std::move(value_); }
  T *operator->() { return &value_; }
  T &operator*() { return value_; }

private:
  T value_{};
  Status status_;
  bool has_ = false;
};

inline Status invalidArgument(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status notFound(std::string m) {
  return Status(StatusCode::kNotFound, std::move(m));
}
inline Status dataLoss(std::string m) {
  return Status(StatusCode::kDataLoss, std::move(m));
}
inline Status unavailable(std::string m) {
  return Status(StatusCode::kUnavailable, std::move(m));
}
inline Status unimplemented(std::string m) {
  return Status(StatusCode::kUnimplemented, std::move(m));
}
inline Status internalError(std::string m) {
  return Status(StatusCode::kInternal, std::move(m));
}

} // namespace accel::rt

/// Returns the Status of an expression from the enclosing function when it
/// is not ok.
#define ACCEL_RT_RETURN_IF_ERROR(...)                                          \
  do {                                                                         \
    ::accel::rt::Status _accel_status = (__VA_ARGS__);                         \
    if (!_accel_status.isOk())                                                 \
      return _accel_status;                                                    \
  } while (0)

#define ACCEL_RT_CONCAT_IMPL(a, b) a##b
#define ACCEL_RT_CONCAT(a, b) ACCEL_RT_CONCAT_IMPL(a, b)
#define ACCEL_RT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                         \
  auto tmp = (expr);                                                           \
  if (!tmp.isOk())                                                             \
    return tmp.status();                                                       \
  lhs = std::move(tmp).value()
/// `lhs = value of a StatusOr expression`, or return its Status.
#define ACCEL_RT_ASSIGN_OR_RETURN(lhs, ...)                                    \
  ACCEL_RT_ASSIGN_OR_RETURN_IMPL(ACCEL_RT_CONCAT(_accel_sor_, __LINE__), lhs,  \
                                 (__VA_ARGS__))

#endif // ACCEL_RUNTIME_CORE_STATUS_H
