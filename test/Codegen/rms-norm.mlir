// rms_norm and add_rms_norm: one block per row, hidden specialised, 16-byte
// vectors (4 f32 or 8 bf16/f16) when hidden divides into them.

// The gpu.module as built: every dtype variant, 16-byte vector accesses.
// RUN: accelc %s -target=h200 -emit=kernels | FileCheck %s --check-prefix=IR
// In PTX, 16-byte global loads and stores, a block reduction through shared
// memory, nothing in local memory.
// RUN: %if libdevice %{ accelc %s -target=h200 -emit=ptx | FileCheck %s --check-prefix=PTX %}
// ptxas agrees: no spills.
// RUN: %if ptxas %{ accelc %s -target=h200 -emit=ptx -o %t.ptx && %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}

exec.arena @w weights size 1048576 align 64 section "weights"

exec.schedule @norm mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %w = exec.weight "w" @w[0] : !exec.view<4096xf32>
  %n = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  exec.rms_norm %x, %w -> %n {epsilon = 1.0e-06 : f64} : !exec.view<?x4096xbf16>, !exec.view<4096xf32> -> !exec.view<?x4096xbf16>
}

exec.schedule @add_norm mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x2048xf32>
  %r = exec.alloc sizes(%t) : !exec.view<?x2048xf32>
  %w = exec.weight "w" @w[0] : !exec.view<2048xf32>
  %n = exec.alloc sizes(%t) : !exec.view<?x2048xf32>
  %s = exec.alloc sizes(%t) : !exec.view<?x2048xf32>
  exec.add_rms_norm %x, %r, %w -> %n, %s {epsilon = 1.0e-05 : f64, weight_offset = 1.0 : f64}
      : !exec.view<?x2048xf32>, !exec.view<?x2048xf32>, !exec.view<2048xf32> -> !exec.view<?x2048xf32>, !exec.view<?x2048xf32>
}

// IR: gpu.module @accel_kernels [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// IR-LABEL: gpu.func @add_rms_norm_h2048_f32(
// IR-SAME: workgroup(
// IR-SAME: known_block_size = array<i32: 512, 1, 1>
// IR: scf.for
// IR: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// IR: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// IR: math.fma {{.*}} : vector<4xf32>
// IR: gpu.shuffle xor
// IR: gpu.barrier
// IR: math.sqrt
// IR-LABEL: gpu.func @add_rms_norm_h2048_bf16(
// IR-SAME: known_block_size = array<i32: 256, 1, 1>
// IR: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// The sum is rounded to the activation dtype before it is normalised.
// IR: arith.truncf {{.*}} : vector<8xf32> to vector<8xbf16>
// IR: llvm.store {{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// IR: arith.extf {{.*}} : vector<8xbf16> to vector<8xf32>
// IR-LABEL: gpu.func @add_rms_norm_h2048_f16(
// IR-LABEL: gpu.func @rms_norm_h4096_f32(
// IR-SAME: known_block_size = array<i32: 1024, 1, 1>
// IR-LABEL: gpu.func @rms_norm_h4096_bf16(
// IR-SAME: known_block_size = array<i32: 512, 1, 1>
// IR: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// The f32 weights of a bf16 row: 8 of them, two 16-byte halves.
// IR: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf32>
// IR-LABEL: gpu.func @rms_norm_h4096_f16(

// PTX: .target sm_90
// PTX-NOT: .local
// PTX-LABEL: .entry add_rms_norm_h2048_f32(
// PTX: .maxntid 512, 1, 1
// PTX: ld.global.v4.b32
// PTX: st.global.v4.b32
// PTX: bar.sync
// PTX-LABEL: .entry add_rms_norm_h2048_bf16(
// PTX: ld.global.v4.b32
// PTX: cvt.rn.bf16x2.f32
// PTX: st.global.v4.b32
// PTX-LABEL: .entry rms_norm_h4096_bf16(
// PTX: .shared
// PTX: ld.global.v4.b32
// PTX: shfl.sync.bfly.b32
// PTX: st.global.v4.b32
// PTX-NOT: ld.global.b16
// PTX-NOT: .local

// SPILLS-COUNT-6: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// SPILLS-NOT: spill
