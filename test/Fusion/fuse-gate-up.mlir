// RUN: accel-opt %s -split-input-file -accel-fuse-gate-up | FileCheck %s
//
// Gated MLPs as accel-raise-mlp leaves them (hidden 64 → 2, intermediate
// 128 → 2 here).

// Llama's separate gate_proj and up_proj (blobs): one [2 * intermediate,
// hidden] blob, gate rows first.
// CHECK-LABEL: func @llama_blobs
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x2xf32>)
// CHECK-DAG: %[[D:.+]] = onnx.Constant {value = dense_resource<down> : tensor<2x2xf32>}
// CHECK-DAG: %[[GU:.+]] = onnx.Constant {value = dense_resource<gate.gate_up> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
// CHECK: %[[M:.+]] = transformer.gated_mlp %[[X]] gate_up(%[[GU]]) down(%[[D]]) kind = silu : (tensor<?x2xf32>, tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
// CHECK-NEXT: return %[[M]]
// CHECK-NOT: onnx.Constant
// CHECK: gate.gate_up: "0x400000000000803F00000040000040400000804000000000000080BF00000000000000C0"
func.func @llama_blobs(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %g = onnx.Constant {value = dense_resource<gate> : tensor<2x2xf32>} : () -> tensor<2x2xf32> loc("gate_proj.weight")
  %u = onnx.Constant {value = dense_resource<up> : tensor<2x2xf32>} : () -> tensor<2x2xf32> loc("up_proj.weight")
  %d = onnx.Constant {value = dense_resource<down> : tensor<2x2xf32>} : () -> tensor<2x2xf32> loc("down_proj.weight")
  %m = transformer.gated_mlp %x gate(%g) up(%u) down(%d) kind = silu
         : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  return %m : tensor<?x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      gate: "0x040000000000803F000000400000404000008040",
      up: "0x0400000000000000000080BF00000000000000C0",
      down: "0x040000000000803F000000000000000000008040"
    }
  }
#-}

// -----

// Gemma's bf16 inline weights and gelu_tanh.
// CHECK-LABEL: func @gemma_inline
// CHECK: %[[GU:.+]] = onnx.Constant {value = dense<{{\[}}[1.000000e+00, 1.000000e+00], [1.000000e+00, 1.000000e+00], [2.000000e+00, 2.000000e+00], [2.000000e+00, 2.000000e+00]]> : tensor<4x2xbf16>}
// CHECK-NEXT: transformer.gated_mlp %{{.+}} gate_up(%[[GU]]) down(%{{.+}}) kind = gelu_tanh
func.func @gemma_inline(%x: tensor<?x2xbf16>, %d: tensor<2x2xbf16>) -> tensor<?x2xbf16> {
  %g = onnx.Constant {value = dense<1.0> : tensor<2x2xbf16>} : () -> tensor<2x2xbf16>
  %u = onnx.Constant {value = dense<2.0> : tensor<2x2xbf16>} : () -> tensor<2x2xbf16>
  %m = transformer.gated_mlp %x gate(%g) up(%u) down(%d) kind = gelu_tanh
         : (tensor<?x2xbf16>, tensor<2x2xbf16>, tensor<2x2xbf16>, tensor<2x2xbf16>) -> tensor<?x2xbf16>
  return %m : tensor<?x2xbf16>
}

// -----

// Elided blobs (IR printed without weights) give an elided fused blob.
// CHECK-LABEL: func @elided
// CHECK: %[[GU:.+]] = onnx.Constant {value = dense_resource<__elided__.gate_up> : tensor<4x2xf16>}
// CHECK-NEXT: transformer.gated_mlp %{{.+}} gate_up(%[[GU]])
func.func @elided(%x: tensor<?x2xf16>, %d: tensor<2x2xf16>) -> tensor<?x2xf16> {
  %g = onnx.Constant {value = dense_resource<__elided__> : tensor<2x2xf16>} : () -> tensor<2x2xf16>
  %u = onnx.Constant {value = dense_resource<__elided__> : tensor<2x2xf16>} : () -> tensor<2x2xf16>
  %m = transformer.gated_mlp %x gate(%g) up(%u) down(%d) kind = silu
         : (tensor<?x2xf16>, tensor<2x2xf16>, tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<?x2xf16>
  return %m : tensor<?x2xf16>
}

// -----

// Not fused: Phi3's gate_up form is already one GEMM.
// CHECK-LABEL: func @phi3_gate_up
// CHECK-NOT: onnx.Constant
// CHECK: transformer.gated_mlp %{{.+}} gate_up(%{{.+}}) down
func.func @phi3_gate_up(%x: tensor<?x2xf32>, %gu: tensor<4x2xf32>, %d: tensor<2x2xf32>) -> tensor<?x2xf32> {
  %m = transformer.gated_mlp %x gate_up(%gu) down(%d) kind = silu
         : (tensor<?x2xf32>, tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  return %m : tensor<?x2xf32>
}

// -----

// Not fused: the weights are function arguments, not constants; there is
// nothing to stack at compile time.
// CHECK-LABEL: func @argument_weights
// CHECK: transformer.gated_mlp %{{.+}} gate(%{{.+}}) up(%{{.+}}) down
func.func @argument_weights(%x: tensor<?x2xf32>, %g: tensor<2x2xf32>, %u: tensor<2x2xf32>,
                            %d: tensor<2x2xf32>) -> tensor<?x2xf32> {
  %m = transformer.gated_mlp %x gate(%g) up(%u) down(%d) kind = silu
         : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  return %m : tensor<?x2xf32>
}
