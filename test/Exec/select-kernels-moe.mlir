// RUN: accel-opt %s -accel-exec-select-kernels="chip=sm_90" | FileCheck %s
// RUN: accel-opt %s -accel-exec-select-kernels="chip=sm_90 generate=false" | FileCheck %s
// RUN: accel-opt %s -accel-exec-assign-buffers | FileCheck %s --check-prefix=CPU
//
// A mixture of experts runs on the GPU with the runtime's hand-written
// kernels (runtime/cuda/ops/Moe.cpp): a GPU plan keeps the step, which gets
// no generated kernel; the CPU pipeline, which does not run select-kernels,
// keeps it too.
// CHECK-NOT: exec.kernel
// CHECK: exec.moe
// CHECK-NOT: kernel =
// CHECK-SAME: top_k = 2 : i64}
// CPU: exec.moe
exec.schedule @main mixed {
  %x = exec.alloc : !exec.view<2x8xf32>
  %r = exec.alloc : !exec.view<4x8xf32>
  %gu = exec.alloc : !exec.view<4x6x8xf32>
  %d = exec.alloc : !exec.view<4x8x3xf32>
  %y = exec.alloc : !exec.view<2x8xf32>
  exec.moe %x router(%r : !exec.view<4x8xf32>) gate_up(%gu : !exec.view<4x6x8xf32>) down(%d : !exec.view<4x8x3xf32>) -> %y {kind = #transformer<activation_kind silu>, num_experts = 4 : i64, routing = #transformer<moe_routing renormalize>, top_k = 2 : i64} : !exec.view<2x8xf32> -> !exec.view<2x8xf32>
  exec.step_output logits %y : !exec.view<2x8xf32>
}
