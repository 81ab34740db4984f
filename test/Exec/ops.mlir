// RUN: accel-opt %s -split-input-file | accel-opt -split-input-file | FileCheck %s
// RUN: accel-opt %s -split-input-file -mlir-print-op-generic | accel-opt -split-input-file | FileCheck %s

// Round trip of every exec op and type, in the custom and the generic form.

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

// Every element type a view supports, rank 0 to 3, static and dynamic.
// CHECK-LABEL: exec.kernel @view_types
// CHECK-SAME: (!exec.view<f32>, !exec.view<?x8xf16>, !exec.view<4x?xbf16>,
// CHECK-SAME: !exec.view<16x16xf8E4M3FN>, !exec.view<16x16xf8E5M2>,
// CHECK-SAME: !exec.view<32xi8>, !exec.view<31xi4>, !exec.view<?xi32>,
// CHECK-SAME: !exec.view<2x3x4xi64>, index)
exec.kernel @view_types(!exec.view<f32>, !exec.view<?x8xf16>, !exec.view<4x?xbf16>,
                        !exec.view<16x16xf8E4M3FN>, !exec.view<16x16xf8E5M2>,
                        !exec.view<32xi8>, !exec.view<31xi4>, !exec.view<?xi32>,
                        !exec.view<2x3x4xi64>, index)
    sm [] image none implements "test"

// -----

//===----------------------------------------------------------------------===//
// exec.arena
//===----------------------------------------------------------------------===//

// CHECK-LABEL: exec.arena @weights weights size 4194304 align 4096 section "weights"
// CHECK-NEXT: exec.arena @act activations size 1048576 align 256
// CHECK-NEXT: exec.arena @ws workspace size 65536 align 256
// CHECK-NEXT: exec.arena @inputs step_inputs size 16384 align 256
exec.arena @weights weights size 4194304 align 4096 section "weights"
exec.arena @act activations size 1048576 align 256
exec.arena @ws workspace size 65536 align 256
exec.arena @inputs step_inputs size 16384 align 256

// -----

//===----------------------------------------------------------------------===//
// exec.kv_pool
//===----------------------------------------------------------------------===//

// CHECK-LABEL: exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
// CHECK-NEXT: exec.kv_pool @kv8 layers 32 block_size 32 kv_heads 8 head_dim 128 : f8E4M3FN
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.kv_pool @kv8 layers 32 block_size 32 kv_heads 8 head_dim 128 : f8E4M3FN

// -----

//===----------------------------------------------------------------------===//
// exec.kernel
//===----------------------------------------------------------------------===//

// CHECK-LABEL: exec.kernel @rms_norm_4096(!exec.view<?x4096xbf16>, !exec.view<4096xbf16>, !exec.view<?x4096xbf16>, index)
// CHECK-SAME: sm [80, 90] image ptx|cubin implements "rms_norm" {epsilon = 9.99999974E-6 : f32}
exec.kernel @rms_norm_4096(!exec.view<?x4096xbf16>, !exec.view<4096xbf16>,
                           !exec.view<?x4096xbf16>, index)
    sm [80, 90] image cubin|ptx implements "rms_norm" {epsilon = 1.0e-05 : f32}

// A PTX-only kernel without a reference, and one with discardable attributes.
// CHECK: exec.kernel @ptx_only(!exec.view<?xf32>) sm [90] image ptx{{$}}
exec.kernel @ptx_only(!exec.view<?xf32>) sm [90] image ptx
// CHECK: exec.kernel @cubin_only(!exec.view<?xf32>) sm [80] image cubin implements "silu_mul" attributes {accel.origin = "mlp.0"}
exec.kernel @cubin_only(!exec.view<?xf32>) sm [80] image cubin implements "silu_mul" attributes {accel.origin = "mlp.0"}
// CHECK: exec.kernel @cpu_only() sm [] image none implements "nop"
exec.kernel @cpu_only() sm [] image none implements "nop"

// -----

//===----------------------------------------------------------------------===//
// exec.schedule, exec.step_size, exec.step_input, exec.step_output
//===----------------------------------------------------------------------===//

exec.arena @act activations size 1048576 align 256
exec.arena @inputs step_inputs size 65536 align 256

// CHECK-LABEL: exec.schedule @mixed mixed max_tokens 256 max_seqs 16 {
// CHECK-NEXT: %[[T:.+]] = exec.step_size tokens
// CHECK-NEXT: %[[S:.+]] = exec.step_size seqs
// CHECK-NEXT: exec.step_input token_ids @inputs[0] : !exec.view<?xi32>
// CHECK-NEXT: exec.step_input positions @inputs[1024] : !exec.view<?xi32>
// CHECK-NEXT: exec.step_input slot_mapping @inputs[2048] : !exec.view<?xi32>
// CHECK-NEXT: exec.step_input seq_lens @inputs[3072] : !exec.view<?xi32>
// CHECK-NEXT: exec.step_input query_start_loc @inputs[3328] : !exec.view<?xi32>
// CHECK-NEXT: exec.step_input block_tables @inputs[3584] : !exec.view<?x128xi32>
// CHECK-NEXT: exec.step_input logits_indices @inputs[11776] : !exec.view<?xi32>
// CHECK-NEXT: %[[L:.+]] = exec.slice @act[0] sizes(%[[S]]) : !exec.view<?x1000xf32>
// CHECK-NEXT: %[[H:.+]] = exec.slice @act[65536] sizes(%[[T]]) : !exec.view<?x512xf16>
// CHECK-NEXT: exec.step_output logits %[[L]] : !exec.view<?x1000xf32>
// CHECK-NEXT: exec.step_output hidden_states %[[H]] : !exec.view<?x512xf16>
// CHECK-NEXT: }
exec.schedule @mixed mixed max_tokens 256 max_seqs 16 {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %ids = exec.step_input token_ids @inputs[0] : !exec.view<?xi32>
  %pos = exec.step_input positions @inputs[1024] : !exec.view<?xi32>
  %slots = exec.step_input slot_mapping @inputs[2048] : !exec.view<?xi32>
  %lens = exec.step_input seq_lens @inputs[3072] : !exec.view<?xi32>
  %qsl = exec.step_input query_start_loc @inputs[3328] : !exec.view<?xi32>
  %bt = exec.step_input block_tables @inputs[3584] : !exec.view<?x128xi32>
  %li = exec.step_input logits_indices @inputs[11776] : !exec.view<?xi32>
  %logits = exec.slice @act[0] sizes(%s) : !exec.view<?x1000xf32>
  %hidden = exec.slice @act[65536] sizes(%t) : !exec.view<?x512xf16>
  exec.step_output logits %logits : !exec.view<?x1000xf32>
  exec.step_output hidden_states %hidden : !exec.view<?x512xf16>
}

// An empty schedule still has its block.
// CHECK-LABEL: exec.schedule @empty decode max_tokens 1 max_seqs 1 {
// CHECK-NEXT: }
exec.schedule @empty decode max_tokens 1 max_seqs 1 {
}

// -----

//===----------------------------------------------------------------------===//
// exec.slice, exec.weight
//===----------------------------------------------------------------------===//

exec.arena @weights weights size 1048576 align 256 section "weights"
exec.arena @act activations size 1048576 align 256

// CHECK-LABEL: exec.schedule @views
// CHECK: %[[T:.+]] = exec.step_size tokens
// CHECK: exec.slice @act[0] sizes(%[[T]], %[[T]]) : !exec.view<?x4x?xbf16>
// CHECK: exec.slice @act[65536] : !exec.view<16x16xf32>
// CHECK: exec.slice @act[66560] align 16 : !exec.view<f32>
// CHECK: exec.slice @act[66576] align 1 : !exec.view<3xi4>
// CHECK: exec.weight "model.norm.weight" @weights[0] : !exec.view<512xbf16>
// CHECK: exec.weight "lm_head.scale" @weights[1024] align 4 : !exec.view<f32>
// CHECK: exec.weight "layers.0.mlp.w8" @weights[1280] : !exec.view<512x512xi8>
exec.schedule @views mixed max_tokens 8 max_seqs 8 {
  %t = exec.step_size tokens
  %a = exec.slice @act[0] sizes(%t, %t) : !exec.view<?x4x?xbf16>
  %b = exec.slice @act[65536] : !exec.view<16x16xf32>
  %c = exec.slice @act[66560] align 16 : !exec.view<f32>
  %d = exec.slice @act[66576] align 1 : !exec.view<3xi4>
  %w = exec.weight "model.norm.weight" @weights[0] : !exec.view<512xbf16>
  %sc = exec.weight "lm_head.scale" @weights[1024] align 4 : !exec.view<f32>
  %w8 = exec.weight "layers.0.mlp.w8" @weights[1280] : !exec.view<512x512xi8>
}

// -----

//===----------------------------------------------------------------------===//
// exec.launch
//===----------------------------------------------------------------------===//

exec.arena @act activations size 1048576 align 256
exec.kernel @rms_norm(!exec.view<?x1024xbf16>, !exec.view<?x1024xbf16>, index)
    sm [80, 90] image ptx|cubin implements "rms_norm" {epsilon = 1.0e-06 : f32}
exec.kernel @fill() sm [90] image cubin

// CHECK-LABEL: exec.schedule @launches
// CHECK: %[[T:.+]] = exec.step_size tokens
// CHECK: %[[X:.+]] = exec.slice @act[0]
// CHECK: %[[Y:.+]] = exec.slice @act[262144]
// CHECK: exec.launch @rms_norm(%[[X]], %[[Y]], %[[T]]) grid(%[[T]], 1, 1) block(256, 1, 1) : (!exec.view<?x1024xbf16>, !exec.view<?x1024xbf16>, index)
// CHECK: exec.launch @rms_norm(%[[X]], %[[Y]], %[[T]]) grid(%[[T]] ceildiv 64, 8, 1) block(128, 2, 1) smem 65536 : (!exec.view<?x1024xbf16>, !exec.view<?x1024xbf16>, index)
// CHECK: exec.launch @fill() grid(1, 1, 1) block(32, 1, 1){{$}}
exec.schedule @launches mixed max_tokens 128 max_seqs 128 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x1024xbf16>
  %y = exec.slice @act[262144] sizes(%t) : !exec.view<?x1024xbf16>
  exec.launch @rms_norm(%x, %y, %t) grid(%t, 1, 1) block(256, 1, 1)
      : (!exec.view<?x1024xbf16>, !exec.view<?x1024xbf16>, index)
  exec.launch @rms_norm(%x, %y, %t) grid(%t ceildiv 64, 8, 1) block(128, 2, 1) smem 65536
      : (!exec.view<?x1024xbf16>, !exec.view<?x1024xbf16>, index)
  exec.launch @fill() grid(1, 1, 1) block(32, 1, 1)
}

// -----

//===----------------------------------------------------------------------===//
// exec.gemm
//===----------------------------------------------------------------------===//

exec.arena @weights weights size 16777216 align 256 section "weights"
exec.arena @act activations size 4194304 align 256

// CHECK-LABEL: exec.schedule @gemms
exec.schedule @gemms mixed max_tokens 64 max_seqs 64 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x1024xbf16>
  %y = exec.slice @act[131072] sizes(%t) : !exec.view<?x2048xbf16>
  %yf = exec.slice @act[393216] sizes(%t) : !exec.view<?x2048xf32>
  %w = exec.weight "w" @weights[0] : !exec.view<2048x1024xbf16>
  %wt = exec.weight "wt" @weights[4194304] : !exec.view<1024x2048xbf16>
  %bias = exec.weight "bias" @weights[8388608] : !exec.view<2048xbf16>
  // BF16 linear layer: B is the [N, K] weight.
  // CHECK: exec.gemm %[[X:.+]], %[[W:.+]] -> %[[Y:.+]] transpose_b compute f32 : !exec.view<?x1024xbf16>, !exec.view<2048x1024xbf16> -> !exec.view<?x2048xbf16>
  exec.gemm %x, %w -> %y transpose_b compute f32
      : !exec.view<?x1024xbf16>, !exec.view<2048x1024xbf16> -> !exec.view<?x2048xbf16>
  // Epilogue: bias, GELU and a residual (here in place), f32 output.
  // CHECK: exec.gemm %[[X]], %{{.+}} -> %[[YF:.+]] bias(%{{.+}} : !exec.view<2048xbf16>) residual(%[[YF]] : !exec.view<?x2048xf32>) activation gelu_tanh compute f32
  exec.gemm %x, %wt -> %yf bias(%bias : !exec.view<2048xbf16>) residual(%yf : !exec.view<?x2048xf32>)
      activation gelu_tanh compute f32
      : !exec.view<?x1024xbf16>, !exec.view<1024x2048xbf16> -> !exec.view<?x2048xf32>
  // A transposed: [K, M] with a static M.
  %at = exec.slice @act[1048576] : !exec.view<1024x32xbf16>
  %c = exec.slice @act[1114112] : !exec.view<32x2048xbf16>
  // CHECK: exec.gemm %{{.+}}, %{{.+}} -> %{{.+}} transpose_a activation relu compute f32 : !exec.view<1024x32xbf16>, !exec.view<1024x2048xbf16> -> !exec.view<32x2048xbf16>
  exec.gemm %at, %wt -> %c transpose_a activation relu compute f32
      : !exec.view<1024x32xbf16>, !exec.view<1024x2048xbf16> -> !exec.view<32x2048xbf16>
  // TF32 for f32 inputs.
  %af = exec.slice @act[1245184] : !exec.view<32x64xf32>
  %bf = exec.slice @act[1253376] : !exec.view<64x32xf32>
  %cf = exec.slice @act[1261568] : !exec.view<32x32xf32>
  // CHECK: exec.gemm %{{.+}}, %{{.+}} -> %{{.+}} compute tf32 : !exec.view<32x64xf32>, !exec.view<64x32xf32> -> !exec.view<32x32xf32>
  exec.gemm %af, %bf -> %cf compute tf32
      : !exec.view<32x64xf32>, !exec.view<64x32xf32> -> !exec.view<32x32xf32>
}

// -----

exec.arena @weights weights size 16777216 align 256 section "weights"
exec.arena @act activations size 4194304 align 256

// CHECK-LABEL: exec.schedule @fp8_int8_gemms
exec.schedule @fp8_int8_gemms mixed max_tokens 64 max_seqs 64 {
  %t = exec.step_size tokens
  %x8 = exec.slice @act[0] sizes(%t) : !exec.view<?x1024xf8E4M3FN>
  %y = exec.slice @act[65536] sizes(%t) : !exec.view<?x1024xbf16>
  %y8 = exec.slice @act[196608] sizes(%t) : !exec.view<?x1024xf8E4M3FN>
  %w8 = exec.weight "w8" @weights[0] : !exec.view<1024x1024xf8E4M3FN>
  %w5 = exec.weight "w5" @weights[1048576] : !exec.view<1024x1024xf8E5M2>
  %sa = exec.weight "sa" @weights[2097152] : !exec.view<f32>
  %sb = exec.weight "sb" @weights[2097408] : !exec.view<f32>
  %sc = exec.weight "sc" @weights[2097664] : !exec.view<f32>
  // CHECK: exec.gemm %{{.+}}, %{{.+}} -> %{{.+}} transpose_b scale_a(%[[SA:.+]]) scale_b(%[[SB:.+]]) compute f32 : !exec.view<?x1024xf8E4M3FN>, !exec.view<1024x1024xf8E4M3FN> -> !exec.view<?x1024xbf16>
  exec.gemm %x8, %w8 -> %y transpose_b scale_a(%sa) scale_b(%sb) compute f32
      : !exec.view<?x1024xf8E4M3FN>, !exec.view<1024x1024xf8E4M3FN> -> !exec.view<?x1024xbf16>
  // E4M3 x E5M2 into FP8 needs scale_c.
  // CHECK: exec.gemm %{{.+}}, %{{.+}} -> %{{.+}} transpose_b scale_a(%[[SA]]) scale_b(%[[SB]]) scale_c(%{{.+}}) compute f32 : !exec.view<?x1024xf8E4M3FN>, !exec.view<1024x1024xf8E5M2> -> !exec.view<?x1024xf8E4M3FN>
  exec.gemm %x8, %w5 -> %y8 transpose_b scale_a(%sa) scale_b(%sb) scale_c(%sc) compute f32
      : !exec.view<?x1024xf8E4M3FN>, !exec.view<1024x1024xf8E5M2> -> !exec.view<?x1024xf8E4M3FN>
  %xi = exec.slice @act[262144] sizes(%t) : !exec.view<?x1024xi8>
  %wi = exec.weight "wi" @weights[2097920] : !exec.view<1024x1024xi8>
  %yi = exec.slice @act[327680] sizes(%t) : !exec.view<?x1024xi32>
  // CHECK: exec.gemm %{{.+}}, %{{.+}} -> %{{.+}} transpose_b compute i32 : !exec.view<?x1024xi8>, !exec.view<1024x1024xi8> -> !exec.view<?x1024xi32>
  exec.gemm %xi, %wi -> %yi transpose_b compute i32
      : !exec.view<?x1024xi8>, !exec.view<1024x1024xi8> -> !exec.view<?x1024xi32>
}

// -----

//===----------------------------------------------------------------------===//
// exec.kv_write, exec.attention_prefill
//===----------------------------------------------------------------------===//

exec.arena @weights weights size 65536 align 256 section "weights"
exec.arena @act activations size 4194304 align 256
exec.arena @inputs step_inputs size 65536 align 256
exec.kv_pool @kv layers 2 block_size 16 kv_heads 2 head_dim 64 : bf16
exec.kv_pool @kv8 layers 2 block_size 16 kv_heads 2 head_dim 64 : f8E4M3FN

// CHECK-LABEL: exec.schedule @prefill
exec.schedule @prefill mixed max_tokens 512 max_seqs 8 {
  %t = exec.step_size tokens
  %slots = exec.step_input slot_mapping @inputs[0] : !exec.view<?xi32>
  %lens = exec.step_input seq_lens @inputs[2048] : !exec.view<?xi32>
  %qsl = exec.step_input query_start_loc @inputs[2304] : !exec.view<?xi32>
  %bt = exec.step_input block_tables @inputs[2560] : !exec.view<?x256xi32>
  %q = exec.slice @act[0] sizes(%t) : !exec.view<?x8x64xbf16>
  %k = exec.slice @act[524288] sizes(%t) : !exec.view<?x2x64xbf16>
  %v = exec.slice @act[655360] sizes(%t) : !exec.view<?x2x64xbf16>
  %o = exec.slice @act[786432] sizes(%t) : !exec.view<?x8x64xbf16>
  %ks = exec.weight "layers.0.k_scale" @weights[0] : !exec.view<f32>
  %vs = exec.weight "layers.0.v_scale" @weights[256] : !exec.view<f32>
  // CHECK: exec.kv_write %[[K:.+]], %[[V:.+]] -> @kv[0] slots(%[[SLOTS:.+]]) : !exec.view<?x2x64xbf16>
  exec.kv_write %k, %v -> @kv[0] slots(%slots) : !exec.view<?x2x64xbf16>
  // CHECK: exec.attention_prefill %[[Q:.+]], @kv[0] -> %[[O:.+]] query_start_loc(%[[QSL:.+]]) seq_lens(%[[LENS:.+]]) block_tables(%[[BT:.+]] : !exec.view<?x256xi32>) scale 1.250000e-01 causal : !exec.view<?x8x64xbf16>
  exec.attention_prefill %q, @kv[0] -> %o query_start_loc(%qsl) seq_lens(%lens)
      block_tables(%bt : !exec.view<?x256xi32>) scale 0.125 causal : !exec.view<?x8x64xbf16>
  // FP8 cache: quantise on write, dequantise on read; sliding window and soft cap.
  // CHECK: exec.kv_write %[[K]], %[[V]] -> @kv8[1] slots(%[[SLOTS]]) kv_scales(%[[KS:.+]], %[[VS:.+]]) : !exec.view<?x2x64xbf16>
  exec.kv_write %k, %v -> @kv8[1] slots(%slots) kv_scales(%ks, %vs) : !exec.view<?x2x64xbf16>
  // CHECK: exec.attention_prefill %[[Q]], @kv8[1] -> %[[O]] query_start_loc(%[[QSL]]) seq_lens(%[[LENS]]) block_tables(%[[BT]] : !exec.view<?x256xi32>) kv_scales(%[[KS]], %[[VS]]) scale 1.250000e-01 causal window 4096 softcap 5.000000e+01 : !exec.view<?x8x64xbf16>
  exec.attention_prefill %q, @kv8[1] -> %o query_start_loc(%qsl) seq_lens(%lens)
      block_tables(%bt : !exec.view<?x256xi32>) kv_scales(%ks, %vs) scale 0.125 causal
      window 4096 softcap 50.0 : !exec.view<?x8x64xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.attention_decode
//===----------------------------------------------------------------------===//

exec.arena @act activations size 1048576 align 256
exec.arena @ws workspace size 1048576 align 256
exec.arena @inputs step_inputs size 65536 align 256
exec.kv_pool @kv layers 1 block_size 16 kv_heads 2 head_dim 64 : f16

// CHECK-LABEL: exec.schedule @decode
exec.schedule @decode decode max_tokens 32 max_seqs 32 {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %lens = exec.step_input seq_lens @inputs[0] : !exec.view<?xi32>
  %bt = exec.step_input block_tables @inputs[256] : !exec.view<?x64xi32>
  %q = exec.slice @act[0] sizes(%t) : !exec.view<?x8x64xf16>
  // In a decode schedule tokens and seqs are the same size, so the output
  // may be sized by either.
  %o = exec.slice @act[32768] sizes(%s) : !exec.view<?x8x64xf16>
  // 32 seqs x 8 heads x 4 splits x (64 + 2) x 4 bytes = 270336.
  %ws = exec.slice @ws[0] : !exec.view<270336xi8>
  // CHECK: exec.attention_decode %[[Q:.+]], @kv[0] -> %[[O:.+]] seq_lens(%{{.+}}) block_tables(%{{.+}} : !exec.view<?x64xi32>) scale 1.250000e-01 : !exec.view<?x8x64xf16>
  exec.attention_decode %q, @kv[0] -> %o seq_lens(%lens) block_tables(%bt : !exec.view<?x64xi32>)
      scale 0.125 : !exec.view<?x8x64xf16>
  // CHECK: exec.attention_decode %[[Q]], @kv[0] -> %[[O]] seq_lens(%{{.+}}) block_tables(%{{.+}} : !exec.view<?x64xi32>) scale 1.250000e-01 window 128 split_kv 4 workspace(%{{.+}} : !exec.view<270336xi8>) : !exec.view<?x8x64xf16>
  exec.attention_decode %q, @kv[0] -> %o seq_lens(%lens) block_tables(%bt : !exec.view<?x64xi32>)
      scale 0.125 window 128 split_kv 4 workspace(%ws : !exec.view<270336xi8>) : !exec.view<?x8x64xf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.collective, exec.copy
//===----------------------------------------------------------------------===//

exec.arena @act activations size 4194304 align 256

// CHECK-LABEL: exec.schedule @collectives
exec.schedule @collectives mixed max_tokens 64 max_seqs 64 {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x1024xbf16>
  %y = exec.slice @act[131072] sizes(%t) : !exec.view<?x1024xbf16>
  // CHECK: exec.collective all_reduce sum %[[X:.+]] -> %[[X]] group 4 : !exec.view<?x1024xbf16> -> !exec.view<?x1024xbf16>
  exec.collective all_reduce sum %x -> %x group 4 : !exec.view<?x1024xbf16> -> !exec.view<?x1024xbf16>
  // CHECK: exec.collective all_reduce max %[[X]] -> %[[Y:.+]] group 2 : !exec.view<?x1024xbf16> -> !exec.view<?x1024xbf16>
  exec.collective all_reduce max %x -> %y group 2 : !exec.view<?x1024xbf16> -> !exec.view<?x1024xbf16>
  // Gather along the outermost dimension: straight into the output.
  %p = exec.slice @act[262144] : !exec.view<16x1024xf32>
  %g = exec.slice @act[327680] : !exec.view<64x1024xf32>
  // CHECK: exec.collective all_gather %{{.+}} -> %{{.+}} group 4 : !exec.view<16x1024xf32> -> !exec.view<64x1024xf32>
  exec.collective all_gather %p -> %g group 4 : !exec.view<16x1024xf32> -> !exec.view<64x1024xf32>
  // Vocab-parallel logits: gather along the vocabulary, staged in scratch.
  %part = exec.slice @act[589824] sizes(%s) : !exec.view<?x1000xf32>
  %logits = exec.slice @act[851968] sizes(%s) : !exec.view<?x4000xf32>
  %tmp = exec.slice @act[1900544] sizes(%s) : !exec.view<?x4000xf32>
  // CHECK: exec.collective all_gather %{{.+}} -> %{{.+}} axis 1 group 4 scratch(%{{.+}} : !exec.view<?x4000xf32>) : !exec.view<?x1000xf32> -> !exec.view<?x4000xf32>
  exec.collective all_gather %part -> %logits axis 1 group 4 scratch(%tmp : !exec.view<?x4000xf32>)
      : !exec.view<?x1000xf32> -> !exec.view<?x4000xf32>
  // CHECK: exec.collective reduce_scatter sum %{{.+}} -> %{{.+}} group 4 : !exec.view<64x1024xf32> -> !exec.view<16x1024xf32>
  exec.collective reduce_scatter sum %g -> %p group 4 : !exec.view<64x1024xf32> -> !exec.view<16x1024xf32>
  // CHECK: exec.copy %[[X]] -> %[[Y]] : !exec.view<?x1024xbf16> -> !exec.view<?x1024xbf16>
  exec.copy %x -> %y : !exec.view<?x1024xbf16> -> !exec.view<?x1024xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// A whole decode step
//===----------------------------------------------------------------------===//

// One tensor-parallel rank (of 2) of a one-layer Llama-style model, hidden
// 1024, 8 query heads and 2 KV heads of 128 (4 and 1 per rank): RMS norm,
// QKV projection, rotary + split, KV-cache write, decode attention, output
// projection, all-reduce.

exec.arena @weights weights size 4194304 align 256 section "weights"
exec.arena @act activations size 1048576 align 256
exec.arena @ws workspace size 1048576 align 256
exec.arena @inputs step_inputs size 16384 align 256
exec.kv_pool @kv layers 1 block_size 16 kv_heads 1 head_dim 128 : bf16

exec.kernel @rms_norm_1024(!exec.view<?x1024xbf16>, !exec.view<1024xbf16>,
                           !exec.view<?x1024xbf16>, index)
    sm [80, 90] image ptx|cubin implements "rms_norm" {epsilon = 1.0e-05 : f32}
exec.kernel @rope_split_qkv(!exec.view<?x768xbf16>, !exec.view<?xi32>,
                            !exec.view<?x4x128xbf16>, !exec.view<?x1x128xbf16>,
                            !exec.view<?x1x128xbf16>, index)
    sm [80, 90] image ptx|cubin implements "rotary_split" {theta = 1.0e+04 : f32}

// CHECK-LABEL: exec.schedule @decode_step decode max_tokens 64 max_seqs 64 {
// CHECK: %[[T:.+]] = exec.step_size tokens
// CHECK: %[[POS:.+]] = exec.step_input positions @inputs[0]
// CHECK: %[[SLOTS:.+]] = exec.step_input slot_mapping @inputs[256]
// CHECK: %[[LENS:.+]] = exec.step_input seq_lens @inputs[512]
// CHECK: %[[BT:.+]] = exec.step_input block_tables @inputs[768] : !exec.view<?x32xi32>
// CHECK: %[[WN:.+]] = exec.weight "model.layers.0.input_layernorm.weight" @weights[0]
// CHECK: %[[WQKV:.+]] = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[2048]
// CHECK: %[[WO:.+]] = exec.weight "model.layers.0.self_attn.o_proj.weight" @weights[1574912]
// CHECK: %[[X:.+]] = exec.slice @act[0] sizes(%[[T]])
// CHECK: %[[H:.+]] = exec.slice @act[131072] sizes(%[[T]])
// CHECK: %[[QKV:.+]] = exec.slice @act[262144] sizes(%[[T]])
// CHECK: %[[Q:.+]] = exec.slice @act[360448] sizes(%[[T]])
// CHECK: %[[K:.+]] = exec.slice @act[425984] sizes(%[[T]])
// CHECK: %[[V:.+]] = exec.slice @act[442368] sizes(%[[T]])
// CHECK: %[[A:.+]] = exec.slice @act[458752] sizes(%[[T]]) : !exec.view<?x4x128xbf16>
// CHECK: %[[A2:.+]] = exec.slice @act[458752] sizes(%[[T]]) : !exec.view<?x512xbf16>
// CHECK: %[[Y:.+]] = exec.slice @act[524288] sizes(%[[T]])
// CHECK: %[[WS:.+]] = exec.slice @ws[0] : !exec.view<532480xi8>
// CHECK: exec.launch @rms_norm_1024(%[[X]], %[[WN]], %[[H]], %[[T]]) grid(%[[T]], 1, 1) block(256, 1, 1)
// CHECK: exec.gemm %[[H]], %[[WQKV]] -> %[[QKV]] transpose_b compute f32
// CHECK: exec.launch @rope_split_qkv(%[[QKV]], %[[POS]], %[[Q]], %[[K]], %[[V]], %[[T]]) grid(%[[T]], 1, 1) block(128, 1, 1)
// CHECK: exec.kv_write %[[K]], %[[V]] -> @kv[0] slots(%[[SLOTS]])
// CHECK: exec.attention_decode %[[Q]], @kv[0] -> %[[A]] seq_lens(%[[LENS]]) block_tables(%[[BT]] : !exec.view<?x32xi32>) scale {{.+}} split_kv 4 workspace(%[[WS]] : !exec.view<532480xi8>)
// CHECK: exec.gemm %[[A2]], %[[WO]] -> %[[Y]] transpose_b compute f32
// CHECK: exec.collective all_reduce sum %[[Y]] -> %[[Y]] group 2
// CHECK: exec.step_output hidden_states %[[Y]]
exec.schedule @decode_step decode max_tokens 64 max_seqs 64 {
  %t = exec.step_size tokens
  // Per-step metadata (64 x i32 = 256 bytes each; block tables 64 x 32 x i32).
  %pos = exec.step_input positions @inputs[0] : !exec.view<?xi32>
  %slots = exec.step_input slot_mapping @inputs[256] : !exec.view<?xi32>
  %lens = exec.step_input seq_lens @inputs[512] : !exec.view<?xi32>
  %bt = exec.step_input block_tables @inputs[768] : !exec.view<?x32xi32>
  // Weights of this rank.
  %wn = exec.weight "model.layers.0.input_layernorm.weight" @weights[0] : !exec.view<1024xbf16>
  %wqkv = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[2048] : !exec.view<768x1024xbf16>
  %wo = exec.weight "model.layers.0.self_attn.o_proj.weight" @weights[1574912] : !exec.view<1024x512xbf16>
  // Activations, sized for 64 tokens.
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x1024xbf16>
  %h = exec.slice @act[131072] sizes(%t) : !exec.view<?x1024xbf16>
  %qkv = exec.slice @act[262144] sizes(%t) : !exec.view<?x768xbf16>
  %q = exec.slice @act[360448] sizes(%t) : !exec.view<?x4x128xbf16>
  %k = exec.slice @act[425984] sizes(%t) : !exec.view<?x1x128xbf16>
  %v = exec.slice @act[442368] sizes(%t) : !exec.view<?x1x128xbf16>
  // The attention output, and the same bytes seen as [tokens, 512].
  %a = exec.slice @act[458752] sizes(%t) : !exec.view<?x4x128xbf16>
  %a2 = exec.slice @act[458752] sizes(%t) : !exec.view<?x512xbf16>
  %y = exec.slice @act[524288] sizes(%t) : !exec.view<?x1024xbf16>
  // Split-KV partials: 64 seqs x 4 heads x 4 splits x (128 + 2) x 4 bytes.
  %ws = exec.slice @ws[0] : !exec.view<532480xi8>

  exec.launch @rms_norm_1024(%x, %wn, %h, %t) grid(%t, 1, 1) block(256, 1, 1)
      : (!exec.view<?x1024xbf16>, !exec.view<1024xbf16>, !exec.view<?x1024xbf16>, index)
  exec.gemm %h, %wqkv -> %qkv transpose_b compute f32
      : !exec.view<?x1024xbf16>, !exec.view<768x1024xbf16> -> !exec.view<?x768xbf16>
  exec.launch @rope_split_qkv(%qkv, %pos, %q, %k, %v, %t) grid(%t, 1, 1) block(128, 1, 1)
      : (!exec.view<?x768xbf16>, !exec.view<?xi32>, !exec.view<?x4x128xbf16>,
         !exec.view<?x1x128xbf16>, !exec.view<?x1x128xbf16>, index)
  exec.kv_write %k, %v -> @kv[0] slots(%slots) : !exec.view<?x1x128xbf16>
  exec.attention_decode %q, @kv[0] -> %a seq_lens(%lens) block_tables(%bt : !exec.view<?x32xi32>)
      scale 0.0883883461 split_kv 4 workspace(%ws : !exec.view<532480xi8>) : !exec.view<?x4x128xbf16>
  exec.gemm %a2, %wo -> %y transpose_b compute f32
      : !exec.view<?x512xbf16>, !exec.view<1024x512xbf16> -> !exec.view<?x1024xbf16>
  exec.collective all_reduce sum %y -> %y group 2 : !exec.view<?x1024xbf16> -> !exec.view<?x1024xbf16>
  exec.step_output hidden_states %y : !exec.view<?x1024xbf16>
}
