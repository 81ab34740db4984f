// RUN: accel-opt %s -split-input-file -verify-diagnostics
//
// One case per verifier rule of the transformer dialect, with the exact
// diagnostic it gives.

//===----------------------------------------------------------------------===//
// !transformer.kv_cache
//===----------------------------------------------------------------------===//

// expected-error @+1 {{kv_cache layers must be positive, got 0}}
func.func @kv_cache_no_layers(%c: !transformer.kv_cache<layers = 0, kv_heads = 8, head_dim = 128, block_size = 16, bf16>)

// -----

// expected-error @+1 {{kv_cache kv_heads must be positive, got 0}}
func.func @kv_cache_no_heads(%c: !transformer.kv_cache<layers = 1, kv_heads = 0, head_dim = 128, block_size = 16, bf16>)

// -----

// expected-error @+1 {{kv_cache head_dim must be positive, got -1}}
func.func @kv_cache_negative_head_dim(%c: !transformer.kv_cache<layers = 1, kv_heads = 8, head_dim = -1, block_size = 16, bf16>)

// -----

// expected-error @+1 {{kv_cache block_size must be a positive power of two, got 12}}
func.func @kv_cache_block_not_pow2(%c: !transformer.kv_cache<layers = 1, kv_heads = 8, head_dim = 128, block_size = 12, bf16>)

// -----

// An i4 KV cache is not supported (weights only).
// expected-error @+1 {{kv_cache element type must be f32, f16, bf16, f8E4M3FN, f8E5M2 or i8, got 'i4'}}
func.func @kv_cache_i4(%c: !transformer.kv_cache<layers = 1, kv_heads = 8, head_dim = 128, block_size = 16, i4>)

// -----

//===----------------------------------------------------------------------===//
// #transformer.rope_scaling
//===----------------------------------------------------------------------===//

func.func @rope_factor_zero(%q: tensor<?x8x64xf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{rope_scaling factor must be positive}}
  %0 = transformer.rotary %q, %p style = half_split {rotary_dim = 64, theta = 1.0e+04, scaling = #transformer.rope_scaling<linear, factor = 0.0>}
         : (tensor<?x8x64xf16>, tensor<?xi32>) -> tensor<?x8x64xf16>
  return
}

// -----

func.func @rope_original_max_position_negative(%q: tensor<?x8x64xf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{rope_scaling original_max_position must be positive}}
  %0 = transformer.rotary %q, %p style = half_split {rotary_dim = 64, theta = 1.0e+04, scaling = #transformer.rope_scaling<dynamic_ntk, factor = 2.0, original_max_position = -4>}
         : (tensor<?x8x64xf16>, tensor<?xi32>) -> tensor<?x8x64xf16>
  return
}

// -----

func.func @rope_linear_with_original(%q: tensor<?x8x64xf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{linear rope_scaling takes no original_max_position}}
  %0 = transformer.rotary %q, %p style = half_split {rotary_dim = 64, theta = 1.0e+04, scaling = #transformer.rope_scaling<linear, factor = 2.0, original_max_position = 4096>}
         : (tensor<?x8x64xf16>, tensor<?xi32>) -> tensor<?x8x64xf16>
  return
}

// -----

func.func @rope_yarn_without_original(%q: tensor<?x8x64xf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{yarn rope_scaling needs original_max_position}}
  %0 = transformer.rotary %q, %p style = half_split {rotary_dim = 64, theta = 1.0e+04, scaling = #transformer.rope_scaling<yarn, factor = 4.0>}
         : (tensor<?x8x64xf16>, tensor<?xi32>) -> tensor<?x8x64xf16>
  return
}

// -----

func.func @rope_freq_factors_on_yarn(%q: tensor<?x8x64xf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{low_freq_factor and high_freq_factor only apply to llama3 rope_scaling}}
  %0 = transformer.rotary %q, %p style = half_split {rotary_dim = 64, theta = 1.0e+04, scaling = #transformer.rope_scaling<yarn, factor = 4.0, original_max_position = 4096, low_freq_factor = 1.0>}
         : (tensor<?x8x64xf16>, tensor<?xi32>) -> tensor<?x8x64xf16>
  return
}

// -----

func.func @rope_llama3_incomplete(%q: tensor<?x8x64xf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{llama3 rope_scaling needs low_freq_factor and high_freq_factor}}
  %0 = transformer.rotary %q, %p style = half_split {rotary_dim = 64, theta = 5.0e+05, scaling = #transformer.rope_scaling<llama3, factor = 8.0, original_max_position = 8192, low_freq_factor = 1.0>}
         : (tensor<?x8x64xf16>, tensor<?xi32>) -> tensor<?x8x64xf16>
  return
}

// -----

func.func @rope_llama3_factor_order(%q: tensor<?x8x64xf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{llama3 rope_scaling needs 0 < low_freq_factor < high_freq_factor}}
  %0 = transformer.rotary %q, %p style = half_split {rotary_dim = 64, theta = 5.0e+05, scaling = #transformer.rope_scaling<llama3, factor = 8.0, original_max_position = 8192, low_freq_factor = 4.0, high_freq_factor = 1.0>}
         : (tensor<?x8x64xf16>, tensor<?xi32>) -> tensor<?x8x64xf16>
  return
}

// -----

func.func @rope_beta_on_llama3(%q: tensor<?x8x64xf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{beta_fast and beta_slow only apply to yarn rope_scaling}}
  %0 = transformer.rotary %q, %p style = half_split {rotary_dim = 64, theta = 5.0e+05, scaling = #transformer.rope_scaling<llama3, factor = 8.0, original_max_position = 8192, low_freq_factor = 1.0, high_freq_factor = 4.0, beta_fast = 32.0>}
         : (tensor<?x8x64xf16>, tensor<?xi32>) -> tensor<?x8x64xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// positions
//===----------------------------------------------------------------------===//

func.func @positions_float(%b: !transformer.batch) {
  // expected-error @+1 {{result #0 must be 1D tensor of i32 or i64 values, but got 'tensor<?xf32>'}}
  %0 = transformer.positions %b : tensor<?xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// embedding
//===----------------------------------------------------------------------===//

func.func @embedding_hidden(%t: tensor<32000x4096xbf16>, %ids: tensor<?xi32>) {
  // expected-error @+1 {{result hidden size 4000 does not match the table's embedding size 4096}}
  %0 = transformer.embedding %t[%ids] : (tensor<32000x4096xbf16>, tensor<?xi32>) -> tensor<?x4000xbf16>
  return
}

// -----

func.func @embedding_tokens(%t: tensor<32000x4096xbf16>, %ids: tensor<4xi32>) {
  // expected-error @+1 {{result has 5 tokens but ids has 4}}
  %0 = transformer.embedding %t[%ids] : (tensor<32000x4096xbf16>, tensor<4xi32>) -> tensor<5x4096xbf16>
  return
}

// -----

func.func @embedding_element(%t: tensor<32000x4096xbf16>, %ids: tensor<?xi32>) {
  // expected-error @+1 {{result element type 'f16' does not match the table element type 'bf16'}}
  %0 = transformer.embedding %t[%ids] : (tensor<32000x4096xbf16>, tensor<?xi32>) -> tensor<?x4096xf16>
  return
}

// -----

func.func @embedding_scale(%t: tensor<32000x4096xbf16>, %ids: tensor<?xi32>) {
  // expected-error @+1 {{scale must be positive}}
  %0 = transformer.embedding %t[%ids] {scale = -1.0} : (tensor<32000x4096xbf16>, tensor<?xi32>) -> tensor<?x4096xbf16>
  return
}

// -----

// A padded vocabulary is no larger than its table (times the ranks).
func.func @embedding_vocab_size(%t: tensor<25129x768xf32>, %ids: tensor<?xi32>) {
  // expected-error @+1 {{vocab_size 50259 is more than the 50258 rows of the table times vocab_shards}}
  %0 = transformer.embedding %t[%ids] {vocab_shards = 2, vocab_size = 50259} : (tensor<25129x768xf32>, tensor<?xi32>) -> tensor<?x768xf32>
  return
}

// -----

func.func @embedding_float_ids(%t: tensor<32000x4096xbf16>, %ids: tensor<?xf32>) {
  // expected-error @+1 {{operand #1 must be 1D tensor of i32 or i64 values, but got 'tensor<?xf32>'}}
  %0 = transformer.embedding %t[%ids] : (tensor<32000x4096xbf16>, tensor<?xf32>) -> tensor<?x4096xbf16>
  return
}

// -----

func.func @embedding_quantized_table(%t: tensor<32000x4096xi8>, %ids: tensor<?xi32>) {
  // expected-error @+1 {{operand #0 must be 2D tensor of f32, f16 or bf16 values, but got 'tensor<32000x4096xi8>'}}
  %0 = transformer.embedding %t[%ids] : (tensor<32000x4096xi8>, tensor<?xi32>) -> tensor<?x4096xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// logits
//===----------------------------------------------------------------------===//

func.func @logits_hidden(%h: tensor<?x2048xbf16>, %w: tensor<32000x4096xbf16>) {
  // expected-error @+1 {{lm_head must be [vocab, hidden = 2048], got 'tensor<32000x4096xbf16>'}}
  %0 = transformer.logits %h, %w : (tensor<?x2048xbf16>, tensor<32000x4096xbf16>) -> tensor<?x32000xf32>
  return
}

// -----

func.func @logits_element(%h: tensor<?x4096xbf16>, %w: tensor<32000x4096xf16>) {
  // expected-error @+1 {{lm_head element type 'f16' does not match the hidden element type 'bf16'}}
  %0 = transformer.logits %h, %w : (tensor<?x4096xbf16>, tensor<32000x4096xf16>) -> tensor<?x32000xf32>
  return
}

// -----

func.func @logits_vocab(%h: tensor<?x4096xbf16>, %w: tensor<32000x4096xbf16>) {
  // expected-error @+1 {{result vocab size 32001 does not match the lm_head vocab size 32000}}
  %0 = transformer.logits %h, %w : (tensor<?x4096xbf16>, tensor<32000x4096xbf16>) -> tensor<?x32001xf32>
  return
}

// -----

func.func @logits_rows(%h: tensor<8x4096xbf16>, %w: tensor<32000x4096xbf16>) {
  // Without select_last every token keeps its row.
  // expected-error @+1 {{result has 2 rows but hidden has 8 tokens; only select_last changes the row count}}
  %0 = transformer.logits %h, %w : (tensor<8x4096xbf16>, tensor<32000x4096xbf16>) -> tensor<2x32000xf32>
  return
}

// -----

func.func @logits_bias(%h: tensor<?x4096xbf16>, %w: tensor<32000x4096xbf16>, %b: tensor<4096xbf16>) {
  // expected-error @+1 {{bias has 4096 elements but the vocab size is 32000}}
  %0 = transformer.logits %h, %w bias(%b) : (tensor<?x4096xbf16>, tensor<32000x4096xbf16>, tensor<4096xbf16>) -> tensor<?x32000xf32>
  return
}

// -----

func.func @logits_softcap(%h: tensor<?x4096xbf16>, %w: tensor<32000x4096xbf16>, %b: !transformer.batch) {
  // expected-error @+1 {{softcap must be positive}}
  %0 = transformer.logits %h, %w select_last(%b) {softcap = 0.0} : (tensor<?x4096xbf16>, tensor<32000x4096xbf16>, !transformer.batch) -> tensor<?x32000xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// rms_norm, add_rms_norm, layer_norm
//===----------------------------------------------------------------------===//

func.func @rms_norm_weight(%x: tensor<?x4096xbf16>, %w: tensor<4000xbf16>) {
  // expected-error @+1 {{weight has 4000 elements but the normalised dimension of x has 4096}}
  %0 = transformer.rms_norm %x, %w {epsilon = 1.0e-05} : tensor<?x4096xbf16>, tensor<4000xbf16>
  return
}

// -----

func.func @rms_norm_per_head_weight(%x: tensor<?x16x128xbf16>, %w: tensor<2048xbf16>) {
  // A per-head norm normalises head_dim, not heads * head_dim.
  // expected-error @+1 {{weight has 2048 elements but the normalised dimension of x has 128}}
  %0 = transformer.rms_norm %x, %w {epsilon = 1.0e-05} : tensor<?x16x128xbf16>, tensor<2048xbf16>
  return
}

// -----

func.func @rms_norm_epsilon(%x: tensor<?x4096xbf16>, %w: tensor<4096xbf16>) {
  // expected-error @+1 {{epsilon must be positive}}
  %0 = transformer.rms_norm %x, %w {epsilon = 0.0} : tensor<?x4096xbf16>, tensor<4096xbf16>
  return
}

// -----

func.func @rms_norm_int(%x: tensor<?x4096xi8>, %w: tensor<4096xbf16>) {
  // expected-error @+1 {{operand #0 must be 2D/3D tensor of f32, f16 or bf16 values, but got 'tensor<?x4096xi8>'}}
  %0 = transformer.rms_norm %x, %w {epsilon = 1.0e-05} : tensor<?x4096xi8>, tensor<4096xbf16>
  return
}

// -----

func.func @rms_norm_rank4(%x: tensor<?x2x2x64xbf16>, %w: tensor<64xbf16>) {
  // expected-error @+1 {{operand #0 must be 2D/3D tensor of f32, f16 or bf16 values, but got 'tensor<?x2x2x64xbf16>'}}
  %0 = transformer.rms_norm %x, %w {epsilon = 1.0e-05} : tensor<?x2x2x64xbf16>, tensor<64xbf16>
  return
}

// -----

func.func @add_rms_norm_weight(%x: tensor<?x4096xbf16>, %r: tensor<?x4096xbf16>, %w: tensor<2048xbf16>) {
  // expected-error @+1 {{weight has 2048 elements but the normalised dimension of x has 4096}}
  %0, %1 = transformer.add_rms_norm %x, %r, %w {epsilon = 1.0e-05} : tensor<?x4096xbf16>, tensor<2048xbf16>
  return
}

// -----

func.func @add_rms_norm_epsilon(%x: tensor<?x4096xbf16>, %r: tensor<?x4096xbf16>, %w: tensor<4096xbf16>) {
  // expected-error @+1 {{epsilon must be positive}}
  %0, %1 = transformer.add_rms_norm %x, %r, %w {epsilon = -1.0e-05} : tensor<?x4096xbf16>, tensor<4096xbf16>
  return
}

// -----

func.func @add_rms_norm_residual_type(%x: tensor<?x4096xbf16>, %r: tensor<?x4096xf16>, %w: tensor<4096xbf16>) {
  // expected-error @+1 {{failed to verify that all of {x, residual, result, residual_out} have same type}}
  %0:2 = "transformer.add_rms_norm"(%x, %r, %w) {epsilon = 1.0e-05}
           : (tensor<?x4096xbf16>, tensor<?x4096xf16>, tensor<4096xbf16>) -> (tensor<?x4096xbf16>, tensor<?x4096xbf16>)
  return
}

// -----

func.func @layer_norm_weight(%x: tensor<?x768xf32>, %w: tensor<769xf32>) {
  // expected-error @+1 {{weight has 769 elements but the normalised dimension of x has 768}}
  %0 = transformer.layer_norm %x, %w {epsilon = 1.0e-05} : (tensor<?x768xf32>, tensor<769xf32>) -> tensor<?x768xf32>
  return
}

// -----

func.func @layer_norm_bias(%x: tensor<?x768xf32>, %w: tensor<768xf32>, %b: tensor<767xf32>) {
  // expected-error @+1 {{bias has 767 elements but the normalised dimension of x has 768}}
  %0 = transformer.layer_norm %x, %w bias(%b) {epsilon = 1.0e-05} : (tensor<?x768xf32>, tensor<768xf32>, tensor<767xf32>) -> tensor<?x768xf32>
  return
}

// -----

func.func @layer_norm_epsilon(%x: tensor<?x768xf32>, %w: tensor<768xf32>) {
  // expected-error @+1 {{epsilon must be positive}}
  %0 = transformer.layer_norm %x, %w {epsilon = 0.0} : (tensor<?x768xf32>, tensor<768xf32>) -> tensor<?x768xf32>
  return
}

// -----

func.func @layer_norm_result_type(%x: tensor<?x768xf32>, %w: tensor<768xf32>) {
  // expected-error @+1 {{failed to verify that all of {x, result} have same type}}
  %0 = transformer.layer_norm %x, %w {epsilon = 1.0e-05} : (tensor<?x768xf32>, tensor<768xf32>) -> tensor<?x768xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// linear: shapes
//===----------------------------------------------------------------------===//

func.func @linear_in_features(%x: tensor<?x4000xbf16>, %w: tensor<11008x4096xbf16>) {
  // A [in, out] (ONNX MatMul) weight must be transposed by raising.
  // expected-error @+1 {{x has 4000 in_features but the weight [out_features, in_features] has 4096}}
  %0 = transformer.linear %x, %w : (tensor<?x4000xbf16>, tensor<11008x4096xbf16>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_out_features(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xbf16>) {
  // expected-error @+1 {{result has 4096 out_features but the weight [out_features, in_features] has 11008}}
  %0 = transformer.linear %x, %w : (tensor<?x4096xbf16>, tensor<11008x4096xbf16>) -> tensor<?x4096xbf16>
  return
}

// -----

func.func @linear_tokens(%x: tensor<3x4096xbf16>, %w: tensor<11008x4096xbf16>) {
  // expected-error @+1 {{result has 4 tokens but x has 3}}
  %0 = transformer.linear %x, %w : (tensor<3x4096xbf16>, tensor<11008x4096xbf16>) -> tensor<4x11008xbf16>
  return
}

// -----

func.func @linear_bias(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xbf16>, %b: tensor<4096xbf16>) {
  // expected-error @+1 {{bias has 4096 elements but out_features is 11008}}
  %0 = transformer.linear %x, %w bias(%b) : (tensor<?x4096xbf16>, tensor<11008x4096xbf16>, tensor<4096xbf16>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_float_mixed(%x: tensor<?x4096xf16>, %w: tensor<11008x4096xbf16>) {
  // expected-error @+1 {{x element type 'f16' does not match the float weight element type 'bf16'}}
  %0 = transformer.linear %x, %w : (tensor<?x4096xf16>, tensor<11008x4096xbf16>) -> tensor<?x11008xf16>
  return
}

// -----

func.func @linear_float_weight_scaled(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xbf16>, %s: tensor<f32>) {
  // expected-error @+1 {{a float weight of 'bf16' takes no weight_scale, zero_point, granularity or group_size}}
  %0 = transformer.linear %x, %w weight_scale(%s) granularity = per_tensor : (tensor<?x4096xbf16>, tensor<11008x4096xbf16>, tensor<f32>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_result_int(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xbf16>) {
  // expected-error @+1 {{result #0 must be 2D tensor of f32, f16 or bf16 values, but got 'tensor<?x11008xi8>'}}
  %0 = transformer.linear %x, %w : (tensor<?x4096xbf16>, tensor<11008x4096xbf16>) -> tensor<?x11008xi8>
  return
}

// -----

func.func @linear_x_i4(%x: tensor<?x4096xi4>, %w: tensor<11008x4096xi4>) {
  // expected-error @+1 {{operand #0 must be 2D tensor of f32, f16, bf16, f8E4M3FN, f8E5M2 or i8 values, but got 'tensor<?x4096xi4>'}}
  %0 = transformer.linear %x, %w : (tensor<?x4096xi4>, tensor<11008x4096xi4>) -> tensor<?x11008xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// linear: quantised weights
//===----------------------------------------------------------------------===//

func.func @linear_missing_weight_scale(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xi8>) {
  // expected-error @+1 {{a quantized weight of 'i8' needs weight_scale}}
  %0 = transformer.linear %x, %w : (tensor<?x4096xbf16>, tensor<11008x4096xi8>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_missing_granularity(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xi8>, %s: tensor<11008xf32>) {
  // expected-error @+1 {{weight_scale needs a granularity}}
  %0 = transformer.linear %x, %w weight_scale(%s) : (tensor<?x4096xbf16>, tensor<11008x4096xi8>, tensor<11008xf32>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_group_size_per_channel(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xi8>, %s: tensor<11008xf32>) {
  // expected-error @+1 {{group_size only applies to per_group granularity}}
  %0 = transformer.linear %x, %w weight_scale(%s) granularity = per_channel {group_size = 128}
         : (tensor<?x4096xbf16>, tensor<11008x4096xi8>, tensor<11008xf32>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_per_group_no_size(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xi4>, %s: tensor<11008x32xbf16>) {
  // expected-error @+1 {{per_group granularity needs group_size}}
  %0 = transformer.linear %x, %w weight_scale(%s) granularity = per_group
         : (tensor<?x4096xbf16>, tensor<11008x4096xi4>, tensor<11008x32xbf16>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_group_size_divides(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xi4>, %s: tensor<11008x41xbf16>) {
  // expected-error @+1 {{group_size 100 does not divide in_features 4096}}
  %0 = transformer.linear %x, %w weight_scale(%s) granularity = per_group {group_size = 100}
         : (tensor<?x4096xbf16>, tensor<11008x4096xi4>, tensor<11008x41xbf16>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_group_size_zero(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xi4>, %s: tensor<11008x41xbf16>) {
  // expected-error @+1 {{attribute 'group_size' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = transformer.linear %x, %w weight_scale(%s) granularity = per_group {group_size = 0}
         : (tensor<?x4096xbf16>, tensor<11008x4096xi4>, tensor<11008x41xbf16>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_per_tensor_shape(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xf8E4M3FN>, %s: tensor<1xf32>) {
  // expected-error @+1 {{per_tensor weight_scale must be [] = [], got 'tensor<1xf32>'}}
  %0 = transformer.linear %x, %w weight_scale(%s) granularity = per_tensor
         : (tensor<?x4096xbf16>, tensor<11008x4096xf8E4M3FN>, tensor<1xf32>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_per_channel_shape(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xi8>, %s: tensor<4096xf32>) {
  // expected-error @+1 {{per_channel weight_scale must be [out_features] = [11008], got 'tensor<4096xf32>'}}
  %0 = transformer.linear %x, %w weight_scale(%s) granularity = per_channel
         : (tensor<?x4096xbf16>, tensor<11008x4096xi8>, tensor<4096xf32>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_per_group_shape(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xi4>, %s: tensor<11008x64xbf16>) {
  // expected-error @+1 {{per_group weight_scale must be [out_features, in_features / group_size] = [11008, 32], got 'tensor<11008x64xbf16>'}}
  %0 = transformer.linear %x, %w weight_scale(%s) granularity = per_group {group_size = 128}
         : (tensor<?x4096xbf16>, tensor<11008x4096xi4>, tensor<11008x64xbf16>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_zero_point_element(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xi4>, %s: tensor<11008x32xbf16>, %z: tensor<11008x32xi8>) {
  // expected-error @+1 {{zero_point element type 'i8' does not match the weight element type 'i4'}}
  %0 = transformer.linear %x, %w weight_scale(%s) zero_point(%z) granularity = per_group {group_size = 128}
         : (tensor<?x4096xbf16>, tensor<11008x4096xi4>, tensor<11008x32xbf16>, tensor<11008x32xi8>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_zero_point_fp8(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xf8E4M3FN>, %s: tensor<11008xf32>, %z: tensor<11008xi8>) {
  // fp8 is symmetric: no zero point.
  // expected-error @+1 {{zero_point element type 'i8' does not match the weight element type 'f8E4M3FN'}}
  %0 = transformer.linear %x, %w weight_scale(%s) zero_point(%z) granularity = per_channel
         : (tensor<?x4096xbf16>, tensor<11008x4096xf8E4M3FN>, tensor<11008xf32>, tensor<11008xi8>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_zero_point_shape(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xi4>, %s: tensor<11008x32xbf16>, %z: tensor<11008xi4>) {
  // expected-error @+1 {{zero_point shape [11008] does not match the weight_scale shape [11008, 32]}}
  %0 = transformer.linear %x, %w weight_scale(%s) zero_point(%z) granularity = per_group {group_size = 128}
         : (tensor<?x4096xbf16>, tensor<11008x4096xi4>, tensor<11008x32xbf16>, tensor<11008xi4>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_scale_int(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xi8>, %s: tensor<11008xi32>) {
  // expected-error @+1 {{operand #2 must be 0D/1D/2D tensor of f32, f16 or bf16 values, but got 'tensor<11008xi32>'}}
  %0 = transformer.linear %x, %w weight_scale(%s) granularity = per_channel
         : (tensor<?x4096xbf16>, tensor<11008x4096xi8>, tensor<11008xi32>) -> tensor<?x11008xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// linear: quantised activations
//===----------------------------------------------------------------------===//

func.func @linear_quantized_x_float_weight(%x: tensor<?x4096xf8E4M3FN>, %w: tensor<11008x4096xbf16>, %s: tensor<f32>) {
  // expected-error @+1 {{a quantized x of 'f8E4M3FN' needs a weight of the same kind (fp8 or i8), got 'bf16'}}
  %0 = transformer.linear %x, %w input_scale(%s) : (tensor<?x4096xf8E4M3FN>, tensor<11008x4096xbf16>, tensor<f32>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_i8_x_i4_weight(%x: tensor<?x4096xi8>, %w: tensor<11008x4096xi4>, %s: tensor<f32>) {
  // expected-error @+1 {{a quantized x of 'i8' needs a weight of the same kind (fp8 or i8), got 'i4'}}
  %0 = transformer.linear %x, %w weight_scale(%s) input_scale(%s) granularity = per_tensor
         : (tensor<?x4096xi8>, tensor<11008x4096xi4>, tensor<f32>, tensor<f32>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_missing_input_scale(%x: tensor<?x4096xi8>, %w: tensor<11008x4096xi8>, %s: tensor<f32>) {
  // expected-error @+1 {{a quantized x of 'i8' needs input_scale}}
  %0 = transformer.linear %x, %w weight_scale(%s) granularity = per_tensor
         : (tensor<?x4096xi8>, tensor<11008x4096xi8>, tensor<f32>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_input_scale_shape(%x: tensor<8x4096xi8>, %w: tensor<11008x4096xi8>, %s: tensor<f32>, %xs: tensor<4xf32>) {
  // expected-error @+1 {{input_scale must be [] (per-tensor) or [tokens] (per-token), got 'tensor<4xf32>'}}
  %0 = transformer.linear %x, %w weight_scale(%s) input_scale(%xs) granularity = per_tensor
         : (tensor<8x4096xi8>, tensor<11008x4096xi8>, tensor<f32>, tensor<4xf32>) -> tensor<8x11008xbf16>
  return
}

// -----

func.func @linear_input_scale_float_x(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xi8>, %s: tensor<f32>) {
  // expected-error @+1 {{input_scale only applies to a quantized x, got 'bf16'}}
  %0 = transformer.linear %x, %w weight_scale(%s) input_scale(%s) granularity = per_tensor
         : (tensor<?x4096xbf16>, tensor<11008x4096xi8>, tensor<f32>, tensor<f32>) -> tensor<?x11008xbf16>
  return
}

// -----

func.func @linear_w8a8_activation(%x: tensor<?x4096xf8E4M3FN>, %w: tensor<11008x4096xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{an activation epilogue is not supported on a linear with quantized activations (input_scale)}}
  %0 = transformer.linear %x, %w weight_scale(%s) input_scale(%s) granularity = per_tensor activation = silu
         : (tensor<?x4096xf8E4M3FN>, tensor<11008x4096xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<?x11008xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// rotary
//===----------------------------------------------------------------------===//

func.func @rotary_odd(%q: tensor<?x32x128xbf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{rotary_dim 63 must be even}}
  %0 = transformer.rotary %q, %p style = half_split {rotary_dim = 63, theta = 1.0e+04} : (tensor<?x32x128xbf16>, tensor<?xi32>) -> tensor<?x32x128xbf16>
  return
}

// -----

func.func @rotary_too_wide(%q: tensor<?x32x128xbf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{rotary_dim 160 exceeds the head_dim 128 of the input}}
  %0 = transformer.rotary %q, %p style = half_split {rotary_dim = 160, theta = 1.0e+04} : (tensor<?x32x128xbf16>, tensor<?xi32>) -> tensor<?x32x128xbf16>
  return
}

// -----

func.func @rotary_zero(%q: tensor<?x32x128xbf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{attribute 'rotary_dim' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = transformer.rotary %q, %p style = half_split {rotary_dim = 0, theta = 1.0e+04} : (tensor<?x32x128xbf16>, tensor<?xi32>) -> tensor<?x32x128xbf16>
  return
}

// -----

func.func @rotary_positions(%q: tensor<4x32x128xbf16>, %p: tensor<5xi32>) {
  // expected-error @+1 {{positions has 5 tokens but the input has 4}}
  %0 = transformer.rotary %q, %p style = half_split {rotary_dim = 128, theta = 1.0e+04} : (tensor<4x32x128xbf16>, tensor<5xi32>) -> tensor<4x32x128xbf16>
  return
}

// -----

func.func @rotary_flat(%q: tensor<?x4096xbf16>, %p: tensor<?xi32>) {
  // Rotary works per head: split_heads first.
  // expected-error @+1 {{operand #0 must be 3D tensor of f32, f16 or bf16 values, but got 'tensor<?x4096xbf16>'}}
  %0 = transformer.rotary %q, %p style = half_split {rotary_dim = 128, theta = 1.0e+04} : (tensor<?x4096xbf16>, tensor<?xi32>) -> tensor<?x4096xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// qkv_rotary
//===----------------------------------------------------------------------===//

func.func @qkv_rotary_columns(%qkv: tensor<?x400xbf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{qkv must have (num_heads + 2 * num_kv_heads) * head_dim = (4 + 2 * 2) * 48 = 384 columns, got 400}}
  %q, %k, %v = transformer.qkv_rotary %qkv, %p style = half_split {head_dim = 48, num_heads = 4, num_kv_heads = 2, rotary_dim = 48, theta = 1.0e+04} : (tensor<?x400xbf16>, tensor<?xi32>) -> (tensor<?x4x48xbf16>, tensor<?x2x48xbf16>, tensor<?x2x48xbf16>)
  return
}

// -----

func.func @qkv_rotary_q_shape(%qkv: tensor<?x384xbf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{result q must be [tokens = ?, num_heads = 4, head_dim = 48], got 'tensor<?x2x48xbf16>'}}
  %q, %k, %v = transformer.qkv_rotary %qkv, %p style = half_split {head_dim = 48, num_heads = 4, num_kv_heads = 2, rotary_dim = 48, theta = 1.0e+04} : (tensor<?x384xbf16>, tensor<?xi32>) -> (tensor<?x2x48xbf16>, tensor<?x2x48xbf16>, tensor<?x2x48xbf16>)
  return
}

// -----

func.func @qkv_rotary_v_shape(%qkv: tensor<?x384xbf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{result v must be [tokens = ?, num_kv_heads = 2, head_dim = 48], got 'tensor<?x4x24xbf16>'}}
  %q, %k, %v = transformer.qkv_rotary %qkv, %p style = half_split {head_dim = 48, num_heads = 4, num_kv_heads = 2, rotary_dim = 48, theta = 1.0e+04} : (tensor<?x384xbf16>, tensor<?xi32>) -> (tensor<?x4x48xbf16>, tensor<?x2x48xbf16>, tensor<?x4x24xbf16>)
  return
}

// -----

func.func @qkv_rotary_element_type(%qkv: tensor<?x384xbf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{result k element type 'f32' does not match the qkv element type 'bf16'}}
  %q, %k, %v = transformer.qkv_rotary %qkv, %p style = half_split {head_dim = 48, num_heads = 4, num_kv_heads = 2, rotary_dim = 48, theta = 1.0e+04} : (tensor<?x384xbf16>, tensor<?xi32>) -> (tensor<?x4x48xbf16>, tensor<?x2x48xf32>, tensor<?x2x48xbf16>)
  return
}

// -----

func.func @qkv_rotary_odd(%qkv: tensor<?x384xbf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{rotary_dim 47 must be even}}
  %q, %k, %v = transformer.qkv_rotary %qkv, %p style = half_split {head_dim = 48, num_heads = 4, num_kv_heads = 2, rotary_dim = 47, theta = 1.0e+04} : (tensor<?x384xbf16>, tensor<?xi32>) -> (tensor<?x4x48xbf16>, tensor<?x2x48xbf16>, tensor<?x2x48xbf16>)
  return
}

// -----

func.func @qkv_rotary_too_wide(%qkv: tensor<?x384xbf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{rotary_dim 64 exceeds the head_dim 48 of the qkv}}
  %q, %k, %v = transformer.qkv_rotary %qkv, %p style = half_split {head_dim = 48, num_heads = 4, num_kv_heads = 2, rotary_dim = 64, theta = 1.0e+04} : (tensor<?x384xbf16>, tensor<?xi32>) -> (tensor<?x4x48xbf16>, tensor<?x2x48xbf16>, tensor<?x2x48xbf16>)
  return
}

// -----

func.func @qkv_rotary_no_theta(%qkv: tensor<?x384xbf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{needs theta or cos_sin tables}}
  %q, %k, %v = transformer.qkv_rotary %qkv, %p style = half_split {head_dim = 48, num_heads = 4, num_kv_heads = 2, rotary_dim = 48} : (tensor<?x384xbf16>, tensor<?xi32>) -> (tensor<?x4x48xbf16>, tensor<?x2x48xbf16>, tensor<?x2x48xbf16>)
  return
}

// -----

func.func @qkv_rotary_theta_and_tables(%qkv: tensor<?x384xbf16>, %p: tensor<?xi32>, %cos: tensor<4096x24xf32>, %sin: tensor<4096x24xf32>) {
  // expected-error @+1 {{takes theta or cos_sin tables, not both}}
  %q, %k, %v = transformer.qkv_rotary %qkv, %p cos_sin(%cos, %sin) style = half_split {head_dim = 48, num_heads = 4, num_kv_heads = 2, rotary_dim = 48, theta = 1.0e+04} : (tensor<?x384xbf16>, tensor<?xi32>, tensor<4096x24xf32>, tensor<4096x24xf32>) -> (tensor<?x4x48xbf16>, tensor<?x2x48xbf16>, tensor<?x2x48xbf16>)
  return
}

// -----

func.func @qkv_rotary_table_width(%qkv: tensor<?x384xbf16>, %p: tensor<?xi32>, %cos: tensor<4096x32xf32>, %sin: tensor<4096x32xf32>) {
  // expected-error @+1 {{cos_sin tables must be [max_position, rotary_dim / 2 = 24], got 'tensor<4096x32xf32>'}}
  %q, %k, %v = transformer.qkv_rotary %qkv, %p cos_sin(%cos, %sin) style = half_split {head_dim = 48, num_heads = 4, num_kv_heads = 2, rotary_dim = 48} : (tensor<?x384xbf16>, tensor<?xi32>, tensor<4096x32xf32>, tensor<4096x32xf32>) -> (tensor<?x4x48xbf16>, tensor<?x2x48xbf16>, tensor<?x2x48xbf16>)
  return
}

// -----

func.func @qkv_rotary_positions(%qkv: tensor<4x384xbf16>, %p: tensor<5xi32>) {
  // expected-error @+1 {{positions has 5 tokens but the qkv has 4}}
  %q, %k, %v = transformer.qkv_rotary %qkv, %p style = half_split {head_dim = 48, num_heads = 4, num_kv_heads = 2, rotary_dim = 48, theta = 1.0e+04} : (tensor<4x384xbf16>, tensor<5xi32>) -> (tensor<4x4x48xbf16>, tensor<4x2x48xbf16>, tensor<4x2x48xbf16>)
  return
}

// -----

func.func @qkv_rotary_one_table(%qkv: tensor<?x384xbf16>, %p: tensor<?xi32>, %c: tensor<4096x24xf32>) {
  // Only the generic form can give one table; a builder could too.
  // expected-error @+1 {{cos_sin needs both the cos and the sin table}}
  %q, %k, %v = "transformer.qkv_rotary"(%qkv, %p, %c)
         <{operandSegmentSizes = array<i32: 1, 1, 1, 0>, head_dim = 48, num_heads = 4, num_kv_heads = 2,
           rotary_dim = 48, style = #transformer<rotary_style half_split>}>
         : (tensor<?x384xbf16>, tensor<?xi32>, tensor<4096x24xf32>)
           -> (tensor<?x4x48xbf16>, tensor<?x2x48xbf16>, tensor<?x2x48xbf16>)
  return
}

// -----

func.func @rotary_one_table(%q: tensor<?x32x128xbf16>, %p: tensor<?xi32>, %c: tensor<4096x64xf32>) {
  // Only the generic form can give one table; a builder could too.
  // expected-error @+1 {{cos_sin needs both the cos and the sin table}}
  %0 = "transformer.rotary"(%q, %p, %c)
         <{operandSegmentSizes = array<i32: 1, 1, 1, 0>, rotary_dim = 128, style = #transformer<rotary_style half_split>}>
         : (tensor<?x32x128xbf16>, tensor<?xi32>, tensor<4096x64xf32>) -> tensor<?x32x128xbf16>
  return
}

// -----

func.func @rotary_theta_and_tables(%q: tensor<?x32x128xbf16>, %p: tensor<?xi32>, %c: tensor<4096x64xf32>) {
  // expected-error @+1 {{takes theta or cos_sin tables, not both}}
  %0 = transformer.rotary %q, %p cos_sin(%c, %c) style = half_split {rotary_dim = 128, theta = 1.0e+04}
         : (tensor<?x32x128xbf16>, tensor<?xi32>, tensor<4096x64xf32>, tensor<4096x64xf32>) -> tensor<?x32x128xbf16>
  return
}

// -----

func.func @rotary_no_frequencies(%q: tensor<?x32x128xbf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{needs theta or cos_sin tables}}
  %0 = transformer.rotary %q, %p style = half_split {rotary_dim = 128} : (tensor<?x32x128xbf16>, tensor<?xi32>) -> tensor<?x32x128xbf16>
  return
}

// -----

func.func @rotary_scaled_tables(%q: tensor<?x32x128xbf16>, %p: tensor<?xi32>, %c: tensor<4096x64xf32>) {
  // expected-error @+1 {{scaling applies to theta, not to cos_sin tables}}
  %0 = transformer.rotary %q, %p cos_sin(%c, %c) style = half_split
         {rotary_dim = 128, scaling = #transformer.rope_scaling<linear, factor = 2.0>}
         : (tensor<?x32x128xbf16>, tensor<?xi32>, tensor<4096x64xf32>, tensor<4096x64xf32>) -> tensor<?x32x128xbf16>
  return
}

// -----

func.func @rotary_theta(%q: tensor<?x32x128xbf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{theta must be positive}}
  %0 = transformer.rotary %q, %p style = half_split {rotary_dim = 128, theta = 0.0} : (tensor<?x32x128xbf16>, tensor<?xi32>) -> tensor<?x32x128xbf16>
  return
}

// -----

func.func @rotary_table_types(%q: tensor<?x32x128xbf16>, %p: tensor<?xi32>, %c: tensor<4096x64xf32>, %s: tensor<4096x64xbf16>) {
  // expected-error @+1 {{cos and sin tables must have the same type, got 'tensor<4096x64xf32>' and 'tensor<4096x64xbf16>'}}
  %0 = transformer.rotary %q, %p cos_sin(%c, %s) style = half_split {rotary_dim = 128}
         : (tensor<?x32x128xbf16>, tensor<?xi32>, tensor<4096x64xf32>, tensor<4096x64xbf16>) -> tensor<?x32x128xbf16>
  return
}

// -----

func.func @rotary_table_width(%q: tensor<?x32x128xbf16>, %p: tensor<?xi32>, %c: tensor<4096x128xf32>) {
  // expected-error @+1 {{cos_sin tables must be [max_position, rotary_dim / 2 = 64], got 'tensor<4096x128xf32>'}}
  %0 = transformer.rotary %q, %p cos_sin(%c, %c) style = half_split {rotary_dim = 128}
         : (tensor<?x32x128xbf16>, tensor<?xi32>, tensor<4096x128xf32>, tensor<4096x128xf32>) -> tensor<?x32x128xbf16>
  return
}

// -----

func.func @rotary_unknown_style(%q: tensor<?x32x128xbf16>, %p: tensor<?xi32>) {
  // expected-error @+2 {{expected one of [interleaved, half_split] for rotary style, got: neox}}
  // expected-error @+1 {{failed to parse Transformer_RotaryStyleAttr parameter 'value'}}
  %0 = transformer.rotary %q, %p style = neox {rotary_dim = 128, theta = 1.0e+04} : (tensor<?x32x128xbf16>, tensor<?xi32>) -> tensor<?x32x128xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

!cache = !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>

func.func @attention_gqa(%q: tensor<?x30x128xbf16>, %k: tensor<?x8x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{num_heads 30 is not a multiple of num_kv_heads 8}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 30, num_kv_heads = 8, head_dim = 128, scale = 0.125}
         : tensor<?x30x128xbf16>, tensor<?x8x128xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>

func.func @attention_q_shape(%q: tensor<?x16x128xbf16>, %k: tensor<?x8x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{q must be [tokens, num_heads = 32, head_dim = 128], got 'tensor<?x16x128xbf16>'}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 32, num_kv_heads = 8, head_dim = 128, scale = 0.125}
         : tensor<?x16x128xbf16>, tensor<?x8x128xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>

func.func @attention_kv_shape(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x64xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{k and v must be [tokens, num_kv_heads = 8, head_dim = 128], got 'tensor<?x8x64xbf16>'}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 32, num_kv_heads = 8, head_dim = 128, scale = 0.125}
         : tensor<?x32x128xbf16>, tensor<?x8x64xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>

func.func @attention_tokens(%q: tensor<4x32x128xbf16>, %k: tensor<5x8x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{q has 4 tokens but k and v have 5}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 32, num_kv_heads = 8, head_dim = 128, scale = 0.125}
         : tensor<4x32x128xbf16>, tensor<5x8x128xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>

func.func @attention_qk_element(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{q element type 'bf16' does not match the k and v element type 'f16'}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 32, num_kv_heads = 8, head_dim = 128, scale = 0.125}
         : tensor<?x32x128xbf16>, tensor<?x8x128xf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>

func.func @attention_kv_types(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xbf16>, %v: tensor<?x8x64xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{failed to verify that all of {k, v} have same type}}
  %0 = "transformer.attention"(%q, %k, %v, %c, %b) {layer = 0, causal, num_heads = 32, num_kv_heads = 8, head_dim = 128, scale = 0.125}
         : (tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x64xbf16>, !cache, !transformer.batch) -> tensor<?x32x128xbf16>
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>

func.func @attention_layer(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{layer 32 is out of range for a kv cache of 32 layers}}
  %0 = transformer.attention %q, %k, %k, %c[32], %b {causal, num_heads = 32, num_kv_heads = 8, head_dim = 128, scale = 0.125}
         : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>

func.func @attention_negative_layer(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{attribute 'layer' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = transformer.attention %q, %k, %k, %c[-1], %b {causal, num_heads = 32, num_kv_heads = 8, head_dim = 128, scale = 0.125}
         : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 4, head_dim = 128, block_size = 16, bf16>

func.func @attention_cache_heads(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{the kv cache has 4 kv_heads but num_kv_heads is 8}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 32, num_kv_heads = 8, head_dim = 128, scale = 0.125}
         : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 64, block_size = 16, bf16>

func.func @attention_cache_head_dim(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{the kv cache has head_dim 64 but head_dim is 128}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 32, num_kv_heads = 8, head_dim = 128, scale = 0.125}
         : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, f16>

func.func @attention_cache_element(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{the kv cache element type 'f16' does not match the q element type 'bf16'}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 32, num_kv_heads = 8, head_dim = 128, scale = 0.125}
         : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, f8E4M3FN>

func.func @attention_fp8_cache_scales(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{a kv cache of 'f8E4M3FN' needs k_scale and v_scale}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 32, num_kv_heads = 8, head_dim = 128, scale = 0.125, k_scale = 1.0}
         : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, i8>

func.func @attention_kv_scale_positive(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{v_scale must be positive}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 32, num_kv_heads = 8, head_dim = 128, scale = 0.125, k_scale = 1.0, v_scale = 0.0}
         : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>

func.func @attention_scales_float_cache(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{kv scales only apply to a quantized kv cache, got 'bf16'}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 32, num_kv_heads = 8, head_dim = 128, scale = 0.125, k_scale = 1.0, v_scale = 1.0}
         : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 2, head_dim = 128, block_size = 16, f8E4M3FN>

func.func @attention_head_scales_count(%q: tensor<?x4x128xbf16>, %k: tensor<?x2x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{v_head_scales has 3 entries for 2 kv heads}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 4, num_kv_heads = 2, head_dim = 128, scale = 0.125, k_head_scales = array<f64: 0.5, 0.25>, v_head_scales = array<f64: 0.5, 0.25, 1.0>}
         : tensor<?x4x128xbf16>, tensor<?x2x128xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 2, head_dim = 128, block_size = 16, f8E4M3FN>

func.func @attention_head_scales_positive(%q: tensor<?x4x128xbf16>, %k: tensor<?x2x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{k_head_scales must be positive and finite, got 0}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 4, num_kv_heads = 2, head_dim = 128, scale = 0.125, k_head_scales = array<f64: 0.5, 0.0>, v_head_scales = array<f64: 0.5, 0.25>}
         : tensor<?x4x128xbf16>, tensor<?x2x128xbf16>, !cache
  return
}

// -----

// In a function partitioned for 2 tensor-parallel ranks the lists hold both
// ranks' KV heads (2 x 2 here), not one rank's.
!cache = !transformer.kv_cache<layers = 32, kv_heads = 2, head_dim = 128, block_size = 16, f8E4M3FN>

func.func @attention_head_scales_tp(%q: tensor<?x4x128xbf16>, %k: tensor<?x2x128xbf16>, %c: !cache, %b: !transformer.batch) attributes {accel.tp_size = 2 : i64} {
  // expected-error @+1 {{k_head_scales has 2 entries for 2 kv heads on each of 2 tensor-parallel ranks}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 4, num_kv_heads = 2, head_dim = 128, scale = 0.125, k_head_scales = array<f64: 0.5, 0.25>, v_head_scales = array<f64: 0.5, 0.25>}
         : tensor<?x4x128xbf16>, tensor<?x2x128xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 2, head_dim = 128, block_size = 16, f8E4M3FN>

func.func @attention_head_scales_mixed(%q: tensor<?x4x128xbf16>, %k: tensor<?x2x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{per-head kv scales need both k_head_scales and v_head_scales, and no k_scale or v_scale}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 4, num_kv_heads = 2, head_dim = 128, scale = 0.125, k_head_scales = array<f64: 0.5, 0.25>, v_scale = 1.0}
         : tensor<?x4x128xbf16>, tensor<?x2x128xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 2, head_dim = 128, block_size = 16, bf16>

func.func @attention_head_scales_float_cache(%q: tensor<?x4x128xbf16>, %k: tensor<?x2x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{kv scales only apply to a quantized kv cache, got 'bf16'}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 4, num_kv_heads = 2, head_dim = 128, scale = 0.125, k_head_scales = array<f64: 0.5, 0.25>, v_head_scales = array<f64: 0.5, 0.25>}
         : tensor<?x4x128xbf16>, tensor<?x2x128xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>

func.func @attention_scale(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{scale must be positive}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 32, num_kv_heads = 8, head_dim = 128, scale = -0.125}
         : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>

func.func @attention_softcap(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{softcap must be positive}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 32, num_kv_heads = 8, head_dim = 128, scale = 0.125, softcap = 0.0}
         : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>

func.func @attention_sliding_window(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{attribute 'sliding_window' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 32, num_kv_heads = 8, head_dim = 128, scale = 0.125, sliding_window = 0}
         : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, !cache
  return
}

// -----

!cache = !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>

func.func @attention_no_kv_heads(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xbf16>, %c: !cache, %b: !transformer.batch) {
  // expected-error @+1 {{attribute 'num_kv_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = transformer.attention %q, %k, %k, %c[0], %b {causal, num_heads = 32, num_kv_heads = 0, head_dim = 128, scale = 0.125}
         : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, !cache
  return
}

// -----

//===----------------------------------------------------------------------===//
// activation, gated_act, gated_mlp, residual_add
//===----------------------------------------------------------------------===//

func.func @activation_type(%x: tensor<?x64xf32>) {
  // expected-error @+1 {{failed to verify that all of {input, result} have same type}}
  %0 = "transformer.activation"(%x) {kind = #transformer<activation_kind silu>} : (tensor<?x64xf32>) -> tensor<?x64xf16>
  return
}

// -----

func.func @activation_int(%x: tensor<?x64xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of f32, f16 or bf16 values, but got 'tensor<?x64xi32>'}}
  %0 = transformer.activation %x kind = relu : tensor<?x64xi32>
  return
}

// -----

func.func @gated_act_odd(%x: tensor<?x11007xbf16>) {
  // expected-error @+1 {{input has 11007 features; gate and up halves need an even number}}
  %0 = transformer.gated_act %x kind = silu : tensor<?x11007xbf16> -> tensor<?x5503xbf16>
  return
}

// -----

func.func @gated_act_half(%x: tensor<?x22016xbf16>) {
  // expected-error @+1 {{result has 22016 features but half the input features is 11008}}
  %0 = transformer.gated_act %x kind = silu : tensor<?x22016xbf16> -> tensor<?x22016xbf16>
  return
}

// -----

func.func @gated_act_tokens(%x: tensor<4x22016xbf16>) {
  // expected-error @+1 {{result has 3 tokens but the input has 4}}
  %0 = transformer.gated_act %x kind = silu : tensor<4x22016xbf16> -> tensor<3x11008xbf16>
  return
}

// -----

func.func @gated_act_element(%x: tensor<?x22016xbf16>) {
  // expected-error @+1 {{result element type 'f32' does not match the input element type 'bf16'}}
  %0 = transformer.gated_act %x kind = silu : tensor<?x22016xbf16> -> tensor<?x11008xf32>
  return
}

// -----

func.func @gated_mlp_both(%x: tensor<?x64xbf16>, %gu: tensor<256x64xbf16>, %g: tensor<128x64xbf16>, %d: tensor<64x128xbf16>) {
  // expected-error @+1 {{takes gate_up or gate and up, not both}}
  %0 = transformer.gated_mlp %x gate_up(%gu) gate(%g) up(%g) down(%d) kind = silu
         : (tensor<?x64xbf16>, tensor<256x64xbf16>, tensor<128x64xbf16>, tensor<128x64xbf16>, tensor<64x128xbf16>) -> tensor<?x64xbf16>
  return
}

// -----

func.func @gated_mlp_no_up(%x: tensor<?x64xbf16>, %g: tensor<128x64xbf16>, %d: tensor<64x128xbf16>) {
  // expected-error @+1 {{needs gate_up, or both gate and up}}
  %0 = transformer.gated_mlp %x gate(%g) down(%d) kind = silu
         : (tensor<?x64xbf16>, tensor<128x64xbf16>, tensor<64x128xbf16>) -> tensor<?x64xbf16>
  return
}

// -----

func.func @gated_mlp_gate_up_types(%x: tensor<?x64xbf16>, %g: tensor<128x64xbf16>, %u: tensor<120x64xbf16>, %d: tensor<64x128xbf16>) {
  // expected-error @+1 {{gate and up must have the same type, got 'tensor<128x64xbf16>' and 'tensor<120x64xbf16>'}}
  %0 = transformer.gated_mlp %x gate(%g) up(%u) down(%d) kind = silu
         : (tensor<?x64xbf16>, tensor<128x64xbf16>, tensor<120x64xbf16>, tensor<64x128xbf16>) -> tensor<?x64xbf16>
  return
}

// -----

func.func @gated_mlp_gate_hidden(%x: tensor<?x64xbf16>, %g: tensor<128x32xbf16>, %d: tensor<64x128xbf16>) {
  // expected-error @+1 {{gate and up must be [intermediate, hidden = 64], got 'tensor<128x32xbf16>'}}
  %0 = transformer.gated_mlp %x gate(%g) up(%g) down(%d) kind = silu
         : (tensor<?x64xbf16>, tensor<128x32xbf16>, tensor<128x32xbf16>, tensor<64x128xbf16>) -> tensor<?x64xbf16>
  return
}

// -----

func.func @gated_mlp_gate_up_odd(%x: tensor<?x64xbf16>, %gu: tensor<255x64xbf16>, %d: tensor<64x128xbf16>) {
  // expected-error @+1 {{gate_up must be [2 * intermediate, hidden = 64], got 'tensor<255x64xbf16>'}}
  %0 = transformer.gated_mlp %x gate_up(%gu) down(%d) kind = silu
         : (tensor<?x64xbf16>, tensor<255x64xbf16>, tensor<64x128xbf16>) -> tensor<?x64xbf16>
  return
}

// -----

func.func @gated_mlp_down(%x: tensor<?x64xbf16>, %gu: tensor<256x64xbf16>, %d: tensor<64x256xbf16>) {
  // down takes the intermediate size, half the gate_up rows.
  // expected-error @+1 {{down must be [hidden = 64, intermediate = 128], got 'tensor<64x256xbf16>'}}
  %0 = transformer.gated_mlp %x gate_up(%gu) down(%d) kind = silu
         : (tensor<?x64xbf16>, tensor<256x64xbf16>, tensor<64x256xbf16>) -> tensor<?x64xbf16>
  return
}

// -----

func.func @gated_mlp_element(%x: tensor<?x64xbf16>, %gu: tensor<256x64xf16>, %d: tensor<64x128xbf16>) {
  // expected-error @+1 {{weight element type 'f16' does not match the x element type 'bf16'}}
  %0 = transformer.gated_mlp %x gate_up(%gu) down(%d) kind = silu
         : (tensor<?x64xbf16>, tensor<256x64xf16>, tensor<64x128xbf16>) -> tensor<?x64xbf16>
  return
}

// -----

func.func @residual_add_types(%a: tensor<?x64xbf16>, %b: tensor<?x64xf16>) {
  // expected-error @+1 {{failed to verify that all of {residual, branch, result} have same type}}
  %0 = "transformer.residual_add"(%a, %b) : (tensor<?x64xbf16>, tensor<?x64xf16>) -> tensor<?x64xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// split_heads, merge_heads, split
//===----------------------------------------------------------------------===//

func.func @split_heads_product(%x: tensor<?x4096xbf16>) {
  // expected-error @+1 {{the result has heads * head_dim = 32 * 64 = 2048 but the input has 4096 features}}
  %0 = transformer.split_heads %x : tensor<?x4096xbf16> -> tensor<?x32x64xbf16>
  return
}

// -----

func.func @split_heads_tokens(%x: tensor<4x4096xbf16>) {
  // expected-error @+1 {{the result has 5 tokens but the input has 4}}
  %0 = transformer.split_heads %x : tensor<4x4096xbf16> -> tensor<5x32x128xbf16>
  return
}

// -----

func.func @split_heads_dynamic(%x: tensor<?x4096xbf16>) {
  // expected-error @+1 {{the result must have static heads and head_dim, got 'tensor<?x?x128xbf16>'}}
  %0 = transformer.split_heads %x : tensor<?x4096xbf16> -> tensor<?x?x128xbf16>
  return
}

// -----

func.func @split_heads_element(%x: tensor<?x4096xbf16>) {
  // expected-error @+1 {{result element type does not match the input element type}}
  %0 = transformer.split_heads %x : tensor<?x4096xbf16> -> tensor<?x32x128xf16>
  return
}

// -----

func.func @merge_heads_product(%x: tensor<?x32x128xbf16>) {
  // expected-error @+1 {{the input has heads * head_dim = 32 * 128 = 4096 but the result has 2048 features}}
  %0 = transformer.merge_heads %x : tensor<?x32x128xbf16> -> tensor<?x2048xbf16>
  return
}

// -----

func.func @split_one_result(%x: tensor<?x64xbf16>) {
  // expected-error @+1 {{needs at least two results, got 1}}
  %0 = transformer.split %x : tensor<?x64xbf16> -> tensor<?x64xbf16>
  return
}

// -----

func.func @split_sum(%x: tensor<?x6144xbf16>) {
  // expected-error @+1 {{result features sum to 5120 but the input has 6144}}
  %0:3 = transformer.split %x : tensor<?x6144xbf16> -> tensor<?x4096xbf16>, tensor<?x512xbf16>, tensor<?x512xbf16>
  return
}

// -----

func.func @split_tokens(%x: tensor<4x128xbf16>) {
  // expected-error @+1 {{result #1 has 3 tokens but the input has 4}}
  %0:2 = transformer.split %x : tensor<4x128xbf16> -> tensor<4x64xbf16>, tensor<3x64xbf16>
  return
}

// -----

func.func @split_element(%x: tensor<?x128xbf16>) {
  // expected-error @+1 {{result #0 element type 'f16' does not match the input element type 'bf16'}}
  %0:2 = transformer.split %x : tensor<?x128xbf16> -> tensor<?x64xf16>, tensor<?x64xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// all_reduce, all_gather
//===----------------------------------------------------------------------===//

func.func @all_reduce_group(%x: tensor<?x64xbf16>) {
  // expected-error @+1 {{attribute 'group_size' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = transformer.all_reduce %x kind = sum {group_size = 0} : tensor<?x64xbf16>
  return
}

// -----

func.func @all_reduce_int(%x: tensor<?x64xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of f32, f16 or bf16 values, but got 'tensor<?x64xi32>'}}
  %0 = transformer.all_reduce %x kind = sum {group_size = 2} : tensor<?x64xi32>
  return
}

// -----

func.func @all_gather_axis(%x: tensor<?x64xbf16>) {
  // expected-error @+1 {{axis 2 is out of range for a rank-2 input}}
  %0 = transformer.all_gather %x {axis = 2, group_size = 2} : tensor<?x64xbf16> -> tensor<?x64xbf16>
  return
}

// -----

func.func @all_gather_rank(%x: tensor<?x64xbf16>) {
  // expected-error @+1 {{result rank 3 does not match the input rank 2}}
  %0 = transformer.all_gather %x {axis = 1, group_size = 2} : tensor<?x64xbf16> -> tensor<?x2x64xbf16>
  return
}

// -----

func.func @all_gather_i4(%x: tensor<?x64xi4>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of f32, f16, bf16, f8E4M3FN, f8E5M2, i8, i32 or i64 values, but got 'tensor<?x64xi4>'}}
  %0 = transformer.all_gather %x {axis = 1, group_size = 2} : tensor<?x64xi4> -> tensor<?x128xi4>
  return
}

// -----

//===----------------------------------------------------------------------===//
// pp_transfer
//===----------------------------------------------------------------------===//

func.func @pp_transfer_backwards(%x: tensor<?x64xf32>) {
  // expected-error @+1 {{sends from stage 1 to stage 1; a value only goes to a later stage}}
  %0 = transformer.pp_transfer %x {from_stage = 1, to_stage = 1} : tensor<?x64xf32>
  return
}

// -----

func.func @pp_transfer_to_stage_0(%x: tensor<?x64xf32>) {
  // expected-error @+1 {{attribute 'to_stage' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = transformer.pp_transfer %x {from_stage = 0, to_stage = 0} : tensor<?x64xf32>
  return
}

// -----

func.func @all_gather_element(%x: tensor<?x64xbf16>) {
  // expected-error @+1 {{result element type 'f32' does not match the input element type 'bf16'}}
  %0 = transformer.all_gather %x {axis = 1, group_size = 2} : tensor<?x64xbf16> -> tensor<?x128xf32>
  return
}

// -----

func.func @all_gather_size(%x: tensor<?x32064xf32>) {
  // expected-error @+1 {{result dim 1 is 128000 but group_size * input dim 1 is 4 * 32064 = 128256}}
  %0 = transformer.all_gather %x {axis = 1, group_size = 4} : tensor<?x32064xf32> -> tensor<?x128000xf32>
  return
}

// -----

func.func @all_gather_other_dim(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{result dim 0 is 8 but input dim 0 is 4}}
  %0 = transformer.all_gather %x {axis = 1, group_size = 2} : tensor<4x64xf32> -> tensor<8x128xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// quantize, dequantize
//===----------------------------------------------------------------------===//

func.func @quantize_shape(%x: tensor<4x64xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{result type 'tensor<4x32xi8>' does not have the shape of the input type 'tensor<4x64xf32>'}}
  %0 = transformer.quantize %x, %s : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x32xi8>
  return
}

// -----

func.func @quantize_to_float(%x: tensor<4x64xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of f8E4M3FN, f8E5M2, i8 or i4 values, but got 'tensor<4x64xf16>'}}
  %0 = transformer.quantize %x, %s : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf16>
  return
}

// -----

func.func @quantize_scalar_with_axis(%x: tensor<4x64xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{a scalar scale is per-tensor and takes no axis or block_size}}
  %0 = transformer.quantize %x, %s {axis = 1} : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xi8>
  return
}

// -----

func.func @quantize_per_axis_no_axis(%x: tensor<4x64xf32>, %s: tensor<64xf32>) {
  // expected-error @+1 {{a 1-D scale is per-axis and needs an axis}}
  %0 = transformer.quantize %x, %s : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xi8>
  return
}

// -----

func.func @quantize_axis_range(%x: tensor<4x64xf32>, %s: tensor<64xf32>) {
  // expected-error @+1 {{axis 2 is out of range for a rank-2 input}}
  %0 = transformer.quantize %x, %s {axis = 2} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xi8>
  return
}

// -----

func.func @quantize_per_axis_size(%x: tensor<4x64xf32>, %s: tensor<64xf32>) {
  // expected-error @+1 {{a per-axis scale must have 4 elements (input dim 0), got 'tensor<64xf32>'}}
  %0 = transformer.quantize %x, %s {axis = 0} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xi8>
  return
}

// -----

func.func @quantize_block_no_axis(%x: tensor<4x64xf32>, %s: tensor<4x2xf32>) {
  // expected-error @+1 {{block_size needs an axis}}
  %0 = transformer.quantize %x, %s {block_size = 32} : (tensor<4x64xf32>, tensor<4x2xf32>) -> tensor<4x64xi4>
  return
}

// -----

func.func @quantize_block_rank(%x: tensor<4x64xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{a blocked scale must have the input's rank 2, got 'tensor<2xf32>'}}
  %0 = transformer.quantize %x, %s {axis = 1, block_size = 32} : (tensor<4x64xf32>, tensor<2xf32>) -> tensor<4x64xi4>
  return
}

// -----

func.func @quantize_block_shape(%x: tensor<4x100xf32>, %s: tensor<4x3xf32>) {
  // Blocks round up: 100 / 32 -> 4 blocks.
  // expected-error @+1 {{a scale blocked by 32 along axis 1 must be [4, 4], got 'tensor<4x3xf32>'}}
  %0 = transformer.quantize %x, %s {axis = 1, block_size = 32} : (tensor<4x100xf32>, tensor<4x3xf32>) -> tensor<4x100xi4>
  return
}

// -----

func.func @quantize_matrix_scale(%x: tensor<4x64xf32>, %s: tensor<4x2xf32>) {
  // expected-error @+1 {{the scale must be a scalar (per-tensor), 1-D (per-axis) or blocked (with block_size), got 'tensor<4x2xf32>'}}
  %0 = transformer.quantize %x, %s {axis = 1} : (tensor<4x64xf32>, tensor<4x2xf32>) -> tensor<4x64xi4>
  return
}

// -----

func.func @quantize_zero_point_element(%x: tensor<4x64xf32>, %s: tensor<f32>, %z: tensor<i8>) {
  // expected-error @+1 {{zero_point element type 'i8' does not match the quantized element type 'i4'}}
  %0 = transformer.quantize %x, %s zero_point(%z) : (tensor<4x64xf32>, tensor<f32>, tensor<i8>) -> tensor<4x64xi4>
  return
}

// -----

func.func @quantize_zero_point_shape(%x: tensor<4x64xf32>, %s: tensor<64xf32>, %z: tensor<i8>) {
  // expected-error @+1 {{zero_point shape [] does not match the scale shape [64]}}
  %0 = transformer.quantize %x, %s zero_point(%z) {axis = 1} : (tensor<4x64xf32>, tensor<64xf32>, tensor<i8>) -> tensor<4x64xi8>
  return
}

// -----

func.func @dequantize_per_axis_size(%q: tensor<11008x4096xi8>, %s: tensor<4096xf32>) {
  // expected-error @+1 {{a per-axis scale must have 11008 elements (input dim 0), got 'tensor<4096xf32>'}}
  %0 = transformer.dequantize %q, %s {axis = 0} : (tensor<11008x4096xi8>, tensor<4096xf32>) -> tensor<11008x4096xbf16>
  return
}

// -----

func.func @dequantize_fp8_zero_point(%q: tensor<?x64xf8E4M3FN>, %s: tensor<f32>, %z: tensor<i8>) {
  // expected-error @+1 {{zero_point element type 'i8' does not match the quantized element type 'f8E4M3FN'}}
  %0 = transformer.dequantize %q, %s zero_point(%z) : (tensor<?x64xf8E4M3FN>, tensor<f32>, tensor<i8>) -> tensor<?x64xf32>
  return
}

// -----

func.func @dequantize_from_float(%q: tensor<?x64xbf16>, %s: tensor<f32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of f8E4M3FN, f8E5M2, i8 or i4 values, but got 'tensor<?x64xbf16>'}}
  %0 = transformer.dequantize %q, %s : (tensor<?x64xbf16>, tensor<f32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @dynamic_quantize_shape(%x: tensor<?x4096xbf16>) {
  // expected-error @+1 {{result type 'tensor<?x2048xi8>' does not have the shape of the input type 'tensor<?x4096xbf16>'}}
  %0:2 = transformer.dynamic_quantize %x : tensor<?x4096xbf16> -> tensor<?x2048xi8>, tensor<?xf32>
  return
}

// -----

func.func @dynamic_quantize_scale(%x: tensor<8x4096xbf16>) {
  // expected-error @+1 {{scale must be [] (per-tensor) or [tokens] (per-token), got 'tensor<4xf32>'}}
  %0:2 = transformer.dynamic_quantize %x : tensor<8x4096xbf16> -> tensor<8x4096xi8>, tensor<4xf32>
  return
}

// -----

func.func @dynamic_quantize_i4(%x: tensor<?x4096xbf16>) {
  // Activations are never i4.
  // expected-error @+1 {{result #0 must be 2D tensor of f8E4M3FN, f8E5M2 or i8 values, but got 'tensor<?x4096xi4>'}}
  %0:2 = transformer.dynamic_quantize %x : tensor<?x4096xbf16> -> tensor<?x4096xi4>, tensor<?xf32>
  return
}
