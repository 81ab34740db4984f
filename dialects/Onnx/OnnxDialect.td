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
include "mlir/Interfaces/SideEffectInterfaces.td"

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

    Conventions every op follows, so that the importer can build any op
    generically from an `OperationState` named `"onnx." + op_type`:

    * operands and results in ONNX input and output order; an optional ONNX
      input or output is an `Optional` operand or result. Ops with more than
      one optional or variadic operand (result) carry `operandSegmentSizes`
      (`resultSegmentSizes`);
    * attributes keep their ONNX names; INT is `i64`, FLOAT `f32`, STRING a
      string, INTS `array<i64: ...>`, FLOATS `array<f32: ...>`, STRINGS an
      array of strings, TENSOR an elements attribute;
    * where an input replaced an attribute in a later opset (the `axes` of
      Squeeze, Unsqueeze and the reductions, the `split` of Split), both forms
      are accepted and the verifier rejects an op that has both.

    The assembly is uniform: the leading required operands, then every operand
    from the first optional one on as `name(%value)`; the attribute
    dictionary; a functional type listing the types of the operands present.
    Optional results are listed after the functional type as `name(type)`:

    ```mlir
    %y, %mean = onnx.LayerNormalization %x, %scale B(%bias) {axis = -1 : i64}
        : (tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
          Mean(tensor<?x1xf32>)
    ```

    Function arguments and results may carry the names of their dynamic
    dimensions as `onnx.dim_params`; the dialect verifies that it is an array
    of strings with one entry per dimension, naming only dynamic ones.
  }];
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// The name of the function argument / result attribute that keeps the
    /// ONNX `dim_param` names of a tensor's dimensions.
    static constexpr ::llvm::StringLiteral kDimParamsAttrName =
        "onnx.dim_params";
    /// The name of the function argument / result attribute that keeps the
    /// ONNX graph input or output name.
    static constexpr ::llvm::StringLiteral kNameAttrName = "onnx.name";
  }];
}

// Every onnx op is side-effect free. The default assembly is
// `operands attr-dict : functional-type(operands, results)`; ops with optional
// operands or results override it with named groups (see the dialect
// description).
class Onnx_Op<string mnemonic, list<Trait> traits = []>
    : Op<Onnx_Dialect, mnemonic, !listconcat(traits, [Pure])> {
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
}

#endif // ACCEL_ONNX_DIALECT
