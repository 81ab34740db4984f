// RUN: accel-opt %s -split-input-file -accel-raise-layer-norm | FileCheck %s
//
// Layer norms: GPT-2's LayerNormalization as the dynamo exporter writes it
// (gpt2_op18, hidden 64 → 8 here), the decomposition of older exporters,
// and onnxruntime's SkipLayerNormalization.

// gpt2_op18, model.transformer.h.0.ln_1.
// CHECK-LABEL: func @gpt2_ln_1
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x8xf32>, %[[W:[^:]+]]: tensor<8xf32>, %[[B:[^:]+]]: tensor<8xf32>)
// CHECK-NEXT: %[[T:.+]] = transformer.flatten_tokens %[[X]] : tensor<?x?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: %[[N:.+]] = transformer.layer_norm %[[T]], %[[W]] bias(%[[B]]) {epsilon = 9.9999997473787516E-6 : f64} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[N]] like %[[X]] : tensor<?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gpt2_ln_1(%add_17: tensor<?x?x8xf32>, %ln_1_weight: tensor<8xf32>, %ln_1_bias: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %layer_norm = onnx.LayerNormalization %add_17, %ln_1_weight B(%ln_1_bias) {axis = -1 : i64, epsilon = 9.99999974E-6 : f32, stash_type = 1 : i64} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %layer_norm : tensor<?x?x8xf32>
}

// -----

// Without B, followed by an Add of a 1-D bias: the Add becomes the bias.
// CHECK-LABEL: func @bias_after
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x8xf32>, %[[W:[^:]+]]: tensor<8xf32>, %[[B:[^:]+]]: tensor<8xf32>)
// CHECK-NEXT: %[[T:.+]] = transformer.flatten_tokens %[[X]]
// CHECK-NEXT: %[[N:.+]] = transformer.layer_norm %[[T]], %[[W]] bias(%[[B]]) {epsilon = 9.9999997473787516E-6 : f64}
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[N]] like %[[X]]
// CHECK-NEXT: return %[[Y]]
func.func @bias_after(%x: tensor<?x?x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %n = onnx.LayerNormalization %x, %w {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %y = onnx.Add %b, %n : (tensor<8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// The decomposition (TorchScript exporter, opset < 17): mean, centre,
// variance, Add(eps), Sqrt, Div, weight, bias.
// CHECK-LABEL: func @decomposed
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x8xf32>, %[[W:[^:]+]]: tensor<8xf32>, %[[B:[^:]+]]: tensor<8xf32>)
// CHECK-NEXT: %[[T:.+]] = transformer.flatten_tokens %[[X]]
// CHECK-NEXT: %[[N:.+]] = transformer.layer_norm %[[T]], %[[W]] bias(%[[B]]) {epsilon = 9.9999997473787516E-6 : f64}
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[N]] like %[[X]]
// CHECK-NEXT: return %[[Y]]
func.func @decomposed(%x: tensor<?x?x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %last = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %two = onnx.Constant {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %eps = onnx.Constant {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %mu = onnx.ReduceMean %x axes(%last) : (tensor<?x?x8xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %d = onnx.Sub %x, %mu : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %sq = onnx.Pow %d, %two : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  %var = onnx.ReduceMean %sq axes(%last) : (tensor<?x?x8xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %v = onnx.Add %var, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %s = onnx.Sqrt %v : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %n = onnx.Div %d, %s : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %scaled = onnx.Mul %n, %w : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %y = onnx.Add %scaled, %b : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// The decomposition in f32 of an f16 model, cast back after the bias; the
// scaling as Mul by Reciprocal(Sqrt), the weight first.
// CHECK-LABEL: func @decomposed_mixed_precision
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x8xf16>, %[[W:[^:]+]]: tensor<8xf32>, %[[B:[^:]+]]: tensor<8xf32>)
// CHECK-NEXT: %[[T:.+]] = transformer.flatten_tokens %[[X]] : tensor<?x?x8xf16> -> tensor<?x8xf16>
// CHECK-NEXT: %[[N:.+]] = transformer.layer_norm %[[T]], %[[W]] bias(%[[B]]) {epsilon = 9.9999997473787516E-6 : f64} : (tensor<?x8xf16>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf16>
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[N]] like %[[X]]
// CHECK-NEXT: return %[[Y]]
func.func @decomposed_mixed_precision(%x: tensor<?x?x8xf16>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<?x?x8xf16> {
  %eps = onnx.Constant {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %x32 = onnx.Cast %x {to = 1 : i64} : (tensor<?x?x8xf16>) -> tensor<?x?x8xf32>
  %mu = onnx.ReduceMean %x32 {axes = array<i64: -1>} : (tensor<?x?x8xf32>) -> tensor<?x?x1xf32>
  %d = onnx.Sub %x32, %mu : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %sq = onnx.Mul %d, %d : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %var = onnx.ReduceMean %sq {axes = array<i64: -1>} : (tensor<?x?x8xf32>) -> tensor<?x?x1xf32>
  %v = onnx.Add %var, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %s = onnx.Sqrt %v : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %r = onnx.Reciprocal %s : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %n = onnx.Mul %r, %d : (tensor<?x?x1xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %scaled = onnx.Mul %w, %n : (tensor<8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %y32 = onnx.Add %scaled, %b : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %y = onnx.Cast %y32 {to = 10 : i64} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf16>
  return %y : tensor<?x?x8xf16>
}

// -----

// onnxruntime's SkipLayerNormalization with beta, the sum used.
// CHECK-LABEL: func @skip_layer_norm
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x8xf16>, %[[RES:[^:]+]]: tensor<?x?x8xf16>, %[[G:[^:]+]]: tensor<8xf16>, %[[BETA:[^:]+]]: tensor<8xf16>)
// CHECK-DAG: %[[R:.+]] = transformer.flatten_tokens %[[RES]]
// CHECK-DAG: %[[B:.+]] = transformer.flatten_tokens %[[X]]
// CHECK: %[[S:.+]] = transformer.residual_add %[[R]], %[[B]]
// CHECK-NEXT: %[[N:.+]] = transformer.layer_norm %[[S]], %[[G]] bias(%[[BETA]]) {epsilon = 9.9999997473787516E-6 : f64}
// CHECK-DAG: %[[SUM:.+]] = transformer.unflatten_tokens %[[S]] like %[[X]]
// CHECK-DAG: %[[Y:.+]] = transformer.unflatten_tokens %[[N]] like %[[X]]
// CHECK: return %[[Y]], %[[SUM]]
func.func @skip_layer_norm(%x: tensor<?x?x8xf16>, %res: tensor<?x?x8xf16>, %g: tensor<8xf16>, %beta: tensor<8xf16>) -> (tensor<?x?x8xf16>, tensor<?x?x8xf16>) {
  %y, %sum = onnx.ms_SkipLayerNormalization %x, %res, %g beta(%beta) {epsilon = 9.99999974E-6 : f32}
      : (tensor<?x?x8xf16>, tensor<?x?x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<?x?x8xf16>
        input_skip_bias_sum(tensor<?x?x8xf16>)
  return %y, %sum : tensor<?x?x8xf16>, tensor<?x?x8xf16>
}

// -----

// Negative: axis = 1 of a rank-3 input normalises the last two dims
// together, not each token.
// CHECK-LABEL: func @two_axes
// CHECK-NOT: transformer.
// CHECK: onnx.LayerNormalization
func.func @two_axes(%x: tensor<?x4x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4x8xf32> {
  %y = onnx.LayerNormalization %x, %w {axis = 1 : i64} : (tensor<?x4x8xf32>, tensor<4x8xf32>) -> tensor<?x4x8xf32>
  return %y : tensor<?x4x8xf32>
}

// -----

// Negative: the Mean result is used; layer_norm does not produce it.
// CHECK-LABEL: func @mean_used
// CHECK-NOT: transformer.
// CHECK: onnx.LayerNormalization
func.func @mean_used(%x: tensor<?x8xf32>, %w: tensor<8xf32>) -> (tensor<?x8xf32>, tensor<?x1xf32>) {
  %y, %mean = onnx.LayerNormalization %x, %w : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32> Mean(tensor<?x1xf32>)
  return %y, %mean : tensor<?x8xf32>, tensor<?x1xf32>
}

// -----

// Negative: the variance is of x, not of x - mean(x).
// CHECK-LABEL: func @variance_not_centred
// CHECK-NOT: transformer.
// CHECK: onnx.Sub
func.func @variance_not_centred(%x: tensor<?x?x8xf32>, %w: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %last = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %two = onnx.Constant {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %eps = onnx.Constant {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %mu = onnx.ReduceMean %x axes(%last) : (tensor<?x?x8xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %d = onnx.Sub %x, %mu : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %sq = onnx.Pow %x, %two : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  %var = onnx.ReduceMean %sq axes(%last) : (tensor<?x?x8xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %v = onnx.Add %var, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %s = onnx.Sqrt %v : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %n = onnx.Div %d, %s : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %y = onnx.Mul %n, %w : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Negative for the bias: an Add of another activation (the residual) after
// a norm is not its bias; the norm is raised, the Add stays.
// CHECK-LABEL: func @add_of_activation
// CHECK: %[[N:.+]] = transformer.layer_norm %{{.+}}, %{{.+}} {epsilon
// CHECK: %[[U:.+]] = transformer.unflatten_tokens %[[N]]
// CHECK: onnx.Add %[[U]], %{{.+}} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>)
func.func @add_of_activation(%x: tensor<?x?x8xf32>, %w: tensor<8xf32>, %h: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %n = onnx.LayerNormalization %x, %w : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %y = onnx.Add %n, %h : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}
