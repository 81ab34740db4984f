//===- OnnxShapeOps.td - shape and layout ops --------------*- tablegen -*-===//
//
// Ops that move data without computing on it: Reshape, Transpose, Concat,
// Slice, Split, Squeeze, Unsqueeze, Expand, Tile, and Shape itself.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_ONNX_SHAPE_OPS
#define ACCEL_ONNX_SHAPE_OPS

include "OnnxDialect.td"

//===----------------------------------------------------------------------===//
// Reshape
//===----------------------------------------------------------------------===//

def Onnx_ReshapeOp : Onnx_Op<"Reshape"> {
  let summary = "reshape to `shape` (0 copies a dim, -1 infers one)";
  let description = [{
    With `allowzero = 0` (the default) a 0 in `shape` copies the input's dim;
    with `allowzero = 1` it is a real zero.

    ```mlir
    %y = onnx.Reshape %x, %shape
        : (tensor<1x?x4096xf16>, tensor<4xi64>) -> tensor<1x?x32x128xf16>
    ```
  }];
  let arguments = (ins AnyTensor:$data, AnyTensor:$shape,
                       DefaultValuedAttr<I64Attr, "0">:$allowzero);
  let results = (outs AnyTensor:$reshaped);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

def Onnx_TransposeOp : Onnx_Op<"Transpose"> {
  let summary = "permute dims; output dim i is input dim perm[i]";
  let description = [{
    Without `perm` the dims are reversed.

    ```mlir
    %y = onnx.Transpose %x {perm = array<i64: 0, 2, 1, 3>}
        : (tensor<1x?x32x128xf16>) -> tensor<1x32x?x128xf16>
    ```
  }];
  let arguments = (ins AnyTensor:$data, OptionalAttr<DenseI64ArrayAttr>:$perm);
  let results = (outs AnyTensor:$transposed);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Concat
//===----------------------------------------------------------------------===//

def Onnx_ConcatOp : Onnx_Op<"Concat"> {
  let summary = "concatenate one or more tensors along `axis`";
  let description = [{
    All inputs have one rank and element type and agree on every dim but
    `axis`.

    ```mlir
    %kv = onnx.Concat %past, %new {axis = 2 : i64}
        : (tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>) -> tensor<1x8x?x128xf16>
    ```
  }];
  let arguments = (ins Variadic<AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs AnyTensor:$concat_result);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

def Onnx_SliceOp : Onnx_Op<"Slice", [AttrSizedOperandSegments]> {
  let summary = "strided slice given by starts / ends / axes / steps inputs";
  let description = [{
    `starts`, `ends` and the optional `axes` and `steps` are 1-D tensors of
    one integer type (i32 or i64) and one length. The rank is kept.

    ```mlir
    %y = onnx.Slice %x, %starts, %ends axes(%axes)
        : (tensor<1x32x?x128xf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x32x?x64xf16>
    ```
  }];
  let arguments = (ins AnyTensor:$data, AnyTensor:$starts, AnyTensor:$ends,
                       Optional<AnyTensor>:$axes, Optional<AnyTensor>:$steps);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = [{
    $data `,` $starts `,` $ends (`axes` `(` $axes^ `)`)?
    (`steps` `(` $steps^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Split
//===----------------------------------------------------------------------===//

def Onnx_SplitOp : Onnx_Op<"Split"> {
  let summary = "split along `axis` into one or more outputs";
  let description = [{
    The sizes come from the optional 1-D i64 `split` input (opset 13+), or
    the `split` attribute (opset 11), or else are equal (`num_outputs`, opset
    18, names the output count). The `split` input and attribute are never
    both present; `split` and `num_outputs` neither.

    ```mlir
    %q, %k, %v = onnx.Split %qkv split(%sizes) {axis = -1 : i64}
        : (tensor<?x6144xf16>, tensor<3xi64>) -> (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>)
    ```
  }];
  let arguments = (ins AnyTensor:$input, Optional<AnyTensor>:$split_input,
                       DefaultValuedAttr<I64Attr, "0">:$axis,
                       OptionalAttr<I64Attr>:$num_outputs,
                       OptionalAttr<DenseI64ArrayAttr>:$split);
  let results = (outs Variadic<AnyTensor>:$outputs);
  let assemblyFormat = [{
    $input (`split` `(` $split_input^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Squeeze
//===----------------------------------------------------------------------===//

def Onnx_SqueezeOp : Onnx_Op<"Squeeze"> {
  let summary = "remove size-1 dims (`axes`, or all of them)";
  let description = [{
    `axes` is the optional 1-D i64 input (opset 13+) or the `axes` attribute
    (opset 11), never both.

    ```mlir
    %y = onnx.Squeeze %x axes(%axes) : (tensor<1x?x1xi64>, tensor<1xi64>) -> tensor<1x?xi64>
    %z = onnx.Squeeze %x {axes = array<i64: 0>} : (tensor<1x?x1xi64>) -> tensor<?x1xi64>
    ```
  }];
  let arguments = (ins AnyTensor:$data, Optional<AnyTensor>:$axes_input,
                       OptionalAttr<DenseI64ArrayAttr>:$axes);
  let results = (outs AnyTensor:$squeezed);
  let assemblyFormat = [{
    $data (`axes` `(` $axes_input^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Unsqueeze
//===----------------------------------------------------------------------===//

def Onnx_UnsqueezeOp : Onnx_Op<"Unsqueeze"> {
  let summary = "insert size-1 dims at `axes` of the output";
  let description = [{
    `axes` is the 1-D i64 input (opset 13+) or the `axes` attribute (opset
    11): exactly one of them.

    ```mlir
    %y = onnx.Unsqueeze %x axes(%axes) : (tensor<?x?xi64>, tensor<2xi64>) -> tensor<?x1x1x?xi64>
    ```
  }];
  let arguments = (ins AnyTensor:$data, Optional<AnyTensor>:$axes_input,
                       OptionalAttr<DenseI64ArrayAttr>:$axes);
  let results = (outs AnyTensor:$expanded);
  let assemblyFormat = [{
    $data (`axes` `(` $axes_input^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Expand
//===----------------------------------------------------------------------===//

def Onnx_ExpandOp : Onnx_Op<"Expand"> {
  let summary = "broadcast to the 1-D i64 `shape` (numpy rules both ways)";
  let description = [{
    ```mlir
    %y = onnx.Expand %mask, %shape : (tensor<1x1x?x?xi1>, tensor<4xi64>) -> tensor<?x1x?x?xi1>
    ```
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$shape);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tile
//===----------------------------------------------------------------------===//

def Onnx_TileOp : Onnx_Op<"Tile"> {
  let summary = "repeat the input `repeats[i]` times along each dim i";
  let description = [{
    `repeats` is a 1-D i64 tensor with one entry per input dim.

    ```mlir
    %y = onnx.Tile %kv, %repeats : (tensor<1x8x?x128xf16>, tensor<4xi64>) -> tensor<1x32x?x128xf16>
    ```
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$repeats);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

def Onnx_ShapeOp : Onnx_Op<"Shape"> {
  let summary = "the input's shape as a 1-D i64 tensor, optionally sliced";
  let description = [{
    `start` and `end` slice the dim list as Python does (negative counts from
    the back, out-of-range clamps).

    ```mlir
    %s = onnx.Shape %x {end = 2 : i64} : (tensor<?x?x4096xf16>) -> tensor<2xi64>
    ```
  }];
  let arguments = (ins AnyTensor:$data, DefaultValuedAttr<I64Attr, "0">:$start,
                       OptionalAttr<I64Attr>:$end);
  let results = (outs AnyTensor:$shape);
  let hasVerifier = 1;
}

#endif // ACCEL_ONNX_SHAPE_OPS
