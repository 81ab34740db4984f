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
  let summary = "quantises f32 linear weights to i8, f8E4M3FN or i4 with f32 scales";
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

    `dtype=i4 granularity=per_group` (`-precision=int4-weight`): one scale
    per output feature and group of `group-size` consecutive input features,
    `scale[o, g] = r * max |w[o, g*G:(g+1)*G]| / 7`, values rounded to
    nearest even and clamped to ±7, stored one per byte (the plan's i4
    form); a weight whose in_features `group-size` does not divide gets one
    group per row (`per_channel`). With `search-scales` (default) r is the
    one of 1.0, 0.98, .., 0.70 whose rounded group has the least squared
    error (clipping outliers); without it r = 1. `zero-points=true` makes
    groups asymmetric: `scale = r * (max - min) / 15`, an i4 zero point
    `zp = round(-r * min / scale) - 8` per group (laid out as the scales),
    codes `clamp(round(w / scale) + zp, -8, 7)`. A mixture of experts'
    weights stay float.

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
           "the quantised weight type: i8, f8E4M3FN or i4">,
    Option<"granularity", "granularity", "std::string", /*default=*/"\"per_channel\"",
           "per_channel (one scale per output feature), per_tensor, or per_group (i4)">,
    Option<"groupSize", "group-size", "int64_t", /*default=*/"128",
           "per_group: input features per scale (a weight whose in_features it does not "
           "divide gets one group per row)">,
    Option<"zeroPoints", "zero-points", "bool", /*default=*/"false",
           "i4: an i4 zero point per group too (asymmetric, -8..7 over the group's range)">,
    Option<"searchScales", "search-scales", "bool", /*default=*/"true",
           "i4: each group's range is the shrinking of its extremes (1.0 down to 0.70) whose "
           "rounded values have the least squared error">,
  ];
  let dependentDialects = ["accel::transformer::TransformerDialect",
                           "accel::onnx::OnnxDialect"];
}

//===----------------------------------------------------------------------===//
// accel-kv-cache-dtype
//===----------------------------------------------------------------------===//

def KVCacheDtype : Pass<"accel-kv-cache-dtype", "mlir::func::FuncOp"> {
  let summary = "stores the paged KV cache as f8E4M3FN with static per-layer or per-head scales";
  let description = [{
    Gives the function's `!transformer.kv_cache` argument `dtype` elements
    and every `transformer.attention` the static scales `k_scale` and
    `v_scale` (stored = value / scale, saturating at ±448; vLLM's default of
    1.0 when none are calibrated). With `tokens` (a .npy of calibration ids,
    `[S]` or `[N, S]`) the function first runs on the CPU evaluator over
    them, and every attention gets per-KV-head scales instead:
    `k_head_scales[h] = max |k[:, h, :]| / 448` (likewise for v), the
    E4M3 range just covering what the calibration saw (a head that stayed 0
    gets 1.0). A cache that is already quantised is an error; one of `dtype`
    already is left alone.

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
    Option<"tokens", "tokens", "std::string", /*default=*/"\"\"",
           "calibration token ids (.npy): per-KV-head scales from what they produce">,
  ];
  let dependentDialects = ["accel::transformer::TransformerDialect"];
}

//===----------------------------------------------------------------------===//
// accel-calibrate-activations
//===----------------------------------------------------------------------===//

def CalibrateActivations : Pass<"accel-calibrate-activations", "mlir::func::FuncOp"> {
  let summary = "records each linear's per-input-channel max |x| over calibration tokens";
  let description = [{
    The first step of `accelc -precision=w8a8` (SmoothQuant, docs/precision.md).
    Splits fused gated MLPs into linear, gated_act, linear (as
    accel-quantize-weights does, so that the down projection's input is
    seen), then runs the token-major function on the CPU evaluator over
    every sequence of `tokens` (a .npy of integer ids, `[S]` or `[N, S]`;
    each sequence as one whole-prompt step) and puts on every
    `transformer.linear` with an f32 `x` and an f32 constant weight the
    attribute `accel.calib_absmax`: `max_t |x[t, j]|` over all calibration
    tokens, one f32 per input channel. Nothing else changes. A file that
    cannot be read, or a function that is not token-major, is an error.

    After (`tokens=calib.npy`):

    ```mlir
    %y = transformer.linear %n, %w {accel.calib_absmax = dense<[3.5, 0.25]> : tensor<2xf32>}
           : (tensor<?x2xf32>, tensor<4x2xf32>) -> tensor<?x4xf32>
    ```
  }];
  let options = [
    Option<"tokens", "tokens", "std::string", /*default=*/"\"\"",
           "the calibration token ids (.npy, integers, [S] or [N, S])">,
  ];
  let dependentDialects = ["accel::transformer::TransformerDialect"];
}

//===----------------------------------------------------------------------===//
// accel-smooth-quant
//===----------------------------------------------------------------------===//

def SmoothQuant : Pass<"accel-smooth-quant", "mlir::func::FuncOp"> {
  let summary = "migrates activation outliers into the weights (SmoothQuant)";
  let description = [{
    Xiao et al. 2023. For the linears that read one f32 tensor `x` and
    carry `accel.calib_absmax` (accel-calibrate-activations), with f32
    constant weights `W_k [out_k, in]`:

      s_j = max|x_j|^alpha / (max_k max_o |W_k[o, j]|)^(1 - alpha),
            clamped to [1 / max-scale, max-scale] (1 where either max is 0)

    and then `x' = x / s`, `W_k' = W_k diag(s)`: the product is unchanged
    (exactly, up to f32 rounding), while x's outlier channels shrink and the
    weights' columns grow to match. `accel.calib_absmax` becomes
    `max|x_j| / s_j`. 1/s is folded into whatever produces x:

    | x is | 1/s goes into |
    |---|---|
    | `rms_norm` / `add_rms_norm` (normed result) | its weight: `(w + offset) / s - offset` |
    | `layer_norm` | its weight and bias |
    | `gated_act` of a float linear (SwiGLU's down projection) | the up half of that linear's rows (and bias), since `act(gate) * up` is linear in `up` |

    Anything else (o_proj after attention, GPT-2's c_proj after gelu) is
    not smoothed (its linears keep their statistics and are quantised
    as they are). Neither is x when something other than these linears
    reads it (the producer's scaled output would leak), nor a producer
    whose weight is not an f32 constant. Linears sharing x (unfused q, k,
    v) share one s.

    Before (`alpha=0.5`):

    ```mlir
    %n = transformer.rms_norm %h, %g {epsilon = 1.0e-05}
    %y = transformer.linear %n, %w {accel.calib_absmax = dense<[4.0, 1.0]> : tensor<2xf32>}
    ```

    After: `%g` divided by s, `%w`'s columns multiplied by s, and
    `accel.calib_absmax = max|x_j| / s_j`.
  }];
  let options = [
    Option<"alpha", "alpha", "double", /*default=*/"0.5",
           "migration strength in [0, 1]: 0 moves all of the range into x, 1 into W">,
    Option<"maxScale", "max-scale", "double", /*default=*/"1000.0",
           "s is clamped to [1 / max-scale, max-scale]">,
  ];
  let dependentDialects = ["accel::transformer::TransformerDialect",
                           "accel::onnx::OnnxDialect"];
}

//===----------------------------------------------------------------------===//
// accel-quantize-activations
//===----------------------------------------------------------------------===//

def QuantizeActivations : Pass<"accel-quantize-activations", "mlir::func::FuncOp"> {
  let summary = "static per-tensor i8 or f8E4M3FN activations for quantised linears (W8A8)";
  let description = [{
    Every `transformer.linear` with an f32 x, a weight of `dtype` (after
    accel-quantize-weights) and `accel.calib_absmax` gets a static
    per-tensor input scale `scale = max_j absmax_j / 127` for i8, `/ 448`
    for f8E4M3FN (1 when that is 0): x is quantised by
    `transformer.quantize` (round to nearest even, saturating) and the
    linear reads the quantised x with `input_scale`. With `dynamic`, every
    such linear (statistics or not) reads
    `%q, %s = transformer.dynamic_quantize %x` instead: one scale per token,
    max |x[t, :]| / 127 (448), computed at run time. An
    activation epilogue moves into a `transformer.activation` after the
    linear (a W8A8 linear takes none). The attribute is dropped from
    every op, quantised or not.

    Before:

    ```mlir
    %y = transformer.linear %x, %q weight_scale(%ws) granularity = per_channel
           {accel.calib_absmax = dense<[2.54, 1.0]> : tensor<2xf32>}
           : (tensor<?x2xf32>, tensor<4x2xi8>, tensor<4xf32>) -> tensor<?x4xf32>
    ```

    After:

    ```mlir
    %s = onnx.Constant {value = dense<0.02> : tensor<f32>} : () -> tensor<f32>
    %xq = transformer.quantize %x, %s : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xi8>
    %y = transformer.linear %xq, %q weight_scale(%ws) input_scale(%s) granularity = per_channel
           : (tensor<?x2xi8>, tensor<4x2xi8>, tensor<4xf32>, tensor<f32>) -> tensor<?x4xf32>
    ```

    The plan writer folds the quantize into the linear's step (its sixth
    operand is the input scale; docs/plan-format.md), and the CPU runtime
    quantises x inside the GEMM.
  }];
  let options = [
    Option<"dtype", "dtype", "std::string", /*default=*/"\"i8\"",
           "the activation (and weight) type: i8 or f8E4M3FN">,
    Option<"dynamic", "dynamic", "bool", /*default=*/"false",
           "per-token scales computed at run time (transformer.dynamic_quantize) "
           "instead of static ones from calibration statistics">,
  ];
  let dependentDialects = ["accel::transformer::TransformerDialect",
                           "accel::onnx::OnnxDialect"];
}

#endif // ACCEL_PASSES_PRECISION
