//===- ExecDialect.td - the exec dialect ------------------*- tablegen -*-===//

#ifndef ACCEL_EXEC_DIALECT
#define ACCEL_EXEC_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Exec_Dialect : Dialect {
  let name = "exec";
  let cppNamespace = "::accel::exec";
  let summary = "the bufferized schedule the runtime executes";
  let description = [{
    The last level of accel: one op per runtime step, on arena slices.
  }];
}

class Exec_Op<string mnemonic, list<Trait> traits = []>
    : Op<Exec_Dialect, mnemonic, traits>;

#endif // ACCEL_EXEC_DIALECT
