// RUN: accel-opt %s -split-input-file -accel-lower-to-exec -verify-diagnostics
//
// What accel-lower-to-exec refuses, each in one sentence at the op (for an
// imported model: at its ONNX node).

// Not token-major: the attention was never raised, so there is no KV cache.
// expected-error @+1 {{is not token-major (it takes no token ids or no KV cache)}}
func.func @whole_sequence(%ids: tensor<?xi64>) -> tensor<?x8xf32> {
  %table = onnx.Constant {value = dense<0.25> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %x = transformer.embedding %table[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  return %x : tensor<?x8xf32>
}

// -----

// expected-error @+1 {{has more than one public function (@a, @b); a schedule has one entry}}
module {
  func.func @a(%ids: tensor<?xi64>) -> tensor<?xi64> {
    return %ids : tensor<?xi64>
  }
  func.func @b(%ids: tensor<?xi64>) -> tensor<?xi64> {
    return %ids : tensor<?xi64>
  }
}

// -----

// A value whose shape varies with the step in two dimensions ([T, T]) has
// no arena region.
func.func @two_dynamic(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x8xf32> {
  %table = onnx.Constant {value = dense<0.25> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %x = transformer.embedding %table[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %x2 = onnx.Transpose %x {perm = array<i64: 1, 0>} : (tensor<?x8xf32>) -> tensor<8x?xf32>
  // expected-error @+1 {{varies with the step in more than one dimension; no arena region can hold it}}
  %m = onnx.MatMul %x, %x2 : (tensor<?x8xf32>, tensor<8x?xf32>) -> tensor<?x?xf32>
  return %x : tensor<?x8xf32>
}

// -----

// A value whose shape the analysis cannot relate to the step's tokens.
func.func @unknown_shape(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x8xf32> {
  %table = onnx.Constant {value = dense<0.25> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %x = transformer.embedding %table[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  // A reduction's shape is not inferred (TokenShapes has no rule for it).
  // expected-error @+1 {{whose dimension 0 the lowering could not relate to the step's tokens}}
  %m = onnx.ReduceMax %x {axes = array<i64: -1>, keepdims = 1 : i64} : (tensor<?x8xf32>) -> tensor<?x1xf32>
  return %x : tensor<?x8xf32>
}

// -----

// The logits must be [rows, vocab].
// expected-error @+1 {{returns logits of type 'tensor<?xf32>'; a plan needs [rows, vocab] with a static vocabulary}}
func.func @bad_logits(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?xf32> {
  %f = onnx.Cast %ids {to = 1 : i64} : (tensor<?xi64>) -> tensor<?xf32>
  return %f : tensor<?xf32>
}
