// RUN: accel-opt %s -split-input-file -accel-lower-to-exec | FileCheck %s
// RUN: accel-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(accel-partition{tp-size=2}),accel-lower-to-exec)' | FileCheck %s --check-prefix=TP2
//
// Moe.cpp: transformer.moe becomes one exec.moe step whose weights are
// exec.weight views of the stacked constants; absent operands stay absent.

// CHECK-LABEL: exec.schedule @main mixed
// CHECK: %[[X:.+]] = exec.alloc sizes(%{{.+}}) : !exec.view<?x8xf32>
// CHECK: exec.embedding
// CHECK-DAG: %[[R:.+]] = exec.weight {{.+}} : !exec.view<4x8xf32>
// CHECK-DAG: %[[GU:.+]] = exec.weight {{.+}} : !exec.view<4x8x8xf32>
// CHECK-DAG: %[[D:.+]] = exec.weight {{.+}} : !exec.view<4x8x4xf32>
// CHECK: %[[Y:.+]] = exec.alloc sizes(%{{.+}}) : !exec.view<?x8xf32>
// CHECK-NEXT: exec.moe %[[X]] router(%[[R]] : !exec.view<4x8xf32>) gate_up(%[[GU]] : !exec.view<4x8x8xf32>) down(%[[D]] : !exec.view<4x8x4xf32>) -> %[[Y]] {kind = #transformer<activation_kind silu>, num_experts = 4 : i64, routing = #transformer<moe_routing renormalize>, top_k = 2 : i64} : !exec.view<?x8xf32> -> !exec.view<?x8xf32>
// CHECK: exec.step_output logits %[[Y]]
// Partitioned for two ranks: each holds every expert's half of I = 4, the
// weights carry both ranks' shards, and an all_reduce follows the step.
// TP2-LABEL: exec.schedule @main mixed
// TP2-DAG: exec.weight {{.+}} {shards = [{{.+}}]} : !exec.view<4x4x8xf32>
// TP2-DAG: exec.weight {{.+}} {shards = [{{.+}}]} : !exec.view<4x8x2xf32>
// TP2: exec.moe %{{.+}} router(%{{.+}} : !exec.view<4x8xf32>) gate_up(%{{.+}} : !exec.view<4x4x8xf32>) down(%{{.+}} : !exec.view<4x8x2xf32>) -> %[[P:[^ ]+]]
// TP2: exec.collective all_reduce sum %[[P]]
func.func @mixtral(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x8xf32> {
  %table = onnx.Constant {value = dense<0.25> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %x = transformer.embedding %table[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %r = onnx.Constant {value = dense<0.1> : tensor<4x8xf32>} : () -> tensor<4x8xf32>
  %gu = onnx.Constant {value = dense<0.2> : tensor<4x8x8xf32>} : () -> tensor<4x8x8xf32>
  %d = onnx.Constant {value = dense<0.3> : tensor<4x8x4xf32>} : () -> tensor<4x8x4xf32>
  %y = transformer.moe %x router(%r) gate_up(%gu) down(%d) kind = silu routing = renormalize
         {num_experts = 4 : i64, top_k = 2 : i64}
         : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4x8x8xf32>, tensor<4x8x4xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// Every optional operand: a router bias, separate gate and up, a gated
// shared expert.
// CHECK-LABEL: exec.schedule @main mixed
// CHECK: exec.moe %{{.+}} router(%{{.+}} : !exec.view<4x8xf32>) router_bias(%{{.+}} : !exec.view<4xf32>) gate(%{{.+}} : !exec.view<4x2x8xf32>) up(%{{.+}} : !exec.view<4x2x8xf32>) down(%{{.+}} : !exec.view<4x8x2xf32>) shared_gate_up(%{{.+}} : !exec.view<4x8xf32>) shared_down(%{{.+}} : !exec.view<8x2xf32>) shared_expert_gate(%{{.+}} : !exec.view<1x8xf32>) -> %{{.+}} {kind = #transformer<activation_kind gelu>, num_experts = 4 : i64, routing = #transformer<moe_routing softmax>, top_k = 3 : i64}
func.func @qwen2_moe(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x8xf32> {
  %table = onnx.Constant {value = dense<0.25> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %x = transformer.embedding %table[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %r = onnx.Constant {value = dense<0.1> : tensor<4x8xf32>} : () -> tensor<4x8xf32>
  %rb = onnx.Constant {value = dense<0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %g = onnx.Constant {value = dense<0.2> : tensor<4x2x8xf32>} : () -> tensor<4x2x8xf32>
  %u = onnx.Constant {value = dense<0.4> : tensor<4x2x8xf32>} : () -> tensor<4x2x8xf32>
  %d = onnx.Constant {value = dense<0.3> : tensor<4x8x2xf32>} : () -> tensor<4x8x2xf32>
  %sgu = onnx.Constant {value = dense<0.5> : tensor<4x8xf32>} : () -> tensor<4x8xf32>
  %sd = onnx.Constant {value = dense<0.6> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %sg = onnx.Constant {value = dense<0.7> : tensor<1x8xf32>} : () -> tensor<1x8xf32>
  %y = transformer.moe %x router(%r) router_bias(%rb) gate(%g) up(%u) down(%d) shared_gate_up(%sgu)
         shared_down(%sd) shared_expert_gate(%sg) kind = gelu routing = softmax
         {num_experts = 4 : i64, top_k = 3 : i64}
         : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4x2x8xf32>, tensor<4x2x8xf32>, tensor<4x8x2xf32>, tensor<4x8xf32>, tensor<8x2xf32>, tensor<1x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
