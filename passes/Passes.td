//===- Passes.td - accel passes ---------------------------*- tablegen -*-===//
//
// Every accel pass, grouped by family. Each has a summary, a description with
// before/after IR, and typed options.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_PASSES
#define ACCEL_PASSES

include "mlir/Pass/PassBase.td"

#endif // ACCEL_PASSES
