// RUN: accel-opt %s -split-input-file -accel-lower-to-exec | FileCheck %s
//
// Collectives/ lowering: all_reduce and all_gather become exec.collective
// over the plan's ranks, pp_transfer exec.pp_transfer; per-rank weights
// (accel.tp_shards) become an exec.weight's shards, and pipeline stages
// (accel.pp_stage, accel.pp_layers) carry over to the steps and the pool.

// CHECK-LABEL: module attributes {accel.tp_size = 2 : i64}
// CHECK: exec.weight "{{.*}}" @weights[0] {shards = [dense<1.000000e+00> : tensor<4x8xf32>, dense<2.000000e+00> : tensor<4x8xf32>]} : !exec.view<4x8xf32>
// CHECK: exec.collective all_reduce sum %[[X:.+]] -> %[[Y:.+]] group 2 : !exec.view<?x8xf32> -> !exec.view<?x8xf32>
// CHECK: exec.collective all_gather %[[P:.+]] -> %{{.+}} axis 1 group 2 : !exec.view<?x4xf32> -> !exec.view<?x8xf32>
module {
func.func @tp(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x8xf32> attributes {accel.tp_size = 2 : i64} {
  %table = onnx.Constant {accel.tp_shards = [dense<1.0> : tensor<4x8xf32>, dense<2.0> : tensor<4x8xf32>], value = dense<1.0> : tensor<4x8xf32>} : () -> tensor<4x8xf32>
  %x = transformer.embedding %table[%ids] {vocab_shards = 2 : i64} : (tensor<4x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %y = transformer.all_reduce %x kind = sum {group_size = 2} : tensor<?x8xf32>
  %w = onnx.Constant {value = dense<0.5> : tensor<4x8xf32>} : () -> tensor<4x8xf32>
  %p = transformer.linear %y, %w : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  %l = transformer.all_gather %p {axis = 1, group_size = 2} : tensor<?x4xf32> -> tensor<?x8xf32>
  return %l : tensor<?x8xf32>
}
}

// -----

// CHECK-LABEL: module attributes {accel.pp_size = 2 : i64}
// CHECK: exec.kv_pool @kv layers 2 block_size 16 kv_heads 1 head_dim 8 stages [1, 1] : f32
// CHECK: exec.embedding {{.+}} {accel.pp_stage = 0 : i64}
// CHECK: exec.pp_transfer %[[H:.+]] -> %{{.+}} from 0 to 1 {accel.pp_stage = 1 : i64} : !exec.view<?x8xf32>
module {
func.func @pp(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 2, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x8xf32> attributes {accel.pp_size = 2 : i64, accel.pp_layers = array<i64: 1, 1>} {
  %table = onnx.Constant {value = dense<1.0> : tensor<4x8xf32>} : () -> tensor<4x8xf32>
  %x = transformer.embedding %table[%ids] {accel.pp_stage = 0 : i64} : (tensor<4x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %h = transformer.pp_transfer %x {accel.pp_stage = 1 : i64, from_stage = 0, to_stage = 1} : tensor<?x8xf32>
  return %h : tensor<?x8xf32>
}
}

