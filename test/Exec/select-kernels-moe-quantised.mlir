// RUN: not accel-opt %s -accel-exec-select-kernels="chip=sm_90" 2>&1 | FileCheck %s
// RUN: accel-opt %s -accel-exec-assign-buffers | FileCheck %s --check-prefix=CPU
//
// Quantised experts (i8 / f8E4M3FN with scales per expert and row) have no
// GPU kernel yet: a GPU target refuses the step in one sentence; the CPU
// pipeline keeps it.
// CHECK: error: the mixture of experts' experts are quantised (i8 or f8E4M3FN), which the GPU moe kernel does not read yet; compile with -precision=bf16 or fp16 for a GPU, or for -target=cpu
// CPU: exec.moe {{.+}} down_scale(
exec.schedule @main mixed {
  %x = exec.alloc : !exec.view<2x8xf32>
  %r = exec.alloc : !exec.view<4x8xf32>
  %gu = exec.alloc : !exec.view<4x6x8xi8>
  %d = exec.alloc : !exec.view<4x8x3xi8>
  %gus = exec.alloc : !exec.view<4x6xf32>
  %ds = exec.alloc : !exec.view<4x8xf32>
  %y = exec.alloc : !exec.view<2x8xf32>
  exec.moe %x router(%r : !exec.view<4x8xf32>) gate_up(%gu : !exec.view<4x6x8xi8>) down(%d : !exec.view<4x8x3xi8>) gate_up_scale(%gus : !exec.view<4x6xf32>) down_scale(%ds : !exec.view<4x8xf32>) -> %y {kind = #transformer<activation_kind silu>, num_experts = 4 : i64, routing = #transformer<moe_routing renormalize>, top_k = 2 : i64} : !exec.view<2x8xf32> -> !exec.view<2x8xf32>
}
