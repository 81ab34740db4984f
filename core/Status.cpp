//===- Status.cpp - the runtime's error type ------------------------------===//
#include "core/Status.h"

namespace accel::rt {

const char *statusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::kOk: return "ok";
  case StatusCode::kInvalidArgument: return "invalid argument";
  case StatusCode::kNotFound: return "not found";
  case StatusCode::kDataLoss: return "data loss";
  case StatusCode::kUnavailable: return "unavailable";
  case StatusCode::kResourceExhausted: return "resource exhausted";
  case StatusCode::kUnimplemented: return "unimplemented";
  case StatusCode::kInternal: return "internal error";
  }
  return "unknown";
}

std::string Status::toString() const {
  if (isOk())
    return "ok";
  return std::string(statusCodeName(code_)) + ": " + message_;
}

} // namespace accel::rt
