//===- ExecOps.h - exec dialect ops -------------------------*- C++ -*-===//
#ifndef ACCEL_DIALECTS_EXEC_EXECOPS_H
#define ACCEL_DIALECTS_EXEC_EXECOPS_H

#include "accel/dialects/Exec/ExecDialect.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/Exec/ExecOps.h.inc"

#endif // ACCEL_DIALECTS_EXEC_EXECOPS_H
