//===- TransformerOps.td - transformer dialect ops --------*- tablegen -*-===//

#ifndef ACCEL_TRANSFORMER_OPS
#define ACCEL_TRANSFORMER_OPS

include "TransformerDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// residual_add
//===----------------------------------------------------------------------===//

def Transformer_ResidualAddOp : Transformer_Op<"residual_add", [Pure, AllTypesMatch<["residual", "branch", "result"]>]> {
  let summary = "adds a branch to the residual stream";
  let arguments = (ins AnyRankedTensor:$residual, AnyRankedTensor:$branch);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $residual `,` $branch attr-dict `:` type($result)
  }];
}

#endif // ACCEL_TRANSFORMER_OPS
