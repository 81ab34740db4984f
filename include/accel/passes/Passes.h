//===- Passes.h - accel passes ----------------------------------*- C++ -*-===//
#ifndef ACCEL_PASSES_PASSES_H
#define ACCEL_PASSES_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace accel {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// registerAccelPasses(): every accel pass, for accel-opt.
#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Adds every accel dialect to `registry`.
void registerAccelDialects(mlir::DialectRegistry &registry);

} // namespace accel

#endif // ACCEL_PASSES_PASSES_H
