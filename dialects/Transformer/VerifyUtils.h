//===- VerifyUtils.h - shared helpers of transformer verifiers --*- C++ -*-===//
//
// Private to dialects/Transformer: the shape and element-type predicates the
// op verifiers share. Dynamic dimensions are compatible with every size, so
// every check accepts a dynamic token dimension.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_DIALECTS_TRANSFORMER_VERIFYUTILS_H
#define ACCEL_DIALECTS_TRANSFORMER_VERIFYUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/APFloat.h"

#include <optional>
#include <string>

namespace accel::transformer::detail {

/// True when two dimension sizes may be equal: either is dynamic, or both
/// are the same.
inline bool compatible(int64_t a, int64_t b) {
  return mlir::ShapedType::isDynamic(a) || mlir::ShapedType::isDynamic(b) ||
         a == b;
}

/// True when two shapes have the same rank and pairwise compatible sizes.
bool compatible(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// A dimension for a diagnostic: its size, or `?` when dynamic.
std::string dim(int64_t size);

/// A shape for a diagnostic: `[4096, ?]`.
std::string shape(llvm::ArrayRef<int64_t> sizes);

/// `a * b`, dynamic when either is.
int64_t mulDims(int64_t a, int64_t b);

/// f32, f16 or bf16.
bool isFloatElement(mlir::Type type);
/// f8E4M3FN or f8E5M2.
bool isFloat8Element(mlir::Type type);
/// f8E4M3FN, f8E5M2, i8 or i4.
bool isQuantizedElement(mlir::Type type);
/// Whether a float weight of `weight` elements may feed activations of `x`
/// elements: the same type, or f16/bf16 storage under f32 activations
/// (the precision pass's weight-only narrowing: the CPU computes in f32, the
/// GPU in the plan's compute dtype).
bool isCompatibleFloatWeight(mlir::Type weight, mlir::Type x);

/// Emits "<name> must be positive" when `value` is present and not > 0.
mlir::LogicalResult verifyPositive(mlir::Operation *op, llvm::StringRef name,
                                   std::optional<llvm::APFloat> value);

} // namespace accel::transformer::detail

#endif // ACCEL_DIALECTS_TRANSFORMER_VERIFYUTILS_H
