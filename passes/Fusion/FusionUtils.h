//===- FusionUtils.h - helpers shared by the fusion passes ------*- C++ -*-===//
//
// Weights at the transformer level are onnx.Constant ops whose `value` is an
// inline `dense<...>` (small tensors) or a `dense_resource<key>` blob (the
// importer's weights, held where the model's bytes already are). Fusing
// weights means concatenating them into a new constant of the same kind; a
// blob that is elided (IR printed without weights and parsed back) gives an
// elided blob, so the passes run on such IR too.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_PASSES_FUSION_FUSIONUTILS_H
#define ACCEL_PASSES_FUSION_FUSIONUTILS_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/PatternMatch.h"

namespace accel::fusion {

/// The value of the onnx.Constant defining `v` when it is an inline dense or
/// a dense_resource tensor of statically known shape whose element type
/// `acceptElement` takes; null otherwise (a function argument, a computed
/// weight).
mlir::ElementsAttr getConstant(mlir::Value v,
                               llvm::function_ref<bool(mlir::Type)> acceptElement);

/// getConstant for f32, f16 or bf16 elements (not a quantised or non-float
/// tensor).
mlir::ElementsAttr getFloatConstant(mlir::Value v);

/// A new onnx.Constant holding `parts` (each accepted by getFloatConstant,
/// of one element type and, beyond the first dimension, one shape)
/// concatenated along dimension 0, built at the rewriter's insertion point.
/// It is a dense_resource blob named after the first part's key with
/// `suffix` appended when any part is a blob (an elided blob when any
/// part's data is absent), an inline dense otherwise. Its location is the
/// first part's, with `suffix` appended to the node name.
mlir::FailureOr<mlir::Value> concatConstants(mlir::RewriterBase &rewriter,
                                             llvm::ArrayRef<mlir::Value> parts,
                                             llvm::StringRef suffix);

/// The bytes of `attr` (row-major, `count` elements of `width` bytes), or
/// nullopt for an elided blob. A splat is expanded.
std::optional<llvm::SmallVector<char>> rawBytes(mlir::ElementsAttr attr, size_t width,
                                                int64_t count);

/// Erases the op defining `v` when it has no side effects and `v` has no
/// uses left (a weight that a fused constant replaced).
void eraseIfDead(mlir::RewriterBase &rewriter, mlir::Value v);

} // namespace accel::fusion

#endif // ACCEL_PASSES_FUSION_FUSIONUTILS_H
