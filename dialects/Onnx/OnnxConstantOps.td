//===- OnnxConstantOps.td - constants ----------------------*- tablegen -*-===//

#ifndef ACCEL_ONNX_CONSTANT_OPS
#define ACCEL_ONNX_CONSTANT_OPS

include "OnnxDialect.td"

//===----------------------------------------------------------------------===//
// Constant
//===----------------------------------------------------------------------===//

def Onnx_ConstantOp : Onnx_Op<"Constant"> {
  let summary = "a constant tensor, given by exactly one value attribute";
  let description = [{
    Exactly one of `value` (a tensor), `value_float` (a f32 scalar),
    `value_floats` (a 1-D f32 tensor), `value_int` (an i64 scalar) or
    `value_ints` (a 1-D i64 tensor) is present, and the result type is the one
    it implies. (`value_string(s)` and `sparse_value` are not supported.)

    ```mlir
    %c = onnx.Constant {value = dense<[0, 0, -1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %e = onnx.Constant {value_float = 9.99999974E-6 : f32} : () -> tensor<f32>
    ```
  }];
  let arguments = (ins OptionalAttr<ElementsAttr>:$value,
                       OptionalAttr<F32Attr>:$value_float,
                       OptionalAttr<DenseF32ArrayAttr>:$value_floats,
                       OptionalAttr<I64Attr>:$value_int,
                       OptionalAttr<DenseI64ArrayAttr>:$value_ints);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ConstantOfShape
//===----------------------------------------------------------------------===//

def Onnx_ConstantOfShapeOp : Onnx_Op<"ConstantOfShape"> {
  let summary = "a tensor of the 1-D i64 `input` shape filled with one value";
  let description = [{
    `value` is a one-element tensor giving the fill and the element type; it
    defaults to f32 zero.

    ```mlir
    %z = onnx.ConstantOfShape %shape {value = dense<0> : tensor<1xi64>}
        : (tensor<2xi64>) -> tensor<?x?xi64>
    ```
  }];
  let arguments = (ins AnyTensor:$input, OptionalAttr<ElementsAttr>:$value);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

#endif // ACCEL_ONNX_CONSTANT_OPS
