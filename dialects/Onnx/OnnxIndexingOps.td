//===- OnnxIndexingOps.td - gather, scatter, masks, ranges -*- tablegen -*-===//
//
// Gather (embeddings), GatherND, ScatterND (KV-cache updates), Trilu (causal
// masks) and Range (position ids).
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_ONNX_INDEXING_OPS
#define ACCEL_ONNX_INDEXING_OPS

include "OnnxDialect.td"

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

def Onnx_GatherOp : Onnx_Op<"Gather"> {
  let summary = "take entries of `data` along `axis` at integer `indices`";
  let description = [{
    The result shape is `data.shape[:axis] + indices.shape +
    data.shape[axis+1:]`; `indices` is i32 or i64.

    ```mlir
    %emb = onnx.Gather %table, %ids {axis = 0 : i64}
        : (tensor<32000x4096xf16>, tensor<?x?xi64>) -> tensor<?x?x4096xf16>
    ```
  }];
  let arguments = (ins AnyTensor:$data, AnyTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// GatherND
//===----------------------------------------------------------------------===//

def Onnx_GatherNDOp : Onnx_Op<"GatherND"> {
  let summary = "gather the slices of `data` that `indices` address";
  let description = [{
    `indices` is i64 with rank `q`; its last dim `k` addresses the first `k`
    dims after the `batch_dims` leading batch dims. The result has rank
    `q - 1 + r - k - batch_dims`.

    ```mlir
    %last = onnx.GatherND %logits, %pos {batch_dims = 1 : i64}
        : (tensor<?x?x32000xf32>, tensor<?x1xi64>) -> tensor<?x32000xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$data, AnyTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ScatterND
//===----------------------------------------------------------------------===//

def Onnx_ScatterNDOp : Onnx_Op<"ScatterND"> {
  let summary = "`data` with the slices `indices` address set to `updates`";
  let description = [{
    `indices` is i64 of rank `q` whose last dim `k` addresses `data` (rank
    `r`); `updates` has rank `q + r - k - 1`. `reduction` is `"none"`,
    `"add"`, `"mul"`, `"max"` or `"min"`.

    ```mlir
    %cache = onnx.ScatterND %past, %slots, %new
        : (tensor<64x16x8x128xf16>, tensor<?x2xi64>, tensor<?x8x128xf16>) -> tensor<64x16x8x128xf16>
    ```
  }];
  let arguments = (ins AnyTensor:$data, AnyTensor:$indices, AnyTensor:$updates,
                       DefaultValuedAttr<StrAttr, "\"none\"">:$reduction);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Trilu
//===----------------------------------------------------------------------===//

def Onnx_TriluOp : Onnx_Op<"Trilu"> {
  let summary = "keep the upper (or lower) triangle of the last two dims";
  let description = [{
    The input has rank >= 2; the optional scalar i64 `k` offsets the diagonal.

    ```mlir
    %mask = onnx.Trilu %full k(%one) {upper = 1 : i64}
        : (tensor<?x?xf32>, tensor<i64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$input, Optional<AnyTensor>:$k,
                       DefaultValuedAttr<I64Attr, "1">:$upper);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = [{
    $input (`k` `(` $k^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Range
//===----------------------------------------------------------------------===//

def Onnx_RangeOp : Onnx_Op<"Range"> {
  let summary = "the 1-D sequence start, start + delta, ... below limit";
  let description = [{
    `start`, `limit` and `delta` are scalars of one element type, the
    result's.

    ```mlir
    %pos = onnx.Range %past_len, %total_len, %one
        : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins AnyTensor:$start, AnyTensor:$limit, AnyTensor:$delta);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

#endif // ACCEL_ONNX_INDEXING_OPS
