//===- ExecAssembly.h - custom assembly directives ----------*- C++ -*-===//
//
// Private to dialects/Exec: the custom<...> directives of ExecOps.td,
// declared before the generated op definitions, defined in LaunchOps.cpp
// (TypeList in OnnxOps.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_DIALECTS_EXEC_EXECASSEMBLY_H
#define ACCEL_DIALECTS_EXEC_EXECASSEMBLY_H

#include "accel/dialects/Exec/ExecDialect.h"
#include "mlir/IR/OpImplementation.h"

namespace accel::exec {

/// `(type, type, ...)`: a kernel's argument types.
mlir::ParseResult parseArgTypes(mlir::OpAsmParser &parser,
                                mlir::ArrayAttr &argTypes);
void printArgTypes(mlir::OpAsmPrinter &printer, mlir::Operation *op,
                   mlir::ArrayAttr argTypes);

/// `(x, y, z)`, each a constant, `%size` or `%size ceildiv N`.
mlir::ParseResult parseGridDims(
    mlir::OpAsmParser &parser,
    llvm::SmallVectorImpl<mlir::OpAsmParser::UnresolvedOperand> &sizes,
    mlir::DenseI64ArrayAttr &staticGrid, mlir::DenseI64ArrayAttr &divisors);
void printGridDims(mlir::OpAsmPrinter &printer, mlir::Operation *op,
                   mlir::OperandRange sizes, mlir::DenseI64ArrayAttr staticGrid,
                   mlir::DenseI64ArrayAttr divisors);

/// `(x, y, z)` constants.
mlir::ParseResult parseBlockDims(mlir::OpAsmParser &parser,
                                 mlir::DenseI64ArrayAttr &block);
void printBlockDims(mlir::OpAsmPrinter &printer, mlir::Operation *op,
                    mlir::DenseI64ArrayAttr block);

/// `all_reduce sum`, `all_gather`, `reduce_scatter max`: the collective and
/// its optional reduction, both as bare words.
mlir::ParseResult parseCollectiveKind(mlir::OpAsmParser &parser,
                                      CollectiveKindAttr &kind,
                                      ReduceKindAttr &reduction);
void printCollectiveKind(mlir::OpAsmPrinter &printer, mlir::Operation *op,
                         CollectiveKindAttr kind, ReduceKindAttr reduction);

/// `(type, type, ...)`, possibly `()`: an exec.onnx operand list's types.
mlir::ParseResult parseTypeList(mlir::OpAsmParser &parser,
                                llvm::SmallVectorImpl<mlir::Type> &types);
void printTypeList(mlir::OpAsmPrinter &printer, mlir::Operation *op,
                   mlir::TypeRange types);

} // namespace accel::exec

#endif // ACCEL_DIALECTS_EXEC_EXECASSEMBLY_H
