// RUN: accel-opt %s -pass-pipeline='builtin.module(func.func(accel-narrow-weights{dtype=bf16}))' | FileCheck %s
// RUN: accel-opt %s -pass-pipeline='builtin.module(func.func(accel-narrow-weights{dtype=f16}))' | FileCheck %s --check-prefix=F16
// RUN: accel-opt %s -pass-pipeline='builtin.module(func.func(accel-quantize-weights))' | FileCheck %s --check-prefix=I8
// RUN: accel-opt %s -pass-pipeline='builtin.module(func.func(accel-quantize-weights{dtype=f8E4M3FN granularity=per_tensor}))' | FileCheck %s --check-prefix=FP8
//
// transformer.moe under -precision: bf16/fp16 narrow the experts' and the
// shared expert's GEMM weights (the router, its bias and the shared
// expert's gate stay f32: they decide the routing); the quantising modes
// (int8-weight, fp8, w8a8, w8a8-fp8) quantise the experts' weights per
// expert and row, whatever the granularity, with f32 scales [E, rows]; the
// router and the shared expert stay f32.

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
// I8-LABEL: func @moe
// I8-DAG: %[[GU:.+]] = onnx.Constant {value = dense<127> : tensor<2x4x2xi8>}
// I8-DAG: %[[GUS:.+]] = onnx.Constant {value = dense<0.00787401571> : tensor<2x4xf32>}
// I8-DAG: %[[D:.+]] = onnx.Constant {value = dense<127> : tensor<2x2x2xi8>}
// I8-DAG: %[[DS:.+]] = onnx.Constant {value = dense<0.00196850393> : tensor<2x2xf32>}
// I8-DAG: %[[SGU:.+]] = onnx.Constant {value = dense<7.500000e-01> : tensor<4x2xf32>}
// I8: transformer.moe %{{.+}} router(%{{.+}}) router_bias(%{{.+}}) gate_up(%[[GU]]) down(%[[D]]) shared_gate_up(%[[SGU]]) shared_down(%{{.+}}) shared_expert_gate(%{{.+}}) gate_up_scale(%[[GUS]]) down_scale(%[[DS]])
// FP8-LABEL: func @moe
// FP8: transformer.moe {{.+}} : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2x4x2xf8E4M3FN>, tensor<2x2x2xf8E4M3FN>, tensor<4x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>, tensor<2x4xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
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

// Separate gate and up, rows of different magnitudes: a scale per expert
// and row (max |row| / 127 and / 448).
// I8-LABEL: func @rows
// I8-DAG: onnx.Constant {value = dense<{{\[}}{{\[}}[127, -64], [32, -127]], {{\[}}[-127, 127], [127, 0]]]> : tensor<2x2x2xi8>}
// I8-DAG: onnx.Constant {value = dense<{{\[}}[0.0157480314, 0.0314960629], [0.0393700786, 0.00393700786]]> : tensor<2x2xf32>}
// FP8-LABEL: func @rows
// FP8-DAG: onnx.Constant {value = dense<{{\[}}[0.00446428591, 0.00892857183], [0.0111607146, 0.00111607148]]> : tensor<2x2xf32>}
// FP8: transformer.moe %{{.+}} gate(%{{.+}}) up(%{{.+}}) down(%{{.+}}) gate_scale(%{{.+}}) up_scale(%{{.+}}) down_scale(%{{.+}})
func.func @rows(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %r = onnx.Constant {value = dense<0.5> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %g = onnx.Constant {value = dense<[[[2.0, -1.0], [1.0, -4.0]], [[-5.0, 5.0], [0.5, 0.0]]]> : tensor<2x2x2xf32>} : () -> tensor<2x2x2xf32>
  %u = onnx.Constant {value = dense<0.25> : tensor<2x2x2xf32>} : () -> tensor<2x2x2xf32>
  %d = onnx.Constant {value = dense<0.125> : tensor<2x2x2xf32>} : () -> tensor<2x2x2xf32>
  %y = transformer.moe %x router(%r) gate(%g) up(%u) down(%d) kind = silu routing = softmax
         {num_experts = 2 : i64, top_k = 2 : i64}
         : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}
