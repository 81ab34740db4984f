//===- OnnxOps.td - onnx dialect ops -----------------------*- tablegen -*-===//

#ifndef ACCEL_ONNX_OPS
#define ACCEL_ONNX_OPS

include "OnnxDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Elementwise binary
//===----------------------------------------------------------------------===//

class Onnx_BinaryOp<string mnemonic, list<Trait> traits = []>
    : Onnx_Op<mnemonic, !listconcat(traits, [Pure])> {
  let arguments = (ins AnyTensor:$A, AnyTensor:$B);
  let results = (outs AnyTensor:$C);
  let assemblyFormat = [{
    $A `,` $B attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Onnx_AddOp : Onnx_BinaryOp<"Add", [Commutative]> {
  let summary = "elementwise addition with numpy broadcasting";
  let description = [{
    ```mlir
    %c = onnx.Add %a, %b : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```
  }];
}

#endif // ACCEL_ONNX_OPS
