// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-quantize-weights))' | FileCheck %s
// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-quantize-weights{dtype=f8E4M3FN granularity=per_tensor}))' | FileCheck %s --check-prefix=FP8
// RUN: not accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-quantize-weights{dtype=i4}))' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-quantize-weights{granularity=per_group}))' 2>&1 | FileCheck %s --check-prefix=BADG
//
// Weight-only quantisation, docs/precision.md: symmetric, scale = absmax /
// qmax per output channel (default) or per tensor, round to nearest even.

// BAD: accel-quantize-weights: dtype i4 needs granularity per_group, not 'per_channel'
// BADG: accel-quantize-weights: granularity must be per_channel or per_tensor, not 'per_group'

// Per channel, i8: row [1, -0.5] has scale 1/127 and quantises to
// [127, -63.5 → -64 (ties to even)]; row [0.25, 0] scale 0.25/127 → [127, 0].
// The bias stays f32. The fused gated MLP is split into linear, gated_act,
// linear and both weights are quantised: gate_up rows [1,2] [3,4] [0,127]
// [2,0] give scales 2/127, 4/127, 1, 2/127 and bytes 40 7F 5F 7F 00 7F 7F 00.
// CHECK-LABEL: func @linear_and_mlp
// CHECK-DAG: %[[Q:.+]] = onnx.Constant {value = dense<{{\[}}[127, -64], [127, 0]]> : tensor<2x2xi8>}
// CHECK-DAG: %[[S:.+]] = onnx.Constant {value = dense<[0.00787401571, 0.00196850393]> : tensor<2xf32>}
// CHECK-DAG: %[[B:.+]] = onnx.Constant {value = dense<5.000000e-01> : tensor<2xf32>}
// CHECK-DAG: %[[GU:.+]] = onnx.Constant {value = dense_resource<gu.i8> : tensor<4x2xi8>}
// CHECK-DAG: %[[GUS:.+]] = onnx.Constant {value = dense<[0.0157480314, 0.0314960629, 1.000000e+00, 0.0157480314]> : tensor<4xf32>}
// CHECK-DAG: %[[D:.+]] = onnx.Constant {value = dense<127> : tensor<2x2xi8>}
// CHECK: %[[Y:.+]] = transformer.linear %{{.+}}, %[[Q]] bias(%[[B]]) weight_scale(%[[S]]) granularity = per_channel : (tensor<?x2xf32>, tensor<2x2xi8>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
// CHECK: %[[G:.+]] = transformer.linear %[[Y]], %[[GU]] weight_scale(%[[GUS]]) granularity = per_channel : (tensor<?x2xf32>, tensor<4x2xi8>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK: %[[A:.+]] = transformer.gated_act %[[G]] kind = silu : tensor<?x4xf32> -> tensor<?x2xf32>
// CHECK: transformer.linear %[[A]], %[[D]] weight_scale(%{{.+}}) granularity = per_channel
// CHECK-NOT: transformer.gated_mlp
// CHECK: gu.i8: "0x40000000407F5F7F007F7F00"
// Per tensor, fp8 E4M3: one scale absmax / 448; 1 / (127 / 448) = 3.53 → 3.5 (0x46).
// FP8-LABEL: func @linear_and_mlp
// FP8-DAG: onnx.Constant {value = dense<{{\[}}[4.480000e+02, -2.240000e+02], [1.120000e+02, 0.000000e+00]]> : tensor<2x2xf8E4M3FN>}
// FP8-DAG: onnx.Constant {value = dense<0.00223214296> : tensor<f32>}
// FP8: transformer.linear %{{.+}}, %{{.+}} bias(%{{.+}}) weight_scale(%{{.+}}) granularity = per_tensor : (tensor<?x2xf32>, tensor<2x2xf8E4M3FN>, tensor<2xf32>, tensor<f32>) -> tensor<?x2xf32>
// FP8: gu.f8: "0x40000000464E5356007E4E00"
func.func @linear_and_mlp(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %w = onnx.Constant {value = dense<[[1.0, -0.5], [0.25, 0.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %b = onnx.Constant {value = dense<0.5> : tensor<2xf32>} : () -> tensor<2xf32>
  %gu = onnx.Constant {value = dense_resource<gu> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %d = onnx.Constant {value = dense<0.25> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %y = transformer.linear %x, %w bias(%b) : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  %m = transformer.gated_mlp %y gate_up(%gu) down(%d) kind = silu : (tensor<?x2xf32>, tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  return %m : tensor<?x2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      gu: "0x040000000000803F000000400000404000008040000000000000FE420000004000000000"
    }
  }
#-}

// -----

// Not quantised: the lm head and the embedding table (the pipeline narrows
// them to bf16), a linear of a bf16 model, a weight that is not a constant,
// and a gated MLP with separate gate and up (remarked).
// CHECK-LABEL: func @untouched
// CHECK: transformer.embedding %{{.+}} : (tensor<4x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
// CHECK: transformer.linear %{{.+}}, %{{.+}} : (tensor<?x2xbf16>, tensor<2x2xbf16>) -> tensor<?x2xbf16>
// CHECK: transformer.linear %{{.+}}, %{{.+}} : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
// CHECK: transformer.gated_mlp %{{.+}} gate(%{{.+}}) up(%{{.+}}) down(%{{.+}}) kind = silu : (tensor<?x2xf32>, tensor<2x2xf32>
// CHECK: transformer.logits %{{.+}}, %{{.+}} : (tensor<?x2xf32>, tensor<4x2xf32>) -> tensor<?x4xf32>
func.func @untouched(%ids: tensor<?xi64>, %xb: tensor<?x2xbf16>, %warg: tensor<2x2xf32>) -> (tensor<?x4xf32>, tensor<?x2xbf16>) {
  %t = onnx.Constant {value = dense<1.0> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %wb = onnx.Constant {value = dense<1.0> : tensor<2x2xbf16>} : () -> tensor<2x2xbf16>
  %g = onnx.Constant {value = dense<1.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %e = transformer.embedding %t[%ids] : (tensor<4x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
  %yb = transformer.linear %xb, %wb : (tensor<?x2xbf16>, tensor<2x2xbf16>) -> tensor<?x2xbf16>
  %y = transformer.linear %e, %warg : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  %m = transformer.gated_mlp %y gate(%g) up(%g) down(%g) kind = silu
         : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  %l = transformer.logits %m, %t : (tensor<?x2xf32>, tensor<4x2xf32>) -> tensor<?x4xf32>
  return %l, %yb : tensor<?x4xf32>, tensor<?x2xbf16>
}

// -----

// IR printed without its weights: elided blobs in, elided blobs out.
// CHECK-LABEL: func @elided
// CHECK-DAG: onnx.Constant {value = dense_resource<__elided__.i8> : tensor<2x2xi8>}
// CHECK-DAG: onnx.Constant {value = dense_resource<__elided__.scale> : tensor<2xf32>}
func.func @elided(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %w = onnx.Constant {value = dense_resource<__elided__> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %y = transformer.linear %x, %w : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}
