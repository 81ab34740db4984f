// A hidden size that no 16-byte vector divides (4098 = 2 x 2049, so neither
// 4 f32 nor 8 bf16/f16) takes the scalar path: one element per access, no
// vector loads in the IR or the PTX, and still nothing in local memory.
// 4100 divides into 4 f32 but not into 8 bf16: vectors for f32 only.

// RUN: accelc %s -target=h200 -emit=kernels | FileCheck %s --check-prefix=IR
// RUN: %if libdevice %{ accelc %s -target=h200 -emit=ptx | FileCheck %s --check-prefix=PTX %}
// RUN: %if ptxas %{ accelc %s -target=h200 -emit=ptx -o %t.ptx && %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}

exec.arena @w weights size 1048576 align 64 section "weights"

exec.schedule @odd mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4098xbf16>
  %w = exec.weight "w" @w[0] : !exec.view<4098xf32>
  %r = exec.alloc sizes(%t) : !exec.view<?x4098xbf16>
  %n = exec.alloc sizes(%t) : !exec.view<?x4098xbf16>
  exec.rms_norm %x, %w -> %n {epsilon = 1.0e-06 : f64} : !exec.view<?x4098xbf16>, !exec.view<4098xf32> -> !exec.view<?x4098xbf16>
  %s = exec.alloc sizes(%t) : !exec.view<?x4098xbf16>
  exec.residual_add %x, %r -> %s : !exec.view<?x4098xbf16>
}

exec.schedule @mixed mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4100xf16>
  %w = exec.weight "w" @w[0] : !exec.view<4100xf32>
  %n = exec.alloc sizes(%t) : !exec.view<?x4100xf16>
  exec.rms_norm %x, %w -> %n {epsilon = 1.0e-06 : f64} : !exec.view<?x4100xf16>, !exec.view<4100xf32> -> !exec.view<?x4100xf16>
}

// IR-LABEL: gpu.func @residual_add_h4098_f32(
// IR-NOT: vector<4x
// IR: llvm.load {{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> vector<1xf32>
// IR-LABEL: gpu.func @residual_add_h4098_bf16(
// IR-NOT: vector<8x
// IR: llvm.load {{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> vector<1xbf16>
// IR-LABEL: gpu.func @rms_norm_h4098_f32(
// 4098 elements, one per thread and step, 1024 threads a block.
// IR-SAME: known_block_size = array<i32: 1024, 1, 1>
// IR-NOT: vector<4x
// IR: scf.for {{.*}} to %c4098 step %c1024
// IR-LABEL: gpu.func @rms_norm_h4098_bf16(
// IR-NOT: vector<8x
// IR: llvm.load {{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> vector<1xbf16>
// IR-LABEL: gpu.func @rms_norm_h4100_f32(
// IR: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// IR-LABEL: gpu.func @rms_norm_h4100_f16(
// IR-NOT: vector<8x
// IR: llvm.load {{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> vector<1xf16>

// PTX-NOT: .local
// PTX-LABEL: .entry residual_add_h4098_f32(
// PTX-NOT: .v4
// PTX: ld.global.b32
// PTX-LABEL: .entry residual_add_h4098_bf16(
// PTX-NOT: .v4
// PTX: ld.global.b16
// PTX-LABEL: .entry rms_norm_h4098_f32(
// PTX-NOT: .v4
// PTX: ld.global.b32
// PTX-LABEL: .entry rms_norm_h4098_bf16(
// PTX-NOT: .v4
// PTX: ld.global.b16
// PTX-LABEL: .entry rms_norm_h4098_f16(
// PTX-NOT: .v4
// PTX-LABEL: .entry rms_norm_h4100_f32(
// PTX: ld.global.v4.b32
// PTX-LABEL: .entry rms_norm_h4100_bf16(
// PTX-NOT: ld.global.v4
// PTX-NOT: .local

// SPILLS-COUNT-9: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// SPILLS-NOT: spill
