//===- ExecOps.td - exec dialect ops ----------------------*- tablegen -*-===//

#ifndef ACCEL_EXEC_OPS
#define ACCEL_EXEC_OPS

include "ExecDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Exec_BarrierOp : Exec_Op<"barrier"> {
  let summary = "placeholder";
  let assemblyFormat = "attr-dict";
}

#endif // ACCEL_EXEC_OPS
