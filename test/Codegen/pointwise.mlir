// residual_add, activation, gated_act (and the activation of a gated_mlp with
// fused gate_up): grid-stride loops over 16-byte vectors, arithmetic in f32,
// exp/erf/tanh from libdevice.

// RUN: accelc %s -target=h100 -emit=kernels | FileCheck %s --check-prefix=IR
// RUN: %if libdevice %{ accelc %s -target=h100 -emit=ptx | FileCheck %s --check-prefix=PTX %}
// RUN: %if ptxas %{ accelc %s -target=h100 -emit=ptx -o %t.ptx && %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}

func.func @residual(%r: tensor<?x4096xbf16>, %b: tensor<?x4096xbf16>) -> tensor<?x4096xbf16> {
  %0 = transformer.residual_add %r, %b : tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}

func.func @act(%x: tensor<?x3072xf32>) -> tensor<?x3072xf32> {
  %0 = transformer.activation %x kind = gelu : tensor<?x3072xf32>
  return %0 : tensor<?x3072xf32>
}

func.func @gated(%gu: tensor<?x22016xbf16>) -> tensor<?x11008xbf16> {
  %0 = transformer.gated_act %gu kind = silu : tensor<?x22016xbf16> -> tensor<?x11008xbf16>
  return %0 : tensor<?x11008xbf16>
}

// The same kernel serves a gated_mlp's activation between its GEMMs (one
// gated_act_gelu_tanh_i8192 for both ops below, so it appears once).
func.func @mlp(%x: tensor<?x3072xbf16>, %gu: tensor<16384x3072xbf16>, %d: tensor<3072x8192xbf16>,
               %a: tensor<?x16384xbf16>) -> (tensor<?x3072xbf16>, tensor<?x8192xbf16>) {
  %0 = transformer.gated_mlp %x gate_up(%gu) down(%d) kind = gelu_tanh
         : (tensor<?x3072xbf16>, tensor<16384x3072xbf16>, tensor<3072x8192xbf16>) -> tensor<?x3072xbf16>
  %1 = transformer.gated_act %a kind = gelu_tanh : tensor<?x16384xbf16> -> tensor<?x8192xbf16>
  return %0, %1 : tensor<?x3072xbf16>, tensor<?x8192xbf16>
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
