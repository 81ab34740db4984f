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

#include <optional>
#include <string>

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

/// A new onnx.Constant: the float constant `v` (rank 1 or 2) with zero
/// slices inserted along `axis`: for each (position, count) of `inserts`
/// (positions ascending, in `v`'s indices), `count` zero rows (axis 0) or
/// columns (axis 1) before index `position` (`position` = the size appends).
/// Kind, key (with `suffix`) and location as concatConstants; failure when
/// `v` is not a float constant.
mlir::FailureOr<mlir::Value>
insertZeros(mlir::RewriterBase &rewriter, mlir::Value v, int64_t axis,
            llvm::ArrayRef<std::pair<int64_t, int64_t>> inserts, llvm::StringRef suffix);

/// A constant value of `type` holding `bytes` (row-major): an inline dense
/// unless `resource`, else a dense_resource blob named `key` (64-byte
/// aligned), an elided one when `bytes` is absent.
mlir::ElementsAttr makeValue(mlir::MLIRContext *context, mlir::RankedTensorType type,
                             bool resource, const std::string &key,
                             const std::optional<llvm::SmallVector<char>> &bytes);

/// The bytes of `attr` (row-major, `count` elements of `width` bytes), or
/// nullopt for an elided blob. A splat is expanded.
std::optional<llvm::SmallVector<char>> rawBytes(mlir::ElementsAttr attr, size_t width,
                                                int64_t count);

/// Erases the op defining `v` when it has no side effects and `v` has no
/// uses left (a weight that a fused constant replaced).
void eraseIfDead(mlir::RewriterBase &rewriter, mlir::Value v);

} // namespace accel::fusion

#endif // ACCEL_PASSES_FUSION_FUSIONUTILS_H
