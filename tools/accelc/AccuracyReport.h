//===- AccuracyReport.h - accelc -report-accuracy ---------------*- C++ -*-===//
//
// What a -precision mode costs in accuracy: the model compiled twice (f32
// and the mode, both for the CPU reference backend), both plans scored on
// the same token sequences (teacher-forced), and the next-token
// distributions compared position by position (docs/precision.md).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_TOOLS_ACCELC_ACCURACYREPORT_H
#define ACCEL_TOOLS_ACCELC_ACCURACYREPORT_H

#include "accel/Driver/Compile.h"

#include <string>

namespace accel {

/// Compiles `options.onnxPath` as f32 and as `options.precision` (CPU
/// target; the mode's plan is written to options.outputPath when it is not
/// empty or "-", else to a temporary file), scores the token ids in
/// `tokensPath` (.npy, integers [S] or [N, S]) with both, and prints per
/// mode: top-1 agreement of the next-token argmax, mean and max
/// KL(p_f32 || p_mode) over the S-1 predicted positions of each sequence,
/// and the perplexity of the held-back tokens under each plan. Returns the
/// process exit code (0 on success; errors are printed as one sentence).
int reportAccuracy(const CompileOptions &options, const std::string &tokensPath);

} // namespace accel

#endif // ACCEL_TOOLS_ACCELC_ACCURACYREPORT_H
