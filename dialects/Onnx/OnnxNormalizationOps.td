//===- OnnxNormalizationOps.td - softmax and norms ---------*- tablegen -*-===//
//
// Softmax, LayerNormalization (opset 17), RMSNormalization (opset 23) and the
// onnxruntime norms: ms_SimplifiedLayerNormalization (RMS norm),
// ms_SkipLayerNormalization and ms_SkipSimplifiedLayerNormalization (residual
// add fused with the norm).
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_ONNX_NORMALIZATION_OPS
#define ACCEL_ONNX_NORMALIZATION_OPS

include "OnnxDialect.td"

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

def Onnx_SoftmaxOp : Onnx_Op<"Softmax", [SameOperandsAndResultShape,
                                         SameOperandsAndResultElementType]> {
  let summary = "softmax along `axis` (opset 13 semantics)";
  let description = [{
    ```mlir
    %p = onnx.Softmax %scores {axis = -1 : i64} : (tensor<1x32x?x?xf32>) -> tensor<1x32x?x?xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$input,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// LayerNormalization
//===----------------------------------------------------------------------===//

def Onnx_LayerNormalizationOp
    : Onnx_Op<"LayerNormalization", [AttrSizedResultSegments]> {
  let summary = "layer norm over the dims from `axis` on (opset 17)";
  let description = [{
    `Scale` and the optional `B` broadcast to `X.shape[axis:]`. The optional
    `Mean` and `InvStdDev` results have `X`'s rank with the normalised dims
    set to 1. `stash_type` is the ONNX data type the statistics are computed
    in (1: f32).

    ```mlir
    %y = onnx.LayerNormalization %x, %gamma B(%beta) {epsilon = 9.99999974E-6 : f32}
        : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$X, AnyTensor:$Scale, Optional<AnyTensor>:$B,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1e-05">:$epsilon,
                       DefaultValuedAttr<I64Attr, "1">:$stash_type);
  let results = (outs AnyTensor:$Y, Optional<AnyTensor>:$Mean,
                      Optional<AnyTensor>:$InvStdDev);
  let assemblyFormat = [{
    $X `,` $Scale (`B` `(` $B^ `)`)? attr-dict `:` functional-type(operands, $Y)
    (`Mean` `(` type($Mean)^ `)`)? (`InvStdDev` `(` type($InvStdDev)^ `)`)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// RMSNormalization
//===----------------------------------------------------------------------===//

def Onnx_RMSNormalizationOp : Onnx_Op<"RMSNormalization"> {
  let summary = "root-mean-square norm over the dims from `axis` on (opset 23)";
  let description = [{
    `Y = X / sqrt(mean(X^2) + epsilon) * scale`; `scale` broadcasts to
    `X.shape[axis:]` and gives `Y` its element type.

    ```mlir
    %y = onnx.RMSNormalization %x, %w {epsilon = 9.99999997E-7 : f32}
        : (tensor<?x?x4096xbf16>, tensor<4096xbf16>) -> tensor<?x?x4096xbf16>
    ```
  }];
  let arguments = (ins AnyTensor:$X, AnyTensor:$scale,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1e-05">:$epsilon,
                       DefaultValuedAttr<I64Attr, "1">:$stash_type);
  let results = (outs AnyTensor:$Y);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ms_SimplifiedLayerNormalization
//===----------------------------------------------------------------------===//

def Onnx_MsSimplifiedLayerNormalizationOp
    : Onnx_Op<"ms_SimplifiedLayerNormalization"> {
  let summary = "onnxruntime's RMS norm over the dims from `axis` on";
  let description = [{
    onnxruntime registers this op in the default ONNX domain (not
    com.microsoft); onnxruntime-genai's builder writes it there. `scale`
    broadcasts to `X.shape[axis:]`; the optional `inv_std_var` result has `X`'s
    rank with the normalised dims set to 1.

    ```mlir
    %y = onnx.ms_SimplifiedLayerNormalization %x, %w {epsilon = 9.99999997E-7 : f32}
        : (tensor<?x?x4096xf16>, tensor<4096xf16>) -> tensor<?x?x4096xf16>
    ```
  }];
  let arguments = (ins AnyTensor:$X, AnyTensor:$scale,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1e-05">:$epsilon,
                       OptionalAttr<I64Attr>:$stash_type);
  let results = (outs AnyTensor:$Y, Optional<AnyTensor>:$inv_std_var);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, $Y)
    (`inv_std_var` `(` type($inv_std_var)^ `)`)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ms_SkipLayerNormalization
//===----------------------------------------------------------------------===//

def Onnx_MsSkipLayerNormalizationOp
    : Onnx_Op<"ms_SkipLayerNormalization", [AttrSizedOperandSegments,
                                            AttrSizedResultSegments]> {
  let summary = "layer norm of input + skip (+ bias) over the last dim";
  let description = [{
    `input` is `[batch, seq, hidden]` or `[tokens, hidden]`; `skip` has the
    same shape or broadcasts to it; `gamma`, the optional `beta` and `bias` are
    1-D of size `hidden`. The optional `input_skip_bias_sum` result is the
    residual sum (the next layer's residual). onnxruntime's default `epsilon`
    is 1e-12.

    ```mlir
    %y, %sum = onnx.ms_SkipLayerNormalization %x, %res, %gamma beta(%beta) {epsilon = 9.99999974E-6 : f32}
        : (tensor<?x?x768xf16>, tensor<?x?x768xf16>, tensor<768xf16>, tensor<768xf16>) -> tensor<?x?x768xf16>
          input_skip_bias_sum(tensor<?x?x768xf16>)
    ```
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$skip, AnyTensor:$gamma,
                       Optional<AnyTensor>:$beta, Optional<AnyTensor>:$bias,
                       OptionalAttr<F32Attr>:$epsilon);
  let results = (outs AnyTensor:$output, Optional<AnyTensor>:$mean,
                      Optional<AnyTensor>:$inv_std_var,
                      Optional<AnyTensor>:$input_skip_bias_sum);
  let assemblyFormat = [{
    $input `,` $skip `,` $gamma (`beta` `(` $beta^ `)`)?
    (`bias` `(` $bias^ `)`)?
    attr-dict `:` functional-type(operands, $output)
    (`mean` `(` type($mean)^ `)`)? (`inv_std_var` `(` type($inv_std_var)^ `)`)?
    (`input_skip_bias_sum` `(` type($input_skip_bias_sum)^ `)`)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ms_SkipSimplifiedLayerNormalization
//===----------------------------------------------------------------------===//

def Onnx_MsSkipSimplifiedLayerNormalizationOp
    : Onnx_Op<"ms_SkipSimplifiedLayerNormalization",
              [AttrSizedResultSegments]> {
  let summary = "RMS norm of input + skip (+ bias) over the last dim";
  let description = [{
    As ms_SkipLayerNormalization without `beta`: the residual add fused with
    an RMS norm, as onnxruntime-genai writes every decoder layer's
    post-attention and pre-MLP norm.

    ```mlir
    %y, %sum = onnx.ms_SkipSimplifiedLayerNormalization %x, %res, %w {epsilon = 9.99999997E-7 : f32}
        : (tensor<?x?x4096xf16>, tensor<?x?x4096xf16>, tensor<4096xf16>) -> tensor<?x?x4096xf16>
          input_skip_bias_sum(tensor<?x?x4096xf16>)
    ```
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$skip, AnyTensor:$gamma,
                       Optional<AnyTensor>:$bias,
                       OptionalAttr<F32Attr>:$epsilon);
  let results = (outs AnyTensor:$output, Optional<AnyTensor>:$mean,
                      Optional<AnyTensor>:$inv_std_var,
                      Optional<AnyTensor>:$input_skip_bias_sum);
  let assemblyFormat = [{
    $input `,` $skip `,` $gamma (`bias` `(` $bias^ `)`)?
    attr-dict `:` functional-type(operands, $output)
    (`mean` `(` type($mean)^ `)`)? (`inv_std_var` `(` type($inv_std_var)^ `)`)?
    (`input_skip_bias_sum` `(` type($input_skip_bias_sum)^ `)`)?
  }];
  let hasVerifier = 1;
}

#endif // ACCEL_ONNX_NORMALIZATION_OPS
