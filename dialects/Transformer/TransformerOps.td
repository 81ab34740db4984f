//===- TransformerOps.td - transformer dialect ops --------*- tablegen -*-===//
//
// The ops of the transformer dialect, grouped by concern: step metadata,
// embedding and logits, normalisation, linear layers, attention, MLP,
// residual stream, head layout, token layout (the bridge from batch-major
// ONNX activations), collectives, quantisation.
//
// Conventions (see the dialect description): activations are token-major
// `[tokens, hidden]` with a dynamic token dimension; per-head values are
// `[tokens, heads, head_dim]`; weights are torch-layout `[out, in]`.
// Formats: enum attributes are printed as words at a fixed place
// (`kind = silu`), numeric attributes in the attribute dictionary. Ops whose
// types follow from one operand print the short type list; the others print
// `functional-type(operands, results)`.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_TRANSFORMER_OPS
#define ACCEL_TRANSFORMER_OPS

include "TransformerDialect.td"
include "TransformerEnums.td"
include "TransformerAttrs.td"
include "TransformerTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Transformer_PositiveI64Attr : ConfinedAttr<I64Attr, [IntPositive]>;
def Transformer_NonNegativeI64Attr : ConfinedAttr<I64Attr, [IntNonNegative]>;

//===----------------------------------------------------------------------===//
// positions
//===----------------------------------------------------------------------===//

def Transformer_PositionsOp : Transformer_Op<"positions", [Pure]> {
  let summary = "the position of every token of the step";
  let description = [{
    Reads from the step metadata the position of every token in its own
    sequence (a decode token of a 17-token context has position 16; a
    prefill chunk has consecutive positions from the chunk's start). This
    replaces the `position_ids` input of ONNX exports; it feeds
    `transformer.rotary` and learned position embeddings (GPT-2's `wpe`).

    ```mlir
    %pos = transformer.positions %batch : tensor<?xi32>
    ```
  }];
  let arguments = (ins Transformer_BatchType:$batch);
  let results = (outs Transformer_IndexVector:$result);
  let assemblyFormat = "$batch attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// embedding
//===----------------------------------------------------------------------===//

def Transformer_EmbeddingOp : Transformer_Op<"embedding", [Pure]> {
  let summary = "looks up the rows of an embedding table";
  let description = [{
    `result[t, :] = table[ids[t], :] * scale` for every token `t`. The table
    is `[vocab, hidden]`; `ids` are i32 or i64 token ids `[tokens]`. The
    optional `scale` multiplies every row (Gemma scales its embeddings by
    sqrt(hidden)). The same op looks up learned position embeddings with the
    ids from `transformer.positions`.

    With `vocab_shards = N` the lookup is vocabulary-parallel (accel-partition,
    docs/passes/partition.md): the vocabulary has `N * R` entries, split into
    N blocks of R rows, and `table` `[R, hidden]` is the block of one rank of
    the N-rank tensor-parallel group. Rank `r` holds rows `[r*R, (r+1)*R)`
    (its first row, the vocabulary offset, is `r * R`), returns
    `table[ids[t] - r*R, :] * scale` for the ids in its block and zeros for
    the others, and an `all_reduce` sum over the group gives every rank the
    whole lookup. The function body is every rank's, so the offset follows
    from the rank running it rather than being written down.

    With `vocab_size = V` the table ends in padding rows: the vocabulary has
    V entries, ids ≥ V are refused like any id outside the vocabulary, and
    the rows past V (zeros) are never read. accel-partition pads a
    vocabulary that N ranks do not divide to the next multiple of N, so the
    last rank's block holds the padding. Without it the vocabulary is the
    table's rows (times `vocab_shards`).

    ```mlir
    %h = transformer.embedding %table[%ids]
           : (tensor<32000x4096xbf16>, tensor<?xi32>) -> tensor<?x4096xbf16>
    %g = transformer.embedding %table[%ids] {scale = 48.0}
           : (tensor<256000x2304xbf16>, tensor<?xi64>) -> tensor<?x2304xbf16>
    %p = transformer.embedding %shard[%ids] {vocab_shards = 4}
           : (tensor<8000x4096xbf16>, tensor<?xi32>) -> tensor<?x4096xbf16>
    %e = transformer.all_reduce %p kind = sum {group_size = 4} : tensor<?x4096xbf16>
    %q = transformer.embedding %padded[%ids] {vocab_shards = 2, vocab_size = 50257}
           : (tensor<25129x768xf32>, tensor<?xi32>) -> tensor<?x768xf32>
    ```
  }];
  let arguments = (ins
    Transformer_FloatMatrix:$table,
    Transformer_IndexVector:$ids,
    OptionalAttr<F64Attr>:$scale,
    OptionalAttr<Transformer_PositiveI64Attr>:$vocab_shards,
    OptionalAttr<Transformer_PositiveI64Attr>:$vocab_size
  );
  let results = (outs Transformer_HiddenTensor:$result);
  let builders = [
    // A replicated lookup (what raising builds; accel-partition sets
    // vocab_shards).
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$table, "::mlir::Value":$ids,
                   "::mlir::FloatAttr":$scale), [{
      build($_builder, $_state, result, table, ids, scale, ::mlir::IntegerAttr(),
            ::mlir::IntegerAttr());
    }]>
  ];
  let assemblyFormat = [{
    $table `[` $ids `]` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// logits
//===----------------------------------------------------------------------===//

def Transformer_LogitsOp : Transformer_Op<"logits",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "projects final hidden states onto the vocabulary";
  let description = [{
    `result = hidden @ lm_head^T (+ bias)`, with `lm_head` `[vocab, hidden]`.
    A model with tied embeddings passes its embedding table as `lm_head`:
    tying is the two ops sharing one SSA value, which the layout and
    partition passes see directly.

    With `select_last(%batch)` only the last token of each sequence of the
    step is projected, and the result is `[sequences, vocab]`; without it,
    every token is (`[tokens, vocab]`, used to score prompts). With `softcap`
    the logits become `softcap * tanh(logits / softcap)` (Gemma 2's
    `final_logit_softcapping`). The result element type may differ from the
    hidden one (f32 logits from a bf16 model).

    ```mlir
    %logits = transformer.logits %h, %embed select_last(%batch) {softcap = 30.0}
                : (tensor<?x2304xbf16>, tensor<256000x2304xbf16>, !transformer.batch)
                  -> tensor<?x256000xf32>
    ```
  }];
  let arguments = (ins
    Transformer_HiddenTensor:$hidden,
    Transformer_FloatMatrix:$lm_head,
    Optional<Transformer_FloatVector>:$bias,
    Optional<Transformer_BatchType>:$batch,
    OptionalAttr<F64Attr>:$softcap
  );
  let results = (outs Transformer_FloatMatrix:$result);
  let assemblyFormat = [{
    $hidden `,` $lm_head (`bias` `(` $bias^ `)`)? (`select_last` `(` $batch^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// rms_norm
//===----------------------------------------------------------------------===//

def Transformer_RmsNormOp : Transformer_Op<"rms_norm",
    [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "root-mean-square normalisation of the last dimension";
  let description = [{
    `result = x / sqrt(mean(x^2, last) + epsilon) * (weight + weight_offset)`
    over the last dimension of `x`, which is `[tokens, hidden]` or
    `[tokens, heads, head_dim]` (per-head q/k norms, as in Qwen3 and
    Gemma 3). `weight` has the size of the last dimension. `weight_offset`
    is 1.0 for Gemma, whose checkpoints store `w` for a `(1 + w)` scale;
    it defaults to 0.

    ```mlir
    %n = transformer.rms_norm %h, %w {epsilon = 1.0e-06}
           : tensor<?x4096xbf16>, tensor<4096xbf16>
    %g = transformer.rms_norm %h, %w {epsilon = 1.0e-06, weight_offset = 1.0}
           : tensor<?x2304xbf16>, tensor<2304xbf16>
    ```
  }];
  let arguments = (ins
    Transformer_NormTensor:$x,
    Transformer_FloatVector:$weight,
    F64Attr:$epsilon,
    OptionalAttr<F64Attr>:$weight_offset
  );
  let results = (outs Transformer_NormTensor:$result);
  let assemblyFormat = [{
    $x `,` $weight attr-dict `:` type($x) `,` type($weight)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// add_rms_norm
//===----------------------------------------------------------------------===//

def Transformer_AddRmsNormOp : Transformer_Op<"add_rms_norm",
    [Pure, AllTypesMatch<["x", "residual", "result", "residual_out"]>]> {
  let summary = "residual add fused with the rms_norm that follows it";
  let description = [{
    `residual_out = x + residual; result = rms_norm(residual_out, weight)`:
    the fusion pass's form of a `transformer.residual_add` whose sum feeds a
    `transformer.rms_norm` and the next residual add (vLLM's
    `fused_add_rms_norm`). Attributes are those of `transformer.rms_norm`.

    ```mlir
    %n, %r = transformer.add_rms_norm %attn, %h, %w {epsilon = 1.0e-05}
               : tensor<?x4096xbf16>, tensor<4096xbf16>
    ```
  }];
  let arguments = (ins
    Transformer_HiddenTensor:$x,
    Transformer_HiddenTensor:$residual,
    Transformer_FloatVector:$weight,
    F64Attr:$epsilon,
    OptionalAttr<F64Attr>:$weight_offset
  );
  let results = (outs
    Transformer_HiddenTensor:$result,
    Transformer_HiddenTensor:$residual_out
  );
  let assemblyFormat = [{
    $x `,` $residual `,` $weight attr-dict `:` type($x) `,` type($weight)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// layer_norm
//===----------------------------------------------------------------------===//

def Transformer_LayerNormOp : Transformer_Op<"layer_norm",
    [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "layer normalisation of the last dimension";
  let description = [{
    `result = (x - mean) / sqrt(var + epsilon) * weight (+ bias)` over the
    last dimension of `x` (`[tokens, hidden]` or `[tokens, heads,
    head_dim]`). GPT-2 and Phi-2 use it.

    ```mlir
    %n = transformer.layer_norm %h, %w bias(%b) {epsilon = 1.0e-05}
           : (tensor<?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x768xf32>
    ```
  }];
  let arguments = (ins
    Transformer_NormTensor:$x,
    Transformer_FloatVector:$weight,
    Optional<Transformer_FloatVector>:$bias,
    F64Attr:$epsilon
  );
  let results = (outs Transformer_NormTensor:$result);
  let assemblyFormat = [{
    $x `,` $weight (`bias` `(` $bias^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

def Transformer_LinearOp : Transformer_Op<"linear",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "a dense layer: act(x @ weight^T + bias), with optional quantised weights";
  let description = [{
    `result[t, o] = sum_i x[t, i] * weight[o, i] (+ bias[o])`: `x` is
    `[tokens, in_features]`, `weight` torch's `[out_features, in_features]`.
    The result element type may differ from x's (f32 out of a bf16 GEMM,
    bf16 out of an fp8 one).

    **Activation epilogue**: with `activation = <kind>` the result is
    `kind(x @ weight^T + bias)`, the `transformer.activation` of that kind
    applied in the result element type (GPT-2's `c_fc` with `gelu_tanh`;
    `accel-fuse-linear-activation` makes it). Float and weight-only
    quantised linears may carry one; a linear with quantised activations
    (`input_scale`) may not.

    **Float weights** (f32, f16, bf16) have the element type of `x` and take
    no scales.

    **Quantised weights** (f8E4M3FN, f8E5M2, i8, i4) need `weight_scale`
    (f32, f16 or bf16) and `granularity`:

    | granularity | weight_scale shape |
    |---|---|
    | `per_tensor` | `[]` |
    | `per_channel` | `[out_features]` |
    | `per_group` (with `group_size`, dividing in_features) | `[out_features, in_features / group_size]` |

    Integer weights may have an asymmetric `zero_point` of the scale's shape
    and the weight's element type: `w = (q - zero_point) * scale`.

    **Quantised activations** (W8A8): an f8E4M3FN/f8E5M2 x needs an fp8
    weight, an i8 x an i8 weight, and either needs `input_scale`, `[]`
    (static, per-tensor) or `[tokens]` (dynamic, per-token), f32.

    ```mlir
    // bf16
    %y = transformer.linear %x, %w : (tensor<?x4096xbf16>, tensor<11008x4096xbf16>) -> tensor<?x11008xbf16>
    // GPT-2 style bias
    %z = transformer.linear %x, %w bias(%b) : (tensor<?x768xf32>, tensor<2304x768xf32>, tensor<2304xf32>) -> tensor<?x2304xf32>
    // GPT-2's c_fc and its gelu in one op
    %h = transformer.linear %x, %wfc bias(%bfc) activation = gelu_tanh
           : (tensor<?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<?x3072xf32>
    // W4A16, GPTQ/AWQ-style groups of 128 with zero points
    %q = transformer.linear %x, %w4 weight_scale(%s) zero_point(%zp) granularity = per_group {group_size = 128}
           : (tensor<?x4096xf16>, tensor<4096x4096xi4>, tensor<4096x32xf16>, tensor<4096x32xi4>) -> tensor<?x4096xf16>
    // W8A8 fp8, per-tensor scales
    %f = transformer.linear %x8, %w8 weight_scale(%ws) input_scale(%xs) granularity = per_tensor
           : (tensor<?x4096xf8E4M3FN>, tensor<4096x4096xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x4096xbf16>
    ```
  }];
  let arguments = (ins
    TensorRankOf<[Transformer_GemmInputElement], [2]>:$x,
    TensorRankOf<[Transformer_WeightElement], [2]>:$weight,
    Optional<Transformer_FloatVector>:$bias,
    Optional<TensorRankOf<[Transformer_FloatElement], [0, 1, 2]>>:$weight_scale,
    Optional<TensorRankOf<[Transformer_IntQuantElement], [0, 1, 2]>>:$weight_zero_point,
    Optional<TensorRankOf<[F32], [0, 1]>>:$input_scale,
    OptionalAttr<Transformer_QuantGranularityAttr>:$granularity,
    OptionalAttr<Transformer_PositiveI64Attr>:$group_size,
    OptionalAttr<Transformer_ActivationKindAttr>:$activation
  );
  let results = (outs Transformer_HiddenTensor:$result);
  let assemblyFormat = [{
    $x `,` $weight
    (`bias` `(` $bias^ `)`)?
    (`weight_scale` `(` $weight_scale^ `)`)?
    (`zero_point` `(` $weight_zero_point^ `)`)?
    (`input_scale` `(` $input_scale^ `)`)?
    (`granularity` `=` `` $granularity^)?
    (`activation` `=` `` $activation^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// in_features and out_features (ShapedType::kDynamic when unknown).
    int64_t getInFeatures() { return getWeight().getType().getDimSize(1); }
    int64_t getOutFeatures() { return getWeight().getType().getDimSize(0); }
    /// True when the weight is f8E4M3FN, f8E5M2, i8 or i4.
    bool hasQuantizedWeight();
  }];
}

//===----------------------------------------------------------------------===//
// rotary
//===----------------------------------------------------------------------===//

def Transformer_RotaryOp : Transformer_Op<"rotary",
    [Pure, AttrSizedOperandSegments, AllTypesMatch<["input", "result"]>]> {
  let summary = "rotary position embedding of per-head q or k";
  let description = [{
    Rotates pairs of the first `rotary_dim` channels of every head of
    `input` (`[tokens, heads, head_dim]`, q or k) by angles
    `positions[t] * inv_freq[j]`; channels past `rotary_dim` pass through
    (partial rotary: Phi-2, GPT-J, StableLM). `rotary_dim` is even and at
    most `head_dim`. `style` says which channels pair up: `half_split`
    (i, i + rotary_dim/2; NeoX, Llama and most HF models) or `interleaved`
    (2i, 2i+1; GPT-J).

    The frequencies come either from `theta`
    (`inv_freq[j] = theta^(-2j / rotary_dim)`), optionally with a
    `#transformer.rope_scaling`, or from explicit `cos_sin(%cos, %sin)`
    tables `[max_position, rotary_dim / 2]` indexed by position, as ONNX
    RotaryEmbedding and exports with LongRoPE (Phi3) carry them.

    ```mlir
    %q = transformer.rotary %q0, %pos style = half_split
           {rotary_dim = 128, scaling = #transformer.rope_scaling<llama3, factor = 8.0,
              original_max_position = 8192, low_freq_factor = 1.0, high_freq_factor = 4.0>,
            theta = 5.0e+05}
           : (tensor<?x32x128xbf16>, tensor<?xi32>) -> tensor<?x32x128xbf16>
    %k = transformer.rotary %k0, %pos cos_sin(%cos, %sin) style = half_split {rotary_dim = 96}
           : (tensor<?x32x96xf16>, tensor<?xi64>, tensor<131072x48xf32>, tensor<131072x48xf32>)
             -> tensor<?x32x96xf16>
    ```
  }];
  let arguments = (ins
    Transformer_HeadsTensor:$input,
    Transformer_IndexVector:$positions,
    Optional<Transformer_FloatMatrix>:$cos_cache,
    Optional<Transformer_FloatMatrix>:$sin_cache,
    Transformer_RotaryStyleAttr:$style,
    Transformer_PositiveI64Attr:$rotary_dim,
    OptionalAttr<F64Attr>:$theta,
    OptionalAttr<Transformer_RopeScalingAttr>:$scaling
  );
  let results = (outs Transformer_HeadsTensor:$result);
  let assemblyFormat = [{
    $input `,` $positions (`cos_sin` `(` $cos_cache^ `,` $sin_cache `)`)?
    `style` `=` `` $style attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// qkv_rotary
//===----------------------------------------------------------------------===//

def Transformer_QkvRotaryOp : Transformer_Op<"qkv_rotary",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "splits a fused QKV projection into heads and rotates q and k";
  let description = [{
    `qkv` is a fused QKV projection `[tokens, (num_heads + 2 * num_kv_heads)
    * head_dim]`, columns q then k then v. The op cuts it into q `[tokens,
    num_heads, head_dim]`, k and v `[tokens, num_kv_heads, head_dim]`, and
    rotates q and k exactly as `transformer.rotary` does with the same
    `positions`, `style`, `rotary_dim`, `theta`, `scaling` or `cos_sin`
    tables; v passes through. It is `transformer.split` + per-head views +
    two `transformer.rotary` in one op, which `accel-fuse-qkv-rotary` makes
    after partitioning, so that the plan writer can emit one step that also
    writes k and v into the KV cache (docs/plan-format.md).

    ```mlir
    %q, %k, %v = transformer.qkv_rotary %qkv, %pos style = half_split
                   {head_dim = 128, num_heads = 32, num_kv_heads = 8,
                    rotary_dim = 128, theta = 5.0e+05}
                   : (tensor<?x6144xbf16>, tensor<?xi32>)
                     -> (tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>)
    ```
  }];
  let arguments = (ins
    Transformer_HiddenTensor:$qkv,
    Transformer_IndexVector:$positions,
    Optional<Transformer_FloatMatrix>:$cos_cache,
    Optional<Transformer_FloatMatrix>:$sin_cache,
    Transformer_PositiveI64Attr:$num_heads,
    Transformer_PositiveI64Attr:$num_kv_heads,
    Transformer_PositiveI64Attr:$head_dim,
    Transformer_RotaryStyleAttr:$style,
    Transformer_PositiveI64Attr:$rotary_dim,
    OptionalAttr<F64Attr>:$theta,
    OptionalAttr<Transformer_RopeScalingAttr>:$scaling
  );
  let results = (outs
    Transformer_HeadsTensor:$q,
    Transformer_HeadsTensor:$k,
    Transformer_HeadsTensor:$v
  );
  let assemblyFormat = [{
    $qkv `,` $positions (`cos_sin` `(` $cos_cache^ `,` $sin_cache `)`)?
    `style` `=` `` $style attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

def Transformer_AttentionOp : Transformer_Op<"attention", [
    AllTypesMatch<["q", "result"]>, AllTypesMatch<["k", "v"]>]> {
  let summary = "paged multi-head attention over the KV cache";
  let description = [{
    For one layer of a ragged batch: writes this step's `k` and `v`
    (`[tokens, num_kv_heads, head_dim]`, after rotary) into layer `layer` of
    the paged `cache`, at the slots the step metadata `batch` gives each
    token, then computes for every token of every sequence
    `softmax(q k^T * scale (+ mask)) v` over that sequence's whole context
    (cached and new keys). `q` and the result are `[tokens, num_heads,
    head_dim]`. Prefill chunks and decode tokens mix freely in one batch.

    - GQA/MQA: `num_heads` is a multiple of `num_kv_heads`; query head `h`
      reads kv head `h / (num_heads / num_kv_heads)`.
    - `causal`: a token sees keys at positions up to its own.
    - `sliding_window = W`: a token at position `p` sees keys at positions in
      `(p - W, p]` (Mistral, Phi3, Gemma 2's local layers).
    - `softcap = c`: scores become `c * tanh(scores / c)` before the softmax
      (Gemma 2's `attn_logit_softcapping`).
    - A quantised cache (f8E4M3FN, f8E5M2, i8) needs `k_scale` and
      `v_scale` (one per layer) or `k_head_scales` and `v_head_scales` (one
      per KV head, calibrated): stored = value / scale. In a function
      partitioned for N tensor-parallel ranks (`accel.tp_size = N`) the
      lists hold N x `num_kv_heads` entries, rank r's at
      `[r * num_kv_heads, (r + 1) * num_kv_heads)`. A float cache has q's
      element type.

    The op declares a read and a write effect on `cache`: attention ops keep
    their order and are never removed. `num_heads`, `num_kv_heads` and
    `head_dim` repeat what the types say, and must agree with them and with
    the cache.

    ```mlir
    %o = transformer.attention %q, %k, %v, %cache[0], %batch
           {causal, head_dim = 128, num_heads = 32, num_kv_heads = 8,
            scale = 0.088388347648318441, sliding_window = 4096}
           : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>,
             !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>
    ```
  }];
  let arguments = (ins
    Transformer_HeadsTensor:$q,
    Transformer_HeadsTensor:$k,
    Transformer_HeadsTensor:$v,
    Arg<Transformer_KVCacheType, "the paged KV cache, written and read",
        [MemRead, MemWrite]>:$cache,
    Transformer_BatchType:$batch,
    Transformer_NonNegativeI64Attr:$layer,
    Transformer_PositiveI64Attr:$num_heads,
    Transformer_PositiveI64Attr:$num_kv_heads,
    Transformer_PositiveI64Attr:$head_dim,
    F64Attr:$scale,
    UnitAttr:$causal,
    OptionalAttr<Transformer_PositiveI64Attr>:$sliding_window,
    OptionalAttr<F64Attr>:$softcap,
    OptionalAttr<F64Attr>:$k_scale,
    OptionalAttr<F64Attr>:$v_scale,
    OptionalAttr<DenseF64ArrayAttr>:$k_head_scales,
    OptionalAttr<DenseF64ArrayAttr>:$v_head_scales
  );
  let results = (outs Transformer_HeadsTensor:$result);
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $cache `[` $layer `]` `,` $batch attr-dict
    `:` type($q) `,` type($k) `,` qualified(type($cache))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// activation
//===----------------------------------------------------------------------===//

def Transformer_ActivationOp : Transformer_Op<"activation",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "a pointwise activation function";
  let description = [{
    Applies `kind` to every element (GPT-2's MLP: linear, `gelu_tanh`,
    linear).

    ```mlir
    %a = transformer.activation %h kind = gelu_tanh : tensor<?x3072xf32>
    ```
  }];
  let arguments = (ins
    Transformer_AnyFloatTensor:$input,
    Transformer_ActivationKindAttr:$kind
  );
  let results = (outs Transformer_AnyFloatTensor:$result);
  let assemblyFormat = "$input `kind` `=` `` $kind attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// gated_act
//===----------------------------------------------------------------------===//

def Transformer_GatedActOp : Transformer_Op<"gated_act", [Pure]> {
  let summary = "act(gate) * up on a fused gate/up projection";
  let description = [{
    `input` is `[tokens, 2 * intermediate]`, the output of a fused gate/up
    `transformer.linear`: columns `[0, intermediate)` are the gate, the rest
    the up projection. `result = kind(gate) * up`, `[tokens, intermediate]`
    (vLLM's `SiluAndMul`, `GeluAndMul`). The fusion pass rewrites a
    `transformer.gated_mlp` into linear, gated_act, linear so that the
    precision and partition passes see plain linears.

    ```mlir
    %a = transformer.gated_act %gu kind = silu : tensor<?x22016xbf16> -> tensor<?x11008xbf16>
    ```
  }];
  let arguments = (ins
    Transformer_HiddenTensor:$input,
    Transformer_ActivationKindAttr:$kind
  );
  let results = (outs Transformer_HiddenTensor:$result);
  let assemblyFormat = [{
    $input `kind` `=` `` $kind attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// gated_mlp
//===----------------------------------------------------------------------===//

def Transformer_GatedMlpOp : Transformer_Op<"gated_mlp",
    [Pure, AttrSizedOperandSegments, AllTypesMatch<["x", "result"]>]> {
  let summary = "the gated feed-forward block: down(act(gate(x)) * up(x))";
  let description = [{
    The MLP of Llama, Qwen2, Mistral, Phi3 and Gemma, as raising recognises
    it. The gate and up projections come either separately, `gate(%g)
    up(%u)` each `[intermediate, hidden]`, or fused, `gate_up(%gu)`
    `[2 * intermediate, hidden]` with the gate rows first (Phi3's
    `gate_up_proj`). `down` is `[hidden, intermediate]`. Weights are float,
    with x's element type; quantised MLPs are linears and `transformer.gated_act`.

    ```mlir
    %m = transformer.gated_mlp %x gate(%g) up(%u) down(%d) kind = silu
           : (tensor<?x4096xbf16>, tensor<11008x4096xbf16>, tensor<11008x4096xbf16>,
              tensor<4096x11008xbf16>) -> tensor<?x4096xbf16>
    %p = transformer.gated_mlp %x gate_up(%gu) down(%d) kind = silu
           : (tensor<?x3072xbf16>, tensor<16384x3072xbf16>, tensor<3072x8192xbf16>)
             -> tensor<?x3072xbf16>
    ```
  }];
  let arguments = (ins
    Transformer_HiddenTensor:$x,
    Optional<Transformer_FloatMatrix>:$gate_up,
    Optional<Transformer_FloatMatrix>:$gate,
    Optional<Transformer_FloatMatrix>:$up,
    Transformer_FloatMatrix:$down,
    Transformer_ActivationKindAttr:$kind
  );
  let results = (outs Transformer_HiddenTensor:$result);
  let assemblyFormat = [{
    $x (`gate_up` `(` $gate_up^ `)`)? (`gate` `(` $gate^ `)`)? (`up` `(` $up^ `)`)?
    `down` `(` $down `)` `kind` `=` `` $kind attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// moe
//===----------------------------------------------------------------------===//

/// `[experts, rows, cols]`: one float matrix per expert, stacked.
// Float, or i8 / f8E4M3FN with per-expert, per-row scales (transformer.moe).
def Transformer_ExpertWeightElement
    : AnyTypeOf<[F32, F16, BF16, F8E4M3FN, I8], "f32, f16, bf16, f8E4M3FN or i8">;
def Transformer_ExpertWeights : TensorRankOf<[Transformer_ExpertWeightElement], [3]>;

def Transformer_MoeOp : Transformer_Op<"moe",
    [Pure, AttrSizedOperandSegments, AllTypesMatch<["x", "result"]>]> {
  let summary = "a sparse mixture of gated-MLP experts with top-k routing";
  let description = [{
    The sparse MoE block of Mixtral, Qwen3-MoE and Qwen2-MoE (transformers'
    `MixtralSparseMoeBlock`, `Qwen3MoeSparseMoeBlock`,
    `Qwen2MoeSparseMoeBlock`). For every token `t` of `x` `[tokens, hidden]`,
    with E = `num_experts` and k = `top_k`:

    1. router logits `l[e] = x[t] · router[e] (+ router_bias[e])`, `router`
       `[E, hidden]`, computed in f32;
    2. `p = softmax(l)` over all E experts, and S = the k experts of largest
       `p` (equivalently of largest `l`); ties go to the lower expert index;
    3. weights `w[e] = p[e] / Σ_{j∈S} p[j]` with `routing = renormalize`
       (Mixtral; Qwen2-/Qwen3-MoE with `norm_topk_prob = true`; the same as
       a softmax over the k selected logits), or `w[e] = p[e]` with
       `routing = softmax` (`norm_topk_prob = false`);
    4. `result[t] = Σ_{e∈S} w[e] · down[e](kind(gate[e](x[t])) * up[e](x[t]))`,
       every expert a `transformer.gated_mlp`: `gate_up` `[E, 2I, hidden]`
       (each expert's gate rows first, transformers 5's fused
       `gate_up_proj`) or `gate` and `up` `[E, I, hidden]` (Mixtral's
       `w1`/`w3` stacked), and `down` `[E, hidden, I]` (`w2`);
    5. with a shared expert (`shared_gate_up` `[2S, hidden]`, gate rows
       first, and `shared_down` `[hidden, S]`; Qwen2-MoE's `shared_expert`),
       `result[t] += g · down_s(kind(gate_s(x[t])) * up_s(x[t]))`, where
       `g = sigmoid(x[t] · shared_expert_gate[0])` with `shared_expert_gate`
       `[1, hidden]` (Qwen2-MoE's `shared_expert_gate`), else `g = 1`.

    Routing is computed in f32 whatever x's type (HF's softmax is f32); the
    weights multiply each expert's f32 output, and the sum is rounded to x's
    type once (HF rounds the weights to the activation dtype first: a
    difference of one rounding for bf16/f16 activations). Weights are float,
    with x's element type or, under f32 x, f16/bf16 (`-precision`).

    The experts' weights may instead be quantised per output channel of each
    expert (`accel-quantize-weights`, weight-only): i8 or f8E4M3FN with an f32
    scale per expert and row, `gate_up_scale` `[E, 2I]`, `gate_scale` and
    `up_scale` `[E, I]`, `down_scale` `[E, hidden]`; expert e's row r is
    `w[e, r, :] * scale[e, r]`. The activations stay float. The router and
    the shared expert stay float.

    torch.topk on the CPU compares values only and does not specify which
    of two equal logits wins; accel always takes the lower expert index.

    ```mlir
    %y = transformer.moe %x router(%r) gate_up(%gu) down(%d)
           kind = silu routing = renormalize {num_experts = 8 : i64, top_k = 2 : i64}
           : (tensor<?x4096xbf16>, tensor<8x4096xbf16>, tensor<8x28672x4096xbf16>,
              tensor<8x4096x14336xbf16>) -> tensor<?x4096xbf16>
    %q = transformer.moe %x router(%r) gate_up(%gu) down(%d)
           shared_gate_up(%sgu) shared_down(%sd) shared_expert_gate(%sg)
           kind = silu routing = softmax {num_experts = 60 : i64, top_k = 4 : i64}
           : (tensor<?x2048xbf16>, tensor<60x2048xbf16>, tensor<60x2816x2048xbf16>,
              tensor<60x2048x1408xbf16>, tensor<11264x2048xbf16>, tensor<2048x5632xbf16>,
              tensor<1x2048xbf16>) -> tensor<?x2048xbf16>
    ```
  }];
  let arguments = (ins
    Transformer_HiddenTensor:$x,
    Transformer_FloatMatrix:$router,
    Optional<Transformer_FloatVector>:$router_bias,
    Optional<Transformer_ExpertWeights>:$gate_up,
    Optional<Transformer_ExpertWeights>:$gate,
    Optional<Transformer_ExpertWeights>:$up,
    Transformer_ExpertWeights:$down,
    Optional<Transformer_FloatMatrix>:$shared_gate_up,
    Optional<Transformer_FloatMatrix>:$shared_down,
    Optional<Transformer_FloatMatrix>:$shared_expert_gate,
    Optional<Transformer_FloatMatrix>:$gate_up_scale,
    Optional<Transformer_FloatMatrix>:$gate_scale,
    Optional<Transformer_FloatMatrix>:$up_scale,
    Optional<Transformer_FloatMatrix>:$down_scale,
    Transformer_ActivationKindAttr:$kind,
    Transformer_MoeRoutingAttr:$routing,
    Transformer_PositiveI64Attr:$num_experts,
    Transformer_PositiveI64Attr:$top_k
  );
  let results = (outs Transformer_HiddenTensor:$result);
  let assemblyFormat = [{
    $x `router` `(` $router `)` (`router_bias` `(` $router_bias^ `)`)?
    (`gate_up` `(` $gate_up^ `)`)? (`gate` `(` $gate^ `)`)? (`up` `(` $up^ `)`)?
    `down` `(` $down `)`
    (`shared_gate_up` `(` $shared_gate_up^ `)`)? (`shared_down` `(` $shared_down^ `)`)?
    (`shared_expert_gate` `(` $shared_expert_gate^ `)`)?
    (`gate_up_scale` `(` $gate_up_scale^ `)`)? (`gate_scale` `(` $gate_scale^ `)`)?
    (`up_scale` `(` $up_scale^ `)`)? (`down_scale` `(` $down_scale^ `)`)?
    `kind` `=` `` $kind `routing` `=` `` $routing attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// residual_add
//===----------------------------------------------------------------------===//

def Transformer_ResidualAddOp : Transformer_Op<"residual_add",
    [Pure, AllTypesMatch<["residual", "branch", "result"]>]> {
  let summary = "adds a branch to the residual stream";
  let description = [{
    `result = residual + branch`, both `[tokens, hidden]` of one type. The
    fusion pass folds it into the following norm (`transformer.add_rms_norm`)
    or into the epilogue of the GEMM that produces `branch`.

    ```mlir
    %h1 = transformer.residual_add %h, %attn : tensor<?x4096xbf16>
    ```
  }];
  let arguments = (ins
    Transformer_HiddenTensor:$residual,
    Transformer_HiddenTensor:$branch
  );
  let results = (outs Transformer_HiddenTensor:$result);
  let assemblyFormat = [{
    $residual `,` $branch attr-dict `:` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// split_heads
//===----------------------------------------------------------------------===//

def Transformer_SplitHeadsOp : Transformer_Op<"split_heads", [Pure]> {
  let summary = "views [tokens, heads * head_dim] as [tokens, heads, head_dim]";
  let description = [{
    A reshape that moves no data. The result type gives heads and head_dim.
    `split_heads(merge_heads(x))` folds to `x`.

    ```mlir
    %q = transformer.split_heads %q0 : tensor<?x4096xbf16> -> tensor<?x32x128xbf16>
    ```
  }];
  let arguments = (ins Transformer_HiddenTensor:$input);
  let results = (outs Transformer_HeadsTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// merge_heads
//===----------------------------------------------------------------------===//

def Transformer_MergeHeadsOp : Transformer_Op<"merge_heads", [Pure]> {
  let summary = "views [tokens, heads, head_dim] as [tokens, heads * head_dim]";
  let description = [{
    The inverse of `transformer.split_heads`; `merge_heads(split_heads(x))`
    folds to `x`.

    ```mlir
    %o = transformer.merge_heads %attn : tensor<?x32x128xbf16> -> tensor<?x4096xbf16>
    ```
  }];
  let arguments = (ins Transformer_HeadsTensor:$input);
  let results = (outs Transformer_HiddenTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// flatten_tokens
//===----------------------------------------------------------------------===//

def Transformer_FlattenTokensOp : Transformer_Op<"flatten_tokens", [Pure]> {
  let summary = "views batch-major [d0, ..., dn, features] as token-major [tokens, features]";
  let description = [{
    The bridge from an ONNX export's batch-major activations to token-major
    ones, which raising puts in front of every token-wise op it creates. It
    moves no data (a row-major reshape). Two forms, told apart by the
    result's rank:

    * **features** (result rank 2): every dimension but the last is merged
      into the token dimension: `[B, S, H] -> [B * S, H]`. The element type
      and the last dimension are kept.
    * **ids** (result rank 1): every dimension is merged, for token ids that
      have no feature dimension: `[B, S] -> [B * S]` (the ids of
      `transformer.embedding`).

    `transformer.unflatten_tokens` is the inverse. Folds: a flatten whose
    input already has the result type is the input; a flatten of
    `unflatten_tokens(%r like %x)` of `%r`'s type is `%r`, which removes the
    unflatten/flatten pairs between consecutive raised ops.

    ```mlir
    %t = transformer.flatten_tokens %x : tensor<?x?x64xf32> -> tensor<?x64xf32>
    %i = transformer.flatten_tokens %ids : tensor<?x?xi64> -> tensor<?xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// unflatten_tokens
//===----------------------------------------------------------------------===//

def Transformer_UnflattenTokensOp : Transformer_Op<"unflatten_tokens", [Pure]> {
  let summary = "views token-major [tokens, features] with the leading dims of `like`";
  let description = [{
    The inverse of `transformer.flatten_tokens`: `input` is `[tokens,
    features]` (or `[tokens]`), and the result has the leading (token)
    dimensions of `like` followed by `input`'s feature dimension. Which of
    `like`'s dimensions are token dimensions follows from the ranks:

    * **features**: result rank = rank of `like`; the token dimensions are
      all of `like`'s but the last: `[T, N] like [B, S, H] -> [B, S, N]`.
    * **ids**: result rank = rank of `like` + rank of `input` - 1; every
      dimension of `like` is a token dimension: `[T, H] like [B, S]`
      (ids) `-> [B, S, H]`.

    The product of the token dimensions is `input`'s token count; the
    element type is `input`'s. `like` is only read for its shape. Raising
    writes one after every token-wise op it creates, so that the rest of the
    ONNX graph keeps its batch-major types; `unflatten_tokens(flatten_tokens(%x)
    like %x)` folds to `%x`.

    ```mlir
    %y = transformer.unflatten_tokens %r like %x
           : tensor<?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x64xf32>
    %h = transformer.unflatten_tokens %e like %ids
           : tensor<?x64xf32>, tensor<?x?xi64> -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins
    TensorRankOf<[AnyType], [1, 2]>:$input,
    AnyRankedTensor:$like
  );
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `like` $like attr-dict `:` type($input) `,` type($like) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// The number of leading result dimensions that are token dimensions
    /// (taken from `like`).
    int64_t getNumTokenDims() {
      return getResult().getType().getRank() - getInput().getType().getRank() + 1;
    }
  }];
}

//===----------------------------------------------------------------------===//
// split
//===----------------------------------------------------------------------===//

def Transformer_SplitOp : Transformer_Op<"split", [Pure]> {
  let summary = "splits the feature columns of a token-major tensor";
  let description = [{
    Cuts `[tokens, f]` into consecutive column blocks `[tokens, f_i]`, with
    `sum(f_i) = f`; the result types give the sizes. It separates q, k and v
    after a fused QKV linear (Phi3's `qkv_proj`, and what the QKV fusion
    pass produces), and keeps the real logits of a padded vocabulary after
    their all_gather (accel-partition; the padding columns, the second
    result, are not read).

    ```mlir
    %q, %k, %v = transformer.split %qkv
                   : tensor<?x6144xbf16> -> tensor<?x4096xbf16>, tensor<?x1024xbf16>, tensor<?x1024xbf16>
    ```
  }];
  let arguments = (ins Transformer_HiddenTensor:$input);
  let results = (outs Variadic<Transformer_HiddenTensor>:$results);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// all_reduce
//===----------------------------------------------------------------------===//

def Transformer_AllReduceOp : Transformer_Op<"all_reduce",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "reduces a tensor across the ranks of a tensor-parallel group";
  let description = [{
    Every one of the `group_size` ranks contributes `input` and receives the
    elementwise `kind` reduction (NCCL allReduce). The partition pass inserts
    it after row-parallel linears (attention output, MLP down projection).

    ```mlir
    %r = transformer.all_reduce %partial kind = sum {group_size = 4} : tensor<?x4096xbf16>
    ```
  }];
  let arguments = (ins
    Transformer_AnyFloatTensor:$input,
    Transformer_ReduceKindAttr:$kind,
    Transformer_PositiveI64Attr:$group_size
  );
  let results = (outs Transformer_AnyFloatTensor:$result);
  let assemblyFormat = "$input `kind` `=` `` $kind attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// all_gather
//===----------------------------------------------------------------------===//

def Transformer_AllGatherOp : Transformer_Op<"all_gather", [Pure]> {
  let summary = "concatenates a tensor from every rank of a tensor-parallel group";
  let description = [{
    The `group_size` ranks' `input`s are concatenated in rank order along
    `axis` (NCCL allGather): `result.dim(axis) = group_size *
    input.dim(axis)`, other dimensions equal. The partition pass gathers
    vocabulary-parallel logits with `axis = 1`.

    ```mlir
    %l = transformer.all_gather %part {axis = 1, group_size = 4}
           : tensor<?x32064xf32> -> tensor<?x128256xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[Transformer_GatherElement]>:$input,
    Transformer_NonNegativeI64Attr:$axis,
    Transformer_PositiveI64Attr:$group_size
  );
  let results = (outs
    RankedTensorOf<[Transformer_GatherElement]>:$result
  );
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// pp_transfer
//===----------------------------------------------------------------------===//

def Transformer_PpTransferOp : Transformer_Op<"pp_transfer",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "hands a value from one pipeline stage to a later one";
  let description = [{
    Pipeline parallelism (`accelc -pp=M`, accel-pipeline-stages): the ops of
    a pipelined function carry the stage that runs them (`accel.pp_stage`);
    a value that stage `from_stage` computes and a later stage `to_stage`
    reads crosses through this op, which stage `from_stage` sends and stage
    `to_stage` receives (each tensor-parallel rank to the rank of the same
    index). On one rank it is the identity.

    ```mlir
    %h1 = transformer.pp_transfer %h {from_stage = 0, to_stage = 1,
                                      accel.pp_stage = 1} : tensor<?x4096xbf16>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    Transformer_NonNegativeI64Attr:$from_stage,
    Transformer_PositiveI64Attr:$to_stage
  );
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// quantize
//===----------------------------------------------------------------------===//

def Transformer_QuantizeOp : Transformer_Op<"quantize", [Pure]> {
  let summary = "quantises a float tensor to f8E4M3FN, f8E5M2, i8 or i4";
  let description = [{
    `result = saturate(round(input / scale) + zero_point)`, ONNX
    QuantizeLinear's semantics. The scale's shape says the granularity:

    | scale | granularity | attributes |
    |---|---|---|
    | `[]` | per tensor | none |
    | `[input.dim(axis)]` | per axis | `axis` |
    | rank of input, `dim(axis)` = ceil(input.dim(axis) / block_size), others equal | blocked | `axis`, `block_size` |

    `axis` is non-negative (raising normalises ONNX's negative axes).
    `zero_point` (integer results only) has the scale's shape and the
    result's element type.

    ```mlir
    %q = transformer.quantize %x, %s : (tensor<?x4096xbf16>, tensor<f32>) -> tensor<?x4096xf8E4M3FN>
    %w = transformer.quantize %x, %s zero_point(%zp) {axis = 1, block_size = 32}
           : (tensor<4096x4096xf32>, tensor<4096x128xf32>, tensor<4096x128xi4>) -> tensor<4096x4096xi4>
    ```
  }];
  let arguments = (ins
    Transformer_AnyFloatTensor:$input,
    Transformer_AnyFloatTensor:$scale,
    Optional<RankedTensorOf<[Transformer_IntQuantElement]>>:$zero_point,
    OptionalAttr<Transformer_NonNegativeI64Attr>:$axis,
    OptionalAttr<Transformer_PositiveI64Attr>:$block_size
  );
  let results = (outs RankedTensorOf<[Transformer_QuantElement]>:$result);
  let assemblyFormat = [{
    $input `,` $scale (`zero_point` `(` $zero_point^ `)`)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// dynamic_quantize
//===----------------------------------------------------------------------===//

def Transformer_DynamicQuantizeOp : Transformer_Op<"dynamic_quantize", [Pure]> {
  let summary = "quantises activations with a scale computed at run time";
  let description = [{
    Symmetric quantisation of `[tokens, features]` activations to
    f8E4M3FN, f8E5M2 or i8 whose scale the op computes itself:
    `scale = amax / max_representable`, over each token when `scale` is
    `[tokens]` (per-token) or over the whole tensor when it is `[]`
    (per-tensor); `result = saturate(round(input / scale))`. Both results
    feed a W8A8 `transformer.linear` (`input_scale`) (vLLM's
    `scaled_fp8_quant` / `scaled_int8_quant` without a given scale).

    ```mlir
    %q, %s = transformer.dynamic_quantize %x : tensor<?x4096xbf16> -> tensor<?x4096xf8E4M3FN>, tensor<?xf32>
    %y = transformer.linear %q, %w weight_scale(%ws) input_scale(%s) granularity = per_channel
           : (tensor<?x4096xf8E4M3FN>, tensor<11008x4096xf8E4M3FN>, tensor<11008xf32>, tensor<?xf32>)
             -> tensor<?x11008xbf16>
    ```
  }];
  let arguments = (ins Transformer_HiddenTensor:$input);
  let results = (outs
    TensorRankOf<[Transformer_ActQuantElement], [2]>:$result,
    TensorRankOf<[F32], [0, 1]>:$scale
  );
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result) `,` type($scale)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// dequantize
//===----------------------------------------------------------------------===//

def Transformer_DequantizeOp : Transformer_Op<"dequantize", [Pure]> {
  let summary = "dequantises an f8E4M3FN, f8E5M2, i8 or i4 tensor to float";
  let description = [{
    `result = (input - zero_point) * scale`, ONNX DequantizeLinear's
    semantics; scale, zero point, `axis` and `block_size` follow the rules of
    `transformer.quantize`. Raising maps a DequantizeLinear of a weight that
    feeds a MatMul onto `transformer.linear`'s scales instead.

    ```mlir
    %x = transformer.dequantize %q, %s {axis = 0}
           : (tensor<11008x4096xi8>, tensor<11008xf32>) -> tensor<11008x4096xbf16>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[Transformer_QuantElement]>:$input,
    Transformer_AnyFloatTensor:$scale,
    Optional<RankedTensorOf<[Transformer_IntQuantElement]>>:$zero_point,
    OptionalAttr<Transformer_NonNegativeI64Attr>:$axis,
    OptionalAttr<Transformer_PositiveI64Attr>:$block_size
  );
  let results = (outs Transformer_AnyFloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale (`zero_point` `(` $zero_point^ `)`)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // ACCEL_TRANSFORMER_OPS
