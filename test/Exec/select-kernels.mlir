// RUN: accel-opt %s -split-input-file -accel-exec-select-kernels="chip=sm_90" -verify-diagnostics | FileCheck %s
// RUN: accel-opt %s -split-input-file -accel-exec-select-kernels="chip=sm_80" -verify-diagnostics | FileCheck %s --check-prefix=SM80
// RUN: accel-opt %s -split-input-file -accel-exec-select-kernels="chip=sm_90 generate=false" -verify-diagnostics | FileCheck %s --check-prefix=NOGEN --implicit-check-not="exec.kernel" --implicit-check-not="kernel = @"
// NOGEN: exec.schedule
//
// accel-exec-select-kernels: one exec.kernel per specialisation of the
// steps lib/Codegen generates kernels for, named in their `kernel`.

// Two norms of one hidden size share a kernel; a residual_add and an
// activation get their own; a rotary of half_split style one with its
// heads, head_dim, rotary_dim and position type.
// CHECK-DAG: exec.kernel @rms_norm_h64() sm [90] image none implements "rms_norm" {hidden = 64 : i64}
// CHECK-DAG: exec.kernel @residual_add_h64() sm [90] image none implements "residual_add" {hidden = 64 : i64}
// CHECK-DAG: exec.kernel @activation_silu_h64() sm [90] image none implements "activation" {activation = "silu", hidden = 64 : i64}
// CHECK-DAG: exec.kernel @rotary_h4_d16_r16_freq_p64() sm [90] image none implements "rotary" {head_dim = 16 : i64, heads = 4 : i64, positions_i64 = true, rotary_dim = 16 : i64, tables = false}
// CHECK: exec.rms_norm %{{.+}} {epsilon = 1.000000e-05 : f64, kernel = @rms_norm_h64}
// CHECK: exec.rms_norm %{{.+}} {epsilon = 9.9999999999999995E-7 : f64, kernel = @rms_norm_h64}
// CHECK: exec.residual_add %{{.+}} {kernel = @residual_add_h64}
// CHECK: exec.activation %{{.+}} {kernel = @activation_silu_h64, kind = #transformer<activation_kind silu>}
// CHECK: exec.rotary %{{.+}} {kernel = @rotary_h4_d16_r16_freq_p64,
// An interleaved rotary keeps the hand-written kernel.
// CHECK: exec.rotary
// CHECK-NOT: kernel =
// CHECK-SAME: interleaved
// SM80: exec.kernel @rms_norm_h64() sm [80]
exec.arena @weights weights size 256 align 64 section "weights"
exec.schedule @main mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %w = exec.weight "norm" @weights[0] : !exec.view<64xf32>
  %x = exec.alloc sizes(%t) : !exec.view<?x64xf32>
  %y = exec.alloc sizes(%t) : !exec.view<?x64xf32>
  exec.rms_norm %x, %w -> %y {epsilon = 1.0e-05 : f64} : !exec.view<?x64xf32>, !exec.view<64xf32> -> !exec.view<?x64xf32>
  %z = exec.alloc sizes(%t) : !exec.view<?x64xf32>
  exec.rms_norm %y, %w -> %z {epsilon = 1.0e-06 : f64} : !exec.view<?x64xf32>, !exec.view<64xf32> -> !exec.view<?x64xf32>
  %s = exec.alloc sizes(%t) : !exec.view<?x64xf32>
  exec.residual_add %y, %z -> %s : !exec.view<?x64xf32>
  %a = exec.alloc sizes(%t) : !exec.view<?x64xf32>
  exec.activation %s -> %a {kind = #transformer<activation_kind silu>} : !exec.view<?x64xf32>
  %h = exec.view %a : !exec.view<?x64xf32> -> !exec.view<?x4x16xf32>
  %r = exec.alloc sizes(%t) : !exec.view<?x4x16xf32>
  exec.rotary %h, %pos -> %r {rotary_dim = 16 : i64, style = #transformer<rotary_style half_split>, theta = 1.0e+04 : f64} : !exec.view<?x4x16xf32>, !exec.view<?xi64> -> !exec.view<?x4x16xf32>
  %r2 = exec.alloc sizes(%t) : !exec.view<?x4x16xf32>
  exec.rotary %h, %pos -> %r2 {rotary_dim = 16 : i64, style = #transformer<rotary_style interleaved>, theta = 1.0e+04 : f64} : !exec.view<?x4x16xf32>, !exec.view<?xi64> -> !exec.view<?x4x16xf32>
  exec.step_output logits %z : !exec.view<?x64xf32>
}
