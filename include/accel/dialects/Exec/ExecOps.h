//===- ExecOps.h - exec dialect ops -------------------------*- C++ -*-===//
#ifndef ACCEL_DIALECTS_EXEC_EXECOPS_H
#define ACCEL_DIALECTS_EXEC_EXECOPS_H

#include "accel/dialects/Exec/ExecDialect.h"
#include "accel/dialects/Transformer/TransformerDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace accel::exec {
/// The paged KV cache as a side-effect resource: exec.kv_write writes it,
/// exec.attention_prefill and exec.attention_decode read it.
struct KVCacheResource
    : public mlir::SideEffects::Resource::Base<KVCacheResource> {
  llvm::StringRef getName() final { return "exec.kv_cache"; }
};
} // namespace accel::exec

#define GET_OP_CLASSES
#include "dialects/Exec/ExecOps.h.inc"

#endif // ACCEL_DIALECTS_EXEC_EXECOPS_H
