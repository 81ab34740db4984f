// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-pad-gemm-dims{multiple=4}))' | FileCheck %s
// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-pad-gemm-dims{multiple=0}))' | FileCheck %s --check-prefix=OFF
// RUN: not accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-pad-gemm-dims{multiple=-2}))' 2>&1 | FileCheck %s --check-prefix=NEG
//
// Intermediate sizes rounded up to a multiple of 4 with zero weights
// (hidden 2, intermediate 3 → 4 here).
// NEG: error: accel-pad-gemm-dims needs a multiple of 0 or more, got -2

// A fused gate_up [2I, H]: a zero row after the gate rows and after the up
// rows; down [H, I] gets a zero column.
// CHECK-LABEL: func @gate_up_inline
// CHECK-DAG: %[[GU:.+]] = onnx.Constant {value = dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00], [0.000000e+00, 0.000000e+00], [7.000000e+00, 8.000000e+00], [9.000000e+00, 1.000000e+01], [1.100000e+01, 1.200000e+01], [0.000000e+00, 0.000000e+00]]> : tensor<8x2xf32>}
// CHECK-DAG: %[[D:.+]] = onnx.Constant {value = dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 0.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00, 0.000000e+00]]> : tensor<2x4xf32>}
// CHECK: transformer.gated_mlp %{{.+}} gate_up(%[[GU]]) down(%[[D]]) kind = silu : (tensor<?x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>) -> tensor<?x2xf32>
// CHECK-NOT: tensor<6x2xf32>
// OFF-LABEL: func @gate_up_inline
// OFF: transformer.gated_mlp %{{.+}} : (tensor<?x2xf32>, tensor<6x2xf32>, tensor<2x3xf32>) -> tensor<?x2xf32>
func.func @gate_up_inline(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %gu = onnx.Constant {value = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0], [9.0, 10.0], [11.0, 12.0]]> : tensor<6x2xf32>} : () -> tensor<6x2xf32>
  %d = onnx.Constant {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %m = transformer.gated_mlp %x gate_up(%gu) down(%d) kind = silu
         : (tensor<?x2xf32>, tensor<6x2xf32>, tensor<2x3xf32>) -> tensor<?x2xf32>
  return %m : tensor<?x2xf32>
}

// -----

// Separate gate and up as blobs (bf16): a zero row each, the key suffixed.
// CHECK-LABEL: func @gate_and_up_blobs
// CHECK-DAG: %[[G:.+]] = onnx.Constant {value = dense_resource<gate.pad> : tensor<4x2xbf16>} : () -> tensor<4x2xbf16>
// CHECK-DAG: %[[U:.+]] = onnx.Constant {value = dense_resource<up.pad> : tensor<4x2xbf16>} : () -> tensor<4x2xbf16>
// CHECK-DAG: %[[D:.+]] = onnx.Constant {value = dense_resource<down.pad> : tensor<2x4xbf16>} : () -> tensor<2x4xbf16>
// CHECK: transformer.gated_mlp %{{.+}} gate(%[[G]]) up(%[[U]]) down(%[[D]]) kind = gelu_tanh
// The bytes (64-byte aligned blobs): bf16 1..6 with zeros inserted (0x3F80 =
// 1.0, 0x4000 = 2.0, ...).
// CHECK-DAG: down.pad: "0x40000000803F0040404000008040A040C0400000"
// CHECK-DAG: gate.pad: "0x40000000803F004040408040A040C04000000000"
func.func @gate_and_up_blobs(%x: tensor<?x2xbf16>) -> tensor<?x2xbf16> {
  %g = onnx.Constant {value = dense_resource<gate> : tensor<3x2xbf16>} : () -> tensor<3x2xbf16>
  %u = onnx.Constant {value = dense_resource<up> : tensor<3x2xbf16>} : () -> tensor<3x2xbf16>
  %d = onnx.Constant {value = dense_resource<down> : tensor<2x3xbf16>} : () -> tensor<2x3xbf16>
  %m = transformer.gated_mlp %x gate(%g) up(%u) down(%d) kind = gelu_tanh
         : (tensor<?x2xbf16>, tensor<3x2xbf16>, tensor<3x2xbf16>, tensor<2x3xbf16>) -> tensor<?x2xbf16>
  return %m : tensor<?x2xbf16>
}

{-#
  dialect_resources: {
    builtin: {
      gate: "0x02000000803F004040408040A040C040",
      up: "0x02000000803F004040408040A040C040",
      down: "0x02000000803F004040408040A040C040"
    }
  }
#-}

// -----

// Already a multiple, and weights that are not constants: unchanged.
// CHECK-LABEL: func @unchanged
// CHECK: transformer.gated_mlp %{{.+}} : (tensor<?x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>) -> tensor<?x2xf32>
// CHECK: transformer.gated_mlp %{{.+}} : (tensor<?x2xf32>, tensor<6x2xf32>, tensor<2x3xf32>) -> tensor<?x2xf32>
func.func @unchanged(%x: tensor<?x2xf32>, %gu: tensor<6x2xf32>) -> tensor<?x2xf32> {
  %gu4 = onnx.Constant {value = dense<1.0> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %d4 = onnx.Constant {value = dense<1.0> : tensor<2x4xf32>} : () -> tensor<2x4xf32>
  %a = transformer.gated_mlp %x gate_up(%gu4) down(%d4) kind = silu
         : (tensor<?x2xf32>, tensor<8x2xf32>, tensor<2x4xf32>) -> tensor<?x2xf32>
  %d = onnx.Constant {value = dense<1.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %b = transformer.gated_mlp %a gate_up(%gu) down(%d) kind = silu
         : (tensor<?x2xf32>, tensor<6x2xf32>, tensor<2x3xf32>) -> tensor<?x2xf32>
  return %b : tensor<?x2xf32>
}

// -----

// GPT-2's c_fc (bias, gelu epilogue) → c_proj: c_fc's rows and bias, its
// result type, c_proj's columns; c_proj's own bias is untouched.
// CHECK-LABEL: func @linear_pair
// CHECK-DAG: %[[W1:.+]] = onnx.Constant {value = dense<{{\[}}[1.000000e+00, 1.000000e+00], [2.000000e+00, 2.000000e+00], [3.000000e+00, 3.000000e+00], [0.000000e+00, 0.000000e+00]]> : tensor<4x2xf32>}
// CHECK-DAG: %[[B1:.+]] = onnx.Constant {value = dense<[5.000000e-01, 5.000000e-01, 5.000000e-01, 0.000000e+00]> : tensor<4xf32>}
// CHECK: %[[H:.+]] = transformer.linear %{{.+}}, %[[W1]] bias(%[[B1]]) activation = gelu_tanh : (tensor<?x2xf32>, tensor<4x2xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK: %[[W2:.+]] = onnx.Constant {value = dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 0.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00, 0.000000e+00]]> : tensor<2x4xf32>}
// CHECK: transformer.linear %[[H]], %[[W2]] bias(%{{.+}}) : (tensor<?x4xf32>, tensor<2x4xf32>, tensor<2xf32>) -> tensor<?x2xf32>
func.func @linear_pair(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %w1 = onnx.Constant {value = dense<[[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]> : tensor<3x2xf32>} : () -> tensor<3x2xf32>
  %b1 = onnx.Constant {value = dense<0.5> : tensor<3xf32>} : () -> tensor<3xf32>
  %w2 = onnx.Constant {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %b2 = onnx.Constant {value = dense<0.25> : tensor<2xf32>} : () -> tensor<2xf32>
  %h = transformer.linear %x, %w1 bias(%b1) activation = gelu_tanh
         : (tensor<?x2xf32>, tensor<3x2xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %y = transformer.linear %h, %w2 bias(%b2) : (tensor<?x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// A linear whose result has another use, one that feeds a non-linear, and
// a quantised one: unchanged.
// CHECK-LABEL: func @linears_unchanged
// CHECK-NOT: tensor<?x4xf32>
// CHECK-NOT: tensor<4x2
// CHECK: return
func.func @linears_unchanged(%x: tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x2xf32>) {
  %w1 = onnx.Constant {value = dense<1.0> : tensor<3x2xf32>} : () -> tensor<3x2xf32>
  %w2 = onnx.Constant {value = dense<1.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %h = transformer.linear %x, %w1 : (tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<?x3xf32>
  %y = transformer.linear %h, %w2 : (tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x2xf32>
  %k = transformer.linear %x, %w1 : (tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<?x3xf32>
  %a = transformer.activation %k kind = silu : tensor<?x3xf32>
  %q = onnx.Constant {value = dense<1> : tensor<3x2xi8>} : () -> tensor<3x2xi8>
  %s = onnx.Constant {value = dense<0.5> : tensor<3xf32>} : () -> tensor<3xf32>
  %g = transformer.linear %x, %q weight_scale(%s) granularity = per_channel
         : (tensor<?x2xf32>, tensor<3x2xi8>, tensor<3xf32>) -> tensor<?x3xf32>
  %z = transformer.linear %g, %w2 : (tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x2xf32>
  return %y, %h, %a, %z : tensor<?x2xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x2xf32>
}
