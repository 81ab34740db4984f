//===- RaisePasses.td - onnx → transformer raising --------*- tablegen -*-===//
//
// Raising recognises subgraphs that exporters write and replaces them with
// transformer ops. Every pattern is an optimisation: what no pattern
// recognises stays in the onnx dialect and still lowers generically.
//
// Every rewrite is semantics-preserving on its own, for any batch size: a
// token-wise op on the batch-major activations `[B, S, H]` of an export is
// written as `transformer.flatten_tokens` → op on `[T, H]` →
// `transformer.unflatten_tokens ... like` the batch-major input, and the
// unflatten/flatten pairs between consecutive raised ops fold away (their
// folders run in every pass's greedy driver and in -canonicalize).
//
// The patterns of each pass are also exposed as populateRaise<X>Patterns
// (include/accel/passes/RaisePatterns.h) for a combined pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_PASSES_RAISE
#define ACCEL_PASSES_RAISE

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// accel-raise-rms-norm
//===----------------------------------------------------------------------===//

def RaiseRmsNorm : Pass<"accel-raise-rms-norm", "mlir::func::FuncOp"> {
  let summary = "raises RMS normalisation subgraphs to transformer.rms_norm";
  let description = [{
    Matches, over the last axis:

    * the decomposed norm of torch exports, `x * rsqrt(mean(x^2) + eps) * w`:
      `Pow(x, 2)` or `Mul(x, x)`, `ReduceMean` (axes `[-1]` as attribute or
      input, keepdims = 1), `Add` of a positive scalar eps, then
      `Reciprocal(Sqrt(.))`, `Pow(., -0.5)` or `Div(x, Sqrt(.))`, and the
      `Mul` by the 1-D weight, in either operand order; the f32 upcast
      (`Cast` before, `Cast` back to x's type before or after the weight
      `Mul`); a weight `Add(w, 1)` (Gemma's `1 + w`, when not folded by the
      exporter) becomes `weight_offset = 1.0` on `w`, keeping the
      checkpoint's tensor;
    * opset-23 `RMSNormalization` and `ms_SimplifiedLayerNormalization` with
      the last axis and a 1-D scale (and no `inv_std_var` use);
    * `ms_SkipSimplifiedLayerNormalization` without bias:
      `transformer.residual_add` (skip is the residual) and `rms_norm` of the
      sum; its `input_skip_bias_sum` result, when used, is the sum.

    Before:

    ```mlir
    %sq = onnx.Pow %x, %two : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?x64xf32>
    %ms = onnx.ReduceMean %sq axes(%last) : (tensor<?x?x64xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
    %v = onnx.Add %ms, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
    %s = onnx.Sqrt %v : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
    %r = onnx.Reciprocal %s : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
    %n = onnx.Mul %x, %r : (tensor<?x?x64xf32>, tensor<?x?x1xf32>) -> tensor<?x?x64xf32>
    %y = onnx.Mul %w, %n : (tensor<64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    ```

    After:

    ```mlir
    %t = transformer.flatten_tokens %x : tensor<?x?x64xf32> -> tensor<?x64xf32>
    %n = transformer.rms_norm %t, %w {epsilon = 9.9999999747524271E-7 : f64}
           : tensor<?x64xf32>, tensor<64xf32>
    %y = transformer.unflatten_tokens %n like %x
           : tensor<?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x64xf32>
    ```
  }];
  let dependentDialects = ["accel::transformer::TransformerDialect"];
}

//===----------------------------------------------------------------------===//
// accel-raise-layer-norm
//===----------------------------------------------------------------------===//

def RaiseLayerNorm : Pass<"accel-raise-layer-norm", "mlir::func::FuncOp"> {
  let summary = "raises layer normalisation to transformer.layer_norm";
  let description = [{
    Matches, over the last axis:

    * `LayerNormalization` with a 1-D scale and optional 1-D bias (its
      `Mean` / `InvStdDev` results unused);
    * the decomposed form `d = x - ReduceMean(x)`, `ReduceMean(d^2)`,
      `Add(eps)`, `Sqrt`, `Div(d, .)` (or `Mul` by `Reciprocal` /
      `Pow(., -0.5)`), `Mul(w)`, `Add(b)`, operands in either order, with the
      optional f32 `Cast` round trip;
    * `ms_SkipLayerNormalization` without `bias`: `transformer.residual_add`
      and `layer_norm` (with `beta`) of the sum.

    A 1-D `Add` that follows a raised norm without bias becomes its bias.

    Before:

    ```mlir
    %y = onnx.LayerNormalization %x, %w B(%b) {axis = -1 : i64, epsilon = 9.99999974E-6 : f32}
        : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    ```

    After:

    ```mlir
    %t = transformer.flatten_tokens %x : tensor<?x?x64xf32> -> tensor<?x64xf32>
    %n = transformer.layer_norm %t, %w bias(%b) {epsilon = 9.9999997473787516E-6 : f64}
           : (tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    %y = transformer.unflatten_tokens %n like %x
           : tensor<?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x64xf32>
    ```
  }];
  let dependentDialects = ["accel::transformer::TransformerDialect"];
}

//===----------------------------------------------------------------------===//
// accel-raise-linear
//===----------------------------------------------------------------------===//

def RaiseLinear : Pass<"accel-raise-linear", "mlir::func::FuncOp"> {
  let summary = "raises MatMul and Gemm with constant weights to transformer.linear";
  let description = [{
    * `MatMul(x, W)` with `x` of rank 2 or more and `W` a 2-D float
      constant `[in, out]`: `transformer.linear` takes torch's `[out, in]`,
      so the weight becomes a new `onnx.Constant` with the transposed data
      (a dense_resource blob named after the original + `.T`; inline data
      stays inline). `W = Transpose(C) {perm = [1, 0]}` of a constant
      `[out, in]` uses `C` directly.
    * `Gemm(A, B, C)` with `alpha = beta = 1`, `transA = 0`, a constant `B`
      (`transB` 0 or 1) and an optional 1-D bias `C`.
    * GPT-2's spelling around Gemm: `Reshape(x, [-1, K])` with `K` the last
      dim of `x` becomes `transformer.flatten_tokens`, and
      `Reshape(r, Concat(Shape(..), .., [N]))` of a token-major result whose
      leading dims provably equal those of the flattened value becomes
      `transformer.unflatten_tokens`; a Reshape that provably does not
      change its input's shape is removed. Reshapes next to the token views
      fold: `flatten_tokens(Reshape(y))` of y's type is `y`, and
      `Reshape(unflatten_tokens(r), [-1, N])` of r's type is `r` (a Reshape
      keeps the row-major order).
    * With `absorb-bias`, `Add(linear(x), b)` of a 1-D `b` of out_features
      becomes the linear's bias.

    The lm head (a MatMul that produces the graph output) is left to
    `accel-raise-logits`. MatMuls with a non-constant weight (attention
    scores) are not touched.

    Before:

    ```mlir
    %y = onnx.MatMul %x, %w : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
    %z = onnx.Add %y, %b : (tensor<?x?x128xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
    ```

    After:

    ```mlir
    %wt = onnx.Constant {value = dense_resource<w.T> : tensor<128x64xf32>} : () -> tensor<128x64xf32>
    %t = transformer.flatten_tokens %x : tensor<?x?x64xf32> -> tensor<?x64xf32>
    %l = transformer.linear %t, %wt bias(%b)
           : (tensor<?x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %z = transformer.unflatten_tokens %l like %x
           : tensor<?x128xf32>, tensor<?x?x64xf32> -> tensor<?x?x128xf32>
    ```
  }];
  let options = [
    Option<"absorbBias", "absorb-bias", "bool", /*default=*/"true",
           "Fold a following Add of a 1-D bias into the linear">
  ];
  let dependentDialects = ["accel::transformer::TransformerDialect",
                           "accel::onnx::OnnxDialect"];
}

//===----------------------------------------------------------------------===//
// accel-raise-quantized-linear
//===----------------------------------------------------------------------===//

def RaiseQuantizedLinear
    : Pass<"accel-raise-quantized-linear", "mlir::func::FuncOp"> {
  let summary = "raises QDQ weights and MatMulNBits to quantised transformer.linear";
  let description = [{
    Weights that arrive already quantised keep their integer / fp8 data and
    scales on `transformer.linear` (nothing is dequantised at compile time):

    * `MatMul(x, DequantizeLinear(W_q, scale, [zero_point]))` with constant
      operands, `W_q` `[in, out]` (or `[out, in]` under a
      `Transpose {perm = [1, 0]}`), i8 / ui8 / i4 / ui4 / f8E4M3FN / f8E5M2:
      a scalar scale is `per_tensor`; a per-axis scale on the output axis
      `per_channel`; opset 21's `block_size` along in_features `per_group`
      with `group_size = block_size` (scales transposed to
      `[out, in / group_size]`).
    * `com.microsoft.MatMulNBits` (bits 4 or 8, `block_size` dividing K, no
      `g_idx`, packed ui8 zero points or none, optional bias): the unpacked
      `[N, K]` weight, scales `[N, K / block_size]` (`per_group`; `[N]`
      `per_channel` for one block).

    Unsigned data is shifted into the signed type exactly (`(q - zp) =
    (q - 2^(b-1)) - (zp - 2^(b-1))`); a zero point that is then all zeros
    (ORT's symmetric 128 / 8, MatMulNBits' default) is dropped. Not raised
    (left on the ONNX path, correct and slower): scales along in_features
    per axis, blocks along out_features, a partial last block, fp8 with a
    nonzero zero point, float MatMulNBits zero points, `g_idx`, and the lm
    head (`transformer.logits` takes no scales).

    Every form above is raised by default: plans carry the zero point as the
    linear step's fifth operand and `group_size` for blocked scales, and the
    CPU backend runs them all (docs/precision.md). `all-forms=false` keeps
    to i8 or f8E4M3FN weights, per tensor or per channel, without a zero
    point (the forms whose GEMM decodes the weight in place).

    Before:

    ```mlir
    %w = onnx.DequantizeLinear %q, %s {axis = 1 : i64}
           : (tensor<64x128xi8>, tensor<128xf32>) -> tensor<64x128xf32>
    %y = onnx.MatMul %x, %w : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
    ```

    After:

    ```mlir
    %qt = onnx.Constant {value = dense<...> : tensor<128x64xi8>} : () -> tensor<128x64xi8>
    %t = transformer.flatten_tokens %x : tensor<?x?x64xf32> -> tensor<?x64xf32>
    %l = transformer.linear %t, %qt weight_scale(%s) granularity = per_channel
           : (tensor<?x64xf32>, tensor<128x64xi8>, tensor<128xf32>) -> tensor<?x128xf32>
    %y = transformer.unflatten_tokens %l like %x
           : tensor<?x128xf32>, tensor<?x?x64xf32> -> tensor<?x?x128xf32>
    ```
  }];
  let options = [
    Option<"allForms", "all-forms", "bool", /*default=*/"true",
           "Raise i4, f8E5M2, blocked scales and zero points too (false: only "
           "i8/f8E4M3FN per tensor or per channel without a zero point)">
  ];
  let dependentDialects = ["accel::transformer::TransformerDialect",
                           "accel::onnx::OnnxDialect"];
}

//===----------------------------------------------------------------------===//
// accel-raise-logits
//===----------------------------------------------------------------------===//

def RaiseLogits : Pass<"accel-raise-logits", "mlir::func::FuncOp"> {
  let summary = "raises the lm head and the final logit softcap to transformer.logits";
  let description = [{
    A `MatMul(h, W)` with a constant weight whose result is the graph output
    (returned, possibly through a float `Cast` and the softcap below), and
    whose out features equal the vocabulary of an embedding table of the
    function (a constant read by `Gather` on axis 0 or by
    `transformer.embedding`), becomes `transformer.logits` with
    `lm_head = W^T` `[vocab, hidden]`. Tied embeddings are one SSA value:
    `Transpose(table)` (how dynamo exports of Gemma and GPT-2 spell the tied
    head) gives the table itself; with `detect-tied`, a separate `[hidden,
    vocab]` constant whose data is the transposed table is replaced by the
    table. A following float `Cast` sets the logits' element type. Gemma 2's
    `Mul(Tanh(Div(logits, c)), c)` becomes `softcap = c`.

    Before:

    ```mlir
    %wt = onnx.Transpose %embed {perm = array<i64: 1, 0>} : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %l = onnx.MatMul %h, %wt : (tensor<?x?x64xf32>, tensor<64x256xf32>) -> tensor<?x?x256xf32>
    %d = onnx.Div %l, %c30 : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
    %t = onnx.Tanh %d : (tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
    %y = onnx.Mul %t, %c30 : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
    return %y : tensor<?x?x256xf32>
    ```

    After:

    ```mlir
    %f = transformer.flatten_tokens %h : tensor<?x?x64xf32> -> tensor<?x64xf32>
    %l = transformer.logits %f, %embed {softcap = 3.000000e+01 : f64}
           : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
    %y = transformer.unflatten_tokens %l like %h
           : tensor<?x256xf32>, tensor<?x?x64xf32> -> tensor<?x?x256xf32>
    return %y : tensor<?x?x256xf32>
    ```
  }];
  let options = [
    Option<"detectTied", "detect-tied", "bool", /*default=*/"true",
           "Use the embedding table as lm_head when the lm head's weight is "
           "its transpose, byte for byte">
  ];
  let dependentDialects = ["accel::transformer::TransformerDialect",
                           "accel::onnx::OnnxDialect"];
}

//===----------------------------------------------------------------------===//
// accel-raise-activations
//===----------------------------------------------------------------------===//

def RaiseActivations : Pass<"accel-raise-activations", "mlir::func::FuncOp"> {
  let summary = "raises activation formulas to transformer.activation";
  let description = [{
    * `Mul(x, Sigmoid(k * x))`, either order: `silu` (k = 1) or `quick_gelu`
      (k = 1.702);
    * `0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))` in any
      association of the products and any expansion of the polynomial
      (GPT-2's `gelu_new`, torch's tanh GELU as dynamo decomposes it):
      `gelu_tanh`;
    * `0.5 * x * (1 + Erf(x / sqrt(2)))`: `gelu`;
    * `onnx.Gelu` (approximate `none` / `tanh`), `Relu`, and `Relu(x)^2`
      (`relu_squared`).

    Constants are compared within `tolerance`. An activation of a tensor of
    rank 3 or more is wrapped in flatten_tokens / unflatten_tokens so that
    it chains with the raised linears around it.

    Before:

    ```mlir
    %s = onnx.Sigmoid %g : (tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
    %a = onnx.Mul %g, %s : (tensor<?x?x128xf32>, tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
    ```

    After:

    ```mlir
    %t = transformer.flatten_tokens %g : tensor<?x?x128xf32> -> tensor<?x128xf32>
    %r = transformer.activation %t kind = silu : tensor<?x128xf32>
    %a = transformer.unflatten_tokens %r like %g
           : tensor<?x128xf32>, tensor<?x?x128xf32> -> tensor<?x?x128xf32>
    ```
  }];
  let options = [
    Option<"tolerance", "tolerance", "double", /*default=*/"1e-4",
           "Relative tolerance when comparing the constants of a formula">
  ];
  let dependentDialects = ["accel::transformer::TransformerDialect"];
}

//===----------------------------------------------------------------------===//
// accel-raise-mlp
//===----------------------------------------------------------------------===//

def RaiseMlp : Pass<"accel-raise-mlp", "mlir::func::FuncOp"> {
  let summary = "raises gated feed-forward blocks to transformer.gated_mlp";
  let description = [{
    Runs on raised linears and activations (after `accel-raise-linear` and
    `accel-raise-activations`). Matches `linear_down(act(linear_gate(x)) *
    linear_up(x))` (the `Mul` in either order) with bias-free float linears
    and gives `gated_mlp gate(..) up(..)`; and Phi3's fused projection,
    `linear_gate_up(x)` split in two halves along the last axis (`Split`
    with two equal outputs, or two unit-step `Slice`s), the activation on
    the first half:
    `gated_mlp gate_up(..)`. A non-gated MLP (GPT-2: linear, activation,
    linear) stays as it is.

    Before:

    ```mlir
    %g = transformer.linear %x, %wg : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
    %a = transformer.activation %g kind = silu : tensor<?x128xf32>
    %u = transformer.linear %x, %wu : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
    %ga = transformer.unflatten_tokens %a like %h : tensor<?x128xf32>, tensor<?x?x64xf32> -> tensor<?x?x128xf32>
    %ua = transformer.unflatten_tokens %u like %h : tensor<?x128xf32>, tensor<?x?x64xf32> -> tensor<?x?x128xf32>
    %m = onnx.Mul %ga, %ua : (tensor<?x?x128xf32>, tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
    %mt = transformer.flatten_tokens %m : tensor<?x?x128xf32> -> tensor<?x128xf32>
    %y = transformer.linear %mt, %wd : (tensor<?x128xf32>, tensor<64x128xf32>) -> tensor<?x64xf32>
    ```

    After:

    ```mlir
    %y = transformer.gated_mlp %x gate(%wg) up(%wu) down(%wd) kind = silu
           : (tensor<?x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
             -> tensor<?x64xf32>
    ```
  }];
  let dependentDialects = ["accel::transformer::TransformerDialect"];
}

//===----------------------------------------------------------------------===//
// accel-raise-embedding
//===----------------------------------------------------------------------===//

def RaiseEmbedding : Pass<"accel-raise-embedding", "mlir::func::FuncOp"> {
  let summary = "raises embedding lookups to transformer.embedding";
  let description = [{
    `Gather(table, ids) {axis = 0}` with a 2-D float constant table and
    integer ids of any rank: the ids are flattened to `[tokens]`
    (`transformer.flatten_tokens`, ids form), looked up, and the `[tokens,
    hidden]` rows viewed as `ids.shape + [hidden]`
    (`transformer.unflatten_tokens ... like %ids`). A following `Mul` by a
    positive scalar constant (Gemma's `sqrt(hidden)` normaliser) becomes the
    `scale` attribute. Learned position embeddings (GPT-2's `wpe`, gathered
    at `Unsqueeze(Range(0, S))`) are raised the same way; their ids stay the
    ONNX position computation.

    Before:

    ```mlir
    %e = onnx.Gather %table, %ids : (tensor<256x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
    %s = onnx.Mul %e, %c8 : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?x64xf32>
    ```

    After:

    ```mlir
    %i = transformer.flatten_tokens %ids : tensor<?x?xi64> -> tensor<?xi64>
    %e = transformer.embedding %table[%i] {scale = 8.000000e+00 : f64}
           : (tensor<256x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
    %s = transformer.unflatten_tokens %e like %ids
           : tensor<?x64xf32>, tensor<?x?xi64> -> tensor<?x?x64xf32>
    ```
  }];
  let dependentDialects = ["accel::transformer::TransformerDialect"];
}

//===----------------------------------------------------------------------===//
// accel-raise-residual-add
//===----------------------------------------------------------------------===//

def RaiseResidualAdd : Pass<"accel-raise-residual-add", "mlir::func::FuncOp"> {
  let summary = "raises the adds of the residual stream to transformer.residual_add";
  let description = [{
    The residual stream starts at the embedding: the result of a raised
    `transformer.embedding` (or of an onnx `Gather` from a constant table),
    scaled by a scalar, or summed with further embedding lookups (GPT-2's
    token + position embeddings). An `Add(a, b)` continues it when `a` and
    `b` have the same float type (no broadcasting), rank 2 or more, neither
    is a constant, and one of them is on the stream; that operand is the
    `residual`, the other the `branch`, and the sum is on the stream. Adds
    inside attention (rotary, scores + mask) are not on the stream (their
    operands are per-head values or masks), so they are never caught. A
    parallel residual `x + (attn + mlp)` (GPT-NeoX, Falcon): the add of two
    branches whose only reader adds it to the stream is a residual_add too,
    and stays the branch of the outer one.

    Before:

    ```mlir
    %h1 = onnx.Add %h, %attn : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    ```

    After (with `%h` on the stream):

    ```mlir
    %r = transformer.flatten_tokens %h : tensor<?x?x64xf32> -> tensor<?x64xf32>
    %b = transformer.flatten_tokens %attn : tensor<?x?x64xf32> -> tensor<?x64xf32>
    %s = transformer.residual_add %r, %b : tensor<?x64xf32>
    %h1 = transformer.unflatten_tokens %s like %h
            : tensor<?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x64xf32>
    ```
  }];
  let dependentDialects = ["accel::transformer::TransformerDialect"];
}


//===----------------------------------------------------------------------===//
// accel-raise-views
//===----------------------------------------------------------------------===//

def RaiseViews : Pass<"accel-raise-views", "mlir::func::FuncOp"> {
  let summary = "turns the view glue between raised ops into token-major views";
  let description = [{
    Runs last among the local raises. The movement ops an export writes
    between raised ops become what they compute, exactly (data is only
    moved, or a weight's rows reordered at compile time):

    * transposes around row-wise ops cancel: `Transpose(unflatten(R(flatten(
      Transpose(y, p)))), p^-1)` with `p` keeping the last axis and `R` a
      chain of `rms_norm` / `layer_norm` / `activation` / `linear` becomes
      `unflatten(R(flatten(y)) like y)` (a row-wise op commutes with any
      permutation of the rows: Gemma 3's q/k norms on `[B, H, S, D]`);
    * a Transpose that moves only size-1 axes is a Reshape;
    * `GatherND(x, [[c]])` is `Slice(x, c:c+1)` on axis 0, and a Slice or
      Split of a Transpose happens before it (Falcon's multi-query k/v);
    * a Slice of heads of `Reshape(u, [.., G, D])` is a Slice of u's
      columns, and the non-overlapping last-axis Slices / Splits of
      `unflatten_tokens(%r)` are one `transformer.split %r` (Falcon's and
      Phi3's fused query_key_value);
    * a linear whose output, viewed `[.., H, k*D]`, is split on the last
      axis (GPT-NeoX's query_key_value, q/k/v interleaved per head) gets its
      weight (and bias) rows reordered to `[q of every head; k; v]` and
      a `transformer.split`;
    * `Reshape(unflatten(norm(flatten(x)) like x), [-1, H, D])` with x
      `[.., H, D]` is the per-head norm `norm(Reshape(x, [-1, H, D]))` on
      `[tokens, H, D]`, the form accel-partition follows.

    The Transpose and Reshape canonicalizations run in the same driver.

    Before (Gemma 3's q norm, between the raised q projection and rotary):

    ```mlir
    %t = onnx.Transpose %q {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
    %f = transformer.flatten_tokens %t : tensor<?x4x?x16xf32> -> tensor<?x16xf32>
    %n = transformer.rms_norm %f, %w {epsilon = 1.0e-06 : f64} : tensor<?x16xf32>, tensor<16xf32>
    %u = transformer.unflatten_tokens %n like %t : tensor<?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
    %b = onnx.Transpose %u {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %h = onnx.Reshape %b, %c : (tensor<?x?x4x16xf32>, tensor<3xi64>) -> tensor<?x4x16xf32>
    ```

    After:

    ```mlir
    %r = onnx.Reshape %q, %c : (tensor<?x?x4x16xf32>, tensor<3xi64>) -> tensor<?x4x16xf32>
    %h = transformer.rms_norm %r, %w {epsilon = 1.0e-06 : f64} : tensor<?x4x16xf32>, tensor<16xf32>
    ```
  }];
  let dependentDialects = ["accel::transformer::TransformerDialect"];
}


//===----------------------------------------------------------------------===//
// raise-attention
//===----------------------------------------------------------------------===//

def RaiseAttention : Pass<"accel-raise-attention", "mlir::ModuleOp"> {
  let summary = "Prove attention subgraphs and make the model token-major over a paged KV cache";
  let description = [{
    Finds every attention subgraph from its softmax (scores back to
    `MatMul(q, kᵀ)` through scalar scales, an additive mask and a tanh
    softcap; probabilities forward to `MatMul(p, v)`; q, k, v back to
    `[batch, heads, seq, head_dim]` through transposes and GQA's repeat_kv),
    then proves each by evaluating it on random q, k, v with the CPU
    reference kernels against a reference attention, reading causal and
    sliding window off the mask the graph itself computes. Position ids are
    found the same way (a Range that evaluates to past .. past + S - 1).

    The fused opset-23 `Attention` (4-D q, k, v, no past inputs; causal
    from `is_causal` and/or its boolean or additive mask) is proved the
    same way.

    Only when every site is proved, the function is rewritten:

    ```mlir
    // before
    func.func @main_graph(%input_ids: tensor<?x?xi64>) -> tensor<?x?x256xf32>
    // after
    func.func @main_graph(%ids: tensor<?xi64>, %batch: !transformer.batch,
        %cache: !transformer.kv_cache<layers = 2, kv_heads = 2, head_dim = 16,
                                       block_size = 16, f32>) -> tensor<?x256xf32> {
      %positions = transformer.positions %batch : tensor<?xi64>
      ...
      %o = transformer.attention %q, %k, %v, %cache[0], %batch
             {causal, head_dim = 16, num_heads = 4, num_kv_heads = 2, scale = 0.25}
    ```

    past_key_values inputs and present outputs disappear into the cache;
    the attention_mask input must have no other use. If any site cannot be
    proved, nothing changes and a warning names it.
  }];
  let dependentDialects = ["accel::transformer::TransformerDialect",
                           "accel::onnx::OnnxDialect"];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "16",
           "Tokens per block of the paged KV cache">
  ];
}


//===----------------------------------------------------------------------===//
// raise-rotary
//===----------------------------------------------------------------------===//

def RaiseRotary : Pass<"accel-raise-rotary", "mlir::ModuleOp"> {
  let summary = "Prove rotary embeddings and raise them to transformer.rotary";
  let description = [{
    After accel-raise-attention (positions come from transformer.positions),
    finds `x * C + R * S` with C and S computed from the positions alone and
    R a rotation of x (a partial rotary concatenates x's untouched tail), and
    proves it by evaluation at chosen positions: the style (half split or
    interleaved), rotary_dim and theta are read off the result, which must
    equal rotary(x) for random x. Frequencies that are not theta^(-2i/d)
    are measured at positions 1, 2, 4, ..., 2^20 and, when a linear or
    llama3 rope scaling of some theta reproduces every one of them with the
    runtime's own formula (to a few f32 ulps), the rotary gets it as
    `scaling = #transformer.rope_scaling<...>` (Llama 3.1). The fused opset-23 `RotaryEmbedding` on
    4-D input, with cos/sin tables computed from the positions, is proved
    and raised the same way. onnxruntime's `com.microsoft` `RotaryEmbedding`
    (3-D or 4-D input, cos/sin caches) becomes `transformer.rotary` with the
    caches as tables once its position input is proved to evaluate to the
    token positions; packed batching, scale != 1 and a scalar position
    offset are left alone with a warning.

    ```mlir
    // before: Cos/Sin of positions × inv_freq, Slice/Neg/Concat, Mul, Add
    // after
    %r = transformer.rotary %x, %positions style = half_split
           {rotary_dim = 16 : i64, theta = 1.000000e+04 : f64}
           : (tensor<?x4x16xf32>, tensor<?xi64>) -> tensor<?x4x16xf32>
    ```
  }];
  let dependentDialects = ["accel::transformer::TransformerDialect"];
}


//===----------------------------------------------------------------------===//
// report-unraised
//===----------------------------------------------------------------------===//

def ReportUnraised : Pass<"accel-report-unraised", "mlir::ModuleOp"> {
  let summary = "Warn about onnx arithmetic that raising left in primitive form";
  let description = [{
    Runs last in `accelc -emit=transformer`. Movement and shape ops
    (Reshape, Transpose, Concat, Slice, Shape, Cast, ...) are expected glue;
    every other onnx op left is arithmetic that no pattern recognised. It
    still runs on the generic path; one warning per operator kind says how
    many remain and points at the first:

    ```
    model.onnx: node 'node_Add_12': warning: 1 'onnx.Add' op(s) were not
      raised and run on the generic path (first one here)
    ```
  }];
}

#endif // ACCEL_PASSES_RAISE
