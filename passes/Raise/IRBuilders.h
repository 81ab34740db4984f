//===- IRBuilders.h - small IR builders for raising rewrites ----*- C++ -*-===//
#ifndef ACCEL_PASSES_RAISE_IRBUILDERS_H
#define ACCEL_PASSES_RAISE_IRBUILDERS_H

#include "mlir/IR/Builders.h"

namespace accel::raise {

/// Builds op `name` (e.g. "onnx.Transpose") generically with one result.
mlir::Value buildOp(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef name,
                    mlir::ValueRange operands, mlir::Type result,
                    llvm::ArrayRef<mlir::NamedAttribute> attrs = {});

/// onnx.Constant holding the i64 vector `values`.
mlir::Value i64Vector(mlir::OpBuilder &b, mlir::Location loc, llvm::ArrayRef<int64_t> values);

/// onnx.Transpose of `x` by `perm`, typed `result`.
mlir::Value transpose(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      llvm::ArrayRef<int64_t> perm, mlir::Type result);

/// onnx.Reshape of `x` to the constant `shape` (0/-1 as in ONNX), typed `result`.
mlir::Value reshape(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                    llvm::ArrayRef<int64_t> shape, mlir::Type result);

/// onnx.Cast of `x` to the element type of `result`, or `x` when it has it.
mlir::Value castTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Type result);

/// Erases ops without uses and without side effects, until none is left.
void eraseDeadOps(mlir::Block &block);

} // namespace accel::raise

#endif // ACCEL_PASSES_RAISE_IRBUILDERS_H
