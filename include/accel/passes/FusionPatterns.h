//===- FusionPatterns.h - transformer-level fusion patterns -----*- C++ -*-===//
//
// The rewrite patterns behind the pattern-based accel-fuse-* passes, so that
// a combined pipeline can run them in one greedy driver. (accel-fuse-qkv
// groups the linears of a block and is a pass only.)
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_PASSES_FUSIONPATTERNS_H
#define ACCEL_PASSES_FUSIONPATTERNS_H

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace accel {

/// rms_norm(residual_add(r, b), w) → transformer.add_rms_norm(b, r, w), whose
/// residual_out replaces the sum's other uses.
void populateFuseAddRmsNormPatterns(mlir::RewritePatternSet &patterns);

/// gated_mlp gate(%g) up(%u) with constant weights → gated_mlp gate_up(%gu),
/// %gu = [g; u] a new constant.
void populateFuseGateUpPatterns(mlir::RewritePatternSet &patterns);

/// activation(linear(..)) with the linear's only use → linear(..)
/// {activation = kind}.
void populateFuseLinearActivationPatterns(mlir::RewritePatternSet &patterns);

} // namespace accel

#endif // ACCEL_PASSES_FUSIONPATTERNS_H
