// RUN: accel-opt %s -split-input-file -accel-raise-rms-norm | FileCheck %s
//
// RMS norms as the exporters write them, cut from the fixtures (hidden 64 →
// 8 here): torch dynamo's decomposition of HF LlamaRMSNorm (llama, qwen2,
// mistral, phi3: weight first; gemma, gemma2: weight second), the opset-17
// and mixed-precision spellings, opset-23 RMSNormalization (llama_op23) and
// onnxruntime's contrib norms.

// llama_op18, model.model.layers.0.input_layernorm.
// CHECK-LABEL: func @llama_input_layernorm
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x8xf32>)
// CHECK: %[[W:.+]] = onnx.Constant {value = dense<{{.+}}> : tensor<8xf32>}
// CHECK: %[[T:.+]] = transformer.flatten_tokens %[[X]] : tensor<?x?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: %[[N:.+]] = transformer.rms_norm %[[T]], %[[W]] {epsilon = 9.9999999747524271E-7 : f64} : tensor<?x8xf32>, tensor<8xf32>
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[N]] like %[[X]] : tensor<?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
// CHECK-NEXT: return %[[Y]]
// CHECK-NOT: onnx.ReduceMean
func.func @llama_input_layernorm(%embedding: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %w = onnx.Constant {value = dense<[1.1, 0.9, 1.0, 1.2, 0.8, 1.0, 1.05, 0.95]> : tensor<8xf32>} : () -> tensor<8xf32>
  %last = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %two = onnx.Constant {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %eps = onnx.Constant {value = dense<9.99999997E-7> : tensor<f32>} : () -> tensor<f32>
  %pow_1 = onnx.Pow %embedding, %two : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  %mean = onnx.ReduceMean %pow_1 axes(%last) : (tensor<?x?x8xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %add = onnx.Add %mean, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %sqrt = onnx.Sqrt %add : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %rsqrt = onnx.Reciprocal %sqrt : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %mul_120 = onnx.Mul %embedding, %rsqrt : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %mul_124 = onnx.Mul %w, %mul_120 : (tensor<8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %mul_124 : tensor<?x?x8xf32>
}

// -----

// The first input norm of a torch 2.11 Llama-3 export: shape inference knows
// the batch of the norm's result (1) but not of its input, the embedding.
// The norm is raised; unflatten_tokens gives back the more static type.
// CHECK-LABEL: func @llama_first_norm_refined_result
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x8xf32>)
// CHECK: %[[T:.+]] = transformer.flatten_tokens %[[X]] : tensor<?x?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: %[[N:.+]] = transformer.rms_norm %[[T]]
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[N]] like %[[X]] : tensor<?x8xf32>, tensor<?x?x8xf32> -> tensor<1x?x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @llama_first_norm_refined_result(%embedding: tensor<?x?x8xf32>) -> tensor<1x?x8xf32> {
  %w = onnx.Constant {value = dense<[1.1, 0.9, 1.0, 1.2, 0.8, 1.0, 1.05, 0.95]> : tensor<8xf32>} : () -> tensor<8xf32>
  %last = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %two = onnx.Constant {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %eps = onnx.Constant {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %pow_1 = onnx.Pow %embedding, %two : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  %mean = onnx.ReduceMean %pow_1 axes(%last) : (tensor<?x?x8xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %add = onnx.Add %mean, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<1x?x1xf32>
  %sqrt = onnx.Sqrt %add : (tensor<1x?x1xf32>) -> tensor<1x?x1xf32>
  %rsqrt = onnx.Reciprocal %sqrt : (tensor<1x?x1xf32>) -> tensor<1x?x1xf32>
  %mul = onnx.Mul %embedding, %rsqrt : (tensor<?x?x8xf32>, tensor<1x?x1xf32>) -> tensor<1x?x8xf32>
  %mul_1 = onnx.Mul %w, %mul : (tensor<8xf32>, tensor<1x?x8xf32>) -> tensor<1x?x8xf32>
  return %mul_1 : tensor<1x?x8xf32>
}

// -----

// gemma_op18, model.model.layers.0.post_attention_layernorm: the exporter
// folded `1 + w` into the constant and writes the weight second.
// CHECK-LABEL: func @gemma_weight_second
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x8xf32>)
// CHECK: %[[W:.+]] = onnx.Constant {value = dense<{{.+}}> : tensor<8xf32>}
// CHECK: %[[T:.+]] = transformer.flatten_tokens %[[X]]
// CHECK-NEXT: %[[N:.+]] = transformer.rms_norm %[[T]], %[[W]] {epsilon = 9.9999999747524271E-7 : f64}
// CHECK-NEXT: transformer.unflatten_tokens %[[N]] like %[[X]]
func.func @gemma_weight_second(%add_379: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %add_405 = onnx.Constant {value = dense<[2.1, 1.9, 2.0, 2.2, 1.8, 2.0, 2.05, 1.95]> : tensor<8xf32>} : () -> tensor<8xf32>
  %last = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %two = onnx.Constant {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %eps = onnx.Constant {value = dense<9.99999997E-7> : tensor<f32>} : () -> tensor<f32>
  %pow_2 = onnx.Pow %add_379, %two : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  %mean_1 = onnx.ReduceMean %pow_2 axes(%last) : (tensor<?x?x8xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %add_392 = onnx.Add %mean_1, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %val_309 = onnx.Sqrt %add_392 : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %rsqrt_1 = onnx.Reciprocal %val_309 : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %mul_359 = onnx.Mul %add_379, %rsqrt_1 : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %type_as_1 = onnx.Mul %mul_359, %add_405 : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %type_as_1 : tensor<?x?x8xf32>
}

// -----

// The opset-17 spelling (axes as an attribute), x * x for the square,
// x / sqrt(..) for the scaling, eps first in the Add.
// CHECK-LABEL: func @axes_attribute_div
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x?x8xf32>, %[[W:[^:]+]]: tensor<8xf32>)
// CHECK: %[[T:.+]] = transformer.flatten_tokens %[[X]] : tensor<2x?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: %[[N:.+]] = transformer.rms_norm %[[T]], %[[W]] {epsilon = 9.9999997473787516E-6 : f64}
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[N]] like %[[X]] : tensor<?x8xf32>, tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @axes_attribute_div(%x: tensor<2x?x8xf32>, %w: tensor<8xf32>) -> tensor<2x?x8xf32> {
  %eps = onnx.Constant {value_float = 9.99999974E-6 : f32} : () -> tensor<f32>
  %sq = onnx.Mul %x, %x : (tensor<2x?x8xf32>, tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  %ms = onnx.ReduceMean %sq {axes = array<i64: 2>} : (tensor<2x?x8xf32>) -> tensor<2x?x1xf32>
  %v = onnx.Add %eps, %ms : (tensor<f32>, tensor<2x?x1xf32>) -> tensor<2x?x1xf32>
  %s = onnx.Sqrt %v : (tensor<2x?x1xf32>) -> tensor<2x?x1xf32>
  %n = onnx.Div %x, %s : (tensor<2x?x8xf32>, tensor<2x?x1xf32>) -> tensor<2x?x8xf32>
  %y = onnx.Mul %n, %w : (tensor<2x?x8xf32>, tensor<8xf32>) -> tensor<2x?x8xf32>
  return %y : tensor<2x?x8xf32>
}

// -----

// HF LlamaRMSNorm on an f16 model: computed in f32, cast back before the
// weight (`weight * hidden.to(input_dtype)`); rsqrt as Pow(., -0.5).
// CHECK-LABEL: func @mixed_precision
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x8xf16>, %[[W:[^:]+]]: tensor<8xf16>)
// CHECK: %[[T:.+]] = transformer.flatten_tokens %[[X]] : tensor<?x?x8xf16> -> tensor<?x8xf16>
// CHECK-NEXT: %[[N:.+]] = transformer.rms_norm %[[T]], %[[W]] {epsilon = 9.9999999747524271E-7 : f64} : tensor<?x8xf16>, tensor<8xf16>
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[N]] like %[[X]]
// CHECK-NEXT: return %[[Y]]
func.func @mixed_precision(%x: tensor<?x?x8xf16>, %w: tensor<8xf16>) -> tensor<?x?x8xf16> {
  %last = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %two = onnx.Constant {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %half = onnx.Constant {value = dense<-5.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %eps = onnx.Constant {value = dense<9.99999997E-7> : tensor<f32>} : () -> tensor<f32>
  %x32 = onnx.Cast %x {to = 1 : i64} : (tensor<?x?x8xf16>) -> tensor<?x?x8xf32>
  %sq = onnx.Pow %x32, %two : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  %ms = onnx.ReduceMean %sq axes(%last) : (tensor<?x?x8xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %v = onnx.Add %ms, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %r = onnx.Pow %v, %half : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %n32 = onnx.Mul %x32, %r : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %n = onnx.Cast %n32 {to = 10 : i64} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf16>
  %y = onnx.Mul %w, %n : (tensor<8xf16>, tensor<?x?x8xf16>) -> tensor<?x?x8xf16>
  return %y : tensor<?x?x8xf16>
}

// -----

// HF GemmaRMSNorm on a bf16 model, unfolded: `(norm(x.float()) *
// (1 + w.float())).type_as(x)`. The checkpoint's w is kept, with
// weight_offset = 1.
// CHECK-LABEL: func @gemma_one_plus_w
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x8xbf16>, %[[W:[^:]+]]: tensor<8xbf16>)
// CHECK: %[[T:.+]] = transformer.flatten_tokens %[[X]]
// CHECK-NEXT: %[[N:.+]] = transformer.rms_norm %[[T]], %[[W]] {epsilon = 9.9999999747524271E-7 : f64, weight_offset = 1.000000e+00 : f64} : tensor<?x8xbf16>, tensor<8xbf16>
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[N]] like %[[X]]
// CHECK-NEXT: return %[[Y]]
func.func @gemma_one_plus_w(%x: tensor<?x?x8xbf16>, %w: tensor<8xbf16>) -> tensor<?x?x8xbf16> {
  %last = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %two = onnx.Constant {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %one = onnx.Constant {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %eps = onnx.Constant {value = dense<9.99999997E-7> : tensor<f32>} : () -> tensor<f32>
  %x32 = onnx.Cast %x {to = 1 : i64} : (tensor<?x?x8xbf16>) -> tensor<?x?x8xf32>
  %sq = onnx.Pow %x32, %two : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  %ms = onnx.ReduceMean %sq axes(%last) : (tensor<?x?x8xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %v = onnx.Add %ms, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %s = onnx.Sqrt %v : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %r = onnx.Reciprocal %s : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %n = onnx.Mul %x32, %r : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %w32 = onnx.Cast %w {to = 1 : i64} : (tensor<8xbf16>) -> tensor<8xf32>
  %scale = onnx.Add %one, %w32 : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %y32 = onnx.Mul %n, %scale : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %y = onnx.Cast %y32 {to = 16 : i64} : (tensor<?x?x8xf32>) -> tensor<?x?x8xbf16>
  return %y : tensor<?x?x8xbf16>
}

// -----

// llama_op23: opset-23 RMSNormalization.
// CHECK-LABEL: func @opset23
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x8xf32>, %[[W:[^:]+]]: tensor<8xf32>)
// CHECK: %[[T:.+]] = transformer.flatten_tokens %[[X]]
// CHECK-NEXT: %[[N:.+]] = transformer.rms_norm %[[T]], %[[W]] {epsilon = 9.9999999747524271E-7 : f64}
// CHECK-NEXT: %[[Y:.+]] = transformer.unflatten_tokens %[[N]] like %[[X]]
// CHECK-NEXT: return %[[Y]]
func.func @opset23(%embedding: tensor<?x?x8xf32>, %w: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %mul_124 = onnx.RMSNormalization %embedding, %w {axis = -1 : i64, epsilon = 9.99999997E-7 : f32, stash_type = 1 : i64} : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %mul_124 : tensor<?x?x8xf32>
}

// -----

// A token-major input needs no flatten or unflatten.
// CHECK-LABEL: func @token_major
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x8xf16>, %[[W:[^:]+]]: tensor<8xf16>)
// CHECK-NEXT: %[[N:.+]] = transformer.rms_norm %[[X]], %[[W]] {epsilon = 9.9999999747524271E-7 : f64} : tensor<?x8xf16>, tensor<8xf16>
// CHECK-NEXT: return %[[N]]
func.func @token_major(%x: tensor<?x8xf16>, %w: tensor<8xf16>) -> tensor<?x8xf16> {
  %y = onnx.ms_SimplifiedLayerNormalization %x, %w {epsilon = 9.99999997E-7 : f32} : (tensor<?x8xf16>, tensor<8xf16>) -> tensor<?x8xf16>
  return %y : tensor<?x8xf16>
}

// -----

// onnxruntime-genai's fused residual add + norm, with the sum used by the
// next layer: residual_add (skip is the residual) and rms_norm of the sum.
// CHECK-LABEL: func @skip_simplified
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x8xf16>, %[[RES:[^:]+]]: tensor<?x?x8xf16>, %[[W:[^:]+]]: tensor<8xf16>)
// CHECK-DAG: %[[R:.+]] = transformer.flatten_tokens %[[RES]]
// CHECK-DAG: %[[B:.+]] = transformer.flatten_tokens %[[X]]
// CHECK: %[[S:.+]] = transformer.residual_add %[[R]], %[[B]] : tensor<?x8xf16>
// CHECK-NEXT: %[[N:.+]] = transformer.rms_norm %[[S]], %[[W]] {epsilon = 9.9999999747524271E-7 : f64}
// CHECK-DAG: %[[SUM:.+]] = transformer.unflatten_tokens %[[S]] like %[[X]]
// CHECK-DAG: %[[Y:.+]] = transformer.unflatten_tokens %[[N]] like %[[X]]
// CHECK: return %[[Y]], %[[SUM]]
func.func @skip_simplified(%x: tensor<?x?x8xf16>, %res: tensor<?x?x8xf16>, %w: tensor<8xf16>) -> (tensor<?x?x8xf16>, tensor<?x?x8xf16>) {
  %y, %sum = onnx.ms_SkipSimplifiedLayerNormalization %x, %res, %w {epsilon = 9.99999997E-7 : f32}
      : (tensor<?x?x8xf16>, tensor<?x?x8xf16>, tensor<8xf16>) -> tensor<?x?x8xf16>
        input_skip_bias_sum(tensor<?x?x8xf16>)
  return %y, %sum : tensor<?x?x8xf16>, tensor<?x?x8xf16>
}

// -----

// Negative: the mean is over axis 0 (the batch), not the hidden dim.
// CHECK-LABEL: func @reduce_axis_0
// CHECK-NOT: transformer.
// CHECK: onnx.ReduceMean
func.func @reduce_axis_0(%x: tensor<?x?x8xf32>, %w: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %axis0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %two = onnx.Constant {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %eps = onnx.Constant {value = dense<9.99999997E-7> : tensor<f32>} : () -> tensor<f32>
  %sq = onnx.Pow %x, %two : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  %ms = onnx.ReduceMean %sq axes(%axis0) : (tensor<?x?x8xf32>, tensor<1xi64>) -> tensor<1x?x8xf32>
  %v = onnx.Add %ms, %eps : (tensor<1x?x8xf32>, tensor<f32>) -> tensor<1x?x8xf32>
  %s = onnx.Sqrt %v : (tensor<1x?x8xf32>) -> tensor<1x?x8xf32>
  %r = onnx.Reciprocal %s : (tensor<1x?x8xf32>) -> tensor<1x?x8xf32>
  %n = onnx.Mul %x, %r : (tensor<?x?x8xf32>, tensor<1x?x8xf32>) -> tensor<?x?x8xf32>
  %y = onnx.Mul %w, %n : (tensor<8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Negative: eps is not a constant (it could be anything at run time).
// CHECK-LABEL: func @eps_not_constant
// CHECK-NOT: transformer.
// CHECK: onnx.ReduceMean
func.func @eps_not_constant(%x: tensor<?x?x8xf32>, %w: tensor<8xf32>, %eps: tensor<f32>) -> tensor<?x?x8xf32> {
  %last = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %two = onnx.Constant {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %sq = onnx.Pow %x, %two : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  %ms = onnx.ReduceMean %sq axes(%last) : (tensor<?x?x8xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %v = onnx.Add %ms, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %s = onnx.Sqrt %v : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %r = onnx.Reciprocal %s : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %n = onnx.Mul %x, %r : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %y = onnx.Mul %w, %n : (tensor<8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Negative: the statistics are of another tensor than the one scaled.
// CHECK-LABEL: func @square_of_other
// CHECK-NOT: transformer.
// CHECK: onnx.ReduceMean
func.func @square_of_other(%x: tensor<?x?x8xf32>, %z: tensor<?x?x8xf32>, %w: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %last = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %two = onnx.Constant {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %eps = onnx.Constant {value = dense<9.99999997E-7> : tensor<f32>} : () -> tensor<f32>
  %sq = onnx.Pow %z, %two : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  %ms = onnx.ReduceMean %sq axes(%last) : (tensor<?x?x8xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %v = onnx.Add %ms, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %s = onnx.Sqrt %v : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %r = onnx.Reciprocal %s : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %n = onnx.Mul %x, %r : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %y = onnx.Mul %w, %n : (tensor<8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Negative: the statistics are of x - mean(x): a layer norm without bias,
// left whole to accel-raise-layer-norm.
// CHECK-LABEL: func @centred_is_layer_norm
// CHECK-NOT: transformer.
// CHECK: onnx.Sub
func.func @centred_is_layer_norm(%x: tensor<?x?x8xf32>, %w: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %last = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %two = onnx.Constant {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %eps = onnx.Constant {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %mu = onnx.ReduceMean %x axes(%last) : (tensor<?x?x8xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %d = onnx.Sub %x, %mu : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %sq = onnx.Pow %d, %two : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  %ms = onnx.ReduceMean %sq axes(%last) : (tensor<?x?x8xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %v = onnx.Add %ms, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %s = onnx.Sqrt %v : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %n = onnx.Div %d, %s : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %y = onnx.Mul %n, %w : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Negative: RMSNormalization over the last two axes (axis = 1 of a rank-3
// input) is not a per-token norm.
// CHECK-LABEL: func @opset23_two_axes
// CHECK-NOT: transformer.
// CHECK: onnx.RMSNormalization
func.func @opset23_two_axes(%x: tensor<?x4x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4x8xf32> {
  %y = onnx.RMSNormalization %x, %w {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<?x4x8xf32>, tensor<4x8xf32>) -> tensor<?x4x8xf32>
  return %y : tensor<?x4x8xf32>
}

// -----

// Negative: a skip norm with a bias (the sum is input + skip + bias, which
// residual_add cannot express).
// CHECK-LABEL: func @skip_with_bias
// CHECK-NOT: transformer.
// CHECK: onnx.ms_SkipSimplifiedLayerNormalization
func.func @skip_with_bias(%x: tensor<?x?x8xf16>, %res: tensor<?x?x8xf16>, %w: tensor<8xf16>, %b: tensor<8xf16>) -> tensor<?x?x8xf16> {
  %y = onnx.ms_SkipSimplifiedLayerNormalization %x, %res, %w bias(%b) : (tensor<?x?x8xf16>, tensor<?x?x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<?x?x8xf16>
  return %y : tensor<?x?x8xf16>
}
