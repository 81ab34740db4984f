//===- OnnxDialect.td - the onnx dialect ------------------*- tablegen -*-===//
//
// The onnx dialect mirrors the ONNX operators that decoder-LLM exports use,
// one op per (domain, op_type), attributes typed, symbolic dims kept by name.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_ONNX_DIALECT
#define ACCEL_ONNX_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Onnx_Dialect : Dialect {
  let name = "onnx";
  let cppNamespace = "::accel::onnx";
  let summary = "ONNX operators as imported, one to one";
  let description = [{
    The first level of accel. `lib/Import` turns every ONNX node into exactly
    one op of this dialect (or a located error when the operator is not
    supported), keeping its attributes with their ONNX names and types.

    Tensors keep ONNX's element types (FP8 and INT4 included). A dimension
    that the model declares with `dim_param` is a dynamic dimension (`?`); its
    name is kept on the function argument or result as
    `onnx.dim_params = ["batch", "sequence", ""]` (empty for static dims).

    Ops of the `com.microsoft` domain are prefixed `ms_`
    (`onnx.ms_GroupQueryAttention`).
  }];
}

class Onnx_Op<string mnemonic, list<Trait> traits = []>
    : Op<Onnx_Dialect, mnemonic, traits>;

#endif // ACCEL_ONNX_DIALECT
