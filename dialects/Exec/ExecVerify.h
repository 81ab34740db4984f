//===- ExecVerify.h - helpers shared by exec verifiers ------*- C++ -*-===//
//
// Private to dialects/Exec.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_DIALECTS_EXEC_EXECVERIFY_H
#define ACCEL_DIALECTS_EXEC_EXECVERIFY_H

#include "accel/dialects/Exec/ExecOps.h"
#include "accel/dialects/Exec/ExecUtils.h"

#include "llvm/Support/MathExtras.h"

namespace accel::exec::detail {

/// Looks up `name` from `user` as an `OpTy`; emits "<what> @name is not
/// declared" or "@name is not <what>" on `user` and returns null otherwise.
template <typename OpTy>
OpTy lookupSymbol(mlir::Operation *user,
                  mlir::SymbolTableCollection &symbolTable,
                  mlir::FlatSymbolRefAttr name, llvm::StringRef what) {
  mlir::Operation *symbol = symbolTable.lookupNearestSymbolFrom(user, name);
  if (!symbol) {
    user->emitOpError() << what << " " << name << " is not declared";
    return nullptr;
  }
  auto op = llvm::dyn_cast<OpTy>(symbol);
  if (!op)
    user->emitOpError() << name << " is not " << what;
  return op;
}

/// The view type of `value`.
inline ViewType viewType(mlir::Value value) {
  return llvm::cast<ViewType>(value.getType());
}

/// Bytes one element of `type` occupies, rounded up (1 for i4).
inline int64_t elementBytes(mlir::Type type) {
  return llvm::divideCeil(ViewType::getElementBits(type), 8);
}

/// The schedule that holds `op`, if any.
inline ScheduleOp enclosingSchedule(mlir::Operation *op) {
  return op->getParentOfType<ScheduleOp>();
}

/// Checks that views `a` and `b` have the same shape (static extents equal,
/// dynamic ones bound to the same step size); emits "<aName> <type> and
/// <bName> <type> differ in shape" on `op` otherwise.
mlir::LogicalResult verifySameShape(mlir::Operation *op, mlir::Value a, llvm::StringRef aName,
                                   mlir::Value b, llvm::StringRef bName);

/// Checks that views `a` and `b` have the same shape and element type.
mlir::LogicalResult verifySameType(mlir::Operation *op, mlir::Value a, llvm::StringRef aName,
                                   mlir::Value b, llvm::StringRef bName);

/// Checks that views `a` and `b` have as many rows (dimension 0).
mlir::LogicalResult verifySameRows(mlir::Operation *op, mlir::Value a, llvm::StringRef aName,
                                   mlir::Value b, llvm::StringRef bName);

/// Checks that `value`'s rank is one of `ranks`.
mlir::LogicalResult verifyRank(mlir::Operation *op, mlir::Value value, llvm::StringRef name,
                               llvm::ArrayRef<int64_t> ranks);

/// Checks that the optional `kernel` symbol of a step names an exec.kernel.
mlir::LogicalResult verifyKernelRef(mlir::Operation *op, mlir::SymbolTableCollection &symbols,
                                    mlir::FlatSymbolRefAttr kernel);

/// Looks up the exec.kv_pool `pool` from `op` and checks `layer` is one of
/// its layers.
KVPoolOp lookupPool(mlir::Operation *op, mlir::SymbolTableCollection &symbols,
                    mlir::FlatSymbolRefAttr pool, int64_t layer);

/// Checks an FP8 cache's scales: per-layer k_scale/v_scale come as a pair,
/// per-head lists as a pair of equal length; scales are needed exactly when
/// `pool` is FP8 (and, per head, have one entry per KV head of the pool).
mlir::LogicalResult verifyKvScales(mlir::Operation *op, KVPoolOp pool,
                                   std::optional<llvm::APFloat> kScale,
                                   std::optional<llvm::APFloat> vScale,
                                   std::optional<llvm::ArrayRef<double>> kHeads,
                                   std::optional<llvm::ArrayRef<double>> vHeads);

/// What every rotation checks (exec.rotary, exec.qkv_rotary,
/// exec.qkv_rotary_kv_write): positions are a vector of integers with one
/// entry per row of `rows`; rotary_dim is even and fits head_dim; the
/// (`rowsName` names `rows` in messages); frequencies come from theta or from a pair of cos/sin tables, each
/// `[positions, rotary_dim / 2]` of one float type.
mlir::LogicalResult verifyRotation(mlir::Operation *op, mlir::Value rows, llvm::StringRef rowsName,
                                   mlir::Value positions,
                                   mlir::Value cos, mlir::Value sin, int64_t rotaryDim,
                                   int64_t headDim, std::optional<llvm::APFloat> theta);

/// Checks that dimension `dim` of `value` is static; emits "<name> must have
/// a static <what>, got <type>" otherwise.
mlir::LogicalResult verifyStaticDim(mlir::Operation *op, mlir::Value value, unsigned dim,
                                    llvm::StringRef name, llvm::StringRef what);

} // namespace accel::exec::detail

#endif // ACCEL_DIALECTS_EXEC_EXECVERIFY_H
