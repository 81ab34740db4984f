// RUN: accel-opt %s -split-input-file -verify-diagnostics -accel-partition=tp-size=4
//
// What accel-partition refuses, each with one sentence naming the dimension
// and the layer (accelc prints it at the ONNX node).

func.func @heads_do_not_divide(%q: tensor<?x2x2xf32>, %batch: !transformer.batch, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x2x2xf32> {
  // expected-error @+1 {{-tp=4 does not divide the 2 attention heads of layer 0}}
  %o = transformer.attention %q, %q, %q, %cache[0], %batch {causal, head_dim = 2 : i64, num_heads = 2 : i64, num_kv_heads = 2 : i64, scale = 0.5 : f64} : tensor<?x2x2xf32>, tensor<?x2x2xf32>, !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>
  return %o : tensor<?x2x2xf32>
}

// -----

func.func @kv_heads_do_not_divide(%q: tensor<?x12x1xf32>, %k: tensor<?x6x1xf32>, %batch: !transformer.batch, %cache: !transformer.kv_cache<layers = 1, kv_heads = 6, head_dim = 1, block_size = 16, f32>) -> tensor<?x12x1xf32> {
  // expected-error @+1 {{-tp=4 does not divide the 6 KV heads of layer 0}}
  %o = transformer.attention %q, %k, %k, %cache[0], %batch {causal, head_dim = 1 : i64, num_heads = 12 : i64, num_kv_heads = 6 : i64, scale = 0.5 : f64} : tensor<?x12x1xf32>, tensor<?x6x1xf32>, !transformer.kv_cache<layers = 1, kv_heads = 6, head_dim = 1, block_size = 16, f32>
  return %o : tensor<?x12x1xf32>
}

// -----

func.func @kv_heads_cannot_replicate(%q: tensor<?x12x1xf32>, %k: tensor<?x3x1xf32>, %batch: !transformer.batch, %cache: !transformer.kv_cache<layers = 1, kv_heads = 3, head_dim = 1, block_size = 16, f32>) -> tensor<?x12x1xf32> {
  // expected-error @+1 {{-tp=4 is not a multiple of the 3 KV heads of layer 0, so its KV heads cannot be replicated evenly across the ranks}}
  %o = transformer.attention %q, %k, %k, %cache[0], %batch {causal, head_dim = 1 : i64, num_heads = 12 : i64, num_kv_heads = 3 : i64, scale = 0.5 : f64} : tensor<?x12x1xf32>, tensor<?x3x1xf32>, !transformer.kv_cache<layers = 1, kv_heads = 3, head_dim = 1, block_size = 16, f32>
  return %o : tensor<?x12x1xf32>
}

// -----

// q is not a projection the rule can split (a function argument).
func.func @q_not_projected(%q: tensor<?x4x1xf32>, %x: tensor<?x2xf32>, %batch: !transformer.batch, %cache: !transformer.kv_cache<layers = 1, kv_heads = 4, head_dim = 1, block_size = 16, f32>) -> tensor<?x2xf32> {
  %wo = onnx.Constant {value = dense<1.0> : tensor<2x4xf32>} : () -> tensor<2x4xf32>
  // expected-error @+1 {{tensor parallelism does not recognise the projections of layer 0: q, k and v must be split_heads of a projection}}
  %o = transformer.attention %q, %q, %q, %cache[0], %batch {causal, head_dim = 1 : i64, num_heads = 4 : i64, num_kv_heads = 4 : i64, scale = 0.5 : f64} : tensor<?x4x1xf32>, tensor<?x4x1xf32>, !transformer.kv_cache<layers = 1, kv_heads = 4, head_dim = 1, block_size = 16, f32>
  %m = transformer.merge_heads %o : tensor<?x4x1xf32> -> tensor<?x4xf32>
  %y = transformer.linear %m, %wo : (tensor<?x4xf32>, tensor<2x4xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// The attention result read by something other than its output projection.
func.func @result_has_two_readers(%q: tensor<?x4x1xf32>, %batch: !transformer.batch, %cache: !transformer.kv_cache<layers = 1, kv_heads = 4, head_dim = 1, block_size = 16, f32>) -> tensor<?x4x1xf32> {
  // expected-error @+1 {{tensor parallelism needs the result of layer 0 to reach a linear output projection unchanged (through reshapes only)}}
  %o = transformer.attention %q, %q, %q, %cache[0], %batch {causal, head_dim = 1 : i64, num_heads = 4 : i64, num_kv_heads = 4 : i64, scale = 0.5 : f64} : tensor<?x4x1xf32>, tensor<?x4x1xf32>, !transformer.kv_cache<layers = 1, kv_heads = 4, head_dim = 1, block_size = 16, f32>
  return %o : tensor<?x4x1xf32>
}

// -----

func.func @intermediate_does_not_divide(%x: tensor<?x2xf32>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 4, head_dim = 1, block_size = 16, f32>) -> tensor<?x2xf32> {
  %gu = onnx.Constant {value = dense<1.0> : tensor<12x2xf32>} : () -> tensor<12x2xf32>
  %d = onnx.Constant {value = dense<1.0> : tensor<2x6xf32>} : () -> tensor<2x6xf32>
  // expected-error @+1 {{-tp=4 does not divide the intermediate size 6 of this MLP}}
  %y = transformer.gated_mlp %x gate_up(%gu) down(%d) kind = silu : (tensor<?x2xf32>, tensor<12x2xf32>, tensor<2x6xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// A weight that is not a constant cannot be sliced per rank.
func.func @weight_not_constant(%h: tensor<?x2xf32>, %w: tensor<8x2xf32>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 4, head_dim = 1, block_size = 16, f32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{tensor parallelism needs the lm head to be a constant (f32, f16, bf16, or 8- or 4-bit quantised) that it can slice per rank}}
  %l = transformer.logits %h, %w : (tensor<?x2xf32>, tensor<8x2xf32>) -> tensor<?x8xf32>
  return %l : tensor<?x8xf32>
}

// -----

// A row-parallel weight with per-group scales splits only on group
// boundaries: 4 ranks of 2 columns, groups of 4.
func.func @grouped_down(%x: tensor<?x2xf32>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 4, head_dim = 1, block_size = 16, f32>) -> tensor<?x2xf32> {
  %w1 = onnx.Constant {value = dense<1.0> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %w2 = onnx.Constant {value = dense<1> : tensor<2x8xi8>} : () -> tensor<2x8xi8>
  %s2 = onnx.Constant {value = dense<0.5> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %h = transformer.linear %x, %w1 : (tensor<?x2xf32>, tensor<8x2xf32>) -> tensor<?x8xf32>
  %a = transformer.activation %h kind = gelu_tanh : tensor<?x8xf32>
  // expected-error @+1 {{tensor parallelism cannot split the MLP output weight's groups of 4 input columns across -tp=4 ranks: columns [0, 2) of a rank are not whole groups}}
  %y = transformer.linear %a, %w2 weight_scale(%s2) granularity = per_group {group_size = 4 : i64} : (tensor<?x8xf32>, tensor<2x8xi8>, tensor<2x2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// Not the token-major function raising makes (no KV cache).
// expected-error @+1 {{tensor parallelism needs the token-major function that raising makes (with a paged KV cache), and @no_cache is not one}}
func.func @no_cache(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  return %x : tensor<?x2xf32>
}

// -----

func.func @moe_intermediate_does_not_divide(%x: tensor<?x2xf32>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x2xf32> {
  %r = onnx.Constant {value = dense<1.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %gu = onnx.Constant {value = dense<1.0> : tensor<2x12x2xf32>} : () -> tensor<2x12x2xf32>
  %d = onnx.Constant {value = dense<1.0> : tensor<2x2x6xf32>} : () -> tensor<2x2x6xf32>
  // expected-error @+1 {{-tp=4 does not divide the intermediate size 6 of the experts}}
  %y = transformer.moe %x router(%r) gate_up(%gu) down(%d) kind = silu routing = renormalize {num_experts = 2 : i64, top_k = 1 : i64} : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2x12x2xf32>, tensor<2x2x6xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

func.func @moe_shared_does_not_divide(%x: tensor<?x2xf32>, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x2xf32> {
  %r = onnx.Constant {value = dense<1.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %gu = onnx.Constant {value = dense<1.0> : tensor<2x8x2xf32>} : () -> tensor<2x8x2xf32>
  %d = onnx.Constant {value = dense<1.0> : tensor<2x2x4xf32>} : () -> tensor<2x2x4xf32>
  %sgu = onnx.Constant {value = dense<1.0> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %sd = onnx.Constant {value = dense<1.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  // expected-error @+1 {{-tp=4 does not divide the intermediate size 2 of the shared expert}}
  %y = transformer.moe %x router(%r) gate_up(%gu) down(%d) shared_gate_up(%sgu) shared_down(%sd) kind = silu routing = renormalize {num_experts = 2 : i64, top_k = 1 : i64} : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2x8x2xf32>, tensor<2x2x4xf32>, tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}
