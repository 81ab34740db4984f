//===- Diagnostics.h - how accelc and the C API name a location -*- C++ -*-===//
#ifndef ACCEL_DRIVER_DIAGNOSTICS_H
#define ACCEL_DRIVER_DIAGNOSTICS_H

#include "mlir/IR/Location.h"

#include <string>

namespace accel {

/// "<file>: node '<name>'" for a location the importer made, else the
/// printed location: how diagnostics name where they are.
std::string describeLocation(mlir::Location loc);

} // namespace accel

#endif // ACCEL_DRIVER_DIAGNOSTICS_H
