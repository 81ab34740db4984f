//===- Passes.cpp - accel pass and dialect registration -------------------===//
#include "accel/passes/Passes.h"

#include "accel/dialects/Exec/ExecDialect.h"
#include "accel/dialects/Onnx/OnnxDialect.h"
#include "accel/dialects/Transformer/TransformerDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"

namespace accel {
void registerAccelDialects(mlir::DialectRegistry &registry) {
  registry.insert<onnx::OnnxDialect, transformer::TransformerDialect,
                  exec::ExecDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect>();
}
} // namespace accel
