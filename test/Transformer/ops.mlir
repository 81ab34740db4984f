// RUN: accel-opt %s -split-input-file | accel-opt -split-input-file | FileCheck %s
//
// Round-trip of every transformer op, type and attribute: the custom
// assembly parses, prints and parses again to the same IR.

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @kv_cache_types
// CHECK-SAME: !transformer.batch
// CHECK-SAME: !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>
// CHECK-SAME: !transformer.kv_cache<layers = 28, kv_heads = 4, head_dim = 128, block_size = 32, f8E4M3FN>
// CHECK-SAME: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 64, block_size = 1, f8E5M2>
// CHECK-SAME: !transformer.kv_cache<layers = 12, kv_heads = 12, head_dim = 64, block_size = 128, i8>
// CHECK-SAME: !transformer.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, block_size = 8, f32>
// CHECK-SAME: !transformer.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, block_size = 8, f16>
func.func @kv_cache_types(
    %batch: !transformer.batch,
    %a: !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>,
    %b: !transformer.kv_cache<layers = 28, kv_heads = 4, head_dim = 128, block_size = 32, f8E4M3FN>,
    %c: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 64, block_size = 1, f8E5M2>,
    %d: !transformer.kv_cache<layers = 12, kv_heads = 12, head_dim = 64, block_size = 128, i8>,
    %e: !transformer.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, block_size = 8, f32>,
    %f: !transformer.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, block_size = 8, f16>) {
  return
}

// -----

//===----------------------------------------------------------------------===//
// positions
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @positions
// CHECK-SAME: (%[[B:[^:]+]]: !transformer.batch)
// CHECK: %[[P32:.+]] = transformer.positions %[[B]] : tensor<?xi32>
// CHECK: %[[P64:.+]] = transformer.positions %[[B]] : tensor<?xi64>
// CHECK: return %[[P32]], %[[P64]]
func.func @positions(%batch: !transformer.batch) -> (tensor<?xi32>, tensor<?xi64>) {
  %0 = transformer.positions %batch : tensor<?xi32>
  %1 = transformer.positions %batch : tensor<?xi64>
  return %0, %1 : tensor<?xi32>, tensor<?xi64>
}

// -----

//===----------------------------------------------------------------------===//
// embedding
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @embedding
// CHECK-SAME: (%[[T:[^:]+]]: tensor<32000x4096xbf16>, %[[IDS:[^:]+]]: tensor<?xi32>, %[[G:[^:]+]]: tensor<256000x2304xbf16>, %[[IDS64:[^:]+]]: tensor<?xi64>)
// CHECK: %[[E:.+]] = transformer.embedding %[[T]][%[[IDS]]] : (tensor<32000x4096xbf16>, tensor<?xi32>) -> tensor<?x4096xbf16>
// CHECK: %[[S:.+]] = transformer.embedding %[[G]][%[[IDS64]]] {scale = 4.800000e+01 : f64} : (tensor<256000x2304xbf16>, tensor<?xi64>) -> tensor<?x2304xbf16>
// CHECK: transformer.embedding %[[T]][%[[IDS]]] : (tensor<32000x4096xbf16>, tensor<?xi32>) -> tensor<7x4096xbf16>
// CHECK: transformer.embedding %[[T]][%[[IDS]]] {vocab_shards = 2 : i64, vocab_size = 63999 : i64} : (tensor<32000x4096xbf16>, tensor<?xi32>) -> tensor<?x4096xbf16>
func.func @embedding(%table: tensor<32000x4096xbf16>, %ids: tensor<?xi32>,
                     %gemma: tensor<256000x2304xbf16>, %ids64: tensor<?xi64>)
    -> (tensor<?x4096xbf16>, tensor<?x2304xbf16>, tensor<7x4096xbf16>) {
  %0 = transformer.embedding %table[%ids] : (tensor<32000x4096xbf16>, tensor<?xi32>) -> tensor<?x4096xbf16>
  %1 = transformer.embedding %gemma[%ids64] {scale = 48.0} : (tensor<256000x2304xbf16>, tensor<?xi64>) -> tensor<?x2304xbf16>
  // A static token count is accepted where the ids are dynamic.
  %2 = transformer.embedding %table[%ids] : (tensor<32000x4096xbf16>, tensor<?xi32>) -> tensor<7x4096xbf16>
  // One rank's block of a vocabulary padded from 63999 to 64000 entries.
  %3 = transformer.embedding %table[%ids] {vocab_shards = 2, vocab_size = 63999} : (tensor<32000x4096xbf16>, tensor<?xi32>) -> tensor<?x4096xbf16>
  return %0, %1, %2 : tensor<?x4096xbf16>, tensor<?x2304xbf16>, tensor<7x4096xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// logits
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @logits
// CHECK-SAME: (%[[H:[^:]+]]: tensor<?x2304xbf16>, %[[E:[^:]+]]: tensor<256000x2304xbf16>, %[[B:[^:]+]]: !transformer.batch, %[[BIAS:[^:]+]]: tensor<256000xbf16>)
// CHECK: transformer.logits %[[H]], %[[E]] : (tensor<?x2304xbf16>, tensor<256000x2304xbf16>) -> tensor<?x256000xbf16>
// CHECK: transformer.logits %[[H]], %[[E]] select_last(%[[B]]) {softcap = 3.000000e+01 : f64} : (tensor<?x2304xbf16>, tensor<256000x2304xbf16>, !transformer.batch) -> tensor<?x256000xf32>
// CHECK: transformer.logits %[[H]], %[[E]] bias(%[[BIAS]]) select_last(%[[B]]) : (tensor<?x2304xbf16>, tensor<256000x2304xbf16>, tensor<256000xbf16>, !transformer.batch) -> tensor<?x256000xf32>
func.func @logits(%h: tensor<?x2304xbf16>, %embed: tensor<256000x2304xbf16>,
                  %batch: !transformer.batch, %bias: tensor<256000xbf16>)
    -> (tensor<?x256000xbf16>, tensor<?x256000xf32>, tensor<?x256000xf32>) {
  %0 = transformer.logits %h, %embed : (tensor<?x2304xbf16>, tensor<256000x2304xbf16>) -> tensor<?x256000xbf16>
  %1 = transformer.logits %h, %embed select_last(%batch) {softcap = 30.0}
         : (tensor<?x2304xbf16>, tensor<256000x2304xbf16>, !transformer.batch) -> tensor<?x256000xf32>
  %2 = transformer.logits %h, %embed bias(%bias) select_last(%batch)
         : (tensor<?x2304xbf16>, tensor<256000x2304xbf16>, tensor<256000xbf16>, !transformer.batch) -> tensor<?x256000xf32>
  return %0, %1, %2 : tensor<?x256000xbf16>, tensor<?x256000xf32>, tensor<?x256000xf32>
}

// -----

//===----------------------------------------------------------------------===//
// rms_norm, add_rms_norm, layer_norm
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @rms_norm
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x4096xbf16>, %[[W:[^:]+]]: tensor<4096xbf16>, %[[Q:[^:]+]]: tensor<?x16x128xbf16>, %[[QW:[^:]+]]: tensor<128xf32>)
// CHECK: transformer.rms_norm %[[X]], %[[W]] {epsilon = 1.000000e-05 : f64} : tensor<?x4096xbf16>, tensor<4096xbf16>
// CHECK: transformer.rms_norm %[[X]], %[[W]] {epsilon = 1.000000e-05 : f64, weight_offset = 1.000000e+00 : f64} : tensor<?x4096xbf16>, tensor<4096xbf16>
// CHECK: transformer.rms_norm %[[Q]], %[[QW]] {epsilon = 1.000000e-05 : f64} : tensor<?x16x128xbf16>, tensor<128xf32>
func.func @rms_norm(%x: tensor<?x4096xbf16>, %w: tensor<4096xbf16>,
                    %q: tensor<?x16x128xbf16>, %qw: tensor<128xf32>)
    -> (tensor<?x4096xbf16>, tensor<?x4096xbf16>, tensor<?x16x128xbf16>) {
  %0 = transformer.rms_norm %x, %w {epsilon = 1.0e-05} : tensor<?x4096xbf16>, tensor<4096xbf16>
  // Gemma: (1 + w).
  %1 = transformer.rms_norm %x, %w {epsilon = 1.0e-05, weight_offset = 1.0} : tensor<?x4096xbf16>, tensor<4096xbf16>
  // Qwen3 per-head q norm over head_dim, f32 weight.
  %2 = transformer.rms_norm %q, %qw {epsilon = 1.0e-05} : tensor<?x16x128xbf16>, tensor<128xf32>
  return %0, %1, %2 : tensor<?x4096xbf16>, tensor<?x4096xbf16>, tensor<?x16x128xbf16>
}

// -----

// CHECK-LABEL: func @add_rms_norm
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x4096xf16>, %[[R:[^:]+]]: tensor<?x4096xf16>, %[[W:[^:]+]]: tensor<4096xf16>)
// CHECK: %[[N:[^ ,]+]], %[[SUM:[^ ]+]] = transformer.add_rms_norm %[[X]], %[[R]], %[[W]] {epsilon = 1.000000e-05 : f64} : tensor<?x4096xf16>, tensor<4096xf16>
// CHECK: return %[[N]], %[[SUM]]
func.func @add_rms_norm(%x: tensor<?x4096xf16>, %res: tensor<?x4096xf16>, %w: tensor<4096xf16>)
    -> (tensor<?x4096xf16>, tensor<?x4096xf16>) {
  %n, %r = transformer.add_rms_norm %x, %res, %w {epsilon = 1.0e-05} : tensor<?x4096xf16>, tensor<4096xf16>
  return %n, %r : tensor<?x4096xf16>, tensor<?x4096xf16>
}

// -----

// CHECK-LABEL: func @layer_norm
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x768xf32>, %[[W:[^:]+]]: tensor<768xf32>, %[[B:[^:]+]]: tensor<768xf32>)
// CHECK: transformer.layer_norm %[[X]], %[[W]] bias(%[[B]]) {epsilon = 1.000000e-05 : f64} : (tensor<?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x768xf32>
// CHECK: transformer.layer_norm %[[X]], %[[W]] {epsilon = 1.000000e-05 : f64} : (tensor<?x768xf32>, tensor<768xf32>) -> tensor<?x768xf32>
func.func @layer_norm(%x: tensor<?x768xf32>, %w: tensor<768xf32>, %b: tensor<768xf32>)
    -> (tensor<?x768xf32>, tensor<?x768xf32>) {
  %0 = transformer.layer_norm %x, %w bias(%b) {epsilon = 1.0e-05}
         : (tensor<?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x768xf32>
  %1 = transformer.layer_norm %x, %w {epsilon = 1.0e-05}
         : (tensor<?x768xf32>, tensor<768xf32>) -> tensor<?x768xf32>
  return %0, %1 : tensor<?x768xf32>, tensor<?x768xf32>
}

// -----

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @linear_float
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x4096xbf16>, %[[W:[^:]+]]: tensor<11008x4096xbf16>, %[[B:[^:]+]]: tensor<11008xbf16>)
// CHECK: transformer.linear %[[X]], %[[W]] : (tensor<?x4096xbf16>, tensor<11008x4096xbf16>) -> tensor<?x11008xbf16>
// CHECK: transformer.linear %[[X]], %[[W]] bias(%[[B]]) : (tensor<?x4096xbf16>, tensor<11008x4096xbf16>, tensor<11008xbf16>) -> tensor<?x11008xbf16>
// CHECK: transformer.linear %[[X]], %[[W]] : (tensor<?x4096xbf16>, tensor<11008x4096xbf16>) -> tensor<?x11008xf32>
func.func @linear_float(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xbf16>, %b: tensor<11008xbf16>)
    -> (tensor<?x11008xbf16>, tensor<?x11008xbf16>, tensor<?x11008xf32>) {
  %0 = transformer.linear %x, %w : (tensor<?x4096xbf16>, tensor<11008x4096xbf16>) -> tensor<?x11008xbf16>
  %1 = transformer.linear %x, %w bias(%b) : (tensor<?x4096xbf16>, tensor<11008x4096xbf16>, tensor<11008xbf16>) -> tensor<?x11008xbf16>
  // The result element type may differ: f32 accumulation kept.
  %2 = transformer.linear %x, %w : (tensor<?x4096xbf16>, tensor<11008x4096xbf16>) -> tensor<?x11008xf32>
  return %0, %1, %2 : tensor<?x11008xbf16>, tensor<?x11008xbf16>, tensor<?x11008xf32>
}

// -----

// CHECK-LABEL: func @linear_weight_only
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x4096xf16>, %[[W8:[^:]+]]: tensor<1024x4096xi8>, %[[S8:[^:]+]]: tensor<1024xf16>, %[[W4:[^:]+]]: tensor<1024x4096xi4>, %[[S4:[^:]+]]: tensor<1024x32xf16>, %[[Z4:[^:]+]]: tensor<1024x32xi4>, %[[WF8:[^:]+]]: tensor<1024x4096xf8E4M3FN>, %[[SF8:[^:]+]]: tensor<f32>)
// CHECK: transformer.linear %[[X]], %[[W8]] weight_scale(%[[S8]]) granularity = per_channel : (tensor<?x4096xf16>, tensor<1024x4096xi8>, tensor<1024xf16>) -> tensor<?x1024xf16>
// CHECK: transformer.linear %[[X]], %[[W4]] weight_scale(%[[S4]]) zero_point(%[[Z4]]) granularity = per_group {group_size = 128 : i64} : (tensor<?x4096xf16>, tensor<1024x4096xi4>, tensor<1024x32xf16>, tensor<1024x32xi4>) -> tensor<?x1024xf16>
// CHECK: transformer.linear %[[X]], %[[WF8]] weight_scale(%[[SF8]]) granularity = per_tensor : (tensor<?x4096xf16>, tensor<1024x4096xf8E4M3FN>, tensor<f32>) -> tensor<?x1024xf16>
func.func @linear_weight_only(%x: tensor<?x4096xf16>,
                              %w8: tensor<1024x4096xi8>, %s8: tensor<1024xf16>,
                              %w4: tensor<1024x4096xi4>, %s4: tensor<1024x32xf16>, %z4: tensor<1024x32xi4>,
                              %wf8: tensor<1024x4096xf8E4M3FN>, %sf8: tensor<f32>)
    -> (tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>) {
  %0 = transformer.linear %x, %w8 weight_scale(%s8) granularity = per_channel
         : (tensor<?x4096xf16>, tensor<1024x4096xi8>, tensor<1024xf16>) -> tensor<?x1024xf16>
  // GPTQ/AWQ int4: groups of 128 input features with zero points.
  %1 = transformer.linear %x, %w4 weight_scale(%s4) zero_point(%z4) granularity = per_group {group_size = 128}
         : (tensor<?x4096xf16>, tensor<1024x4096xi4>, tensor<1024x32xf16>, tensor<1024x32xi4>) -> tensor<?x1024xf16>
  %2 = transformer.linear %x, %wf8 weight_scale(%sf8) granularity = per_tensor
         : (tensor<?x4096xf16>, tensor<1024x4096xf8E4M3FN>, tensor<f32>) -> tensor<?x1024xf16>
  return %0, %1, %2 : tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>
}

// -----

// CHECK-LABEL: func @linear_activation
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x768xf32>, %[[W:[^:]+]]: tensor<3072x768xf32>, %[[B:[^:]+]]: tensor<3072xf32>, %[[W8:[^:]+]]: tensor<3072x768xi8>, %[[S8:[^:]+]]: tensor<3072xf32>)
// CHECK: transformer.linear %[[X]], %[[W]] bias(%[[B]]) activation = gelu_tanh : (tensor<?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<?x3072xf32>
// CHECK: transformer.linear %[[X]], %[[W8]] weight_scale(%[[S8]]) granularity = per_channel activation = silu : (tensor<?x768xf32>, tensor<3072x768xi8>, tensor<3072xf32>) -> tensor<?x3072xf32>
func.func @linear_activation(%x: tensor<?x768xf32>, %w: tensor<3072x768xf32>, %b: tensor<3072xf32>,
                             %w8: tensor<3072x768xi8>, %s8: tensor<3072xf32>)
    -> (tensor<?x3072xf32>, tensor<?x3072xf32>) {
  // GPT-2's c_fc with its gelu as the GEMM's epilogue.
  %0 = transformer.linear %x, %w bias(%b) activation = gelu_tanh
         : (tensor<?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<?x3072xf32>
  // Weight-only quantised linears may carry one too.
  %1 = transformer.linear %x, %w8 weight_scale(%s8) granularity = per_channel activation = silu
         : (tensor<?x768xf32>, tensor<3072x768xi8>, tensor<3072xf32>) -> tensor<?x3072xf32>
  return %0, %1 : tensor<?x3072xf32>, tensor<?x3072xf32>
}

// -----

// CHECK-LABEL: func @linear_w8a8
// CHECK-SAME: (%[[XF8:[^:]+]]: tensor<?x4096xf8E4M3FN>, %[[WF8:[^:]+]]: tensor<4096x4096xf8E5M2>, %[[S:[^:]+]]: tensor<f32>, %[[XS:[^:]+]]: tensor<?xf32>, %[[XI8:[^:]+]]: tensor<?x4096xi8>, %[[WI8:[^:]+]]: tensor<4096x4096xi8>, %[[CS:[^:]+]]: tensor<4096xf32>, %[[B:[^:]+]]: tensor<4096xbf16>)
// CHECK: transformer.linear %[[XF8]], %[[WF8]] weight_scale(%[[S]]) input_scale(%[[S]]) granularity = per_tensor : (tensor<?x4096xf8E4M3FN>, tensor<4096x4096xf8E5M2>, tensor<f32>, tensor<f32>) -> tensor<?x4096xbf16>
// CHECK: transformer.linear %[[XI8]], %[[WI8]] bias(%[[B]]) weight_scale(%[[CS]]) input_scale(%[[XS]]) granularity = per_channel : (tensor<?x4096xi8>, tensor<4096x4096xi8>, tensor<4096xbf16>, tensor<4096xf32>, tensor<?xf32>) -> tensor<?x4096xbf16>
func.func @linear_w8a8(%xf8: tensor<?x4096xf8E4M3FN>, %wf8: tensor<4096x4096xf8E5M2>,
                       %s: tensor<f32>, %xs: tensor<?xf32>,
                       %xi8: tensor<?x4096xi8>, %wi8: tensor<4096x4096xi8>, %cs: tensor<4096xf32>,
                       %b: tensor<4096xbf16>)
    -> (tensor<?x4096xbf16>, tensor<?x4096xbf16>) {
  // fp8 activations with a static per-tensor scale; E4M3 x E5M2 mixes.
  %0 = transformer.linear %xf8, %wf8 weight_scale(%s) input_scale(%s) granularity = per_tensor
         : (tensor<?x4096xf8E4M3FN>, tensor<4096x4096xf8E5M2>, tensor<f32>, tensor<f32>) -> tensor<?x4096xbf16>
  // int8 activations with dynamic per-token scales.
  %1 = transformer.linear %xi8, %wi8 bias(%b) weight_scale(%cs) input_scale(%xs) granularity = per_channel
         : (tensor<?x4096xi8>, tensor<4096x4096xi8>, tensor<4096xbf16>, tensor<4096xf32>, tensor<?xf32>) -> tensor<?x4096xbf16>
  return %0, %1 : tensor<?x4096xbf16>, tensor<?x4096xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// rotary
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @rotary_theta
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x32x128xbf16>, %[[P:[^:]+]]: tensor<?xi32>, %[[K:[^:]+]]: tensor<?x32x256xf16>)
// CHECK: transformer.rotary %[[Q]], %[[P]] style = half_split {rotary_dim = 128 : i64, theta = 1.000000e+04 : f64} : (tensor<?x32x128xbf16>, tensor<?xi32>) -> tensor<?x32x128xbf16>
// CHECK: transformer.rotary %[[K]], %[[P]] style = interleaved {rotary_dim = 64 : i64, theta = 1.000000e+04 : f64} : (tensor<?x32x256xf16>, tensor<?xi32>) -> tensor<?x32x256xf16>
func.func @rotary_theta(%q: tensor<?x32x128xbf16>, %pos: tensor<?xi32>, %k: tensor<?x32x256xf16>)
    -> (tensor<?x32x128xbf16>, tensor<?x32x256xf16>) {
  %0 = transformer.rotary %q, %pos style = half_split {rotary_dim = 128, theta = 10000.0}
         : (tensor<?x32x128xbf16>, tensor<?xi32>) -> tensor<?x32x128xbf16>
  // GPT-J: interleaved pairs, partial rotary over 64 of 256 channels.
  %1 = transformer.rotary %k, %pos style = interleaved {rotary_dim = 64, theta = 10000.0}
         : (tensor<?x32x256xf16>, tensor<?xi32>) -> tensor<?x32x256xf16>
  return %0, %1 : tensor<?x32x128xbf16>, tensor<?x32x256xf16>
}

// -----

// CHECK-LABEL: func @rotary_scaling
// CHECK: style = half_split {rotary_dim = 128 : i64, scaling = #transformer.rope_scaling<linear, factor = 4.000000e+00>, theta = 1.000000e+04 : f64}
// CHECK: style = half_split {rotary_dim = 128 : i64, scaling = #transformer.rope_scaling<dynamic_ntk, factor = 2.000000e+00, original_max_position = 4096>, theta = 1.000000e+04 : f64}
// CHECK: style = half_split {rotary_dim = 128 : i64, scaling = #transformer.rope_scaling<llama3, factor = 8.000000e+00, original_max_position = 8192, low_freq_factor = 1.000000e+00, high_freq_factor = 4.000000e+00>, theta = 5.000000e+05 : f64}
// CHECK: style = half_split {rotary_dim = 128 : i64, scaling = #transformer.rope_scaling<yarn, factor = 4.000000e+00, original_max_position = 32768, beta_fast = 3.200000e+01, beta_slow = 1.000000e+00>, theta = 1.000000e+06 : f64}
// CHECK: style = half_split {rotary_dim = 128 : i64, scaling = #transformer.rope_scaling<yarn, factor = 4.000000e+00, original_max_position = 32768>, theta = 1.000000e+06 : f64}
func.func @rotary_scaling(%q: tensor<?x32x128xbf16>, %pos: tensor<?xi64>) {
  %0 = transformer.rotary %q, %pos style = half_split
         {rotary_dim = 128, theta = 10000.0, scaling = #transformer.rope_scaling<linear, factor = 4.0>}
         : (tensor<?x32x128xbf16>, tensor<?xi64>) -> tensor<?x32x128xbf16>
  %1 = transformer.rotary %q, %pos style = half_split
         {rotary_dim = 128, theta = 10000.0,
          scaling = #transformer.rope_scaling<dynamic_ntk, factor = 2.0, original_max_position = 4096>}
         : (tensor<?x32x128xbf16>, tensor<?xi64>) -> tensor<?x32x128xbf16>
  %2 = transformer.rotary %q, %pos style = half_split
         {rotary_dim = 128, theta = 500000.0,
          scaling = #transformer.rope_scaling<llama3, factor = 8.0, original_max_position = 8192,
                                              low_freq_factor = 1.0, high_freq_factor = 4.0>}
         : (tensor<?x32x128xbf16>, tensor<?xi64>) -> tensor<?x32x128xbf16>
  %3 = transformer.rotary %q, %pos style = half_split
         {rotary_dim = 128, theta = 1000000.0,
          scaling = #transformer.rope_scaling<yarn, factor = 4.0, original_max_position = 32768,
                                              beta_fast = 32.0, beta_slow = 1.0>}
         : (tensor<?x32x128xbf16>, tensor<?xi64>) -> tensor<?x32x128xbf16>
  // The struct's optional parameters may be left out.
  %4 = transformer.rotary %q, %pos style = half_split
         {rotary_dim = 128, theta = 1000000.0,
          scaling = #transformer.rope_scaling<yarn, factor = 4.0, original_max_position = 32768>}
         : (tensor<?x32x128xbf16>, tensor<?xi64>) -> tensor<?x32x128xbf16>
  return
}

// -----

// CHECK-LABEL: func @rotary_tables
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x32x96xf16>, %[[P:[^:]+]]: tensor<?xi64>, %[[COS:[^:]+]]: tensor<131072x48xf32>, %[[SIN:[^:]+]]: tensor<131072x48xf32>)
// CHECK: transformer.rotary %[[Q]], %[[P]] cos_sin(%[[COS]], %[[SIN]]) style = half_split {rotary_dim = 96 : i64} : (tensor<?x32x96xf16>, tensor<?xi64>, tensor<131072x48xf32>, tensor<131072x48xf32>) -> tensor<?x32x96xf16>
func.func @rotary_tables(%q: tensor<?x32x96xf16>, %pos: tensor<?xi64>,
                         %cos: tensor<131072x48xf32>, %sin: tensor<131072x48xf32>) -> tensor<?x32x96xf16> {
  // Phi3 LongRoPE: explicit tables instead of theta.
  %0 = transformer.rotary %q, %pos cos_sin(%cos, %sin) style = half_split {rotary_dim = 96}
         : (tensor<?x32x96xf16>, tensor<?xi64>, tensor<131072x48xf32>, tensor<131072x48xf32>) -> tensor<?x32x96xf16>
  return %0 : tensor<?x32x96xf16>
}

// -----

//===----------------------------------------------------------------------===//
// qkv_rotary
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @qkv_rotary
// CHECK-SAME: (%[[QKV:[^:]+]]: tensor<?x6144xbf16>, %[[P:[^:]+]]: tensor<?xi32>, %[[C:[^:]+]]: tensor<4096x48xf32>, %[[S:[^:]+]]: tensor<4096x48xf32>, %[[X:[^:]+]]: tensor<?x576xf16>)
// CHECK: transformer.qkv_rotary %[[QKV]], %[[P]] style = half_split {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64, theta = 5.000000e+05 : f64} : (tensor<?x6144xbf16>, tensor<?xi32>) -> (tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>)
// CHECK: transformer.qkv_rotary %[[X]], %[[P]] cos_sin(%[[C]], %[[S]]) style = interleaved {head_dim = 96 : i64, num_heads = 4 : i64, num_kv_heads = 1 : i64, rotary_dim = 96 : i64} : (tensor<?x576xf16>, tensor<?xi32>, tensor<4096x48xf32>, tensor<4096x48xf32>) -> (tensor<?x4x96xf16>, tensor<?x1x96xf16>, tensor<?x1x96xf16>)
func.func @qkv_rotary(%qkv: tensor<?x6144xbf16>, %pos: tensor<?xi32>, %cos: tensor<4096x48xf32>,
                      %sin: tensor<4096x48xf32>, %x: tensor<?x576xf16>) {
  %q, %k, %v = transformer.qkv_rotary %qkv, %pos style = half_split
                 {head_dim = 128, num_heads = 32, num_kv_heads = 8,
                  rotary_dim = 128, theta = 5.0e+05}
                 : (tensor<?x6144xbf16>, tensor<?xi32>)
                   -> (tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>)
  // MQA from cos/sin tables, GPT-J's pairs.
  %q1, %k1, %v1 = transformer.qkv_rotary %x, %pos cos_sin(%cos, %sin) style = interleaved
                    {head_dim = 96, num_heads = 4, num_kv_heads = 1, rotary_dim = 96}
                    : (tensor<?x576xf16>, tensor<?xi32>, tensor<4096x48xf32>, tensor<4096x48xf32>)
                      -> (tensor<?x4x96xf16>, tensor<?x1x96xf16>, tensor<?x1x96xf16>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @attention_gqa
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x32x128xbf16>, %[[K:[^:]+]]: tensor<?x8x128xbf16>, %[[V:[^:]+]]: tensor<?x8x128xbf16>, %[[C:[^:]+]]: !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>, %[[B:[^:]+]]: !transformer.batch)
// CHECK: %[[O:.+]] = transformer.attention %[[Q]], %[[K]], %[[V]], %[[C]][31], %[[B]] {causal, head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, scale = 0.088388347648318447 : f64} : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>
// CHECK: return %[[O]]
func.func @attention_gqa(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xbf16>, %v: tensor<?x8x128xbf16>,
                         %cache: !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>,
                         %batch: !transformer.batch) -> tensor<?x32x128xbf16> {
  %0 = transformer.attention %q, %k, %v, %cache[31], %batch
         {causal, num_heads = 32, num_kv_heads = 8, head_dim = 128, scale = 0.088388347648318441}
         : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>,
           !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>
  return %0 : tensor<?x32x128xbf16>
}

// -----

// CHECK-LABEL: func @attention_window_softcap
// CHECK: transformer.attention %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}[0], %{{.+}} {causal, head_dim = 256 : i64, num_heads = 8 : i64, num_kv_heads = 4 : i64, scale = 6.250000e-02 : f64, sliding_window = 4096 : i64, softcap = 5.000000e+01 : f64} : tensor<?x8x256xbf16>, tensor<?x4x256xbf16>, !transformer.kv_cache<layers = 26, kv_heads = 4, head_dim = 256, block_size = 16, bf16>
func.func @attention_window_softcap(%q: tensor<?x8x256xbf16>, %k: tensor<?x4x256xbf16>, %v: tensor<?x4x256xbf16>,
                                    %cache: !transformer.kv_cache<layers = 26, kv_heads = 4, head_dim = 256, block_size = 16, bf16>,
                                    %batch: !transformer.batch) -> tensor<?x8x256xbf16> {
  // Gemma 2 local layer: sliding window and logit softcap.
  %0 = transformer.attention %q, %k, %v, %cache[0], %batch
         {causal, num_heads = 8, num_kv_heads = 4, head_dim = 256, scale = 0.0625,
          sliding_window = 4096, softcap = 50.0}
         : tensor<?x8x256xbf16>, tensor<?x4x256xbf16>,
           !transformer.kv_cache<layers = 26, kv_heads = 4, head_dim = 256, block_size = 16, bf16>
  return %0 : tensor<?x8x256xbf16>
}

// -----

// CHECK-LABEL: func @attention_fp8_cache_mqa
// CHECK: transformer.attention %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}[3], %{{.+}} {causal, head_dim = 64 : i64, k_scale = 5.000000e-01 : f64, num_heads = 16 : i64, num_kv_heads = 1 : i64, scale = 1.250000e-01 : f64, v_scale = 2.500000e-01 : f64} : tensor<?x16x64xf16>, tensor<?x1x64xf16>, !transformer.kv_cache<layers = 4, kv_heads = 1, head_dim = 64, block_size = 16, f8E4M3FN>
func.func @attention_fp8_cache_mqa(%q: tensor<?x16x64xf16>, %k: tensor<?x1x64xf16>, %v: tensor<?x1x64xf16>,
                                   %cache: !transformer.kv_cache<layers = 4, kv_heads = 1, head_dim = 64, block_size = 16, f8E4M3FN>,
                                   %batch: !transformer.batch) -> tensor<?x16x64xf16> {
  // MQA over an fp8 cache with per-layer K/V scales.
  %0 = transformer.attention %q, %k, %v, %cache[3], %batch
         {causal, num_heads = 16, num_kv_heads = 1, head_dim = 64, scale = 0.125, k_scale = 0.5, v_scale = 0.25}
         : tensor<?x16x64xf16>, tensor<?x1x64xf16>,
           !transformer.kv_cache<layers = 4, kv_heads = 1, head_dim = 64, block_size = 16, f8E4M3FN>
  return %0 : tensor<?x16x64xf16>
}

// -----

//===----------------------------------------------------------------------===//
// activation, gated_act, gated_mlp, residual_add
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @activation
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x3072xf32>)
// CHECK: %[[A0:.+]] = transformer.activation %[[X]] kind = silu : tensor<?x3072xf32>
// CHECK: %[[A1:.+]] = transformer.activation %[[A0]] kind = gelu : tensor<?x3072xf32>
// CHECK: %[[A2:.+]] = transformer.activation %[[A1]] kind = gelu_tanh : tensor<?x3072xf32>
// CHECK: %[[A3:.+]] = transformer.activation %[[A2]] kind = quick_gelu : tensor<?x3072xf32>
// CHECK: %[[A4:.+]] = transformer.activation %[[A3]] kind = relu : tensor<?x3072xf32>
// CHECK: %[[A5:.+]] = transformer.activation %[[A4]] kind = relu_squared : tensor<?x3072xf32>
// CHECK: %[[A6:.+]] = transformer.activation %[[A5]] kind = sigmoid : tensor<?x3072xf32>
// CHECK: %[[A7:.+]] = transformer.activation %[[A6]] kind = tanh : tensor<?x3072xf32>
// CHECK: return %[[A7]]
func.func @activation(%x: tensor<?x3072xf32>) -> tensor<?x3072xf32> {
  %0 = transformer.activation %x kind = silu : tensor<?x3072xf32>
  %1 = transformer.activation %0 kind = gelu : tensor<?x3072xf32>
  %2 = transformer.activation %1 kind = gelu_tanh : tensor<?x3072xf32>
  %3 = transformer.activation %2 kind = quick_gelu : tensor<?x3072xf32>
  %4 = transformer.activation %3 kind = relu : tensor<?x3072xf32>
  %5 = transformer.activation %4 kind = relu_squared : tensor<?x3072xf32>
  %6 = transformer.activation %5 kind = sigmoid : tensor<?x3072xf32>
  %7 = transformer.activation %6 kind = tanh : tensor<?x3072xf32>
  return %7 : tensor<?x3072xf32>
}

// -----

// CHECK-LABEL: func @gated_act
// CHECK-SAME: (%[[GU:[^:]+]]: tensor<?x22016xbf16>)
// CHECK: transformer.gated_act %[[GU]] kind = silu : tensor<?x22016xbf16> -> tensor<?x11008xbf16>
// CHECK: transformer.gated_act %[[GU]] kind = gelu_tanh : tensor<?x22016xbf16> -> tensor<?x11008xbf16>
func.func @gated_act(%gu: tensor<?x22016xbf16>) -> (tensor<?x11008xbf16>, tensor<?x11008xbf16>) {
  %0 = transformer.gated_act %gu kind = silu : tensor<?x22016xbf16> -> tensor<?x11008xbf16>
  %1 = transformer.gated_act %gu kind = gelu_tanh : tensor<?x22016xbf16> -> tensor<?x11008xbf16>
  return %0, %1 : tensor<?x11008xbf16>, tensor<?x11008xbf16>
}

// -----

// CHECK-LABEL: func @gated_mlp
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x3072xbf16>, %[[G:[^:]+]]: tensor<8192x3072xbf16>, %[[U:[^:]+]]: tensor<8192x3072xbf16>, %[[GU:[^:]+]]: tensor<16384x3072xbf16>, %[[D:[^:]+]]: tensor<3072x8192xbf16>)
// CHECK: transformer.gated_mlp %[[X]] gate(%[[G]]) up(%[[U]]) down(%[[D]]) kind = silu : (tensor<?x3072xbf16>, tensor<8192x3072xbf16>, tensor<8192x3072xbf16>, tensor<3072x8192xbf16>) -> tensor<?x3072xbf16>
// CHECK: transformer.gated_mlp %[[X]] gate_up(%[[GU]]) down(%[[D]]) kind = gelu_tanh : (tensor<?x3072xbf16>, tensor<16384x3072xbf16>, tensor<3072x8192xbf16>) -> tensor<?x3072xbf16>
func.func @gated_mlp(%x: tensor<?x3072xbf16>, %g: tensor<8192x3072xbf16>, %u: tensor<8192x3072xbf16>,
                     %gu: tensor<16384x3072xbf16>, %d: tensor<3072x8192xbf16>)
    -> (tensor<?x3072xbf16>, tensor<?x3072xbf16>) {
  %0 = transformer.gated_mlp %x gate(%g) up(%u) down(%d) kind = silu
         : (tensor<?x3072xbf16>, tensor<8192x3072xbf16>, tensor<8192x3072xbf16>, tensor<3072x8192xbf16>) -> tensor<?x3072xbf16>
  // Phi3's fused gate_up_proj, Gemma's gelu_tanh.
  %1 = transformer.gated_mlp %x gate_up(%gu) down(%d) kind = gelu_tanh
         : (tensor<?x3072xbf16>, tensor<16384x3072xbf16>, tensor<3072x8192xbf16>) -> tensor<?x3072xbf16>
  return %0, %1 : tensor<?x3072xbf16>, tensor<?x3072xbf16>
}

// -----

// CHECK-LABEL: func @residual_add
// CHECK-SAME: (%[[R:[^:]+]]: tensor<?x4096xbf16>, %[[B:[^:]+]]: tensor<?x4096xbf16>)
// CHECK: %[[S:.+]] = transformer.residual_add %[[R]], %[[B]] : tensor<?x4096xbf16>
// CHECK: return %[[S]]
func.func @residual_add(%r: tensor<?x4096xbf16>, %b: tensor<?x4096xbf16>) -> tensor<?x4096xbf16> {
  %0 = transformer.residual_add %r, %b : tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// split_heads, merge_heads, split
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @head_layout
// CHECK-SAME: (%[[QKV:[^:]+]]: tensor<?x6144xbf16>)
// CHECK: %[[P:.+]]:3 = transformer.split %[[QKV]] : tensor<?x6144xbf16> -> tensor<?x4096xbf16>, tensor<?x1024xbf16>, tensor<?x1024xbf16>
// CHECK: %[[Q:.+]] = transformer.split_heads %[[P]]#0 : tensor<?x4096xbf16> -> tensor<?x32x128xbf16>
// CHECK: %[[M:.+]] = transformer.merge_heads %[[Q]] : tensor<?x32x128xbf16> -> tensor<?x4096xbf16>
// CHECK: return %[[M]], %[[P]]#1, %[[P]]#2
func.func @head_layout(%qkv: tensor<?x6144xbf16>)
    -> (tensor<?x4096xbf16>, tensor<?x1024xbf16>, tensor<?x1024xbf16>) {
  %q, %k, %v = transformer.split %qkv
                 : tensor<?x6144xbf16> -> tensor<?x4096xbf16>, tensor<?x1024xbf16>, tensor<?x1024xbf16>
  %h = transformer.split_heads %q : tensor<?x4096xbf16> -> tensor<?x32x128xbf16>
  %m = transformer.merge_heads %h : tensor<?x32x128xbf16> -> tensor<?x4096xbf16>
  return %m, %k, %v : tensor<?x4096xbf16>, tensor<?x1024xbf16>, tensor<?x1024xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// all_reduce, all_gather
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @collectives
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x4096xbf16>, %[[L:[^:]+]]: tensor<?x32064xf32>)
// CHECK: transformer.all_reduce %[[X]] kind = sum {group_size = 4 : i64} : tensor<?x4096xbf16>
// CHECK: transformer.all_reduce %[[L]] kind = max {group_size = 1 : i64} : tensor<?x32064xf32>
// CHECK: transformer.all_reduce %[[L]] kind = min {group_size = 8 : i64} : tensor<?x32064xf32>
// CHECK: transformer.all_gather %[[L]] {axis = 1 : i64, group_size = 4 : i64} : tensor<?x32064xf32> -> tensor<?x128256xf32>
// CHECK: transformer.all_gather %[[X]] {axis = 0 : i64, group_size = 2 : i64} : tensor<?x4096xbf16> -> tensor<?x4096xbf16>
func.func @collectives(%x: tensor<?x4096xbf16>, %l: tensor<?x32064xf32>) {
  %0 = transformer.all_reduce %x kind = sum {group_size = 4} : tensor<?x4096xbf16>
  %1 = transformer.all_reduce %l kind = max {group_size = 1} : tensor<?x32064xf32>
  %4 = transformer.all_reduce %l kind = min {group_size = 8} : tensor<?x32064xf32>
  %2 = transformer.all_gather %l {axis = 1, group_size = 4} : tensor<?x32064xf32> -> tensor<?x128256xf32>
  // Gathering tokens (sequence parallelism): dynamic stays dynamic.
  %3 = transformer.all_gather %x {axis = 0, group_size = 2} : tensor<?x4096xbf16> -> tensor<?x4096xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// pp_transfer
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @pp_transfer
// CHECK-SAME: (%[[H:[^:]+]]: tensor<?x4096xbf16>, %[[S:[^:]+]]: tensor<3xi64>)
// CHECK: transformer.pp_transfer %[[H]] {from_stage = 0 : i64, to_stage = 1 : i64} : tensor<?x4096xbf16>
// CHECK: transformer.pp_transfer %[[S]] {from_stage = 1 : i64, to_stage = 3 : i64} : tensor<3xi64>
func.func @pp_transfer(%h: tensor<?x4096xbf16>, %s: tensor<3xi64>) {
  %0 = transformer.pp_transfer %h {from_stage = 0, to_stage = 1} : tensor<?x4096xbf16>
  // Shape glue crosses too, and may skip stages.
  %1 = transformer.pp_transfer %s {from_stage = 1, to_stage = 3} : tensor<3xi64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// quantize, dequantize
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @quantize
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x4096xbf16>, %[[S:[^:]+]]: tensor<f32>, %[[W:[^:]+]]: tensor<4096x4096xf32>, %[[SA:[^:]+]]: tensor<4096xf32>, %[[SB:[^:]+]]: tensor<4096x128xf32>, %[[ZB:[^:]+]]: tensor<4096x128xi4>, %[[ZS:[^:]+]]: tensor<i8>)
// CHECK: transformer.quantize %[[X]], %[[S]] : (tensor<?x4096xbf16>, tensor<f32>) -> tensor<?x4096xf8E4M3FN>
// CHECK: transformer.quantize %[[X]], %[[S]] : (tensor<?x4096xbf16>, tensor<f32>) -> tensor<?x4096xf8E5M2>
// CHECK: transformer.quantize %[[X]], %[[S]] zero_point(%[[ZS]]) : (tensor<?x4096xbf16>, tensor<f32>, tensor<i8>) -> tensor<?x4096xi8>
// CHECK: transformer.quantize %[[W]], %[[SA]] {axis = 0 : i64} : (tensor<4096x4096xf32>, tensor<4096xf32>) -> tensor<4096x4096xi8>
// CHECK: transformer.quantize %[[W]], %[[SB]] zero_point(%[[ZB]]) {axis = 1 : i64, block_size = 32 : i64} : (tensor<4096x4096xf32>, tensor<4096x128xf32>, tensor<4096x128xi4>) -> tensor<4096x4096xi4>
func.func @quantize(%x: tensor<?x4096xbf16>, %s: tensor<f32>, %w: tensor<4096x4096xf32>,
                    %sa: tensor<4096xf32>, %sb: tensor<4096x128xf32>, %zb: tensor<4096x128xi4>,
                    %zs: tensor<i8>) {
  %0 = transformer.quantize %x, %s : (tensor<?x4096xbf16>, tensor<f32>) -> tensor<?x4096xf8E4M3FN>
  %1 = transformer.quantize %x, %s : (tensor<?x4096xbf16>, tensor<f32>) -> tensor<?x4096xf8E5M2>
  %2 = transformer.quantize %x, %s zero_point(%zs) : (tensor<?x4096xbf16>, tensor<f32>, tensor<i8>) -> tensor<?x4096xi8>
  %3 = transformer.quantize %w, %sa {axis = 0} : (tensor<4096x4096xf32>, tensor<4096xf32>) -> tensor<4096x4096xi8>
  %4 = transformer.quantize %w, %sb zero_point(%zb) {axis = 1, block_size = 32}
         : (tensor<4096x4096xf32>, tensor<4096x128xf32>, tensor<4096x128xi4>) -> tensor<4096x4096xi4>
  return
}

// -----

// CHECK-LABEL: func @dynamic_quantize
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x4096xbf16>, %[[W:[^:]+]]: tensor<11008x4096xf8E4M3FN>, %[[WS:[^:]+]]: tensor<11008xf32>)
// CHECK: %[[Q:[^ ,]+]], %[[S:[^ ]+]] = transformer.dynamic_quantize %[[X]] : tensor<?x4096xbf16> -> tensor<?x4096xf8E4M3FN>, tensor<?xf32>
// CHECK: transformer.linear %[[Q]], %[[W]] weight_scale(%[[WS]]) input_scale(%[[S]]) granularity = per_channel
// CHECK: transformer.dynamic_quantize %[[X]] : tensor<?x4096xbf16> -> tensor<?x4096xi8>, tensor<f32>
func.func @dynamic_quantize(%x: tensor<?x4096xbf16>, %w: tensor<11008x4096xf8E4M3FN>, %ws: tensor<11008xf32>)
    -> tensor<?x11008xbf16> {
  // Per-token fp8 activations into a W8A8 GEMM.
  %q, %s = transformer.dynamic_quantize %x : tensor<?x4096xbf16> -> tensor<?x4096xf8E4M3FN>, tensor<?xf32>
  %y = transformer.linear %q, %w weight_scale(%ws) input_scale(%s) granularity = per_channel
         : (tensor<?x4096xf8E4M3FN>, tensor<11008x4096xf8E4M3FN>, tensor<11008xf32>, tensor<?xf32>) -> tensor<?x11008xbf16>
  // Per-tensor int8.
  %q8, %s8 = transformer.dynamic_quantize %x : tensor<?x4096xbf16> -> tensor<?x4096xi8>, tensor<f32>
  return %y : tensor<?x11008xbf16>
}

// -----

// CHECK-LABEL: func @dequantize
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<11008x4096xi8>, %[[S:[^:]+]]: tensor<11008xf32>, %[[Q4:[^:]+]]: tensor<100x4096xi4>, %[[S4:[^:]+]]: tensor<100x32xf16>, %[[Z4:[^:]+]]: tensor<100x32xi4>, %[[F8:[^:]+]]: tensor<?x64xf8E4M3FN>, %[[T:[^:]+]]: tensor<f32>)
// CHECK: transformer.dequantize %[[Q]], %[[S]] {axis = 0 : i64} : (tensor<11008x4096xi8>, tensor<11008xf32>) -> tensor<11008x4096xbf16>
// CHECK: transformer.dequantize %[[Q4]], %[[S4]] zero_point(%[[Z4]]) {axis = 1 : i64, block_size = 128 : i64} : (tensor<100x4096xi4>, tensor<100x32xf16>, tensor<100x32xi4>) -> tensor<100x4096xf16>
// CHECK: transformer.dequantize %[[F8]], %[[T]] : (tensor<?x64xf8E4M3FN>, tensor<f32>) -> tensor<?x64xf32>
func.func @dequantize(%q: tensor<11008x4096xi8>, %s: tensor<11008xf32>,
                      %q4: tensor<100x4096xi4>, %s4: tensor<100x32xf16>, %z4: tensor<100x32xi4>,
                      %f8: tensor<?x64xf8E4M3FN>, %t: tensor<f32>) {
  %0 = transformer.dequantize %q, %s {axis = 0} : (tensor<11008x4096xi8>, tensor<11008xf32>) -> tensor<11008x4096xbf16>
  %1 = transformer.dequantize %q4, %s4 zero_point(%z4) {axis = 1, block_size = 128}
         : (tensor<100x4096xi4>, tensor<100x32xf16>, tensor<100x32xi4>) -> tensor<100x4096xf16>
  %2 = transformer.dequantize %f8, %t : (tensor<?x64xf8E4M3FN>, tensor<f32>) -> tensor<?x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// A whole decoder layer (Llama 3.2 1B shapes, tied embeddings): the ops
// compose. Token ids, step metadata and the KV cache are arguments; the
// embedding table doubles as the lm_head.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @decoder_layer
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?xi32>, %[[B:[^:]+]]: !transformer.batch, %[[C:[^:]+]]: !transformer.kv_cache<layers = 16, kv_heads = 8, head_dim = 64, block_size = 16, bf16>, %[[E:[^:]+]]: tensor<128256x2048xbf16>, %[[LN1:[^:]+]]: tensor<2048xbf16>, %[[WQ:[^:]+]]: tensor<2048x2048xbf16>, %[[WK:[^:]+]]: tensor<512x2048xbf16>, %[[WV:[^:]+]]: tensor<512x2048xbf16>, %[[WO:[^:]+]]: tensor<2048x2048xbf16>, %[[LN2:[^:]+]]: tensor<2048xbf16>, %[[WG:[^:]+]]: tensor<8192x2048xbf16>, %[[WU:[^:]+]]: tensor<8192x2048xbf16>, %[[WD:[^:]+]]: tensor<2048x8192xbf16>, %[[LNF:[^:]+]]: tensor<2048xbf16>)
// CHECK-NEXT: %[[H:.+]] = transformer.embedding %[[E]][%[[IDS]]] : (tensor<128256x2048xbf16>, tensor<?xi32>) -> tensor<?x2048xbf16>
// CHECK-NEXT: %[[POS:.+]] = transformer.positions %[[B]] : tensor<?xi32>
// CHECK-NEXT: %[[N1:.+]] = transformer.rms_norm %[[H]], %[[LN1]] {epsilon = 1.000000e-05 : f64}
// CHECK-NEXT: %[[Q0:.+]] = transformer.linear %[[N1]], %[[WQ]] : (tensor<?x2048xbf16>, tensor<2048x2048xbf16>) -> tensor<?x2048xbf16>
// CHECK-NEXT: %[[K0:.+]] = transformer.linear %[[N1]], %[[WK]] : (tensor<?x2048xbf16>, tensor<512x2048xbf16>) -> tensor<?x512xbf16>
// CHECK-NEXT: %[[V0:.+]] = transformer.linear %[[N1]], %[[WV]] : (tensor<?x2048xbf16>, tensor<512x2048xbf16>) -> tensor<?x512xbf16>
// CHECK-NEXT: %[[Q1:.+]] = transformer.split_heads %[[Q0]] : tensor<?x2048xbf16> -> tensor<?x32x64xbf16>
// CHECK-NEXT: %[[K1:.+]] = transformer.split_heads %[[K0]] : tensor<?x512xbf16> -> tensor<?x8x64xbf16>
// CHECK-NEXT: %[[V:.+]] = transformer.split_heads %[[V0]] : tensor<?x512xbf16> -> tensor<?x8x64xbf16>
// CHECK-NEXT: %[[Q:.+]] = transformer.rotary %[[Q1]], %[[POS]] style = half_split {rotary_dim = 64 : i64, scaling = #transformer.rope_scaling<llama3, factor = 3.200000e+01, original_max_position = 8192, low_freq_factor = 1.000000e+00, high_freq_factor = 4.000000e+00>, theta = 5.000000e+05 : f64}
// CHECK-NEXT: %[[K:.+]] = transformer.rotary %[[K1]], %[[POS]] style = half_split
// CHECK-NEXT: %[[ATT:.+]] = transformer.attention %[[Q]], %[[K]], %[[V]], %[[C]][0], %[[B]] {causal, head_dim = 64 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, scale = 1.250000e-01 : f64}
// CHECK-NEXT: %[[ATT2:.+]] = transformer.merge_heads %[[ATT]] : tensor<?x32x64xbf16> -> tensor<?x2048xbf16>
// CHECK-NEXT: %[[O:.+]] = transformer.linear %[[ATT2]], %[[WO]]
// CHECK-NEXT: %[[H1:.+]] = transformer.residual_add %[[H]], %[[O]] : tensor<?x2048xbf16>
// CHECK-NEXT: %[[N2:.+]] = transformer.rms_norm %[[H1]], %[[LN2]]
// CHECK-NEXT: %[[M:.+]] = transformer.gated_mlp %[[N2]] gate(%[[WG]]) up(%[[WU]]) down(%[[WD]]) kind = silu
// CHECK-NEXT: %[[H2:.+]] = transformer.residual_add %[[H1]], %[[M]] : tensor<?x2048xbf16>
// CHECK-NEXT: %[[NF:.+]] = transformer.rms_norm %[[H2]], %[[LNF]]
// CHECK-NEXT: %[[L:.+]] = transformer.logits %[[NF]], %[[E]] select_last(%[[B]]) : (tensor<?x2048xbf16>, tensor<128256x2048xbf16>, !transformer.batch) -> tensor<?x128256xf32>
// CHECK-NEXT: return %[[L]] : tensor<?x128256xf32>
func.func @decoder_layer(
    %ids: tensor<?xi32>, %batch: !transformer.batch,
    %cache: !transformer.kv_cache<layers = 16, kv_heads = 8, head_dim = 64, block_size = 16, bf16>,
    %embed: tensor<128256x2048xbf16>, %ln1: tensor<2048xbf16>,
    %wq: tensor<2048x2048xbf16>, %wk: tensor<512x2048xbf16>, %wv: tensor<512x2048xbf16>,
    %wo: tensor<2048x2048xbf16>, %ln2: tensor<2048xbf16>,
    %wg: tensor<8192x2048xbf16>, %wu: tensor<8192x2048xbf16>, %wd: tensor<2048x8192xbf16>,
    %lnf: tensor<2048xbf16>) -> tensor<?x128256xf32> {
  %h = transformer.embedding %embed[%ids] : (tensor<128256x2048xbf16>, tensor<?xi32>) -> tensor<?x2048xbf16>
  %pos = transformer.positions %batch : tensor<?xi32>
  %n1 = transformer.rms_norm %h, %ln1 {epsilon = 1.0e-05} : tensor<?x2048xbf16>, tensor<2048xbf16>
  %q0 = transformer.linear %n1, %wq : (tensor<?x2048xbf16>, tensor<2048x2048xbf16>) -> tensor<?x2048xbf16>
  %k0 = transformer.linear %n1, %wk : (tensor<?x2048xbf16>, tensor<512x2048xbf16>) -> tensor<?x512xbf16>
  %v0 = transformer.linear %n1, %wv : (tensor<?x2048xbf16>, tensor<512x2048xbf16>) -> tensor<?x512xbf16>
  %q1 = transformer.split_heads %q0 : tensor<?x2048xbf16> -> tensor<?x32x64xbf16>
  %k1 = transformer.split_heads %k0 : tensor<?x512xbf16> -> tensor<?x8x64xbf16>
  %v = transformer.split_heads %v0 : tensor<?x512xbf16> -> tensor<?x8x64xbf16>
  %q = transformer.rotary %q1, %pos style = half_split
         {rotary_dim = 64, theta = 500000.0,
          scaling = #transformer.rope_scaling<llama3, factor = 32.0, original_max_position = 8192,
                                              low_freq_factor = 1.0, high_freq_factor = 4.0>}
         : (tensor<?x32x64xbf16>, tensor<?xi32>) -> tensor<?x32x64xbf16>
  %k = transformer.rotary %k1, %pos style = half_split
         {rotary_dim = 64, theta = 500000.0,
          scaling = #transformer.rope_scaling<llama3, factor = 32.0, original_max_position = 8192,
                                              low_freq_factor = 1.0, high_freq_factor = 4.0>}
         : (tensor<?x8x64xbf16>, tensor<?xi32>) -> tensor<?x8x64xbf16>
  %att = transformer.attention %q, %k, %v, %cache[0], %batch
           {causal, num_heads = 32, num_kv_heads = 8, head_dim = 64, scale = 0.125}
           : tensor<?x32x64xbf16>, tensor<?x8x64xbf16>,
             !transformer.kv_cache<layers = 16, kv_heads = 8, head_dim = 64, block_size = 16, bf16>
  %att2 = transformer.merge_heads %att : tensor<?x32x64xbf16> -> tensor<?x2048xbf16>
  %o = transformer.linear %att2, %wo : (tensor<?x2048xbf16>, tensor<2048x2048xbf16>) -> tensor<?x2048xbf16>
  %h1 = transformer.residual_add %h, %o : tensor<?x2048xbf16>
  %n2 = transformer.rms_norm %h1, %ln2 {epsilon = 1.0e-05} : tensor<?x2048xbf16>, tensor<2048xbf16>
  %m = transformer.gated_mlp %n2 gate(%wg) up(%wu) down(%wd) kind = silu
         : (tensor<?x2048xbf16>, tensor<8192x2048xbf16>, tensor<8192x2048xbf16>, tensor<2048x8192xbf16>)
           -> tensor<?x2048xbf16>
  %h2 = transformer.residual_add %h1, %m : tensor<?x2048xbf16>
  %nf = transformer.rms_norm %h2, %lnf {epsilon = 1.0e-05} : tensor<?x2048xbf16>, tensor<2048xbf16>
  %logits = transformer.logits %nf, %embed select_last(%batch)
              : (tensor<?x2048xbf16>, tensor<128256x2048xbf16>, !transformer.batch) -> tensor<?x128256xf32>
  return %logits : tensor<?x128256xf32>
}
