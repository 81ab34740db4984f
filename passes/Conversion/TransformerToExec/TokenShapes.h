//===- TokenShapes.h - how every value's shape depends on the step -*- C++ -*-===//
//
// In a token-major function the only sizes that vary from step to step are
// the step's token count T and sequence count S. The lowering to exec needs
// every view's shape in those terms: which dimensions are static (the `?` of
// a batch dimension that is always 1 included) and which are k x T or k x S.
// TokenShapes infers that by propagating symbolic dimensions through the
// transformer ops and the ONNX glue raising leaves (Shape, Concat, Gather,
// Slice, Reshape, Squeeze/Unsqueeze, Transpose, Split, element-wise ops...),
// including the contents of the small integer tensors that carry shapes.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_PASSES_CONVERSION_TOKENSHAPES_H
#define ACCEL_PASSES_CONVERSION_TOKENSHAPES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace accel::conversion {

/// What a dynamic extent counts.
enum class StepUnit { tokens, seqs };

/// One dimension (or one element of a shape tensor): a constant, `coef` x
/// a per-step size, or unknown.
struct SymDim {
  enum Kind { kConst, kScaled, kUnknown };
  Kind kind = kUnknown;
  int64_t value = 0; // kConst: the size; kScaled: the coefficient (>= 1)
  StepUnit unit = StepUnit::tokens;

  static SymDim constant(int64_t v) { return {kConst, v, StepUnit::tokens}; }
  static SymDim scaled(int64_t coef, StepUnit unit) { return {kScaled, coef, unit}; }
  static SymDim unknown() { return {}; }
  bool isConst() const { return kind == kConst; }
  bool isScaled() const { return kind == kScaled; }
  bool isKnown() const { return kind != kUnknown; }
  bool operator==(const SymDim &o) const {
    return kind == o.kind && (kind == kUnknown || (value == o.value && unit == o.unit));
  }
  /// "4", "T", "4T", "S", "?".
  std::string str() const;
};

using SymShape = llvm::SmallVector<SymDim, 4>;

/// The product of `dims`: constants multiply, at most one scaled factor.
SymDim product(llvm::ArrayRef<SymDim> dims);

class TokenShapes {
public:
  /// Infers the shapes of every value of the token-major `func` (its first
  /// tensor argument holds the step's token ids, [T]).
  explicit TokenShapes(mlir::func::FuncOp func);

  /// The shape of `value`, when its rank is known (dimensions may be unknown).
  std::optional<SymShape> shape(mlir::Value value) const;
  /// The elements of a small integer tensor (shape arithmetic), when every
  /// one is known.
  std::optional<SymShape> contents(mlir::Value value) const;
  /// Whether every dimension of `value` is known.
  bool isKnown(mlir::Value value) const;

private:
  void inferOp(mlir::Operation *op);
  void inferOnnx(mlir::Operation *op, llvm::StringRef name);
  void inferTransformer(mlir::Operation *op);
  void set(mlir::Value v, SymShape s) { shapes_[v] = std::move(s); }
  void setContents(mlir::Value v, SymShape c) { contents_[v] = std::move(c); }
  /// `value`'s type, with its static dimensions and `fill` for the dynamic ones.
  SymShape fromType(mlir::Value value, SymDim fill) const;

  llvm::DenseMap<mlir::Value, SymShape> shapes_;
  llvm::DenseMap<mlir::Value, SymShape> contents_;
};

} // namespace accel::conversion

#endif // ACCEL_PASSES_CONVERSION_TOKENSHAPES_H
