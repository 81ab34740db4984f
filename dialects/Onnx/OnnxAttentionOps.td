//===- OnnxAttentionOps.td - fused attention and rotary ----*- tablegen -*-===//
//
// The opset-23 Attention and RotaryEmbedding, and onnxruntime's
// ms_GroupQueryAttention and ms_RotaryEmbedding.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_ONNX_ATTENTION_OPS
#define ACCEL_ONNX_ATTENTION_OPS

include "OnnxDialect.td"

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def Onnx_AttentionOp : Onnx_Op<"Attention", [AttrSizedOperandSegments,
                                             AttrSizedResultSegments]> {
  let summary = "scaled dot-product attention, MHA / GQA / MQA (opset 23)";
  let description = [{
    `Q`, `K`, `V` are all 4-D `[batch, heads, seq, head_size]` or all 3-D
    `[batch, seq, heads * head_size]`; 3-D inputs need `q_num_heads` and
    `kv_num_heads`. The query heads are a multiple of the key/value heads.
    `attn_mask` is boolean (true attends) or additive of `Q`'s element type.
    `past_key` / `past_value` come together, and so do `present_key` /
    `present_value`. `is_causal = 1` masks with bottom-right alignment.
    `nonpad_kv_seqlen` is the opset-24 input.

    ```mlir
    %y, %pk, %pv = onnx.Attention %q, %k, %v past_key(%past_k) past_value(%past_v) {is_causal = 1 : i64}
        : (tensor<1x32x?x128xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>,
           tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>) -> tensor<1x32x?x128xf16>
          present_key(tensor<1x8x?x128xf16>) present_value(tensor<1x8x?x128xf16>)
    ```
  }];
  let arguments = (ins AnyTensor:$Q, AnyTensor:$K, AnyTensor:$V,
                       Optional<AnyTensor>:$attn_mask,
                       Optional<AnyTensor>:$past_key,
                       Optional<AnyTensor>:$past_value,
                       Optional<AnyTensor>:$nonpad_kv_seqlen,
                       DefaultValuedAttr<I64Attr, "0">:$is_causal,
                       OptionalAttr<I64Attr>:$kv_num_heads,
                       OptionalAttr<I64Attr>:$q_num_heads,
                       DefaultValuedAttr<I64Attr, "0">:$qk_matmul_output_mode,
                       OptionalAttr<F32Attr>:$scale,
                       DefaultValuedAttr<F32Attr, "0.0">:$softcap,
                       OptionalAttr<I64Attr>:$softmax_precision);
  let results = (outs AnyTensor:$Y, Optional<AnyTensor>:$present_key,
                      Optional<AnyTensor>:$present_value,
                      Optional<AnyTensor>:$qk_matmul_output);
  let assemblyFormat = [{
    $Q `,` $K `,` $V (`attn_mask` `(` $attn_mask^ `)`)?
    (`past_key` `(` $past_key^ `)`)? (`past_value` `(` $past_value^ `)`)?
    (`nonpad_kv_seqlen` `(` $nonpad_kv_seqlen^ `)`)?
    attr-dict `:` functional-type(operands, $Y)
    (`present_key` `(` type($present_key)^ `)`)?
    (`present_value` `(` type($present_value)^ `)`)?
    (`qk_matmul_output` `(` type($qk_matmul_output)^ `)`)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// RotaryEmbedding
//===----------------------------------------------------------------------===//

def Onnx_RotaryEmbeddingOp : Onnx_Op<"RotaryEmbedding"> {
  let summary = "rotary position embedding (opset 23)";
  let description = [{
    `X` is `[batch, heads, seq, head_size]`, or `[batch, seq, hidden]` with
    `num_heads`. With `position_ids` (`[batch, seq]`) the caches are
    `[max_position, rotary_dim / 2]` tables; without, they are already
    gathered, `[batch, seq, rotary_dim / 2]`. `rotary_embedding_dim = 0`
    rotates the whole head.

    ```mlir
    %y = onnx.RotaryEmbedding %x, %cos, %sin position_ids(%pos)
        : (tensor<1x32x?x128xf16>, tensor<4096x64xf16>, tensor<4096x64xf16>, tensor<1x?xi64>) -> tensor<1x32x?x128xf16>
    ```
  }];
  let arguments = (ins AnyTensor:$X, AnyTensor:$cos_cache, AnyTensor:$sin_cache,
                       Optional<AnyTensor>:$position_ids,
                       DefaultValuedAttr<I64Attr, "0">:$interleaved,
                       OptionalAttr<I64Attr>:$num_heads,
                       DefaultValuedAttr<I64Attr, "0">:$rotary_embedding_dim);
  let results = (outs AnyTensor:$Y);
  let assemblyFormat = [{
    $X `,` $cos_cache `,` $sin_cache (`position_ids` `(` $position_ids^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ms_GroupQueryAttention
//===----------------------------------------------------------------------===//

def Onnx_MsGroupQueryAttentionOp
    : Onnx_Op<"ms_GroupQueryAttention", [AttrSizedOperandSegments]> {
  let summary = "onnxruntime's causal grouped-query attention with a KV cache";
  let description = [{
    `query` is `[batch, seq, num_heads * head_size]`, or the packed QKV
    `[batch, seq, (num_heads + 2 * kv_num_heads) * head_size]` when `key` and
    `value` are absent. The caches are `[batch, kv_num_heads, cache_len,
    head_size]`. `seqlens_k` (1-D i32, total length - 1 per sequence) and the
    scalar i32 `total_sequence_length` are required; `do_rotary = 1` needs
    `cos_cache` and `sin_cache`. `present_key` and `present_value` are always
    produced; `output_qk` is optional.

    ```mlir
    %o, %pk, %pv = onnx.ms_GroupQueryAttention %qkv past_key(%past_k) past_value(%past_v)
        seqlens_k(%seqlens) total_sequence_length(%total) cos_cache(%cos) sin_cache(%sin)
        {do_rotary = 1 : i64, kv_num_heads = 8 : i64, num_heads = 32 : i64}
        : (tensor<1x?x6144xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>, tensor<1xi32>,
           tensor<i32>, tensor<4096x64xf16>, tensor<4096x64xf16>)
        -> (tensor<1x?x4096xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>)
    ```
  }];
  let arguments = (ins AnyTensor:$query, Optional<AnyTensor>:$key,
                       Optional<AnyTensor>:$value,
                       Optional<AnyTensor>:$past_key,
                       Optional<AnyTensor>:$past_value,
                       AnyTensor:$seqlens_k, AnyTensor:$total_sequence_length,
                       Optional<AnyTensor>:$cos_cache,
                       Optional<AnyTensor>:$sin_cache,
                       Optional<AnyTensor>:$position_ids,
                       Optional<AnyTensor>:$attention_bias,
                       Optional<AnyTensor>:$head_sink,
                       Optional<AnyTensor>:$k_scale,
                       Optional<AnyTensor>:$v_scale,
                       I64Attr:$num_heads, I64Attr:$kv_num_heads,
                       OptionalAttr<F32Attr>:$scale,
                       DefaultValuedAttr<F32Attr, "0.0">:$softcap,
                       DefaultValuedAttr<I64Attr, "-1">:$local_window_size,
                       DefaultValuedAttr<I64Attr, "0">:$do_rotary,
                       DefaultValuedAttr<I64Attr, "0">:$rotary_interleaved,
                       OptionalAttr<I64Attr>:$smooth_softmax,
                       DefaultValuedAttr<I64Attr, "0">:$qk_output,
                       OptionalAttr<StrAttr>:$k_quant_type,
                       OptionalAttr<StrAttr>:$v_quant_type,
                       OptionalAttr<I64Attr>:$kv_cache_bit_width);
  let results = (outs AnyTensor:$output, AnyTensor:$present_key,
                      AnyTensor:$present_value, Optional<AnyTensor>:$output_qk);
  let assemblyFormat = [{
    $query (`key` `(` $key^ `)`)? (`value` `(` $value^ `)`)?
    (`past_key` `(` $past_key^ `)`)? (`past_value` `(` $past_value^ `)`)?
    `seqlens_k` `(` $seqlens_k `)`
    `total_sequence_length` `(` $total_sequence_length `)`
    (`cos_cache` `(` $cos_cache^ `)`)? (`sin_cache` `(` $sin_cache^ `)`)?
    (`position_ids` `(` $position_ids^ `)`)?
    (`attention_bias` `(` $attention_bias^ `)`)?
    (`head_sink` `(` $head_sink^ `)`)?
    (`k_scale` `(` $k_scale^ `)`)? (`v_scale` `(` $v_scale^ `)`)?
    attr-dict `:` `(` type(operands) `)` `->`
    `(` type($output) `,` type($present_key) `,` type($present_value) `)`
    (`output_qk` `(` type($output_qk)^ `)`)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ms_RotaryEmbedding
//===----------------------------------------------------------------------===//

def Onnx_MsRotaryEmbeddingOp : Onnx_Op<"ms_RotaryEmbedding"> {
  let summary = "onnxruntime's rotary position embedding";
  let description = [{
    Note the input order, unlike the ONNX op: `input`, `position_ids`,
    `cos_cache`, `sin_cache`. `input` is `[batch, seq, hidden]` or
    `[batch, heads, seq, head_size]`; the caches are `[max_position,
    rotary_dim / 2]`; `position_ids` is `[batch, seq]`, or `[1]` (an offset).
    `rotary_embedding_dim > 0` needs `num_heads`.

    ```mlir
    %y = onnx.ms_RotaryEmbedding %x, %pos, %cos, %sin {num_heads = 32 : i64}
        : (tensor<1x?x4096xf16>, tensor<1x?xi64>, tensor<4096x64xf16>, tensor<4096x64xf16>) -> tensor<1x?x4096xf16>
    ```
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$position_ids,
                       AnyTensor:$cos_cache, AnyTensor:$sin_cache,
                       DefaultValuedAttr<F32Attr, "1.0">:$scale,
                       DefaultValuedAttr<I64Attr, "0">:$interleaved,
                       DefaultValuedAttr<I64Attr, "0">:$rotary_embedding_dim,
                       DefaultValuedAttr<I64Attr, "0">:$num_heads,
                       DefaultValuedAttr<I64Attr, "0">:$is_packed_batching);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

#endif // ACCEL_ONNX_ATTENTION_OPS
