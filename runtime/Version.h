//===- Version.h - accel's version ------------------------------*- C++ -*-===//
//
// What `accel-run --version` prints and the server's GET /version answers.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_VERSION_H
#define ACCEL_RUNTIME_VERSION_H

namespace accel::rt {

inline constexpr const char *kAccelVersion = "0.1.0";

} // namespace accel::rt

#endif // ACCEL_RUNTIME_VERSION_H
