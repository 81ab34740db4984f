// RUN: accel-opt %s -split-input-file -accel-exec-remove-dead-steps | FileCheck %s
//
// accel-exec-remove-dead-steps: a step whose outputs nothing else reads goes,
// with its buffers and views; steps that write the KV cache, and steps whose
// outputs are read (through views too), stay.

// The token ids handed to stage 1 (read by no step there) and the copy of
// them: both removed, then their buffers; the transfer the logits read stays.
// CHECK-LABEL: exec.schedule @pp
// CHECK: exec.embedding
// CHECK-NEXT: %[[H:.+]] = exec.alloc
// CHECK-NEXT: exec.pp_transfer %{{.+}} -> %[[H]] from 0 to 1
// CHECK-NEXT: exec.step_output logits %[[H]]
// CHECK-NEXT: }
exec.kv_pool @kv layers 2 block_size 16 kv_heads 1 head_dim 8 stages [1, 1] : f32
exec.arena @weights weights size 128 align 64 section "weights"
exec.schedule @pp mixed {
  %t = exec.step_size tokens
  %ids = exec.step_input token_ids : !exec.view<?xi64>
  %table = exec.weight "table" @weights[0] {value = dense<1.0> : tensor<4x8xf32>} : !exec.view<4x8xf32>
  %x = exec.alloc sizes(%t) : !exec.view<?x8xf32>
  exec.embedding %table[%ids] -> %x {accel.pp_stage = 0 : i64} : !exec.view<4x8xf32>, !exec.view<?xi64> -> !exec.view<?x8xf32>
  %c = exec.alloc sizes(%t) : !exec.view<?xi64>
  exec.copy %ids -> %c : !exec.view<?xi64> -> !exec.view<?xi64>
  %cv = exec.view %c : !exec.view<?xi64> -> !exec.view<1x?xi64>
  %i = exec.alloc sizes(%t) : !exec.view<1x?xi64>
  exec.pp_transfer %cv -> %i from 0 to 1 {accel.pp_stage = 1 : i64} : !exec.view<1x?xi64>
  %h = exec.alloc sizes(%t) : !exec.view<?x8xf32>
  exec.pp_transfer %x -> %h from 0 to 1 {accel.pp_stage = 1 : i64} : !exec.view<?x8xf32>
  exec.step_output logits %h : !exec.view<?x8xf32>
}

// -----

// A kv_write stays though nothing reads its inputs afterwards; a step read
// through a view of its output stays; a norm of an unread output goes.
// CHECK-LABEL: exec.schedule @kept
// CHECK: exec.kv_write
// CHECK: exec.residual_add
// CHECK-NOT: exec.rms_norm
// CHECK: exec.step_output
exec.kv_pool @kv layers 1 block_size 16 kv_heads 1 head_dim 8 : f32
exec.arena @weights weights size 128 align 64 section "weights"
exec.schedule @kept mixed {
  %t = exec.step_size tokens
  %ids = exec.step_input token_ids : !exec.view<?xi64>
  %table = exec.weight "table" @weights[0] {value = dense<1.0> : tensor<4x8xf32>} : !exec.view<4x8xf32>
  %w = exec.weight "w" @weights[64] {value = dense<1.0> : tensor<8xf32>} : !exec.view<8xf32>
  %x = exec.alloc sizes(%t) : !exec.view<?x8xf32>
  exec.embedding %table[%ids] -> %x : !exec.view<4x8xf32>, !exec.view<?xi64> -> !exec.view<?x8xf32>
  %k = exec.view %x : !exec.view<?x8xf32> -> !exec.view<?x1x8xf32>
  exec.kv_write %k, %k -> @kv[0] : !exec.view<?x1x8xf32>
  %n = exec.alloc sizes(%t) : !exec.view<?x8xf32>
  exec.rms_norm %x, %w -> %n {epsilon = 1.0e-05 : f64} : !exec.view<?x8xf32>, !exec.view<8xf32> -> !exec.view<?x8xf32>
  %s = exec.alloc sizes(%t) : !exec.view<?x8xf32>
  exec.residual_add %x, %x -> %s : !exec.view<?x8xf32>
  %sv = exec.view %s : !exec.view<?x8xf32> -> !exec.view<?x8xf32>
  exec.step_output logits %sv : !exec.view<?x8xf32>
}
