// RUN: accel-opt %s -split-input-file | accel-opt -split-input-file | FileCheck %s
//
// Round-trip of transformer.flatten_tokens and transformer.unflatten_tokens,
// the views between batch-major ONNX activations and token-major ones: both
// forms (features and ids), dynamic and static dims.

// CHECK-LABEL: func @features
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x64xf32>)
// CHECK: %[[T:.+]] = transformer.flatten_tokens %[[X]] : tensor<?x?x64xf32> -> tensor<?x64xf32>
// CHECK: %[[N:.+]] = transformer.rms_norm %[[T]]
// CHECK: %[[Y:.+]] = transformer.unflatten_tokens %[[N]] like %[[X]] : tensor<?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x64xf32>
// CHECK: return %[[Y]]
func.func @features(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %w = arith.constant dense<1.0> : tensor<64xf32>
  %t = transformer.flatten_tokens %x : tensor<?x?x64xf32> -> tensor<?x64xf32>
  %n = transformer.rms_norm %t, %w {epsilon = 1.0e-06} : tensor<?x64xf32>, tensor<64xf32>
  %y = transformer.unflatten_tokens %n like %x : tensor<?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// A linear changes the feature dim: the unflatten takes like's token dims
// and the input's features.
// CHECK-LABEL: func @new_features
// CHECK: transformer.flatten_tokens %{{.+}} : tensor<2x3x64xbf16> -> tensor<6x64xbf16>
// CHECK: transformer.unflatten_tokens %{{.+}} like %{{.+}} : tensor<6x128xbf16>, tensor<2x3x64xbf16> -> tensor<2x3x128xbf16>
func.func @new_features(%x: tensor<2x3x64xbf16>, %w: tensor<128x64xbf16>) -> tensor<2x3x128xbf16> {
  %t = transformer.flatten_tokens %x : tensor<2x3x64xbf16> -> tensor<6x64xbf16>
  %l = transformer.linear %t, %w : (tensor<6x64xbf16>, tensor<128x64xbf16>) -> tensor<6x128xbf16>
  %y = transformer.unflatten_tokens %l like %x : tensor<6x128xbf16>, tensor<2x3x64xbf16> -> tensor<2x3x128xbf16>
  return %y : tensor<2x3x128xbf16>
}

// -----

// The ids form: every dim of the ids is a token dim; the looked-up rows
// come back as ids.shape + [hidden].
// CHECK-LABEL: func @ids
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi64>
// CHECK: %[[I:.+]] = transformer.flatten_tokens %[[IDS]] : tensor<?x?xi64> -> tensor<?xi64>
// CHECK: %[[E:.+]] = transformer.embedding %{{.+}}[%[[I]]]
// CHECK: transformer.unflatten_tokens %[[E]] like %[[IDS]] : tensor<?x64xf32>, tensor<?x?xi64> -> tensor<?x?x64xf32>
func.func @ids(%ids: tensor<?x?xi64>, %table: tensor<256x64xf32>) -> tensor<?x?x64xf32> {
  %i = transformer.flatten_tokens %ids : tensor<?x?xi64> -> tensor<?xi64>
  %e = transformer.embedding %table[%i] : (tensor<256x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
  %h = transformer.unflatten_tokens %e like %ids : tensor<?x64xf32>, tensor<?x?xi64> -> tensor<?x?x64xf32>
  return %h : tensor<?x?x64xf32>
}

// -----

// Rank-1 ids of a static batch, and a rank-4 activation.
// CHECK-LABEL: func @ranks
// CHECK: transformer.flatten_tokens %{{.+}} : tensor<1x?xi32> -> tensor<?xi32>
// CHECK: transformer.flatten_tokens %{{.+}} : tensor<?x4x?x16xf16> -> tensor<?x16xf16>
// CHECK: transformer.unflatten_tokens %{{.+}} like %{{.+}} : tensor<?x16xf16>, tensor<?x4x?x16xf16> -> tensor<?x4x?x16xf16>
func.func @ranks(%ids: tensor<1x?xi32>, %q: tensor<?x4x?x16xf16>) -> (tensor<?xi32>, tensor<?x4x?x16xf16>) {
  %i = transformer.flatten_tokens %ids : tensor<1x?xi32> -> tensor<?xi32>
  %t = transformer.flatten_tokens %q : tensor<?x4x?x16xf16> -> tensor<?x16xf16>
  %u = transformer.unflatten_tokens %t like %q : tensor<?x16xf16>, tensor<?x4x?x16xf16> -> tensor<?x4x?x16xf16>
  return %i, %u : tensor<?xi32>, tensor<?x4x?x16xf16>
}
