// RUN: accel-opt %s -split-input-file -canonicalize | FileCheck %s
//
// The folds of flatten_tokens / unflatten_tokens: the pairs that raising
// leaves between consecutive token-wise ops disappear, and every unflatten
// of a chain names the batch-major value the chain came from.

// A raised layer: flatten → rms_norm → unflatten → flatten → linear →
// unflatten reads flatten → rms_norm → linear → unflatten.
// CHECK-LABEL: func @chain
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x64xf32>, %[[W:[^:]+]]: tensor<64xf32>, %[[L:[^:]+]]: tensor<128x64xf32>)
// CHECK-NEXT: %[[T:.+]] = transformer.flatten_tokens %[[X]]
// CHECK-NEXT: %[[N:.+]] = transformer.rms_norm %[[T]], %[[W]]
// CHECK-NEXT: %[[P:.+]] = transformer.linear %[[N]], %[[L]]
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[P]] like %[[X]] : tensor<?x128xf32>, tensor<?x?x64xf32> -> tensor<?x?x128xf32>
// CHECK-NEXT: return %[[Y]]
func.func @chain(%x: tensor<?x?x64xf32>, %w: tensor<64xf32>, %l: tensor<128x64xf32>) -> tensor<?x?x128xf32> {
  %t = transformer.flatten_tokens %x : tensor<?x?x64xf32> -> tensor<?x64xf32>
  %n = transformer.rms_norm %t, %w {epsilon = 1.0e-06} : tensor<?x64xf32>, tensor<64xf32>
  %u = transformer.unflatten_tokens %n like %x : tensor<?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  %t2 = transformer.flatten_tokens %u : tensor<?x?x64xf32> -> tensor<?x64xf32>
  %p = transformer.linear %t2, %l : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  %y = transformer.unflatten_tokens %p like %u : tensor<?x128xf32>, tensor<?x?x64xf32> -> tensor<?x?x128xf32>
  return %y : tensor<?x?x128xf32>
}

// -----

// flatten_tokens of a value that is token-major already is the value.
// CHECK-LABEL: func @flatten_rank2
// CHECK-SAME: (%[[T:[^:]+]]: tensor<?x64xf32>, %[[I:[^:]+]]: tensor<?xi64>)
// CHECK-NEXT: return %[[T]], %[[I]]
func.func @flatten_rank2(%t: tensor<?x64xf32>, %i: tensor<?xi64>) -> (tensor<?x64xf32>, tensor<?xi64>) {
  %a = transformer.flatten_tokens %t : tensor<?x64xf32> -> tensor<?x64xf32>
  %b = transformer.flatten_tokens %i : tensor<?xi64> -> tensor<?xi64>
  return %a, %b : tensor<?x64xf32>, tensor<?xi64>
}

// -----

// unflatten(flatten(x) like x) is x, in both forms.
// CHECK-LABEL: func @round_trip
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x64xf32>, %[[IDS:[^:]+]]: tensor<?x?xi64>)
// CHECK-NEXT: return %[[X]], %[[IDS]]
func.func @round_trip(%x: tensor<?x?x64xf32>, %ids: tensor<?x?xi64>) -> (tensor<?x?x64xf32>, tensor<?x?xi64>) {
  %t = transformer.flatten_tokens %x : tensor<?x?x64xf32> -> tensor<?x64xf32>
  %y = transformer.unflatten_tokens %t like %x : tensor<?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  %i = transformer.flatten_tokens %ids : tensor<?x?xi64> -> tensor<?xi64>
  %j = transformer.unflatten_tokens %i like %ids : tensor<?xi64>, tensor<?x?xi64> -> tensor<?x?xi64>
  return %y, %j : tensor<?x?x64xf32>, tensor<?x?xi64>
}

// -----

// The embedding's ids form chains into the features form: the rows' flatten
// folds, and the unflatten of a later op is like the ids (its ids form).
// CHECK-LABEL: func @ids_chain
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi64>
// CHECK: %[[I:.+]] = transformer.flatten_tokens %[[IDS]]
// CHECK-NEXT: %[[E:.+]] = transformer.embedding %{{.+}}[%[[I]]]
// CHECK-NEXT: %[[N:.+]] = transformer.rms_norm %[[E]]
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[N]] like %[[IDS]] : tensor<?x64xf32>, tensor<?x?xi64> -> tensor<?x?x64xf32>
// CHECK-NEXT: return %[[Y]]
func.func @ids_chain(%ids: tensor<?x?xi64>, %table: tensor<256x64xf32>, %w: tensor<64xf32>) -> tensor<?x?x64xf32> {
  %i = transformer.flatten_tokens %ids : tensor<?x?xi64> -> tensor<?xi64>
  %e = transformer.embedding %table[%i] : (tensor<256x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
  %h = transformer.unflatten_tokens %e like %ids : tensor<?x64xf32>, tensor<?x?xi64> -> tensor<?x?x64xf32>
  %t = transformer.flatten_tokens %h : tensor<?x?x64xf32> -> tensor<?x64xf32>
  %n = transformer.rms_norm %t, %w {epsilon = 1.0e-06} : tensor<?x64xf32>, tensor<64xf32>
  %y = transformer.unflatten_tokens %n like %h : tensor<?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Not folded: flatten(unflatten(r like x)) to another type than r's (the
// ids form of a features unflatten merges the features too).
// CHECK-LABEL: func @no_fold_ranks
// CHECK: %[[U:.+]] = transformer.unflatten_tokens
// CHECK: transformer.flatten_tokens %[[U]] : tensor<?x?x64xf32> -> tensor<?xf32>
func.func @no_fold_ranks(%r: tensor<?x64xf32>, %x: tensor<?x?x64xf32>) -> tensor<?xf32> {
  %u = transformer.unflatten_tokens %r like %x : tensor<?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  %f = transformer.flatten_tokens %u : tensor<?x?x64xf32> -> tensor<?xf32>
  return %f : tensor<?xf32>
}

// -----

// Not folded: unflatten(flatten(y) like x) with y != x. y's leading dims
// need not be x's (only their products agree).
// CHECK-LABEL: func @no_fold_other_like
// CHECK: %[[T:.+]] = transformer.flatten_tokens %{{.+}}
// CHECK: transformer.unflatten_tokens %[[T]] like
func.func @no_fold_other_like(%y: tensor<?x?x64xf32>, %x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %t = transformer.flatten_tokens %y : tensor<?x?x64xf32> -> tensor<?x64xf32>
  %u = transformer.unflatten_tokens %t like %x : tensor<?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return %u : tensor<?x?x64xf32>
}
