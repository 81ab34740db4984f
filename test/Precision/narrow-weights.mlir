// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-narrow-weights{dtype=bf16}))' | FileCheck %s
// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-narrow-weights{dtype=f16}))' | FileCheck %s --check-prefix=F16
// RUN: not accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-narrow-weights{dtype=f8}))' 2>&1 | FileCheck %s --check-prefix=BAD
//
// The policy of docs/precision.md: GEMM weights and the embedding table are
// stored narrow; biases, norm weights and activations stay f32.

// BAD: accel-narrow-weights: dtype must be bf16 or f16, not 'f8'

// A linear's weight (a blob) becomes bf16, rounded to nearest even:
// 1.0 (3F800000) → 3F80; 1.00390625 (3F808000, a tie, even below) → 3F80;
// 1.01171875 (3F818000, a tie, odd below) → 3F82; 1.005859375 (3F80C000)
// → 3F81 (above the half). Its bias and the norm weight stay f32, and so
// do x and the result.
// CHECK-LABEL: func @linear_and_norm
// CHECK-DAG: %[[W:.+]] = onnx.Constant {value = dense_resource<w.bf16> : tensor<2x2xbf16>} : () -> tensor<2x2xbf16>
// CHECK-DAG: %[[B:.+]] = onnx.Constant {value = dense_resource<b> : tensor<2xf32>} : () -> tensor<2xf32>
// CHECK-DAG: %[[N:.+]] = onnx.Constant {value = dense_resource<norm> : tensor<2xf32>} : () -> tensor<2xf32>
// CHECK: %[[X:.+]] = transformer.rms_norm %{{.+}}, %[[N]] {{.*}}: tensor<?x2xf32>, tensor<2xf32>
// CHECK: transformer.linear %[[X]], %[[W]] bias(%[[B]]) : (tensor<?x2xf32>, tensor<2x2xbf16>, tensor<2xf32>) -> tensor<?x2xf32>
// CHECK: w.bf16: "0x40000000803F803F823F813F"
// F16-LABEL: func @linear_and_norm
// F16: transformer.linear %{{.+}}, %{{.+}} bias(%{{.+}}) : (tensor<?x2xf32>, tensor<2x2xf16>, tensor<2xf32>) -> tensor<?x2xf32>
// 1.0 → 3C00; 1.00390625 → 3C04; 1.01171875 → 3C0C; 1.005859375 → 3C06.
// F16: w.f16: "0x40000000003C043C0C3C063C"
func.func @linear_and_norm(%h: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %n = onnx.Constant {value = dense_resource<norm> : tensor<2xf32>} : () -> tensor<2xf32>
  %w = onnx.Constant {value = dense_resource<w> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %b = onnx.Constant {value = dense_resource<b> : tensor<2xf32>} : () -> tensor<2xf32>
  %x = transformer.rms_norm %h, %n {epsilon = 1.0e-05 : f64} : tensor<?x2xf32>, tensor<2xf32>
  %y = transformer.linear %x, %w bias(%b) : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      norm: "0x040000000000803F0000803F",
      w: "0x040000000000803F0080803F0080813F00C0803F",
      b: "0x040000000000803F0000803F"
    }
  }
#-}

// -----

// Tied embeddings: one table read by the embedding and the lm head is
// converted once; the embedding's rows are widened back to the f32 residual
// stream, the logits stay f32. The gated MLP's weights narrow (inline ones
// stay inline).
// CHECK-LABEL: func @tied
// CHECK: %[[T:.+]] = onnx.Constant {value = dense<{{.+}}> : tensor<4x2xbf16>} : () -> tensor<4x2xbf16>
// CHECK: %[[GU:.+]] = onnx.Constant {value = dense<{{.+}}> : tensor<4x2xbf16>} : () -> tensor<4x2xbf16>
// CHECK: %[[D:.+]] = onnx.Constant {value = dense<{{.+}}> : tensor<2x2xbf16>} : () -> tensor<2x2xbf16>
// CHECK: %[[E:.+]] = transformer.embedding %[[T]][%{{.+}}] : (tensor<4x2xbf16>, tensor<?xi64>) -> tensor<?x2xf32>
// CHECK: %[[M:.+]] = transformer.gated_mlp %[[E]] gate_up(%[[GU]]) down(%[[D]]) kind = silu : (tensor<?x2xf32>, tensor<4x2xbf16>, tensor<2x2xbf16>) -> tensor<?x2xf32>
// CHECK: transformer.logits %[[M]], %[[T]] : (tensor<?x2xf32>, tensor<4x2xbf16>) -> tensor<?x4xf32>
func.func @tied(%ids: tensor<?xi64>) -> tensor<?x4xf32> {
  %t = onnx.Constant {value = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %gu = onnx.Constant {value = dense<0.5> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %d = onnx.Constant {value = dense<0.25> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %e = transformer.embedding %t[%ids] : (tensor<4x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
  %m = transformer.gated_mlp %e gate_up(%gu) down(%d) kind = silu
         : (tensor<?x2xf32>, tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  %l = transformer.logits %m, %t : (tensor<?x2xf32>, tensor<4x2xf32>) -> tensor<?x4xf32>
  return %l : tensor<?x4xf32>
}

// -----

// A weight that something else reads as well (here an onnx.Add) keeps its
// f32 value for that reader; the linear reads a converted copy.
// CHECK-LABEL: func @shared
// CHECK-DAG: %[[W:.+]] = onnx.Constant {value = dense<1.000000e+00> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
// CHECK-DAG: %[[WB:.+]] = onnx.Constant {value = dense<1.000000e+00> : tensor<2x2xbf16>} : () -> tensor<2x2xbf16>
// CHECK: transformer.linear %{{.+}}, %[[WB]] : (tensor<?x2xf32>, tensor<2x2xbf16>) -> tensor<?x2xf32>
// CHECK: onnx.Add %[[W]], %[[W]]
func.func @shared(%x: tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<2x2xf32>) {
  %w = onnx.Constant {value = dense<1.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %y = transformer.linear %x, %w : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  %s = "onnx.Add"(%w, %w) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %y, %s : tensor<?x2xf32>, tensor<2x2xf32>
}

// -----

// Nothing to do: a model computing in bf16 already, and a weight that is
// not a constant.
// CHECK-LABEL: func @untouched
// CHECK: transformer.linear %{{.+}}, %{{.+}} : (tensor<?x2xbf16>, tensor<2x2xbf16>) -> tensor<?x2xbf16>
// CHECK: transformer.linear %{{.+}}, %{{.+}} : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
func.func @untouched(%x: tensor<?x2xbf16>, %x32: tensor<?x2xf32>, %warg: tensor<2x2xf32>)
    -> (tensor<?x2xbf16>, tensor<?x2xf32>) {
  %w = onnx.Constant {value = dense<1.0> : tensor<2x2xbf16>} : () -> tensor<2x2xbf16>
  %y = transformer.linear %x, %w : (tensor<?x2xbf16>, tensor<2x2xbf16>) -> tensor<?x2xbf16>
  %z = transformer.linear %x32, %warg : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  return %y, %z : tensor<?x2xbf16>, tensor<?x2xf32>
}

// -----

// IR printed without its weights: an elided blob gives an elided blob.
// CHECK-LABEL: func @elided
// CHECK: onnx.Constant {value = dense_resource<__elided__.bf16> : tensor<2x2xbf16>}
func.func @elided(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %w = onnx.Constant {value = dense_resource<__elided__> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %y = transformer.linear %x, %w : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}
