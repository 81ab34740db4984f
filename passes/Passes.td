//===- Passes.td - accel passes ---------------------------*- tablegen -*-===//
//
// Every accel pass, one .td per family (passes/<Family>/<Family>Passes.td).
// Each pass has a summary, a description with before/after IR, and typed
// options.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_PASSES
#define ACCEL_PASSES

include "Raise/RaisePasses.td"
include "Fusion/FusionPasses.td"
include "Precision/PrecisionPasses.td"
include "Partition/PartitionPasses.td"
include "Layout/LayoutPasses.td"
include "Conversion/ConversionPasses.td"
include "Exec/ExecPasses.td"

#endif // ACCEL_PASSES
