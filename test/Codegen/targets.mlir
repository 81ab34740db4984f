// The target decides the NVVM chip, the PTX .target and what ptxas
// assembles for: a100 is sm_80, h100 and h200 sm_90. PTX ISA 8.0 for both.

// RUN: accelc %s -target=a100 -emit=kernels | FileCheck %s --check-prefix=A100-IR
// RUN: accelc %s -target=h200 -emit=kernels | FileCheck %s --check-prefix=H200-IR
// RUN: accelc %s -target=a100 -emit=nvvm | FileCheck %s --check-prefix=NVVM
// RUN: %if libdevice %{ accelc %s -target=a100 -emit=ptx | FileCheck %s --check-prefix=A100 %}
// RUN: %if libdevice %{ accelc %s -target=h100 -emit=ptx | FileCheck %s --check-prefix=H100 %}
// RUN: %if ptxas %{ accelc %s -target=a100 -emit=ptx -o %t.a100.ptx && %ptxas -arch=sm_80 -v %t.a100.ptx -o %t.a100.cubin 2>&1 | FileCheck %s --check-prefix=SM80 %}
// RUN: %if ptxas %{ accelc %s -target=h200 -emit=ptx -o %t.h200.ptx && %ptxas -arch=sm_90 -v %t.h200.ptx -o %t.h200.cubin 2>&1 | FileCheck %s --check-prefix=SM90 %}
// An sm_80 module is valid sm_90 input too (what the driver JIT does with an
// a100 plan's PTX on an H200).
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.a100.ptx -o %t.a100-on-sm90.cubin %}

// Without a GPU target there is nothing to generate for.
// RUN: not accelc %s -target=cpu -emit=ptx 2>&1 | FileCheck %s --check-prefix=CPU
// And the other levels read ONNX, not MLIR.
// RUN: not accelc %s -target=h200 -emit=fused 2>&1 | FileCheck %s --check-prefix=LEVEL

exec.arena @w weights size 1048576 align 64 section "weights"

exec.schedule @block mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %w = exec.weight "w" @w[0] : !exec.view<4096xf32>
  %gu = exec.alloc sizes(%t) : !exec.view<?x22016xbf16>
  %n = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  exec.rms_norm %x, %w -> %n {epsilon = 1.0e-06 : f64} : !exec.view<?x4096xbf16>, !exec.view<4096xf32> -> !exec.view<?x4096xbf16>
  %a = exec.alloc sizes(%t) : !exec.view<?x11008xbf16>
  exec.gated_act %gu -> %a {kind = #transformer<activation_kind silu>} : !exec.view<?x22016xbf16> -> !exec.view<?x11008xbf16>
}

// A100-IR: #nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">
// A100-IR-NOT: nvvm.griddepcontrol
// H200-IR: #nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">

// sm_90 kernels are written for programmatic dependent launch: they let the
// next kernel start, then wait for the previous one, before their first load
// (the plan's kernel_module.dependent_launch); sm_80 has no griddepcontrol.
// H200-IR-LABEL: gpu.func @rms_norm_h4096_bf16(
// H200-IR-NOT: llvm.load
// H200-IR: nvvm.griddepcontrol launch_dependents
// H200-IR-NEXT: nvvm.griddepcontrol wait
// H200-IR: llvm.load

// After lowering: LLVM and NVVM dialects, libdevice calls, no gpu/scf ops left.
// NVVM-LABEL: llvm.func @gated_act_silu_i11008_bf16(
// NVVM-SAME: nvvm.kernel
// NVVM: llvm.call @__nv_expf
// NVVM-LABEL: llvm.func @rms_norm_h4096_bf16(
// NVVM-SAME: nvvm.maxntid = array<i32: 512, 1, 1>
// NVVM: nvvm.read.ptx.sreg.tid.x
// NVVM: nvvm.shfl.sync bfly
// NVVM: nvvm.barrier0
// NVVM-NOT: scf.
// NVVM-NOT: gpu.func

// A100: .version 8.0
// A100: .target sm_80
// A100: .entry gated_act_silu_i11008_f32(
// A100-NOT: griddepcontrol
// H100: .target sm_90
// H100: .entry gated_act_silu_i11008_f32(
// H100-NOT: ld.global
// H100: griddepcontrol.launch_dependents;
// H100-NEXT: griddepcontrol.wait;
// H100: ld.global

// SM80-COUNT-6: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// SM90-COUNT-6: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// CPU: error: -emit=kernels, nvvm and ptx need a GPU target (-target=a100, h100 or h200)
// LEVEL: error: '{{.*}}targets.mlir' is MLIR; only -emit=kernels, nvvm and ptx read MLIR
