// RUN: accel-opt %s -split-input-file | accel-opt -split-input-file | FileCheck %s
//
// Round-trip of transformer.moe in each of its forms: fused or separate
// expert gate/up, a router bias, a shared expert with and without its gate,
// both routings, f16/bf16 weights under f32 activations.

// Mixtral: separate w1/w3 stacked as gate and up, renormalised top-2.
// CHECK-LABEL: func @mixtral
// CHECK: transformer.moe %{{.+}} router(%{{.+}}) gate(%{{.+}}) up(%{{.+}}) down(%{{.+}}) kind = silu routing = renormalize {num_experts = 8 : i64, top_k = 2 : i64} : (tensor<?x64xbf16>, tensor<8x64xbf16>, tensor<8x128x64xbf16>, tensor<8x128x64xbf16>, tensor<8x64x128xbf16>) -> tensor<?x64xbf16>
func.func @mixtral(%x: tensor<?x64xbf16>, %r: tensor<8x64xbf16>, %g: tensor<8x128x64xbf16>,
                   %u: tensor<8x128x64xbf16>, %d: tensor<8x64x128xbf16>) -> tensor<?x64xbf16> {
  %y = transformer.moe %x router(%r) gate(%g) up(%u) down(%d) kind = silu routing = renormalize
         {num_experts = 8 : i64, top_k = 2 : i64}
         : (tensor<?x64xbf16>, tensor<8x64xbf16>, tensor<8x128x64xbf16>, tensor<8x128x64xbf16>, tensor<8x64x128xbf16>) -> tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}

// -----

// Qwen2-MoE: fused experts, un-normalised top-4, a gated shared expert.
// CHECK-LABEL: func @qwen2_moe
// CHECK: transformer.moe %{{.+}} router(%{{.+}}) gate_up(%{{.+}}) down(%{{.+}}) shared_gate_up(%{{.+}}) shared_down(%{{.+}}) shared_expert_gate(%{{.+}}) kind = silu routing = softmax {num_experts = 6 : i64, top_k = 4 : i64} : (tensor<?x32xf32>, tensor<6x32xf32>, tensor<6x32x32xbf16>, tensor<6x32x16xbf16>, tensor<64x32xbf16>, tensor<32x32xbf16>, tensor<1x32xf32>) -> tensor<?x32xf32>
func.func @qwen2_moe(%x: tensor<?x32xf32>, %r: tensor<6x32xf32>, %gu: tensor<6x32x32xbf16>,
                     %d: tensor<6x32x16xbf16>, %sgu: tensor<64x32xbf16>, %sd: tensor<32x32xbf16>,
                     %sg: tensor<1x32xf32>) -> tensor<?x32xf32> {
  %y = transformer.moe %x router(%r) gate_up(%gu) down(%d) shared_gate_up(%sgu) shared_down(%sd)
         shared_expert_gate(%sg) kind = silu routing = softmax {num_experts = 6 : i64, top_k = 4 : i64}
         : (tensor<?x32xf32>, tensor<6x32xf32>, tensor<6x32x32xbf16>, tensor<6x32x16xbf16>, tensor<64x32xbf16>, tensor<32x32xbf16>, tensor<1x32xf32>) -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}

// -----

// A router bias, an ungated shared expert, gelu_tanh experts.
// CHECK-LABEL: func @bias_shared
// CHECK: transformer.moe %{{.+}} router(%{{.+}}) router_bias(%{{.+}}) gate_up(%{{.+}}) down(%{{.+}}) shared_gate_up(%{{.+}}) shared_down(%{{.+}}) kind = gelu_tanh routing = renormalize {num_experts = 4 : i64, top_k = 1 : i64}
func.func @bias_shared(%x: tensor<?x16xf16>, %r: tensor<4x16xf16>, %b: tensor<4xf16>,
                       %gu: tensor<4x8x16xf16>, %d: tensor<4x16x4xf16>, %sgu: tensor<8x16xf16>,
                       %sd: tensor<16x4xf16>) -> tensor<?x16xf16> {
  %y = transformer.moe %x router(%r) router_bias(%b) gate_up(%gu) down(%d) shared_gate_up(%sgu)
         shared_down(%sd) kind = gelu_tanh routing = renormalize {num_experts = 4 : i64, top_k = 1 : i64}
         : (tensor<?x16xf16>, tensor<4x16xf16>, tensor<4xf16>, tensor<4x8x16xf16>, tensor<4x16x4xf16>, tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<?x16xf16>
  return %y : tensor<?x16xf16>
}
