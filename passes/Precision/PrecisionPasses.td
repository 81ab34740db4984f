//===- PrecisionPasses.td - precision rewriting -----------*- tablegen -*-===//
//
// Precision runs on the raised, token-major transformer dialect and changes
// the element types that weights are stored in (and, for the quantising
// modes, adds their scales). What runs in which type is the policy table of
// docs/precision.md; in short: the GEMM weights (linear, gated_mlp, lm_head)
// and the embedding table narrow, while norm weights, biases, rotary
// tables, the residual stream and every statistic (norm mean/variance,
// softmax) stay f32.
//
// `accelc -precision=<mode>` runs these passes (lib/Driver/Pipeline.cpp's
// buildPrecisionPipeline): bf16/fp16 before fusion (so that fusion
// concatenates half-size weights), int8-weight/fp8 after it.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_PASSES_PRECISION
#define ACCEL_PASSES_PRECISION

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// accel-narrow-weights
//===----------------------------------------------------------------------===//

def NarrowWeights : Pass<"accel-narrow-weights", "mlir::func::FuncOp"> {
  let summary = "stores the GEMM and embedding weights as bf16 or f16 constants";
  let description = [{
    Converts the f32 `onnx.Constant` weights of `transformer.linear`,
    `transformer.gated_mlp` (gate_up, gate, up, down), `transformer.logits`
    (lm_head) and `transformer.embedding` (table) to `dtype` (bf16 or f16),
    rounding to nearest, ties to even (f16 overflows to inf, as IEEE
    does). Activations stay f32: the CPU backend computes in f32 from the
    narrow weights; the GPU backend computes in the plan's compute dtype.
    Biases, norm weights, rotary tables and every other constant stay f32.

    A weight constant read only by such operands is converted in place and
    its f32 blob released at once (so that an 8B model never holds two f32
    copies); one read by anything else too keeps its f32 value for those
    readers, and the weight operands read a converted copy. A weight that is
    not a constant, is already narrower than f32, or whose op computes in
    f16/bf16 already is left alone.

    Before:

    ```mlir
    %w = onnx.Constant {value = dense_resource<w> : tensor<128x64xf32>} : () -> tensor<128x64xf32>
    %y = transformer.linear %x, %w : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
    ```

    After (`dtype=bf16`):

    ```mlir
    %w = onnx.Constant {value = dense_resource<w.bf16> : tensor<128x64xbf16>} : () -> tensor<128x64xbf16>
    %y = transformer.linear %x, %w : (tensor<?x64xf32>, tensor<128x64xbf16>) -> tensor<?x128xf32>
    ```
  }];
  let options = [
    Option<"dtype", "dtype", "std::string", /*default=*/"\"bf16\"",
           "the storage type of the weights: bf16 or f16">,
  ];
  let dependentDialects = ["accel::transformer::TransformerDialect",
                           "accel::onnx::OnnxDialect"];
}

//===----------------------------------------------------------------------===//
// accel-quantize-weights
//===----------------------------------------------------------------------===//

def QuantizeWeights : Pass<"accel-quantize-weights", "mlir::func::FuncOp"> {
  let summary = "quantises f32 linear weights to i8 or f8E4M3FN with f32 scales";
  let description = [{
    Symmetric weight-only quantisation with static scales computed from the
    weight: per output channel (`scale[o] = max |w[o, :]| / qmax`) or per
    tensor, `qmax` 127 for i8 (values clamped to ±127) and 448 for
    f8E4M3FN (saturating), rounding to nearest even. Each f32
    `transformer.linear` with an `onnx.Constant` weight reads the quantised
    weight and a new f32 scale constant (`weight_scale`, `granularity`);
    its bias stays f32, x and the result stay f32. A fused
    `transformer.gated_mlp gate_up(..) down(..)` is first split into
    linear, gated_act, linear so that both of its GEMMs are quantised.
    The lm head and embedding table are not touched (the pipeline narrows
    them to bf16 afterwards). An old f32 weight left without readers is
    erased and its blob released.

    Before:

    ```mlir
    %w = onnx.Constant {value = dense_resource<w> : tensor<128x64xf32>} : () -> tensor<128x64xf32>
    %y = transformer.linear %x, %w : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
    ```

    After (`dtype=i8`, `granularity=per_channel`):

    ```mlir
    %q = onnx.Constant {value = dense_resource<w.i8> : tensor<128x64xi8>} : () -> tensor<128x64xi8>
    %s = onnx.Constant {value = dense<[...]> : tensor<128xf32>} : () -> tensor<128xf32>
    %y = transformer.linear %x, %q weight_scale(%s) granularity = per_channel
           : (tensor<?x64xf32>, tensor<128x64xi8>, tensor<128xf32>) -> tensor<?x128xf32>
    ```
  }];
  let options = [
    Option<"dtype", "dtype", "std::string", /*default=*/"\"i8\"",
           "the quantised weight type: i8 or f8E4M3FN">,
    Option<"granularity", "granularity", "std::string", /*default=*/"\"per_channel\"",
           "per_channel (one scale per output feature) or per_tensor">,
  ];
  let dependentDialects = ["accel::transformer::TransformerDialect",
                           "accel::onnx::OnnxDialect"];
}

//===----------------------------------------------------------------------===//
// accel-kv-cache-dtype
//===----------------------------------------------------------------------===//

def KVCacheDtype : Pass<"accel-kv-cache-dtype", "mlir::func::FuncOp"> {
  let summary = "stores the paged KV cache as f8E4M3FN with static per-layer scales";
  let description = [{
    Gives the function's `!transformer.kv_cache` argument `dtype` elements
    and every `transformer.attention` the static scales `k_scale` and
    `v_scale` (stored = value / scale, saturating at ±448; vLLM's default of
    1.0 when none are calibrated). A cache that is already quantised is an
    error; one of `dtype` already is left alone.

    Before:

    ```mlir
    func.func @main(%ids: tensor<?xi64>, %batch: !transformer.batch,
                    %cache: !transformer.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, block_size = 16, f32>)
    %o = transformer.attention %q, %k, %v, %cache[0], %batch {...}
    ```

    After:

    ```mlir
    func.func @main(..., %cache: !transformer.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, block_size = 16, f8E4M3FN>)
    %o = transformer.attention %q, %k, %v, %cache[0], %batch {..., k_scale = 1.0 : f64, v_scale = 1.0 : f64}
    ```
  }];
  let options = [
    Option<"dtype", "dtype", "std::string", /*default=*/"\"f8E4M3FN\"",
           "the cache element type: f8E4M3FN">,
    Option<"kScale", "k-scale", "double", /*default=*/"1.0", "the K scale of every layer">,
    Option<"vScale", "v-scale", "double", /*default=*/"1.0", "the V scale of every layer">,
  ];
  let dependentDialects = ["accel::transformer::TransformerDialect"];
}

#endif // ACCEL_PASSES_PRECISION
