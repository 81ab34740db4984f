// RUN: accel-opt %s -split-input-file -verify-diagnostics
//
// One case per verifier rule of transformer.flatten_tokens and
// transformer.unflatten_tokens, with the exact diagnostic.

//===----------------------------------------------------------------------===//
// flatten_tokens
//===----------------------------------------------------------------------===//

func.func @flatten_element_type(%x: tensor<?x?x64xf32>) {
  // expected-error @+1 {{result element type 'f16' does not match the input element type 'f32'}}
  %t = transformer.flatten_tokens %x : tensor<?x?x64xf32> -> tensor<?x64xf16>
  return
}

// -----

func.func @flatten_rank3_result(%x: tensor<?x?x64xf32>) {
  // expected-error @+1 {{result must be [tokens, features] or [tokens], got 'tensor<?x?x64xf32>'}}
  %t = transformer.flatten_tokens %x : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @flatten_features_of_vector(%x: tensor<64xf32>) {
  // expected-error @+1 {{a [tokens, features] result needs an input of rank 2 or more, got 'tensor<64xf32>'}}
  %t = transformer.flatten_tokens %x : tensor<64xf32> -> tensor<1x64xf32>
  return
}

// -----

func.func @flatten_last_dim(%x: tensor<?x?x64xf32>) {
  // expected-error @+1 {{result has 32 features but the input has 64}}
  %t = transformer.flatten_tokens %x : tensor<?x?x64xf32> -> tensor<?x32xf32>
  return
}

// -----

func.func @flatten_tokens_product(%x: tensor<2x3x64xf32>) {
  // expected-error @+1 {{result has 5 tokens but the input [2, 3, 64] has 6}}
  %t = transformer.flatten_tokens %x : tensor<2x3x64xf32> -> tensor<5x64xf32>
  return
}

// -----

func.func @flatten_ids_product(%ids: tensor<2x3xi64>) {
  // expected-error @+1 {{result has 5 tokens but the input [2, 3] has 6}}
  %t = transformer.flatten_tokens %ids : tensor<2x3xi64> -> tensor<5xi64>
  return
}

// -----

func.func @flatten_scalar(%x: tensor<i64>) {
  // expected-error @+1 {{input must have at least one dimension}}
  %t = transformer.flatten_tokens %x : tensor<i64> -> tensor<1xi64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// unflatten_tokens
//===----------------------------------------------------------------------===//

func.func @unflatten_element_type(%r: tensor<?x64xf32>, %x: tensor<?x?x64xf32>) {
  // expected-error @+1 {{result element type 'bf16' does not match the input element type 'f32'}}
  %y = transformer.unflatten_tokens %r like %x : tensor<?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x64xbf16>
  return
}

// -----

func.func @unflatten_input_rank(%r: tensor<?x4x16xf32>, %x: tensor<?x?x64xf32>) {
  // expected-error @+1 {{operand #0 must be 1D/2D tensor of any type values, but got 'tensor<?x4x16xf32>'}}
  %y = transformer.unflatten_tokens %r like %x : tensor<?x4x16xf32>, tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @unflatten_result_rank(%r: tensor<?x64xf32>, %x: tensor<?x?x64xf32>) {
  // expected-error @+1 {{result rank 5 must be the rank of like (3) or, for ids, that rank + 1}}
  %y = transformer.unflatten_tokens %r like %x : tensor<?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x?x?x64xf32>
  return
}

// -----

func.func @unflatten_leading_dim(%r: tensor<?x64xf32>, %x: tensor<2x?x64xf32>) {
  // expected-error @+1 {{result dimension 0 is 3 but like's is 2}}
  %y = transformer.unflatten_tokens %r like %x : tensor<?x64xf32>, tensor<2x?x64xf32> -> tensor<3x?x64xf32>
  return
}

// -----

func.func @unflatten_features(%r: tensor<?x64xf32>, %x: tensor<?x?x64xf32>) {
  // expected-error @+1 {{result has 128 features but the input has 64}}
  %y = transformer.unflatten_tokens %r like %x : tensor<?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x128xf32>
  return
}

// -----

func.func @unflatten_token_count(%r: tensor<7x64xf32>, %x: tensor<2x3x64xf32>) {
  // expected-error @+1 {{input has 7 tokens but the result [2, 3, 64] has 6}}
  %y = transformer.unflatten_tokens %r like %x : tensor<7x64xf32>, tensor<2x3x64xf32> -> tensor<2x3x64xf32>
  return
}
