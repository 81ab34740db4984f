// RUN: accel-opt %s -pass-pipeline='builtin.module(func.func(accel-narrow-weights{dtype=bf16}))' | FileCheck %s
// RUN: accel-opt %s -pass-pipeline='builtin.module(func.func(accel-narrow-weights{dtype=f16}))' | FileCheck %s --check-prefix=F16
// RUN: not accel-opt %s -pass-pipeline='builtin.module(func.func(accel-quantize-weights))' 2>&1 | FileCheck %s --check-prefix=I8
// RUN: not accel-opt %s -pass-pipeline='builtin.module(func.func(accel-quantize-weights{dtype=f8E4M3FN}))' 2>&1 | FileCheck %s --check-prefix=FP8
//
// transformer.moe under -precision: bf16/fp16 narrow the experts' and the
// shared expert's GEMM weights (the router, its bias and the shared
// expert's gate stay f32: they decide the routing); the quantising modes
// refuse it in one sentence.

// CHECK-LABEL: func @moe
// CHECK-DAG: %[[R:.+]] = onnx.Constant {value = dense<5.000000e-01> : tensor<2x2xf32>}
// CHECK-DAG: %[[RB:.+]] = onnx.Constant {value = dense<1.000000e+00> : tensor<2xf32>}
// CHECK-DAG: %[[GU:.+]] = onnx.Constant {value = dense<1.00{{.+}}> : tensor<2x4x2xbf16>}
// CHECK-DAG: %[[D:.+]] = onnx.Constant {value = dense<2.500000e-01> : tensor<2x2x2xbf16>}
// CHECK-DAG: %[[SGU:.+]] = onnx.Constant {value = dense<7.500000e-01> : tensor<4x2xbf16>}
// CHECK-DAG: %[[SD:.+]] = onnx.Constant {value = dense<1.250000e-01> : tensor<2x2xbf16>}
// CHECK-DAG: %[[SG:.+]] = onnx.Constant {value = dense<3.000000e+00> : tensor<1x2xf32>}
// CHECK: transformer.moe %{{.+}} router(%[[R]]) router_bias(%[[RB]]) gate_up(%[[GU]]) down(%[[D]]) shared_gate_up(%[[SGU]]) shared_down(%[[SD]]) shared_expert_gate(%[[SG]]) kind = silu routing = renormalize {num_experts = 2 : i64, top_k = 1 : i64} : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2x4x2xbf16>, tensor<2x2x2xbf16>, tensor<4x2xbf16>, tensor<2x2xbf16>, tensor<1x2xf32>) -> tensor<?x2xf32>
// F16: transformer.moe {{.+}} : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2x4x2xf16>, tensor<2x2x2xf16>, tensor<4x2xf16>, tensor<2x2xf16>, tensor<1x2xf32>) -> tensor<?x2xf32>
// I8: error: -precision=int8-weight and w8a8 do not quantise mixture-of-experts weights yet (no per-expert scales nor a quantised moe kernel); use -precision=bf16 or fp16
// FP8: error: -precision=fp8 and w8a8-fp8 do not quantise mixture-of-experts weights yet (no per-expert scales nor a quantised moe kernel); use -precision=bf16 or fp16
func.func @moe(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %r = onnx.Constant {value = dense<0.5> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %rb = onnx.Constant {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %gu = onnx.Constant {value = dense<1.0> : tensor<2x4x2xf32>} : () -> tensor<2x4x2xf32>
  %d = onnx.Constant {value = dense<0.25> : tensor<2x2x2xf32>} : () -> tensor<2x2x2xf32>
  %sgu = onnx.Constant {value = dense<0.75> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %sd = onnx.Constant {value = dense<0.125> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %sg = onnx.Constant {value = dense<3.0> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %y = transformer.moe %x router(%r) router_bias(%rb) gate_up(%gu) down(%d) shared_gate_up(%sgu)
         shared_down(%sd) shared_expert_gate(%sg) kind = silu routing = renormalize
         {num_experts = 2 : i64, top_k = 1 : i64}
         : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2x4x2xf32>, tensor<2x2x2xf32>, tensor<4x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}
