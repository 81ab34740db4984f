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

} // namespace accel::exec::detail

#endif // ACCEL_DIALECTS_EXEC_EXECVERIFY_H
