// residual_add, activation, gated_act (and the activation of a gated_mlp with
// fused gate_up): grid-stride loops over 16-byte vectors, arithmetic in f32,
// exp/erf/tanh from libdevice.

// RUN: accelc %s -target=h100 -emit=kernels | FileCheck %s --check-prefix=IR
// RUN: %if libdevice %{ accelc %s -target=h100 -emit=ptx | FileCheck %s --check-prefix=PTX %}
// RUN: %if ptxas %{ accelc %s -target=h100 -emit=ptx -o %t.ptx && %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}

exec.arena @w weights size 268435456 align 64 section "weights"

exec.schedule @residual mixed {
  %t = exec.step_size tokens
  %r = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %b = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %0 = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  exec.residual_add %r, %b -> %0 : !exec.view<?x4096xbf16>
}

exec.schedule @act mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x3072xf32>
  %0 = exec.alloc sizes(%t) : !exec.view<?x3072xf32>
  exec.activation %x -> %0 {kind = #transformer<activation_kind gelu>} : !exec.view<?x3072xf32>
}

exec.schedule @gated mixed {
  %t = exec.step_size tokens
  %gu = exec.alloc sizes(%t) : !exec.view<?x22016xbf16>
  %0 = exec.alloc sizes(%t) : !exec.view<?x11008xbf16>
  exec.gated_act %gu -> %0 {kind = #transformer<activation_kind silu>} : !exec.view<?x22016xbf16> -> !exec.view<?x11008xbf16>
}

// The same kernel serves a gated_mlp's activation between its GEMMs (one
// gated_act_gelu_tanh_i8192 for both ops below, so it appears once).
exec.schedule @mlp mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x3072xbf16>
  %gu = exec.weight "gu" @w[0] : !exec.view<16384x3072xbf16>
  %d = exec.weight "d" @w[0] : !exec.view<3072x8192xbf16>
  %a = exec.alloc sizes(%t) : !exec.view<?x16384xbf16>
  %0 = exec.alloc sizes(%t) : !exec.view<?x3072xbf16>
  exec.gated_mlp %x gate_up(%gu : !exec.view<16384x3072xbf16>) down(%d : !exec.view<3072x8192xbf16>) -> %0
      {kind = #transformer<activation_kind gelu_tanh>} : !exec.view<?x3072xbf16> -> !exec.view<?x3072xbf16>
  %1 = exec.alloc sizes(%t) : !exec.view<?x8192xbf16>
  exec.gated_act %a -> %1 {kind = #transformer<activation_kind gelu_tanh>} : !exec.view<?x16384xbf16> -> !exec.view<?x8192xbf16>
}

// IR-LABEL: gpu.func @activation_gelu_h3072_f32(
// IR-SAME: known_block_size = array<i32: 256, 1, 1>
// IR: gpu.grid_dim x
// IR: scf.for
// IR: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// IR: math.erf {{.*}} : vector<4xf32>
// IR: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// IR-LABEL: gpu.func @gated_act_gelu_tanh_i8192_f32(
// IR-LABEL: gpu.func @gated_act_gelu_tanh_i8192_bf16(
// IR: math.tanh {{.*}} : vector<8xf32>
// IR-NOT: gpu.func @gated_act_gelu_tanh_i8192_bf16(
// IR-LABEL: gpu.func @gated_act_silu_i11008_bf16(
// The gate and the up vector of one output vector: rows of 2 * 11008 / 8.
// IR: arith.divui {{.*}}, %c1376_i64 : i64
// IR: arith.muli {{.*}}, %c2752_i64 : i64
// IR: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// IR: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// IR: math.exp {{.*}} : vector<8xf32>
// IR: arith.truncf {{.*}} : vector<8xf32> to vector<8xbf16>
// IR: llvm.store {{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// IR-LABEL: gpu.func @residual_add_h4096_bf16(
// IR: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// IR: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// IR: arith.addf {{.*}} : vector<8xf32>

// PTX: .target sm_90
// PTX-NOT: .local
// PTX-LABEL: .entry activation_gelu_h3072_f32(
// PTX: ld.global.v4.b32
// PTX: st.global.v4.b32
// PTX-LABEL: .entry gated_act_silu_i11008_bf16(
// PTX: ld.global.v4.b32
// PTX: ld.global.v4.b32
// PTX: ex2.approx
// PTX: st.global.v4.b32
// PTX-LABEL: .entry residual_add_h4096_bf16(
// PTX: ld.global.v4.b32
// PTX: ld.global.v4.b32
// PTX: st.global.v4.b32
// PTX-NOT: .local

// 4 kernels x 3 dtypes, none of them spilling.
// SPILLS-COUNT-12: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// SPILLS-NOT: spill
