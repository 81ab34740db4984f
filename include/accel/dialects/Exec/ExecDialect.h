//===- ExecDialect.h - the exec dialect ---------------------*- C++ -*-===//
//
// The exec dialect, its enums, attributes and types. Ops are in ExecOps.h;
// helpers for passes and the plan writer in ExecUtils.h.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_DIALECTS_EXEC_EXECDIALECT_H
#define ACCEL_DIALECTS_EXEC_EXECDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"

#include "dialects/Exec/ExecDialect.h.inc"
#include "dialects/Exec/ExecEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Exec/ExecAttrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "dialects/Exec/ExecTypes.h.inc"

#endif // ACCEL_DIALECTS_EXEC_EXECDIALECT_H
