// RUN: accel-opt %s -accel-exec-select-kernels="chip=sm_90" -verify-diagnostics
// RUN: accel-opt %s -accel-exec-select-kernels="chip=sm_90 generate=false" -verify-diagnostics
// RUN: accel-opt %s -accel-exec-select-kernels="chip=sm_80 allow-onnx=true" | FileCheck %s
//
// An ONNX operator left by raising has no GPU kernel: refused, unless
// allow-onnx keeps it (the runtime then runs it on the host).
// CHECK-LABEL: exec.schedule @main
// CHECK: exec.onnx "Transpose"
exec.schedule @main mixed {
  %x = exec.alloc : !exec.view<4x8xf32>
  %y = exec.alloc : !exec.view<8x4xf32>
  // expected-error @+1 {{ONNX operator 'Transpose' was left by raising and has no GPU kernel}}
  exec.onnx "Transpose"(%x) -> (%y) {attrs = {perm = array<i64: 1, 0>}} : (!exec.view<4x8xf32>) -> (!exec.view<8x4xf32>)
  exec.step_output logits %y : !exec.view<8x4xf32>
}
