//===- OnnxReductionOps.td - reductions and scans ----------*- tablegen -*-===//

#ifndef ACCEL_ONNX_REDUCTION_OPS
#define ACCEL_ONNX_REDUCTION_OPS

include "OnnxDialect.td"

//===----------------------------------------------------------------------===//
// ReduceMean / ReduceSum / ReduceMax
//===----------------------------------------------------------------------===//

// Reduce `data` over `axes`: the optional 1-D i64 input (ReduceSum opset 13,
// ReduceMean and ReduceMax opset 18) or the `axes` attribute of the older
// opsets, never both. Without axes every dim is reduced, unless
// `noop_with_empty_axes = 1`, which makes the op the identity. `keepdims = 1`
// keeps reduced dims as 1.
class Onnx_ReduceOp<string mnemonic, string what> : Onnx_Op<mnemonic> {
  let summary = what # " over `axes` (input or attribute)";
  let arguments = (ins AnyTensor:$data, Optional<AnyTensor>:$axes_input,
                       OptionalAttr<DenseI64ArrayAttr>:$axes,
                       DefaultValuedAttr<I64Attr, "1">:$keepdims,
                       DefaultValuedAttr<I64Attr, "0">:$noop_with_empty_axes);
  let results = (outs AnyTensor:$reduced);
  let assemblyFormat = [{
    $data (`axes` `(` $axes_input^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Onnx_ReduceMeanOp : Onnx_ReduceOp<"ReduceMean", "mean"> {
  let description = [{
    The mean of squares of an exported RMS norm, opset 18 and opset 17:

    ```mlir
    %ms = onnx.ReduceMean %sq axes(%last) : (tensor<?x?x4096xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
    %ms17 = onnx.ReduceMean %sq {axes = array<i64: -1>} : (tensor<?x?x4096xf32>) -> tensor<?x?x1xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// ReduceSum
//===----------------------------------------------------------------------===//

def Onnx_ReduceSumOp : Onnx_ReduceOp<"ReduceSum", "sum"> {
  let description = [{
    ```mlir
    %s = onnx.ReduceSum %x axes(%axes) {keepdims = 0 : i64}
        : (tensor<?x?x4096xf32>, tensor<1xi64>) -> tensor<?x?xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// ReduceMax
//===----------------------------------------------------------------------===//

def Onnx_ReduceMaxOp : Onnx_ReduceOp<"ReduceMax", "maximum"> {
  let description = [{
    ```mlir
    %m = onnx.ReduceMax %x {axes = array<i64: -1>, keepdims = 1 : i64}
        : (tensor<?x32000xf32>) -> tensor<?x1xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// CumSum
//===----------------------------------------------------------------------===//

def Onnx_CumSumOp : Onnx_Op<"CumSum"> {
  let summary = "cumulative sum along the axis given by a scalar integer input";
  let description = [{
    `axis` is a scalar i32 / i64 tensor. `exclusive = 1` starts from 0,
    `reverse = 1` sums from the back. Position ids from an attention mask:

    ```mlir
    %pos = onnx.CumSum %mask, %axis : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
    ```
  }];
  let arguments = (ins AnyTensor:$x, AnyTensor:$axis,
                       DefaultValuedAttr<I64Attr, "0">:$exclusive,
                       DefaultValuedAttr<I64Attr, "0">:$reverse);
  let results = (outs AnyTensor:$y);
  let hasVerifier = 1;
}

#endif // ACCEL_ONNX_REDUCTION_OPS
