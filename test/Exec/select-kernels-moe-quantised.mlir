// RUN: accel-opt %s -accel-exec-select-kernels="chip=sm_90" | FileCheck %s
// RUN: accel-opt %s -accel-exec-assign-buffers | FileCheck %s --check-prefix=CPU
//
// Quantised experts (i8 / f8E4M3FN with f32 scales per expert and row) run
// on the GPU with the runtime's hand-written moe kernels
// (runtime/cuda/ops/Moe.cpp, the _q GEMVs and dequantize_rows): a GPU plan
// keeps the step and its scales, with no generated kernel; so does the CPU
// pipeline.
// CHECK-NOT: exec.kernel
// CHECK: exec.moe
// CHECK-SAME: gate_up({{.+}}xi8>)
// CHECK-SAME: down({{.+}}xf8E4M3FN>)
// CHECK-SAME: gate_up_scale({{.+}}) down_scale(
// CHECK-NOT: kernel =
// CHECK-SAME: top_k = 2 : i64}
// CPU: exec.moe {{.+}} down_scale(
exec.schedule @main mixed {
  %x = exec.alloc : !exec.view<2x8xf32>
  %r = exec.alloc : !exec.view<4x8xf32>
  %gu = exec.alloc : !exec.view<4x6x8xi8>
  %d = exec.alloc : !exec.view<4x8x3xf8E4M3FN>
  %gus = exec.alloc : !exec.view<4x6xf32>
  %ds = exec.alloc : !exec.view<4x8xf32>
  %y = exec.alloc : !exec.view<2x8xf32>
  exec.moe %x router(%r : !exec.view<4x8xf32>) gate_up(%gu : !exec.view<4x6x8xi8>) down(%d : !exec.view<4x8x3xf8E4M3FN>) gate_up_scale(%gus : !exec.view<4x6xf32>) down_scale(%ds : !exec.view<4x8xf32>) -> %y {kind = #transformer<activation_kind silu>, num_experts = 4 : i64, routing = #transformer<moe_routing renormalize>, top_k = 2 : i64} : !exec.view<2x8xf32> -> !exec.view<2x8xf32>
  exec.step_output logits %y : !exec.view<2x8xf32>
}
