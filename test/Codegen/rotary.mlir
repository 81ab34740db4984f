// half_split rotary: one block per token, heads / head_dim / rotary_dim
// specialised, cos and sin of float(pos) * inv_freq[j] (libdevice) or read
// from f32 tables; pairs 16 bytes at a time when rotary_dim / 2 allows.

// RUN: accelc %s -target=h200 -emit=kernels | FileCheck %s --check-prefix=IR
// RUN: %if libdevice %{ accelc %s -target=h200 -emit=ptx | FileCheck %s --check-prefix=PTX %}
// RUN: %if ptxas %{ accelc %s -target=h200 -emit=ptx -o %t.ptx && %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}

// Llama: 32 heads of 128, all rotated, i64 positions, inverse frequencies.
exec.arena @w weights size 1048576 align 64 section "weights"

exec.schedule @llama mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  %0 = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  exec.rotary %q, %pos -> %0 {rotary_dim = 128 : i64, style = #transformer<rotary_style half_split>, theta = 1.0e+04 : f64}
      : !exec.view<?x32x128xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
}

// Phi3 LongRoPE: explicit f32 tables, i32 positions, 96 channels.
exec.schedule @tables mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi32>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x96xf16>
  %cos = exec.weight "cos" @w[0] : !exec.view<4096x48xf32>
  %sin = exec.weight "sin" @w[0] : !exec.view<4096x48xf32>
  %0 = exec.alloc sizes(%t) : !exec.view<?x32x96xf16>
  exec.rotary %q, %pos cos_sin(%cos, %sin : !exec.view<4096x48xf32>, !exec.view<4096x48xf32>) -> %0 {rotary_dim = 96 : i64, style = #transformer<rotary_style half_split>}
      : !exec.view<?x32x96xf16>, !exec.view<?xi32> -> !exec.view<?x32x96xf16>
}

// Partial rotary (GPT-NeoX style, 16 of 64 channels): 8 pairs a head do not
// fill a 16-byte bf16 vector, so bf16/f16 take the scalar path; the other 48
// channels are copied.
exec.schedule @partial mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %q = exec.alloc sizes(%t) : !exec.view<?x8x64xbf16>
  %0 = exec.alloc sizes(%t) : !exec.view<?x8x64xbf16>
  exec.rotary %q, %pos -> %0 {rotary_dim = 20 : i64, style = #transformer<rotary_style half_split>, theta = 1.0e+04 : f64}
      : !exec.view<?x8x64xbf16>, !exec.view<?xi64> -> !exec.view<?x8x64xbf16>
}

// Interleaved pairs stay with the hand-written kernel.
exec.schedule @gptj mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi32>
  %q = exec.alloc sizes(%t) : !exec.view<?x16x256xf16>
  %0 = exec.alloc sizes(%t) : !exec.view<?x16x256xf16>
  exec.rotary %q, %pos -> %0 {rotary_dim = 64 : i64, style = #transformer<rotary_style interleaved>, theta = 1.0e+04 : f64}
      : !exec.view<?x16x256xf16>, !exec.view<?xi32> -> !exec.view<?x16x256xf16>
}

// IR-NOT: interleaved
// IR-NOT: d256
// IR-LABEL: gpu.func @rotary_h32_d128_r128_freq_p64_bf16(
// IR-SAME: known_block_size = array<i32: 256, 1, 1>
// IR: llvm.load {{.*}} : !llvm.ptr<1> -> i64
// IR: arith.sitofp {{.*}} : i64 to f32
// IR: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf32>
// IR: math.cos {{.*}} : vector<8xf32>
// IR: math.sin {{.*}} : vector<8xf32>
// IR: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// IR: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// IR: arith.subf
// IR: arith.addf
// IR: llvm.store {{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// IR: llvm.store {{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// IR-LABEL: gpu.func @rotary_h32_d96_r96_tab_p32_f16(
// IR: llvm.load {{.*}} : !llvm.ptr<1> -> i32
// IR: arith.extsi
// IR-NOT: math.cos
// IR: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf32>
// IR: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf32>
// IR: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf16>
// IR-LABEL: gpu.func @rotary_h8_d64_r20_freq_p64_f32(
// 10 pairs and 44 copied channels per head: not a multiple of 4 either.
// IR: llvm.load {{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> vector<1xf32>
// IR-LABEL: gpu.func @rotary_h8_d64_r20_freq_p64_bf16(
// IR-NOT: vector<8xbf16>
// IR: llvm.load {{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> vector<1xbf16>
// The pass-through loop: 8 heads x 44 channels.
// IR: scf.for {{.*}} to %c352 step

// PTX-LABEL: .entry rotary_h32_d128_r128_freq_p64_bf16(
// PTX: ld.global.v4.b32
// PTX: st.global.v4.b32
// PTX-LABEL: .entry rotary_h32_d96_r96_tab_p32_f16(
// The tables need no argument reduction: no local memory at all.
// PTX-NOT: .local
// PTX: ld.global.v4.b32
// PTX-NOT: .local
// PTX: .entry rotary_h8_d64_r20_freq_p64_f32(

// libdevice's cosf/sinf reduce huge arguments through a small local array
// (as nvcc's do); ptxas keeps every kernel free of spills all the same.
// SPILLS-COUNT-9: 0 bytes spill stores, 0 bytes spill loads
// SPILLS-NOT: spill
