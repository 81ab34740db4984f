// RUN: accel-opt %s -split-input-file | accel-opt -split-input-file | FileCheck %s
// RUN: accel-opt %s -split-input-file -mlir-print-op-generic | accel-opt -split-input-file | FileCheck %s

// Round trip of every exec op and type in its custom assembly form (the
// second RUN line goes through the generic form), every optional clause both
// present and absent. Shapes are Llama-3-8B's unless a comment says
// otherwise: hidden 4096, 32 query heads, 8 KV heads, head_dim 128, MLP 14336,
// vocabulary 128256.

//===----------------------------------------------------------------------===//
// !exec.view
//===----------------------------------------------------------------------===//

// Every element type (i4 packed two per byte), rank 0 to 3, static, dynamic,
// two dynamic dimensions, a zero extent; `index` is the other kernel argument.
// CHECK-LABEL: exec.kernel @view_types
// CHECK-SAME: (!exec.view<f32>, !exec.view<4096xf32>, !exec.view<?x4096xf16>,
// CHECK-SAME: !exec.view<?x4096xbf16>, !exec.view<4096x?xbf16>,
// CHECK-SAME: !exec.view<14336x4096xf8E4M3FN>, !exec.view<14336x4096xf8E5M2>,
// CHECK-SAME: !exec.view<6144x4096xi8>, !exec.view<6144x4096xi4>, !exec.view<7xi4>,
// CHECK-SAME: !exec.view<?xi32>, !exec.view<?xi64>, !exec.view<?x32x128xbf16>,
// CHECK-SAME: !exec.view<?x?xf32>, !exec.view<0xf32>, index)
// CHECK-SAME: sm [] image none implements "view_types"{{$}}
exec.kernel @view_types(!exec.view<f32>, !exec.view<4096xf32>, !exec.view<?x4096xf16>,
                        !exec.view<?x4096xbf16>, !exec.view<4096x?xbf16>,
                        !exec.view<14336x4096xf8E4M3FN>, !exec.view<14336x4096xf8E5M2>,
                        !exec.view<6144x4096xi8>, !exec.view<6144x4096xi4>, !exec.view<7xi4>,
                        !exec.view<?xi32>, !exec.view<?xi64>, !exec.view<?x32x128xbf16>,
                        !exec.view<?x?xf32>, !exec.view<0xf32>, index)
    sm [] image none implements "view_types"

// -----

//===----------------------------------------------------------------------===//
// exec.arena
//===----------------------------------------------------------------------===//

// A weights arena (with its plan section); activations arenas with a fixed
// region only, a token region, a sequence region and all three (per_token and
// per_seq are printed only when non-zero); workspace arenas, one with a
// discardable attribute.
// CHECK-LABEL: exec.arena @weights weights size 16060522496 align 256 section "weights"{{$}}
// CHECK-NEXT: exec.arena @act activations size 1048576 align 256{{$}}
// CHECK-NEXT: exec.arena @act_tokens activations size 0 per_token 77824 align 256{{$}}
// CHECK-NEXT: exec.arena @act_seqs activations size 4096 per_seq 513024 align 256{{$}}
// CHECK-NEXT: exec.arena @act_all activations size 4096 per_token 77824 per_seq 513024 align 256{{$}}
// CHECK-NEXT: exec.arena @ws workspace size 33554432 align 4096{{$}}
// CHECK-NEXT: exec.arena @scratch workspace size 0 align 1 {accel.note = "unused"}{{$}}
exec.arena @weights weights size 16060522496 align 256 section "weights"
exec.arena @act activations size 1048576 align 256
exec.arena @act_tokens activations size 0 per_token 77824 align 256
exec.arena @act_seqs activations size 4096 per_seq 513024 align 256
exec.arena @act_all activations size 4096 per_token 77824 per_seq 513024 align 256
exec.arena @ws workspace size 33554432 align 4096
exec.arena @scratch workspace size 0 align 1 {accel.note = "unused"}

// -----

//===----------------------------------------------------------------------===//
// exec.kv_pool
//===----------------------------------------------------------------------===//

// Every cache element type; pipeline-parallel pools with their stages.
// CHECK-LABEL: exec.kv_pool @kv_bf16 layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
// CHECK-NEXT: exec.kv_pool @kv_f16 layers 24 block_size 32 kv_heads 4 head_dim 64 : f16
// CHECK-NEXT: exec.kv_pool @kv_f32 layers 12 block_size 1 kv_heads 12 head_dim 64 : f32
// CHECK-NEXT: exec.kv_pool @kv_e4m3 layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E4M3FN
// CHECK-NEXT: exec.kv_pool @kv_e5m2 layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E5M2
// CHECK-NEXT: exec.kv_pool @kv_pp layers 32 block_size 16 kv_heads 8 head_dim 128 stages [16, 16] : bf16
// CHECK-NEXT: exec.kv_pool @kv_pp3 layers 32 block_size 16 kv_heads 8 head_dim 128 stages [11, 11, 10] : f8E4M3FN
exec.kv_pool @kv_bf16 layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.kv_pool @kv_f16 layers 24 block_size 32 kv_heads 4 head_dim 64 : f16
exec.kv_pool @kv_f32 layers 12 block_size 1 kv_heads 12 head_dim 64 : f32
exec.kv_pool @kv_e4m3 layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E4M3FN
exec.kv_pool @kv_e5m2 layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E5M2
exec.kv_pool @kv_pp layers 32 block_size 16 kv_heads 8 head_dim 128 stages [16, 16] : bf16
exec.kv_pool @kv_pp3 layers 32 block_size 16 kv_heads 8 head_dim 128 stages [11, 11, 10] : f8E4M3FN

// -----

//===----------------------------------------------------------------------===//
// exec.kernel
//===----------------------------------------------------------------------===//

// Both images (printed ptx|cubin whatever the order written), with a reference
// and its config; one image with a reference and no config; images without a
// reference; every known SM; discardable attributes; CPU-only kernels.
// CHECK-LABEL: exec.kernel @rms_norm_h4096_sm80(!exec.view<?x4096xbf16>, !exec.view<4096xbf16>, !exec.view<?x4096xbf16>, index)
// CHECK-SAME: sm [80, 90] image ptx|cubin implements "rms_norm" {epsilon = 1.000000e-05 : f64, hidden = 4096 : i64}{{$}}
// CHECK-NEXT: exec.kernel @silu_mul_i14336(!exec.view<?x28672xbf16>, !exec.view<?x14336xbf16>, index) sm [90] image ptx implements "gated_act"{{$}}
// CHECK-NEXT: exec.kernel @ptx_only(!exec.view<?xf32>) sm [90] image ptx{{$}}
// CHECK-NEXT: exec.kernel @cubin_only(!exec.view<?xf32>) sm [70, 75, 80, 86, 87, 89, 90, 100, 120] image cubin{{$}}
// CHECK-NEXT: exec.kernel @tagged() sm [100] image cubin attributes {accel.origin = "model.layers.0.mlp"}{{$}}
// CHECK-NEXT: exec.kernel @cpu_only() sm [] image none implements "nop"{{$}}
// CHECK-NEXT: exec.kernel @cpu_only_config(!exec.view<4x8xf32>, !exec.view<8x4xf32>) sm [] image none implements "onnx.Transpose" {perm = array<i64: 1, 0>}{{$}}
exec.kernel @rms_norm_h4096_sm80(!exec.view<?x4096xbf16>, !exec.view<4096xbf16>,
                                 !exec.view<?x4096xbf16>, index)
    sm [80, 90] image cubin|ptx implements "rms_norm" {epsilon = 1.0e-05 : f64, hidden = 4096 : i64}
exec.kernel @silu_mul_i14336(!exec.view<?x28672xbf16>, !exec.view<?x14336xbf16>, index)
    sm [90] image ptx implements "gated_act"
exec.kernel @ptx_only(!exec.view<?xf32>) sm [90] image ptx
exec.kernel @cubin_only(!exec.view<?xf32>) sm [70, 75, 80, 86, 87, 89, 90, 100, 120] image cubin
exec.kernel @tagged() sm [100] image cubin attributes {accel.origin = "model.layers.0.mlp"}
exec.kernel @cpu_only() sm [] image none implements "nop"
exec.kernel @cpu_only_config(!exec.view<4x8xf32>, !exec.view<8x4xf32>) sm [] image none
    implements "onnx.Transpose" {perm = array<i64: 1, 0>}

// -----

//===----------------------------------------------------------------------===//
// exec.schedule, exec.step_size, exec.step_input, exec.step_output
//===----------------------------------------------------------------------===//

// A mixed schedule: both step sizes, i64 token ids and i32 positions, both
// outputs (logits of the sampled rows, hidden states of every token).
// CHECK-LABEL: exec.arena @act activations size 0 per_token 8192 per_seq 513024 align 256
// CHECK-NEXT: exec.schedule @step_io mixed {
// CHECK-NEXT: %[[T:.+]] = exec.step_size tokens
// CHECK-NEXT: %[[S:.+]] = exec.step_size seqs
// CHECK-NEXT: %{{.+}} = exec.step_input token_ids : !exec.view<?xi64>
// CHECK-NEXT: %{{.+}} = exec.step_input positions : !exec.view<?xi32>
// CHECK-NEXT: %[[H:.+]] = exec.slice @act[tokens 0] sizes(%[[T]]) : !exec.view<?x4096xbf16>
// CHECK-NEXT: %[[L:.+]] = exec.slice @act[seqs 0] sizes(%[[S]]) : !exec.view<?x128256xf32>
// CHECK-NEXT: exec.step_output logits %[[L]] : !exec.view<?x128256xf32>
// CHECK-NEXT: exec.step_output hidden_states %[[H]] : !exec.view<?x4096xbf16>
// CHECK-NEXT: }
exec.arena @act activations size 0 per_token 8192 per_seq 513024 align 256
exec.schedule @step_io mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %ids = exec.step_input token_ids : !exec.view<?xi64>
  %pos = exec.step_input positions : !exec.view<?xi32>
  %h = exec.slice @act[tokens 0] sizes(%t) : !exec.view<?x4096xbf16>
  %l = exec.slice @act[seqs 0] sizes(%s) : !exec.view<?x128256xf32>
  exec.step_output logits %l : !exec.view<?x128256xf32>
  exec.step_output hidden_states %h : !exec.view<?x4096xbf16>
}

// A decode schedule: i32 token ids, i64 positions, f16 logits.
// CHECK-LABEL: exec.schedule @decode_io decode {
// CHECK-NEXT: %[[S:.+]] = exec.step_size seqs
// CHECK-NEXT: exec.step_size tokens
// CHECK-NEXT: exec.step_input token_ids : !exec.view<?xi32>
// CHECK-NEXT: exec.step_input positions : !exec.view<?xi64>
// CHECK-NEXT: %[[L:.+]] = exec.alloc sizes(%[[S]]) : !exec.view<?x128256xf16>
// CHECK-NEXT: exec.step_output logits %[[L]] : !exec.view<?x128256xf16>
// CHECK-NEXT: }
exec.schedule @decode_io decode {
  %s = exec.step_size seqs
  %t = exec.step_size tokens
  %ids = exec.step_input token_ids : !exec.view<?xi32>
  %pos = exec.step_input positions : !exec.view<?xi64>
  %l = exec.alloc sizes(%s) : !exec.view<?x128256xf16>
  exec.step_output logits %l : !exec.view<?x128256xf16>
}

// An empty schedule keeps its block; discardable attributes take the keyword.
// CHECK-LABEL: exec.schedule @empty decode {
// CHECK-NEXT: }
// CHECK-NEXT: exec.schedule @tagged mixed attributes {accel.pp_stage = 1 : i64} {
// CHECK-NEXT: }
exec.schedule @empty decode {
}
exec.schedule @tagged mixed attributes {accel.pp_stage = 1 : i64} {
}

// -----

//===----------------------------------------------------------------------===//
// exec.alloc, exec.slice, exec.view, exec.weight
//===----------------------------------------------------------------------===//

// CHECK-LABEL: exec.arena @weights weights size 1073741824 align 256 section "weights"
// CHECK-NEXT: exec.arena @act activations size 1024 per_token 77824 per_seq 513024 align 256
// CHECK-NEXT: exec.arena @ws workspace size 4194304 align 256
// CHECK-NEXT: exec.schedule @memory mixed {
// CHECK-NEXT: %[[T:.+]] = exec.step_size tokens
// CHECK-NEXT: %[[S:.+]] = exec.step_size seqs
// Allocations: dynamic, static (no sizes clause), two dynamic dimensions.
// CHECK-NEXT: exec.alloc sizes(%[[T]]) : !exec.view<?x4096xbf16>
// CHECK-NEXT: %[[B:.+]] = exec.alloc : !exec.view<128xf32>
// CHECK-NEXT: exec.alloc sizes(%[[S]], %[[T]]) : !exec.view<?x32x?xf32>
// Slices of the token, sequence and fixed regions, with and without align, and
// of a workspace arena.
// CHECK-NEXT: %[[X:.+]] = exec.slice @act[tokens 0] sizes(%[[T]]) : !exec.view<?x4096xbf16>
// CHECK-NEXT: exec.slice @act[tokens 8192] sizes(%[[T]]) : !exec.view<?x6144xbf16>
// CHECK-NEXT: exec.slice @act[tokens 20480] sizes(%[[T]]) : !exec.view<?x28672xbf16>
// CHECK-NEXT: exec.slice @act[seqs 0] sizes(%[[S]]) : !exec.view<?x128256xf32>
// CHECK-NEXT: exec.slice @act[fixed 0] : !exec.view<f32>
// CHECK-NEXT: exec.slice @act[fixed 256] align 16 : !exec.view<64xf32>
// CHECK-NEXT: exec.slice @act[fixed 520] align 8 : !exec.view<7xi4>
// CHECK-NEXT: exec.slice @ws[fixed 0] : !exec.view<4194304xi8>
// Views: split the hidden dimension into heads and back; a static reshape.
// CHECK-NEXT: %[[HEADS:.+]] = exec.view %[[X]] : !exec.view<?x4096xbf16> -> !exec.view<?x32x128xbf16>
// CHECK-NEXT: exec.view %[[HEADS]] : !exec.view<?x32x128xbf16> -> !exec.view<?x4096xbf16>
// CHECK-NEXT: exec.view %[[B]] : !exec.view<128xf32> -> !exec.view<2x64xf32>
// Weights: plain; align and an inline value; a resource value; one shard per
// rank; the same weight bound twice to the same place.
// CHECK-NEXT: exec.weight "model.norm.weight" @weights[0] : !exec.view<4096xbf16>
// CHECK-NEXT: exec.weight "model.layers.0.self_attn.k_norm.weight" @weights[8256] align 64 {value = dense<1.000000e+00> : tensor<128xbf16>} : !exec.view<128xbf16>
// CHECK-NEXT: exec.weight "model.layers.0.mlp.down_proj.weight_scale" @weights[8704] {value = dense_resource<down_scale> : tensor<f32>} : !exec.view<f32>
// CHECK-NEXT: exec.weight "model.layers.0.self_attn.o_proj.weight" @weights[16384]
// CHECK-SAME: {shards = [dense<0.000000e+00> : tensor<4096x1024xbf16>, dense<1.000000e+00> : tensor<4096x1024xbf16>,
// CHECK-SAME: dense<2.000000e+00> : tensor<4096x1024xbf16>, dense<3.000000e+00> : tensor<4096x1024xbf16>]}
// CHECK-SAME: : !exec.view<4096x1024xbf16>
// CHECK-NEXT: exec.weight "model.norm.weight" @weights[0] : !exec.view<4096xbf16>
// CHECK-NEXT: }
// CHECK: down_scale: "0x040000000000803F"
exec.arena @weights weights size 1073741824 align 256 section "weights"
exec.arena @act activations size 1024 per_token 77824 per_seq 513024 align 256
exec.arena @ws workspace size 4194304 align 256
exec.schedule @memory mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %a = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %b = exec.alloc : !exec.view<128xf32>
  %c = exec.alloc sizes(%s, %t) : !exec.view<?x32x?xf32>
  %x = exec.slice @act[tokens 0] sizes(%t) : !exec.view<?x4096xbf16>
  %qkv = exec.slice @act[tokens 8192] sizes(%t) : !exec.view<?x6144xbf16>
  %gu = exec.slice @act[tokens 20480] sizes(%t) : !exec.view<?x28672xbf16>
  %l = exec.slice @act[seqs 0] sizes(%s) : !exec.view<?x128256xf32>
  %sc = exec.slice @act[fixed 0] : !exec.view<f32>
  %buf = exec.slice @act[fixed 256] align 16 : !exec.view<64xf32>
  %i4 = exec.slice @act[fixed 520] align 8 : !exec.view<7xi4>
  %cublas = exec.slice @ws[fixed 0] : !exec.view<4194304xi8>
  %h = exec.view %x : !exec.view<?x4096xbf16> -> !exec.view<?x32x128xbf16>
  %h2 = exec.view %h : !exec.view<?x32x128xbf16> -> !exec.view<?x4096xbf16>
  %b2 = exec.view %b : !exec.view<128xf32> -> !exec.view<2x64xf32>
  %norm = exec.weight "model.norm.weight" @weights[0] : !exec.view<4096xbf16>
  %k_norm = exec.weight "model.layers.0.self_attn.k_norm.weight" @weights[8256] align 64
      {value = dense<1.0> : tensor<128xbf16>} : !exec.view<128xbf16>
  %scale = exec.weight "model.layers.0.mlp.down_proj.weight_scale" @weights[8704]
      {value = dense_resource<down_scale> : tensor<f32>} : !exec.view<f32>
  %o_proj = exec.weight "model.layers.0.self_attn.o_proj.weight" @weights[16384]
      {shards = [dense<0.0> : tensor<4096x1024xbf16>, dense<1.0> : tensor<4096x1024xbf16>,
                 dense<2.0> : tensor<4096x1024xbf16>, dense<3.0> : tensor<4096x1024xbf16>]}
      : !exec.view<4096x1024xbf16>
  %norm_again = exec.weight "model.norm.weight" @weights[0] : !exec.view<4096xbf16>
}

{-#
  dialect_resources: {
    builtin: {
      down_scale: "0x040000000000803F"
    }
  }
#-}

// -----

//===----------------------------------------------------------------------===//
// exec.embedding
//===----------------------------------------------------------------------===//

// The whole table; then a vocabulary-parallel shard (4 ranks) with a scale.
// CHECK-LABEL: exec.schedule @embedding mixed {
// CHECK: %[[IDS:.+]] = exec.step_input token_ids : !exec.view<?xi64>
// CHECK-NEXT: %[[X:.+]] = exec.alloc
// CHECK-NEXT: %[[TABLE:.+]] = exec.weight "model.embed_tokens.weight" @weights[0] : !exec.view<128256x4096xbf16>
// CHECK-NEXT: exec.embedding %[[TABLE]][%[[IDS]]] -> %[[X]] : !exec.view<128256x4096xbf16>, !exec.view<?xi64> -> !exec.view<?x4096xbf16>
// CHECK-NEXT: %[[SHARD:.+]] = exec.weight "model.embed_tokens.weight.vocab_shard" @weights[1050673152] : !exec.view<32064x4096xbf16>
// CHECK-NEXT: exec.embedding %[[SHARD]][%[[IDS]]] -> %[[X]] {scale = 6.400000e+01 : f64, vocab_shards = 4 : i64, vocab_size = 128256 : i64} : !exec.view<32064x4096xbf16>, !exec.view<?xi64> -> !exec.view<?x4096xbf16>
exec.arena @weights weights size 1313341440 align 256 section "weights"
exec.schedule @embedding mixed {
  %t = exec.step_size tokens
  %ids = exec.step_input token_ids : !exec.view<?xi64>
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %table = exec.weight "model.embed_tokens.weight" @weights[0] : !exec.view<128256x4096xbf16>
  exec.embedding %table[%ids] -> %x
      : !exec.view<128256x4096xbf16>, !exec.view<?xi64> -> !exec.view<?x4096xbf16>
  %shard = exec.weight "model.embed_tokens.weight.vocab_shard" @weights[1050673152]
      : !exec.view<32064x4096xbf16>
  exec.embedding %shard[%ids] -> %x {scale = 64.0 : f64, vocab_shards = 4 : i64, vocab_size = 128256 : i64}
      : !exec.view<32064x4096xbf16>, !exec.view<?xi64> -> !exec.view<?x4096xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.rms_norm, exec.add_rms_norm, exec.layer_norm
//===----------------------------------------------------------------------===//

// CHECK-LABEL: exec.schedule @norms mixed {
// CHECK: %[[X:.+]] = exec.alloc
// CHECK-NEXT: %[[R:.+]] = exec.alloc
// CHECK-NEXT: %[[Y:.+]] = exec.alloc
// CHECK-NEXT: %[[W:.+]] = exec.weight "model.layers.0.input_layernorm.weight"
// Plain; Gemma's (1 + w) with weight_offset; run by a generated kernel.
// CHECK-NEXT: exec.rms_norm %[[X]], %[[W]] -> %[[Y]] {epsilon = 1.000000e-05 : f64} : !exec.view<?x4096xbf16>, !exec.view<4096xbf16> -> !exec.view<?x4096xbf16>
// CHECK-NEXT: exec.rms_norm %[[X]], %[[W]] -> %[[Y]] {epsilon = 9.9999999999999995E-7 : f64, weight_offset = 1.000000e+00 : f64} : !exec.view<?x4096xbf16>, !exec.view<4096xbf16> -> !exec.view<?x4096xbf16>
// CHECK-NEXT: exec.rms_norm %[[X]], %[[W]] -> %[[Y]] {epsilon = 1.000000e-05 : f64, kernel = @rms_norm_h4096} : !exec.view<?x4096xbf16>, !exec.view<4096xbf16> -> !exec.view<?x4096xbf16>
// The fused residual, its sum written back into the residual stream.
// CHECK-NEXT: exec.add_rms_norm %[[X]], %[[R]], %[[W]] -> %[[Y]], %[[R]] {epsilon = 1.000000e-05 : f64} : !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>, !exec.view<4096xbf16> -> !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>
// CHECK-NEXT: exec.add_rms_norm %[[X]], %[[R]], %[[W]] -> %[[Y]], %[[R]] {epsilon = 9.9999999999999995E-7 : f64, kernel = @add_rms_norm_h4096, weight_offset = 1.000000e+00 : f64} : !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>, !exec.view<4096xbf16> -> !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>
// GPT-2's layer norm (hidden 768), with and without a bias.
// CHECK-NEXT: %[[X2:.+]] = exec.alloc
// CHECK-NEXT: %[[Y2:.+]] = exec.alloc
// CHECK-NEXT: %[[LNW:.+]] = exec.weight "transformer.h.0.ln_1.weight"
// CHECK-NEXT: %[[LNB:.+]] = exec.weight "transformer.h.0.ln_1.bias"
// CHECK-NEXT: exec.layer_norm %[[X2]], %[[LNW]] bias(%[[LNB]] : !exec.view<768xf32>) -> %[[Y2]] {epsilon = 1.000000e-05 : f64} : !exec.view<?x768xf32>, !exec.view<768xf32> -> !exec.view<?x768xf32>
// CHECK-NEXT: exec.layer_norm %[[X2]], %[[LNW]] -> %[[Y2]] {epsilon = 1.000000e-05 : f64} : !exec.view<?x768xf32>, !exec.view<768xf32> -> !exec.view<?x768xf32>
exec.arena @weights weights size 16384 align 256 section "weights"
exec.kernel @rms_norm_h4096(!exec.view<?x4096xbf16>, !exec.view<4096xbf16>,
                            !exec.view<?x4096xbf16>, index)
    sm [90] image ptx|cubin implements "rms_norm" {hidden = 4096 : i64}
exec.kernel @add_rms_norm_h4096(!exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>,
                                !exec.view<4096xbf16>, !exec.view<?x4096xbf16>,
                                !exec.view<?x4096xbf16>, index)
    sm [90] image cubin implements "add_rms_norm" {hidden = 4096 : i64}
exec.schedule @norms mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %r = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %w = exec.weight "model.layers.0.input_layernorm.weight" @weights[0] : !exec.view<4096xbf16>
  exec.rms_norm %x, %w -> %y {epsilon = 1.0e-05 : f64}
      : !exec.view<?x4096xbf16>, !exec.view<4096xbf16> -> !exec.view<?x4096xbf16>
  exec.rms_norm %x, %w -> %y {epsilon = 1.0e-06 : f64, weight_offset = 1.0 : f64}
      : !exec.view<?x4096xbf16>, !exec.view<4096xbf16> -> !exec.view<?x4096xbf16>
  exec.rms_norm %x, %w -> %y {epsilon = 1.0e-05 : f64, kernel = @rms_norm_h4096}
      : !exec.view<?x4096xbf16>, !exec.view<4096xbf16> -> !exec.view<?x4096xbf16>
  exec.add_rms_norm %x, %r, %w -> %y, %r {epsilon = 1.0e-05 : f64}
      : !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>, !exec.view<4096xbf16>
        -> !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>
  exec.add_rms_norm %x, %r, %w -> %y, %r
      {epsilon = 1.0e-06 : f64, kernel = @add_rms_norm_h4096, weight_offset = 1.0 : f64}
      : !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>, !exec.view<4096xbf16>
        -> !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>
  %x2 = exec.alloc sizes(%t) : !exec.view<?x768xf32>
  %y2 = exec.alloc sizes(%t) : !exec.view<?x768xf32>
  %ln_w = exec.weight "transformer.h.0.ln_1.weight" @weights[8192] : !exec.view<768xf32>
  %ln_b = exec.weight "transformer.h.0.ln_1.bias" @weights[11264] : !exec.view<768xf32>
  exec.layer_norm %x2, %ln_w bias(%ln_b : !exec.view<768xf32>) -> %y2 {epsilon = 1.0e-05 : f64}
      : !exec.view<?x768xf32>, !exec.view<768xf32> -> !exec.view<?x768xf32>
  exec.layer_norm %x2, %ln_w -> %y2 {epsilon = 1.0e-05 : f64}
      : !exec.view<?x768xf32>, !exec.view<768xf32> -> !exec.view<?x768xf32>
}

// -----

//===----------------------------------------------------------------------===//
// exec.residual_add, exec.activation, exec.gated_act, exec.gated_mlp
//===----------------------------------------------------------------------===//

// Each with and without a generated kernel.
// CHECK-LABEL: exec.schedule @pointwise mixed {
// CHECK: %[[X:.+]] = exec.alloc
// CHECK-NEXT: %[[R:.+]] = exec.alloc
// CHECK-NEXT: %[[Y:.+]] = exec.alloc
// CHECK-NEXT: exec.residual_add %[[R]], %[[X]] -> %[[Y]] : !exec.view<?x4096xbf16>
// CHECK-NEXT: exec.residual_add %[[R]], %[[X]] -> %[[R]] {kernel = @residual_add_h4096} : !exec.view<?x4096xbf16>
// CHECK-NEXT: %[[A:.+]] = exec.alloc
// CHECK-NEXT: %[[B:.+]] = exec.alloc
// CHECK-NEXT: exec.activation %[[A]] -> %[[B]] {kind = #transformer<activation_kind gelu_tanh>} : !exec.view<?x3072xf32>
// CHECK-NEXT: exec.activation %[[A]] -> %[[A]] {kernel = @gelu_tanh_3072, kind = #transformer<activation_kind gelu_tanh>} : !exec.view<?x3072xf32>
// CHECK-NEXT: %[[GU:.+]] = exec.alloc
// CHECK-NEXT: %[[H:.+]] = exec.alloc
// CHECK-NEXT: exec.gated_act %[[GU]] -> %[[H]] {kind = #transformer<activation_kind silu>} : !exec.view<?x28672xbf16> -> !exec.view<?x14336xbf16>
// CHECK-NEXT: exec.gated_act %[[GU]] -> %[[H]] {kernel = @silu_mul_i14336, kind = #transformer<activation_kind silu>} : !exec.view<?x28672xbf16> -> !exec.view<?x14336xbf16>
// CHECK-NEXT: %[[GATE_UP:.+]] = exec.weight "model.layers.0.mlp.gate_up_proj.weight"
// CHECK-NEXT: %[[GATE:.+]] = exec.weight "model.layers.0.mlp.gate_proj.weight"
// CHECK-NEXT: %[[UP:.+]] = exec.weight "model.layers.0.mlp.up_proj.weight"
// CHECK-NEXT: %[[DOWN:.+]] = exec.weight "model.layers.0.mlp.down_proj.weight"
// Fused gate_up, then separate gate and up.
// CHECK-NEXT: exec.gated_mlp %[[X]] gate_up(%[[GATE_UP]] : !exec.view<28672x4096xbf16>) down(%[[DOWN]] : !exec.view<4096x14336xbf16>) -> %[[Y]] {kind = #transformer<activation_kind silu>} : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
// CHECK-NEXT: exec.gated_mlp %[[X]] gate(%[[GATE]] : !exec.view<14336x4096xbf16>) up(%[[UP]] : !exec.view<14336x4096xbf16>) down(%[[DOWN]] : !exec.view<4096x14336xbf16>) -> %[[Y]] {kernel = @silu_mul_i14336, kind = #transformer<activation_kind gelu_tanh>} : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
exec.arena @weights weights size 587202560 align 256 section "weights"
exec.kernel @residual_add_h4096(!exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>,
                                !exec.view<?x4096xbf16>, index)
    sm [90] image cubin implements "residual_add"
exec.kernel @gelu_tanh_3072(!exec.view<?x3072xf32>, !exec.view<?x3072xf32>, index)
    sm [80] image ptx implements "activation" {kind = "gelu_tanh"}
exec.kernel @silu_mul_i14336(!exec.view<?x28672xbf16>, !exec.view<?x14336xbf16>, index)
    sm [90] image ptx|cubin implements "gated_act" {kind = "silu"}
exec.schedule @pointwise mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %r = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  exec.residual_add %r, %x -> %y : !exec.view<?x4096xbf16>
  exec.residual_add %r, %x -> %r {kernel = @residual_add_h4096} : !exec.view<?x4096xbf16>
  // GPT-2's MLP activation (intermediate 3072).
  %a = exec.alloc sizes(%t) : !exec.view<?x3072xf32>
  %b = exec.alloc sizes(%t) : !exec.view<?x3072xf32>
  exec.activation %a -> %b {kind = #transformer<activation_kind gelu_tanh>} : !exec.view<?x3072xf32>
  exec.activation %a -> %a {kernel = @gelu_tanh_3072, kind = #transformer<activation_kind gelu_tanh>}
      : !exec.view<?x3072xf32>
  %gu = exec.alloc sizes(%t) : !exec.view<?x28672xbf16>
  %h = exec.alloc sizes(%t) : !exec.view<?x14336xbf16>
  exec.gated_act %gu -> %h {kind = #transformer<activation_kind silu>}
      : !exec.view<?x28672xbf16> -> !exec.view<?x14336xbf16>
  exec.gated_act %gu -> %h {kernel = @silu_mul_i14336, kind = #transformer<activation_kind silu>}
      : !exec.view<?x28672xbf16> -> !exec.view<?x14336xbf16>
  %gate_up = exec.weight "model.layers.0.mlp.gate_up_proj.weight" @weights[0]
      : !exec.view<28672x4096xbf16>
  %gate = exec.weight "model.layers.0.mlp.gate_proj.weight" @weights[234881024]
      : !exec.view<14336x4096xbf16>
  %up = exec.weight "model.layers.0.mlp.up_proj.weight" @weights[352321536]
      : !exec.view<14336x4096xbf16>
  %down = exec.weight "model.layers.0.mlp.down_proj.weight" @weights[469762048]
      : !exec.view<4096x14336xbf16>
  exec.gated_mlp %x gate_up(%gate_up : !exec.view<28672x4096xbf16>)
      down(%down : !exec.view<4096x14336xbf16>) -> %y {kind = #transformer<activation_kind silu>}
      : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
  exec.gated_mlp %x gate(%gate : !exec.view<14336x4096xbf16>) up(%up : !exec.view<14336x4096xbf16>)
      down(%down : !exec.view<4096x14336xbf16>) -> %y
      {kernel = @silu_mul_i14336, kind = #transformer<activation_kind gelu_tanh>}
      : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.rotary, exec.qkv_rotary
//===----------------------------------------------------------------------===//

// CHECK-LABEL: exec.schedule @rotary mixed {
// CHECK: %[[POS:.+]] = exec.step_input positions : !exec.view<?xi64>
// CHECK-NEXT: %[[Q:.+]] = exec.alloc
// CHECK-NEXT: %[[QR:.+]] = exec.alloc
// theta only; Llama 3.1 scaling, in place, by a generated kernel.
// CHECK-NEXT: exec.rotary %[[Q]], %[[POS]] -> %[[QR]] {rotary_dim = 128 : i64, style = #transformer<rotary_style half_split>, theta = 5.000000e+05 : f64} : !exec.view<?x32x128xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
// CHECK-NEXT: exec.rotary %[[Q]], %[[POS]] -> %[[Q]] {kernel = @rope_h32_d128, rotary_dim = 128 : i64,
// CHECK-SAME: scaling = #transformer.rope_scaling<llama3, factor = 8.000000e+00, original_max_position = 8192, low_freq_factor = 1.000000e+00, high_freq_factor = 4.000000e+00>,
// CHECK-SAME: style = #transformer<rotary_style half_split>, theta = 5.000000e+05 : f64} : !exec.view<?x32x128xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
// GPT-J's partial, interleaved rotation (64 of 256 channels, f16).
// CHECK-NEXT: %[[QJ:.+]] = exec.alloc
// CHECK-NEXT: exec.rotary %[[QJ]], %[[POS]] -> %[[QJ]] {rotary_dim = 64 : i64, style = #transformer<rotary_style interleaved>, theta = 1.000000e+04 : f64} : !exec.view<?x16x256xf16>, !exec.view<?xi64> -> !exec.view<?x16x256xf16>
// Phi-3's LongRoPE tables (head_dim 96) instead of theta.
// CHECK-NEXT: %[[COS:.+]] = exec.weight "model.rotary_emb.cos"
// CHECK-NEXT: %[[SIN:.+]] = exec.weight "model.rotary_emb.sin"
// CHECK-NEXT: %[[QP:.+]] = exec.alloc
// CHECK-NEXT: exec.rotary %[[QP]], %[[POS]] cos_sin(%[[COS]], %[[SIN]] : !exec.view<131072x48xf32>, !exec.view<131072x48xf32>) -> %[[QP]] {rotary_dim = 96 : i64, style = #transformer<rotary_style half_split>} : !exec.view<?x32x96xbf16>, !exec.view<?xi64> -> !exec.view<?x32x96xbf16>
// CHECK-NEXT: %[[QKV:.+]] = exec.alloc
// CHECK-NEXT: %[[K:.+]] = exec.alloc
// CHECK-NEXT: %[[V:.+]] = exec.alloc
// CHECK-NEXT: exec.qkv_rotary %[[QKV]], %[[POS]] -> %[[Q]], %[[K]], %[[V]] {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64, style = #transformer<rotary_style half_split>, theta = 5.000000e+05 : f64} : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>, !exec.view<?x8x128xbf16>, !exec.view<?x8x128xbf16>
// CHECK-NEXT: exec.qkv_rotary %[[QKV]], %[[POS]] -> %[[Q]], %[[K]], %[[V]] {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
// CHECK-SAME: scaling = #transformer.rope_scaling<yarn, factor = 4.000000e+00, original_max_position = 32768, beta_fast = 3.200000e+01, beta_slow = 1.000000e+00>,
// CHECK-SAME: style = #transformer<rotary_style half_split>, theta = 1.000000e+06 : f64} : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>, !exec.view<?x8x128xbf16>, !exec.view<?x8x128xbf16>
// CHECK-NEXT: %[[QKVP:.+]] = exec.alloc
// CHECK-NEXT: %[[KP:.+]] = exec.alloc
// CHECK-NEXT: %[[VP:.+]] = exec.alloc
// CHECK-NEXT: exec.qkv_rotary %[[QKVP]], %[[POS]] cos_sin(%[[COS]], %[[SIN]] : !exec.view<131072x48xf32>, !exec.view<131072x48xf32>) -> %[[QP]], %[[KP]], %[[VP]] {head_dim = 96 : i64, num_heads = 32 : i64, num_kv_heads = 32 : i64, rotary_dim = 96 : i64, style = #transformer<rotary_style half_split>} : !exec.view<?x9216xbf16>, !exec.view<?xi64> -> !exec.view<?x32x96xbf16>, !exec.view<?x32x96xbf16>, !exec.view<?x32x96xbf16>
exec.arena @weights weights size 50331648 align 256 section "weights"
exec.kernel @rope_h32_d128(!exec.view<?x32x128xbf16>, !exec.view<?xi64>,
                           !exec.view<?x32x128xbf16>, index)
    sm [90] image cubin implements "rotary" {rotary_dim = 128 : i64}
exec.schedule @rotary mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  %qr = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  exec.rotary %q, %pos -> %qr
      {rotary_dim = 128 : i64, style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x32x128xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
  exec.rotary %q, %pos -> %q
      {kernel = @rope_h32_d128, rotary_dim = 128 : i64,
       scaling = #transformer.rope_scaling<llama3, factor = 8.0, original_max_position = 8192,
                                           low_freq_factor = 1.0, high_freq_factor = 4.0>,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x32x128xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
  %qj = exec.alloc sizes(%t) : !exec.view<?x16x256xf16>
  exec.rotary %qj, %pos -> %qj
      {rotary_dim = 64 : i64, style = #transformer<rotary_style interleaved>, theta = 1.0e+04 : f64}
      : !exec.view<?x16x256xf16>, !exec.view<?xi64> -> !exec.view<?x16x256xf16>
  %cos = exec.weight "model.rotary_emb.cos" @weights[0] : !exec.view<131072x48xf32>
  %sin = exec.weight "model.rotary_emb.sin" @weights[25165824] : !exec.view<131072x48xf32>
  %qp = exec.alloc sizes(%t) : !exec.view<?x32x96xbf16>
  exec.rotary %qp, %pos cos_sin(%cos, %sin : !exec.view<131072x48xf32>, !exec.view<131072x48xf32>)
      -> %qp {rotary_dim = 96 : i64, style = #transformer<rotary_style half_split>}
      : !exec.view<?x32x96xbf16>, !exec.view<?xi64> -> !exec.view<?x32x96xbf16>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  %v = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  exec.qkv_rotary %qkv, %pos -> %q, %k, %v
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64>
        -> !exec.view<?x32x128xbf16>, !exec.view<?x8x128xbf16>, !exec.view<?x8x128xbf16>
  // YaRN context extension (4 x 32768 positions).
  exec.qkv_rotary %qkv, %pos -> %q, %k, %v
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       scaling = #transformer.rope_scaling<yarn, factor = 4.0, original_max_position = 32768,
                                           beta_fast = 32.0, beta_slow = 1.0>,
       style = #transformer<rotary_style half_split>, theta = 1.0e+06 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64>
        -> !exec.view<?x32x128xbf16>, !exec.view<?x8x128xbf16>, !exec.view<?x8x128xbf16>
  // Phi-3-mini: 32 heads and 32 KV heads of 96 channels.
  %qkvp = exec.alloc sizes(%t) : !exec.view<?x9216xbf16>
  %kp = exec.alloc sizes(%t) : !exec.view<?x32x96xbf16>
  %vp = exec.alloc sizes(%t) : !exec.view<?x32x96xbf16>
  exec.qkv_rotary %qkvp, %pos cos_sin(%cos, %sin : !exec.view<131072x48xf32>, !exec.view<131072x48xf32>)
      -> %qp, %kp, %vp
      {head_dim = 96 : i64, num_heads = 32 : i64, num_kv_heads = 32 : i64, rotary_dim = 96 : i64,
       style = #transformer<rotary_style half_split>}
      : !exec.view<?x9216xbf16>, !exec.view<?xi64>
        -> !exec.view<?x32x96xbf16>, !exec.view<?x32x96xbf16>, !exec.view<?x32x96xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.kv_write, exec.qkv_rotary_kv_write, exec.attention: a bf16 pool
//===----------------------------------------------------------------------===//

// CHECK-LABEL: exec.schedule @kv_cache mixed {
// CHECK: %[[POS:.+]] = exec.step_input positions
// CHECK-NEXT: %[[QKV:.+]] = exec.alloc
// CHECK-NEXT: %[[Q:.+]] = exec.alloc
// CHECK-NEXT: %[[K:.+]] = exec.alloc
// CHECK-NEXT: %[[V:.+]] = exec.alloc
// CHECK-NEXT: %[[O:.+]] = exec.alloc
// CHECK-NEXT: exec.kv_write %[[K]], %[[V]] -> @kv[0] : !exec.view<?x8x128xbf16>
// CHECK-NEXT: exec.attention %[[Q]], @kv[0] -> %[[O]] {causal, num_kv_heads = 8 : i64, scale = 0.088388347648318447 : f64} : !exec.view<?x32x128xbf16>
// The last layer; not causal; Gemma-2-like sliding window and softcap.
// CHECK-NEXT: exec.qkv_rotary_kv_write %[[QKV]], %[[POS]] -> %[[Q]], @kv[31] {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
// CHECK-SAME: scaling = #transformer.rope_scaling<llama3, factor = 8.000000e+00, original_max_position = 8192, low_freq_factor = 1.000000e+00, high_freq_factor = 4.000000e+00>,
// CHECK-SAME: style = #transformer<rotary_style half_split>, theta = 5.000000e+05 : f64} : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
// CHECK-NEXT: exec.attention %[[Q]], @kv[31] -> %[[O]] {num_kv_heads = 8 : i64, scale = 0.088388347648318447 : f64} : !exec.view<?x32x128xbf16>
// CHECK-NEXT: exec.attention %[[Q]], @kv[31] -> %[[O]] {causal, num_kv_heads = 8 : i64, scale = 6.250000e-02 : f64, sliding_window = 4096 : i64, softcap = 5.000000e+01 : f64} : !exec.view<?x32x128xbf16>
// Explicit tables, interleaved.
// CHECK-NEXT: %[[COS:.+]] = exec.weight "model.rotary_emb.cos"
// CHECK-NEXT: %[[SIN:.+]] = exec.weight "model.rotary_emb.sin"
// CHECK-NEXT: exec.qkv_rotary_kv_write %[[QKV]], %[[POS]] cos_sin(%[[COS]], %[[SIN]] : !exec.view<131072x64xf32>, !exec.view<131072x64xf32>) -> %[[Q]], @kv[1] {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64, style = #transformer<rotary_style interleaved>} : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
exec.arena @weights weights size 67108864 align 256 section "weights"
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @kv_cache mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  %v = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  %o = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  exec.kv_write %k, %v -> @kv[0] : !exec.view<?x8x128xbf16>
  exec.attention %q, @kv[0] -> %o {causal, num_kv_heads = 8 : i64, scale = 0.08838834764831845 : f64}
      : !exec.view<?x32x128xbf16>
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[31]
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       scaling = #transformer.rope_scaling<llama3, factor = 8.0, original_max_position = 8192,
                                           low_freq_factor = 1.0, high_freq_factor = 4.0>,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
  exec.attention %q, @kv[31] -> %o {num_kv_heads = 8 : i64, scale = 0.08838834764831845 : f64}
      : !exec.view<?x32x128xbf16>
  exec.attention %q, @kv[31] -> %o
      {causal, num_kv_heads = 8 : i64, scale = 0.0625 : f64, sliding_window = 4096 : i64,
       softcap = 50.0 : f64}
      : !exec.view<?x32x128xbf16>
  %cos = exec.weight "model.rotary_emb.cos" @weights[0] : !exec.view<131072x64xf32>
  %sin = exec.weight "model.rotary_emb.sin" @weights[33554432] : !exec.view<131072x64xf32>
  exec.qkv_rotary_kv_write %qkv, %pos
      cos_sin(%cos, %sin : !exec.view<131072x64xf32>, !exec.view<131072x64xf32>) -> %q, @kv[1]
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style interleaved>}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.kv_write, exec.qkv_rotary_kv_write, exec.attention: FP8 pools
//===----------------------------------------------------------------------===//

// CHECK-LABEL: exec.schedule @kv_cache_fp8 mixed {
// CHECK: %[[POS:.+]] = exec.step_input positions : !exec.view<?xi32>
// CHECK-NEXT: %[[QKV:.+]] = exec.alloc
// CHECK-NEXT: %[[Q:.+]] = exec.alloc
// CHECK-NEXT: %[[K:.+]] = exec.alloc
// CHECK-NEXT: %[[V:.+]] = exec.alloc
// CHECK-NEXT: %[[O:.+]] = exec.alloc
// Per-layer scales: bf16 keys and values quantised on the way in.
// CHECK-NEXT: exec.kv_write %[[K]], %[[V]] -> @kv[0] {k_scale = 2.343750e-02 : f64, v_scale = 0.01953125 : f64} : !exec.view<?x8x128xbf16>
// CHECK-NEXT: exec.attention %[[Q]], @kv[0] -> %[[O]] {causal, k_scale = 2.343750e-02 : f64, num_kv_heads = 8 : i64, scale = 0.088388347648318447 : f64, v_scale = 0.01953125 : f64} : !exec.view<?x32x128xbf16>
// Already FP8 keys and values.
// CHECK-NEXT: %[[K8:.+]] = exec.alloc
// CHECK-NEXT: %[[V8:.+]] = exec.alloc
// CHECK-NEXT: exec.kv_write %[[K8]], %[[V8]] -> @kv[2] {k_scale = 1.000000e+00 : f64, v_scale = 1.000000e+00 : f64} : !exec.view<?x8x128xf8E4M3FN>
// CHECK-NEXT: exec.qkv_rotary_kv_write %[[QKV]], %[[POS]] -> %[[Q]], @kv[1] {head_dim = 128 : i64, k_scale = 2.343750e-02 : f64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64, style = #transformer<rotary_style half_split>, theta = 5.000000e+05 : f64, v_scale = 0.01953125 : f64} : !exec.view<?x6144xbf16>, !exec.view<?xi32> -> !exec.view<?x32x128xbf16>
// Per-KV-head scales, one per head of the pool.
// CHECK-NEXT: exec.kv_write %[[K]], %[[V]] -> @kv_e5m2[3]
// CHECK-SAME: {k_head_scales = array<f64: 5.000000e-01, 5.000000e-01, 2.500000e-01, 2.500000e-01, 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>,
// CHECK-SAME: v_head_scales = array<f64: 1.250000e-01, 1.250000e-01, 1.250000e-01, 1.250000e-01, 2.500000e-01, 2.500000e-01, 2.500000e-01, 2.500000e-01>} : !exec.view<?x8x128xbf16>
// CHECK-NEXT: exec.qkv_rotary_kv_write %[[QKV]], %[[POS]] -> %[[Q]], @kv_e5m2[3] {head_dim = 128 : i64,
// CHECK-SAME: k_head_scales = array<f64: 5.000000e-01, 5.000000e-01, 2.500000e-01, 2.500000e-01, 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>,
// CHECK-SAME: num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64, style = #transformer<rotary_style half_split>, theta = 5.000000e+05 : f64,
// CHECK-SAME: v_head_scales = array<f64: 1.250000e-01, 1.250000e-01, 1.250000e-01, 1.250000e-01, 2.500000e-01, 2.500000e-01, 2.500000e-01, 2.500000e-01>} : !exec.view<?x6144xbf16>, !exec.view<?xi32> -> !exec.view<?x32x128xbf16>
// CHECK-NEXT: exec.attention %[[Q]], @kv_e5m2[3] -> %[[O]] {causal,
// CHECK-SAME: k_head_scales = array<f64: 5.000000e-01, 5.000000e-01, 2.500000e-01, 2.500000e-01, 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>,
// CHECK-SAME: num_kv_heads = 8 : i64, scale = 0.088388347648318447 : f64,
// CHECK-SAME: v_head_scales = array<f64: 1.250000e-01, 1.250000e-01, 1.250000e-01, 1.250000e-01, 2.500000e-01, 2.500000e-01, 2.500000e-01, 2.500000e-01>} : !exec.view<?x32x128xbf16>
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E4M3FN
exec.kv_pool @kv_e5m2 layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E5M2
exec.schedule @kv_cache_fp8 mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi32>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  %v = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  %o = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  exec.kv_write %k, %v -> @kv[0] {k_scale = 0.0234375 : f64, v_scale = 0.01953125 : f64}
      : !exec.view<?x8x128xbf16>
  exec.attention %q, @kv[0] -> %o
      {causal, k_scale = 0.0234375 : f64, num_kv_heads = 8 : i64, scale = 0.08838834764831845 : f64,
       v_scale = 0.01953125 : f64}
      : !exec.view<?x32x128xbf16>
  %k8 = exec.alloc sizes(%t) : !exec.view<?x8x128xf8E4M3FN>
  %v8 = exec.alloc sizes(%t) : !exec.view<?x8x128xf8E4M3FN>
  exec.kv_write %k8, %v8 -> @kv[2] {k_scale = 1.0 : f64, v_scale = 1.0 : f64}
      : !exec.view<?x8x128xf8E4M3FN>
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[1]
      {head_dim = 128 : i64, k_scale = 0.0234375 : f64, num_heads = 32 : i64, num_kv_heads = 8 : i64,
       rotary_dim = 128 : i64, style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64,
       v_scale = 0.01953125 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xi32> -> !exec.view<?x32x128xbf16>
  exec.kv_write %k, %v -> @kv_e5m2[3]
      {k_head_scales = array<f64: 0.5, 0.5, 0.25, 0.25, 1.0, 1.0, 2.0, 2.0>,
       v_head_scales = array<f64: 0.125, 0.125, 0.125, 0.125, 0.25, 0.25, 0.25, 0.25>}
      : !exec.view<?x8x128xbf16>
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv_e5m2[3]
      {head_dim = 128 : i64,
       k_head_scales = array<f64: 0.5, 0.5, 0.25, 0.25, 1.0, 1.0, 2.0, 2.0>,
       num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64,
       v_head_scales = array<f64: 0.125, 0.125, 0.125, 0.125, 0.25, 0.25, 0.25, 0.25>}
      : !exec.view<?x6144xbf16>, !exec.view<?xi32> -> !exec.view<?x32x128xbf16>
  exec.attention %q, @kv_e5m2[3] -> %o
      {causal, k_head_scales = array<f64: 0.5, 0.5, 0.25, 0.25, 1.0, 1.0, 2.0, 2.0>,
       num_kv_heads = 8 : i64, scale = 0.08838834764831845 : f64,
       v_head_scales = array<f64: 0.125, 0.125, 0.125, 0.125, 0.25, 0.25, 0.25, 0.25>}
      : !exec.view<?x32x128xbf16>
}

// -----

// Under -tp=2 per-head lists hold both ranks' KV heads, rank-major.
// CHECK-LABEL: exec.schedule @kv_cache_fp8_tp2 mixed {
// CHECK: exec.kv_write %{{.+}}, %{{.+}} -> @kv_tp[0] {k_head_scales = array<f64: 5.000000e-01, 2.500000e-01, 1.000000e+00, 2.000000e+00>, v_head_scales = array<f64: 1.250000e-01, 1.250000e-01, 2.500000e-01, 2.500000e-01>} : !exec.view<?x2x128xbf16>
module attributes {accel.tp_size = 2 : i64} {
exec.kv_pool @kv_tp layers 32 block_size 16 kv_heads 2 head_dim 128 : f8E4M3FN
exec.schedule @kv_cache_fp8_tp2 mixed {
  %t = exec.step_size tokens
  %k = exec.alloc sizes(%t) : !exec.view<?x2x128xbf16>
  exec.kv_write %k, %k -> @kv_tp[0]
      {k_head_scales = array<f64: 0.5, 0.25, 1.0, 2.0>, v_head_scales = array<f64: 0.125, 0.125, 0.25, 0.25>}
      : !exec.view<?x2x128xbf16>
}
}

// -----

//===----------------------------------------------------------------------===//
// exec.gemm
//===----------------------------------------------------------------------===//

// CHECK-LABEL: exec.schedule @gemm mixed {
// CHECK: %[[X:.+]] = exec.alloc
// CHECK-NEXT: %[[QKV:.+]] = exec.alloc
// CHECK-NEXT: %[[W:.+]] = exec.weight "model.layers.0.self_attn.qkv_proj.weight"
// CHECK-NEXT: %[[B:.+]] = exec.weight "model.layers.0.self_attn.qkv_proj.bias"
// Float weights, without and with a bias (Qwen2's q/k/v bias).
// CHECK-NEXT: exec.gemm %[[X]], %[[W]] -> %[[QKV]] : !exec.view<?x4096xbf16>, !exec.view<6144x4096xbf16> -> !exec.view<?x6144xbf16>
// CHECK-NEXT: exec.gemm %[[X]], %[[W]] bias(%[[B]] : !exec.view<6144xbf16>) -> %[[QKV]] : !exec.view<?x4096xbf16>, !exec.view<6144x4096xbf16> -> !exec.view<?x6144xbf16>
// GPT-2's c_fc with bias and a GELU epilogue; an epilogue without a bias.
// CHECK-NEXT: %[[X2:.+]] = exec.alloc
// CHECK-NEXT: %[[H2:.+]] = exec.alloc
// CHECK-NEXT: %[[FC:.+]] = exec.weight "transformer.h.0.mlp.c_fc.weight"
// CHECK-NEXT: %[[FCB:.+]] = exec.weight "transformer.h.0.mlp.c_fc.bias"
// CHECK-NEXT: exec.gemm %[[X2]], %[[FC]] bias(%[[FCB]] : !exec.view<3072xf32>) -> %[[H2]] {activation = #transformer<activation_kind gelu_tanh>} : !exec.view<?x768xf32>, !exec.view<3072x768xf32> -> !exec.view<?x3072xf32>
// CHECK-NEXT: exec.gemm %[[X2]], %[[FC]] -> %[[H2]] {activation = #transformer<activation_kind relu>} : !exec.view<?x768xf32>, !exec.view<3072x768xf32> -> !exec.view<?x3072xf32>
// Weight-only int8, a scale per output channel.
// CHECK-NEXT: %[[W8:.+]] = exec.weight "model.layers.0.self_attn.qkv_proj.weight.int8"
// CHECK-NEXT: %[[S8:.+]] = exec.weight "model.layers.0.self_attn.qkv_proj.weight_scale"
// CHECK-NEXT: exec.gemm %[[X]], %[[W8]] weight_scale(%[[S8]] : !exec.view<6144xf32>) -> %[[QKV]] {granularity = #transformer<granularity per_channel>} : !exec.view<?x4096xbf16>, !exec.view<6144x4096xi8> -> !exec.view<?x6144xbf16>
// GPTQ-style int4, groups of 128 with zero points; then with a bias instead.
// CHECK-NEXT: %[[W4:.+]] = exec.weight "model.layers.0.self_attn.qkv_proj.qweight"
// CHECK-NEXT: %[[S4:.+]] = exec.weight "model.layers.0.self_attn.qkv_proj.scales"
// CHECK-NEXT: %[[Z4:.+]] = exec.weight "model.layers.0.self_attn.qkv_proj.qzeros"
// CHECK-NEXT: exec.gemm %[[X]], %[[W4]] weight_scale(%[[S4]] : !exec.view<6144x32xf16>) zero_point(%[[Z4]] : !exec.view<6144x32xi4>) -> %[[QKV]] {granularity = #transformer<granularity per_group>, group_size = 128 : i64} : !exec.view<?x4096xbf16>, !exec.view<6144x4096xi4> -> !exec.view<?x6144xbf16>
// CHECK-NEXT: exec.gemm %[[X]], %[[W4]] bias(%[[B]] : !exec.view<6144xbf16>) weight_scale(%[[S4]] : !exec.view<6144x32xf16>) -> %[[QKV]] {granularity = #transformer<granularity per_group>, group_size = 128 : i64} : !exec.view<?x4096xbf16>, !exec.view<6144x4096xi4> -> !exec.view<?x6144xbf16>
// FP8 weights, one scale for the tensor.
// CHECK-NEXT: %[[WF8:.+]] = exec.weight "model.layers.0.self_attn.qkv_proj.weight.fp8"
// CHECK-NEXT: %[[SF8:.+]] = exec.weight "model.layers.0.self_attn.qkv_proj.weight_scale.fp8"
// CHECK-NEXT: exec.gemm %[[X]], %[[WF8]] weight_scale(%[[SF8]] : !exec.view<f32>) -> %[[QKV]] {granularity = #transformer<granularity per_tensor>} : !exec.view<?x4096xbf16>, !exec.view<6144x4096xf8E4M3FN> -> !exec.view<?x6144xbf16>
// W8A8: int8 with a static input scale; FP8 with a scale per token.
// CHECK-NEXT: %[[XF:.+]] = exec.alloc
// CHECK-NEXT: %[[QF:.+]] = exec.alloc
// CHECK-NEXT: %[[IS:.+]] = exec.weight "model.layers.0.self_attn.qkv_proj.input_scale"
// CHECK-NEXT: exec.gemm %[[XF]], %[[W8]] weight_scale(%[[S8]] : !exec.view<6144xf32>) input_scale(%[[IS]] : !exec.view<f32>) -> %[[QF]] {granularity = #transformer<granularity per_channel>, quantize_to = i8} : !exec.view<?x4096xf32>, !exec.view<6144x4096xi8> -> !exec.view<?x6144xf32>
// CHECK-NEXT: exec.gemm %[[XF]], %[[WF8]] weight_scale(%[[SF8]] : !exec.view<f32>) -> %[[QF]] {dynamic_input, granularity = #transformer<granularity per_tensor>, quantize_to = f8E4M3FN} : !exec.view<?x4096xf32>, !exec.view<6144x4096xf8E4M3FN> -> !exec.view<?x6144xf32>
exec.arena @weights weights size 123224576 align 256 section "weights"
exec.schedule @gemm mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[0] : !exec.view<6144x4096xbf16>
  %b = exec.weight "model.layers.0.self_attn.qkv_proj.bias" @weights[50331648] : !exec.view<6144xbf16>
  exec.gemm %x, %w -> %qkv
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xbf16> -> !exec.view<?x6144xbf16>
  exec.gemm %x, %w bias(%b : !exec.view<6144xbf16>) -> %qkv
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xbf16> -> !exec.view<?x6144xbf16>
  %x2 = exec.alloc sizes(%t) : !exec.view<?x768xf32>
  %h2 = exec.alloc sizes(%t) : !exec.view<?x3072xf32>
  %fc = exec.weight "transformer.h.0.mlp.c_fc.weight" @weights[50343936] : !exec.view<3072x768xf32>
  %fc_b = exec.weight "transformer.h.0.mlp.c_fc.bias" @weights[59781120] : !exec.view<3072xf32>
  exec.gemm %x2, %fc bias(%fc_b : !exec.view<3072xf32>) -> %h2
      {activation = #transformer<activation_kind gelu_tanh>}
      : !exec.view<?x768xf32>, !exec.view<3072x768xf32> -> !exec.view<?x3072xf32>
  exec.gemm %x2, %fc -> %h2 {activation = #transformer<activation_kind relu>}
      : !exec.view<?x768xf32>, !exec.view<3072x768xf32> -> !exec.view<?x3072xf32>
  %w8 = exec.weight "model.layers.0.self_attn.qkv_proj.weight.int8" @weights[59793408]
      : !exec.view<6144x4096xi8>
  %s8 = exec.weight "model.layers.0.self_attn.qkv_proj.weight_scale" @weights[84959232]
      : !exec.view<6144xf32>
  exec.gemm %x, %w8 weight_scale(%s8 : !exec.view<6144xf32>) -> %qkv
      {granularity = #transformer<granularity per_channel>}
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xi8> -> !exec.view<?x6144xbf16>
  %w4 = exec.weight "model.layers.0.self_attn.qkv_proj.qweight" @weights[84983808]
      : !exec.view<6144x4096xi4>
  %s4 = exec.weight "model.layers.0.self_attn.qkv_proj.scales" @weights[97566720]
      : !exec.view<6144x32xf16>
  %z4 = exec.weight "model.layers.0.self_attn.qkv_proj.qzeros" @weights[97959936]
      : !exec.view<6144x32xi4>
  exec.gemm %x, %w4 weight_scale(%s4 : !exec.view<6144x32xf16>) zero_point(%z4 : !exec.view<6144x32xi4>)
      -> %qkv {granularity = #transformer<granularity per_group>, group_size = 128 : i64}
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xi4> -> !exec.view<?x6144xbf16>
  exec.gemm %x, %w4 bias(%b : !exec.view<6144xbf16>) weight_scale(%s4 : !exec.view<6144x32xf16>)
      -> %qkv {granularity = #transformer<granularity per_group>, group_size = 128 : i64}
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xi4> -> !exec.view<?x6144xbf16>
  %wf8 = exec.weight "model.layers.0.self_attn.qkv_proj.weight.fp8" @weights[98058240]
      : !exec.view<6144x4096xf8E4M3FN>
  %sf8 = exec.weight "model.layers.0.self_attn.qkv_proj.weight_scale.fp8" @weights[123224064]
      : !exec.view<f32>
  exec.gemm %x, %wf8 weight_scale(%sf8 : !exec.view<f32>) -> %qkv
      {granularity = #transformer<granularity per_tensor>}
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xf8E4M3FN> -> !exec.view<?x6144xbf16>
  %xf = exec.alloc sizes(%t) : !exec.view<?x4096xf32>
  %qf = exec.alloc sizes(%t) : !exec.view<?x6144xf32>
  %is = exec.weight "model.layers.0.self_attn.qkv_proj.input_scale" @weights[123224320]
      : !exec.view<f32>
  exec.gemm %xf, %w8 weight_scale(%s8 : !exec.view<6144xf32>) input_scale(%is : !exec.view<f32>)
      -> %qf {granularity = #transformer<granularity per_channel>, quantize_to = i8}
      : !exec.view<?x4096xf32>, !exec.view<6144x4096xi8> -> !exec.view<?x6144xf32>
  exec.gemm %xf, %wf8 weight_scale(%sf8 : !exec.view<f32>) -> %qf
      {dynamic_input, granularity = #transformer<granularity per_tensor>, quantize_to = f8E4M3FN}
      : !exec.view<?x4096xf32>, !exec.view<6144x4096xf8E4M3FN> -> !exec.view<?x6144xf32>
}

// -----

//===----------------------------------------------------------------------===//
// exec.logits
//===----------------------------------------------------------------------===//

// CHECK-LABEL: exec.schedule @logits mixed {
// CHECK: %[[H:.+]] = exec.alloc
// CHECK-NEXT: %[[LM:.+]] = exec.weight "lm_head.weight"
// CHECK-NEXT: %[[ALL:.+]] = exec.alloc
// CHECK-NEXT: %[[LAST:.+]] = exec.alloc
// Every row (scoring every position); the last row of each sequence.
// CHECK-NEXT: exec.logits %[[H]], %[[LM]] -> %[[ALL]] : !exec.view<?x4096xbf16>, !exec.view<128256x4096xbf16> -> !exec.view<?x128256xf32>
// CHECK-NEXT: exec.logits %[[H]], %[[LM]] -> %[[LAST]] {select_last} : !exec.view<?x4096xbf16>, !exec.view<128256x4096xbf16> -> !exec.view<?x128256xf32>
// An LM head with a bias.
// CHECK-NEXT: %[[LMB:.+]] = exec.weight "lm_head.bias"
// CHECK-NEXT: exec.logits %[[H]], %[[LM]] bias(%[[LMB]] : !exec.view<128256xf32>) -> %[[ALL]] : !exec.view<?x4096xbf16>, !exec.view<128256x4096xbf16> -> !exec.view<?x128256xf32>
// Gemma-2-9B (hidden 3584, vocabulary 256000, tied embeddings): final softcap
// 30, bf16 logits.
// CHECK-NEXT: %[[HG:.+]] = exec.alloc
// CHECK-NEXT: %[[LMG:.+]] = exec.weight "model.embed_tokens.weight"
// CHECK-NEXT: %[[LG:.+]] = exec.alloc
// CHECK-NEXT: exec.logits %[[HG]], %[[LMG]] -> %[[LG]] {select_last, softcap = 3.000000e+01 : f64} : !exec.view<?x3584xbf16>, !exec.view<256000x3584xbf16> -> !exec.view<?x256000xbf16>
// CHECK-NEXT: exec.step_output logits %[[LG]] : !exec.view<?x256000xbf16>
exec.arena @weights weights size 2886194176 align 256 section "weights"
exec.schedule @logits mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %h = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %lm = exec.weight "lm_head.weight" @weights[0] : !exec.view<128256x4096xbf16>
  %all = exec.alloc sizes(%t) : !exec.view<?x128256xf32>
  %last = exec.alloc sizes(%s) : !exec.view<?x128256xf32>
  exec.logits %h, %lm -> %all
      : !exec.view<?x4096xbf16>, !exec.view<128256x4096xbf16> -> !exec.view<?x128256xf32>
  exec.logits %h, %lm -> %last {select_last}
      : !exec.view<?x4096xbf16>, !exec.view<128256x4096xbf16> -> !exec.view<?x128256xf32>
  %lm_b = exec.weight "lm_head.bias" @weights[1050673152] : !exec.view<128256xf32>
  exec.logits %h, %lm bias(%lm_b : !exec.view<128256xf32>) -> %all
      : !exec.view<?x4096xbf16>, !exec.view<128256x4096xbf16> -> !exec.view<?x128256xf32>
  %hg = exec.alloc sizes(%t) : !exec.view<?x3584xbf16>
  %lmg = exec.weight "model.embed_tokens.weight" @weights[1051186176] : !exec.view<256000x3584xbf16>
  %lg = exec.alloc sizes(%s) : !exec.view<?x256000xbf16>
  exec.logits %hg, %lmg -> %lg {select_last, softcap = 30.0 : f64}
      : !exec.view<?x3584xbf16>, !exec.view<256000x3584xbf16> -> !exec.view<?x256000xbf16>
  exec.step_output logits %lg : !exec.view<?x256000xbf16>
}

// In a decode schedule a token is a sequence: select_last rows may be sized
// by either step size.
// CHECK-LABEL: exec.schedule @decode_logits decode {
// CHECK: exec.logits %{{.+}}, %{{.+}} -> %{{.+}} {select_last} : !exec.view<?x4096xbf16>, !exec.view<128256x4096xbf16> -> !exec.view<?x128256xf32>
exec.arena @weights_d weights size 1050673152 align 256 section "weights"
exec.schedule @decode_logits decode {
  %t = exec.step_size tokens
  %h = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %l = exec.alloc sizes(%t) : !exec.view<?x128256xf32>
  %lm = exec.weight "lm_head.weight" @weights_d[0] : !exec.view<128256x4096xbf16>
  exec.logits %h, %lm -> %l {select_last} : !exec.view<?x4096xbf16>, !exec.view<128256x4096xbf16> -> !exec.view<?x128256xf32>
  exec.step_output logits %l : !exec.view<?x128256xf32>
}

// -----

//===----------------------------------------------------------------------===//
// exec.split, exec.copy
//===----------------------------------------------------------------------===//

// CHECK-LABEL: exec.schedule @data_movement mixed {
// CHECK: %[[QKV:.+]] = exec.alloc
// CHECK-NEXT: %[[Q:.+]] = exec.alloc
// CHECK-NEXT: %[[K:.+]] = exec.alloc
// CHECK-NEXT: %[[V:.+]] = exec.alloc
// Three parts of a rank-2 view; two parts of a rank-3 view.
// CHECK-NEXT: exec.split %[[QKV]] -> %[[Q]], %[[K]], %[[V]] : !exec.view<?x6144xbf16> -> !exec.view<?x4096xbf16>, !exec.view<?x1024xbf16>, !exec.view<?x1024xbf16>
// CHECK-NEXT: %[[GU:.+]] = exec.alloc
// CHECK-NEXT: %[[G:.+]] = exec.alloc
// CHECK-NEXT: exec.split %[[GU]] -> %[[G]], %[[G]] : !exec.view<?x2x14336xbf16> -> !exec.view<?x2x7168xbf16>, !exec.view<?x2x7168xbf16>
// Dynamic and static copies.
// CHECK-NEXT: %[[R:.+]] = exec.alloc
// CHECK-NEXT: exec.copy %[[Q]] -> %[[R]] : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
// CHECK-NEXT: %[[C0:.+]] = exec.alloc
// CHECK-NEXT: %[[C1:.+]] = exec.alloc
// CHECK-NEXT: exec.copy %[[C0]] -> %[[C1]] : !exec.view<128x64xf32> -> !exec.view<128x64xf32>
exec.schedule @data_movement mixed {
  %t = exec.step_size tokens
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %k = exec.alloc sizes(%t) : !exec.view<?x1024xbf16>
  %v = exec.alloc sizes(%t) : !exec.view<?x1024xbf16>
  exec.split %qkv -> %q, %k, %v
      : !exec.view<?x6144xbf16> -> !exec.view<?x4096xbf16>, !exec.view<?x1024xbf16>, !exec.view<?x1024xbf16>
  %gu = exec.alloc sizes(%t) : !exec.view<?x2x14336xbf16>
  %g = exec.alloc sizes(%t) : !exec.view<?x2x7168xbf16>
  exec.split %gu -> %g, %g
      : !exec.view<?x2x14336xbf16> -> !exec.view<?x2x7168xbf16>, !exec.view<?x2x7168xbf16>
  %r = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  exec.copy %q -> %r : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
  %c0 = exec.alloc : !exec.view<128x64xf32>
  %c1 = exec.alloc : !exec.view<128x64xf32>
  exec.copy %c0 -> %c1 : !exec.view<128x64xf32> -> !exec.view<128x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// exec.collective, exec.pp_transfer
//===----------------------------------------------------------------------===//

// CHECK-LABEL: exec.schedule @collectives mixed {
// CHECK: %[[Y:.+]] = exec.alloc
// CHECK-NEXT: %[[Y2:.+]] = exec.alloc
// all_reduce in place (tensor parallel, 4 ranks) and out of place.
// CHECK-NEXT: exec.collective all_reduce sum %[[Y]] -> %[[Y]] group 4 : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
// CHECK-NEXT: exec.collective all_reduce max %[[Y]] -> %[[Y2]] group 2 : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
// all_gather of vocabulary-parallel logits along axis 1; along axis 0 (the
// default, not printed).
// CHECK-NEXT: %[[PART:.+]] = exec.alloc
// CHECK-NEXT: %[[FULL:.+]] = exec.alloc
// CHECK-NEXT: exec.collective all_gather %[[PART]] -> %[[FULL]] axis 1 group 4 : !exec.view<?x32064xf32> -> !exec.view<?x128256xf32>
// CHECK-NEXT: %[[ROWS:.+]] = exec.alloc
// CHECK-NEXT: %[[ALL_ROWS:.+]] = exec.alloc
// CHECK-NEXT: exec.collective all_gather %[[ROWS]] -> %[[ALL_ROWS]] group 8 : !exec.view<8x4096xbf16> -> !exec.view<64x4096xbf16>
// reduce_scatter along axis 1 and along axis 0.
// CHECK-NEXT: %[[YS:.+]] = exec.alloc
// CHECK-NEXT: exec.collective reduce_scatter sum %[[Y]] -> %[[YS]] axis 1 group 4 : !exec.view<?x4096xbf16> -> !exec.view<?x1024xbf16>
// CHECK-NEXT: %[[M:.+]] = exec.alloc
// CHECK-NEXT: %[[MS:.+]] = exec.alloc
// CHECK-NEXT: exec.collective reduce_scatter min %[[M]] -> %[[MS]] group 2 : !exec.view<16x128xf32> -> !exec.view<8x128xf32>
// Pipeline stages: to the next one, and past one.
// CHECK-NEXT: %[[H1:.+]] = exec.alloc
// CHECK-NEXT: exec.pp_transfer %[[Y]] -> %[[H1]] from 0 to 1 : !exec.view<?x4096xbf16>
// CHECK-NEXT: exec.pp_transfer %[[H1]] -> %[[Y]] from 1 to 3 : !exec.view<?x4096xbf16>
exec.schedule @collectives mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y2 = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  exec.collective all_reduce sum %y -> %y group 4 : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
  exec.collective all_reduce max %y -> %y2 group 2 : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
  %part = exec.alloc sizes(%s) : !exec.view<?x32064xf32>
  %full = exec.alloc sizes(%s) : !exec.view<?x128256xf32>
  exec.collective all_gather %part -> %full axis 1 group 4
      : !exec.view<?x32064xf32> -> !exec.view<?x128256xf32>
  %rows = exec.alloc : !exec.view<8x4096xbf16>
  %all_rows = exec.alloc : !exec.view<64x4096xbf16>
  exec.collective all_gather %rows -> %all_rows group 8
      : !exec.view<8x4096xbf16> -> !exec.view<64x4096xbf16>
  %ys = exec.alloc sizes(%t) : !exec.view<?x1024xbf16>
  exec.collective reduce_scatter sum %y -> %ys axis 1 group 4
      : !exec.view<?x4096xbf16> -> !exec.view<?x1024xbf16>
  %m = exec.alloc : !exec.view<16x128xf32>
  %ms = exec.alloc : !exec.view<8x128xf32>
  exec.collective reduce_scatter min %m -> %ms group 2
      : !exec.view<16x128xf32> -> !exec.view<8x128xf32>
  %h1 = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  exec.pp_transfer %y -> %h1 from 0 to 1 : !exec.view<?x4096xbf16>
  exec.pp_transfer %h1 -> %y from 1 to 3 : !exec.view<?x4096xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.onnx
//===----------------------------------------------------------------------===//

// CHECK-LABEL: exec.schedule @onnx mixed {
// CHECK: %[[X:.+]] = exec.alloc : !exec.view<4x8xf32>
// CHECK-NEXT: %[[Y:.+]] = exec.alloc : !exec.view<8x4xf32>
// ONNX attributes.
// CHECK-NEXT: exec.onnx "Transpose"(%[[X]]) -> (%[[Y]]) {attrs = {perm = array<i64: 1, 0>}} : (!exec.view<4x8xf32>) -> (!exec.view<8x4xf32>)
// An absent optional input (Clip's min); absent optional outputs.
// CHECK-NEXT: %[[A:.+]] = exec.alloc
// CHECK-NEXT: %[[B:.+]] = exec.alloc
// CHECK-NEXT: %[[MAX:.+]] = exec.alloc
// CHECK-NEXT: exec.onnx "Clip"(%[[A]], %[[MAX]]) -> (%[[B]]) {input_present = array<i1: true, false, true>} : (!exec.view<?x4096xf32>, !exec.view<f32>) -> (!exec.view<?x4096xf32>)
// CHECK-NEXT: %[[W:.+]] = exec.alloc
// CHECK-NEXT: exec.onnx "LayerNormalization"(%[[A]], %[[W]], %[[W]]) -> (%[[B]]) {attrs = {axis = -1 : i64, epsilon = 9.99999974E-6 : f32}, output_present = array<i1: true, false, false>} : (!exec.view<?x4096xf32>, !exec.view<4096xf32>, !exec.view<4096xf32>) -> (!exec.view<?x4096xf32>)
// A contrib operator; several outputs.
// CHECK-NEXT: exec.onnx "FastGelu"(%[[A]], %[[W]]) -> (%[[B]]) {domain = "com.microsoft"} : (!exec.view<?x4096xf32>, !exec.view<4096xf32>) -> (!exec.view<?x4096xf32>)
// CHECK-NEXT: %[[P:.+]] = exec.alloc
// CHECK-NEXT: %[[Q:.+]] = exec.alloc
// CHECK-NEXT: exec.onnx "Split"(%[[X]]) -> (%[[P]], %[[Q]]) {attrs = {axis = 1 : i64, num_outputs = 2 : i64}} : (!exec.view<4x8xf32>) -> (!exec.view<4x4xf32>, !exec.view<4x4xf32>)
exec.schedule @onnx mixed {
  %t = exec.step_size tokens
  %x = exec.alloc : !exec.view<4x8xf32>
  %y = exec.alloc : !exec.view<8x4xf32>
  exec.onnx "Transpose"(%x) -> (%y) {attrs = {perm = array<i64: 1, 0>}}
      : (!exec.view<4x8xf32>) -> (!exec.view<8x4xf32>)
  %a = exec.alloc sizes(%t) : !exec.view<?x4096xf32>
  %b = exec.alloc sizes(%t) : !exec.view<?x4096xf32>
  %max = exec.alloc : !exec.view<f32>
  exec.onnx "Clip"(%a, %max) -> (%b) {input_present = array<i1: true, false, true>}
      : (!exec.view<?x4096xf32>, !exec.view<f32>) -> (!exec.view<?x4096xf32>)
  %w = exec.alloc : !exec.view<4096xf32>
  exec.onnx "LayerNormalization"(%a, %w, %w) -> (%b)
      {attrs = {axis = -1 : i64, epsilon = 9.99999974E-6 : f32},
       output_present = array<i1: true, false, false>}
      : (!exec.view<?x4096xf32>, !exec.view<4096xf32>, !exec.view<4096xf32>) -> (!exec.view<?x4096xf32>)
  exec.onnx "FastGelu"(%a, %w) -> (%b) {domain = "com.microsoft"}
      : (!exec.view<?x4096xf32>, !exec.view<4096xf32>) -> (!exec.view<?x4096xf32>)
  %p = exec.alloc : !exec.view<4x4xf32>
  %q = exec.alloc : !exec.view<4x4xf32>
  exec.onnx "Split"(%x) -> (%p, %q) {attrs = {axis = 1 : i64, num_outputs = 2 : i64}}
      : (!exec.view<4x8xf32>) -> (!exec.view<4x4xf32>, !exec.view<4x4xf32>)
}

// An operator of no inputs prints and parses its empty type list.
// CHECK-LABEL: exec.schedule @onnx_no_inputs mixed {
// CHECK: exec.onnx "RandomNormal"() -> (%{{.+}}) {attrs = {shape = array<i64: 4>}} : () -> (!exec.view<4xf32>)
exec.schedule @onnx_no_inputs mixed {
  %r = exec.alloc : !exec.view<4xf32>
  exec.onnx "RandomNormal"() -> (%r) {attrs = {shape = array<i64: 4>}} : () -> (!exec.view<4xf32>)
}

// -----

//===----------------------------------------------------------------------===//
// exec.launch
//===----------------------------------------------------------------------===//

// CHECK-LABEL: exec.kernel @silu_mul_i14336(!exec.view<?x28672xbf16>, !exec.view<?x14336xbf16>, index) sm [80, 90] image ptx|cubin implements "gated_act" {kind = "silu"}
// CHECK: exec.schedule @launch mixed {
// CHECK-NEXT: %[[T:.+]] = exec.step_size tokens
// CHECK-NEXT: %[[S:.+]] = exec.step_size seqs
// CHECK-NEXT: %[[GU:.+]] = exec.alloc
// CHECK-NEXT: %[[H:.+]] = exec.alloc
// A grid of one block per token; then rounded up, with shared memory and a
// discardable attribute.
// CHECK-NEXT: exec.launch @silu_mul_i14336(%[[GU]], %[[H]], %[[T]]) grid(%[[T]], 1, 1) block(256, 1, 1) : (!exec.view<?x28672xbf16>, !exec.view<?x14336xbf16>, index)
// CHECK-NEXT: exec.launch @silu_mul_i14336(%[[GU]], %[[H]], %[[T]]) grid(%[[T]] ceildiv 4, 14, 1) block(128, 4, 1) smem 49152 {accel.num_inputs = 1 : i64} : (!exec.view<?x28672xbf16>, !exec.view<?x14336xbf16>, index)
// One block per sequence, with all of sm_90's 227 KiB of shared memory.
// CHECK-NEXT: %[[L:.+]] = exec.alloc
// CHECK-NEXT: %[[IDS:.+]] = exec.alloc
// CHECK-NEXT: exec.launch @argmax_v128256(%[[L]], %[[IDS]], %[[S]]) grid(%[[S]], 1, 1) block(1024, 1, 1) smem 232448 : (!exec.view<?x128256xf32>, !exec.view<?xi32>, index)
// Two dynamic grid dimensions and a 3-D block.
// CHECK-NEXT: %[[Q:.+]] = exec.alloc
// CHECK-NEXT: exec.launch @attn_scores(%[[Q]], %[[T]], %[[S]]) grid(%[[T]] ceildiv 64, %[[S]], 32) block(32, 4, 2) : (!exec.view<?x32x128xbf16>, index, index)
// No arguments: no type list.
// CHECK-NEXT: exec.launch @zero_counters() grid(1, 1, 1) block(32, 1, 1){{$}}
exec.kernel @silu_mul_i14336(!exec.view<?x28672xbf16>, !exec.view<?x14336xbf16>, index)
    sm [80, 90] image ptx|cubin implements "gated_act" {kind = "silu"}
exec.kernel @argmax_v128256(!exec.view<?x128256xf32>, !exec.view<?xi32>, index)
    sm [90] image cubin
exec.kernel @attn_scores(!exec.view<?x32x128xbf16>, index, index) sm [90, 100] image cubin
exec.kernel @zero_counters() sm [90] image ptx
exec.schedule @launch mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %gu = exec.alloc sizes(%t) : !exec.view<?x28672xbf16>
  %h = exec.alloc sizes(%t) : !exec.view<?x14336xbf16>
  exec.launch @silu_mul_i14336(%gu, %h, %t) grid(%t, 1, 1) block(256, 1, 1)
      : (!exec.view<?x28672xbf16>, !exec.view<?x14336xbf16>, index)
  exec.launch @silu_mul_i14336(%gu, %h, %t) grid(%t ceildiv 4, 14, 1) block(128, 4, 1) smem 49152
      {accel.num_inputs = 1 : i64}
      : (!exec.view<?x28672xbf16>, !exec.view<?x14336xbf16>, index)
  %l = exec.alloc sizes(%s) : !exec.view<?x128256xf32>
  %ids = exec.alloc sizes(%s) : !exec.view<?xi32>
  exec.launch @argmax_v128256(%l, %ids, %s) grid(%s, 1, 1) block(1024, 1, 1) smem 232448
      : (!exec.view<?x128256xf32>, !exec.view<?xi32>, index)
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  exec.launch @attn_scores(%q, %t, %s) grid(%t ceildiv 64, %s, 32) block(32, 4, 2)
      : (!exec.view<?x32x128xbf16>, index, index)
  exec.launch @zero_counters() grid(1, 1, 1) block(32, 1, 1)
}

// -----

//===----------------------------------------------------------------------===//
// A decode schedule: tokens and seqs are the same size
//===----------------------------------------------------------------------===//

// A token-bound and a sequence-bound view agree in shape, and logits of every
// row go to a sequence-bound view without select_last.
// CHECK-LABEL: exec.schedule @decode decode {
// CHECK: %[[X:.+]] = exec.alloc sizes(%{{.+}}) : !exec.view<?x4096xbf16>
// CHECK-NEXT: %[[R:.+]] = exec.alloc sizes(%{{.+}}) : !exec.view<?x4096xbf16>
// CHECK-NEXT: exec.residual_add %[[R]], %[[X]] -> %[[R]] : !exec.view<?x4096xbf16>
// CHECK-NEXT: %[[LM:.+]] = exec.weight "lm_head.weight"
// CHECK-NEXT: %[[L:.+]] = exec.alloc
// CHECK-NEXT: exec.logits %[[X]], %[[LM]] -> %[[L]] : !exec.view<?x4096xbf16>, !exec.view<128256x4096xbf16> -> !exec.view<?x128256xf32>
// CHECK-NEXT: exec.step_output logits %[[L]] : !exec.view<?x128256xf32>
exec.arena @weights weights size 1050673152 align 256 section "weights"
exec.schedule @decode decode {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %ids = exec.step_input token_ids : !exec.view<?xi32>
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %r = exec.alloc sizes(%s) : !exec.view<?x4096xbf16>
  exec.residual_add %r, %x -> %r : !exec.view<?x4096xbf16>
  %lm = exec.weight "lm_head.weight" @weights[0] : !exec.view<128256x4096xbf16>
  %l = exec.alloc sizes(%s) : !exec.view<?x128256xf32>
  exec.logits %x, %lm -> %l
      : !exec.view<?x4096xbf16>, !exec.view<128256x4096xbf16> -> !exec.view<?x128256xf32>
  exec.step_output logits %l : !exec.view<?x128256xf32>
}

// -----

//===----------------------------------------------------------------------===//
// One Llama-3-8B decoder layer after buffer assignment
//===----------------------------------------------------------------------===//

// Every activation is a slice of the token or sequence region; the attention
// output is viewed as [tokens, hidden] for o_proj; the residual stream is
// updated in place by the fused add + norm.
// CHECK-LABEL: exec.schedule @llama3_8b mixed {
// CHECK-NEXT: %[[T:.+]] = exec.step_size tokens
// CHECK-NEXT: %[[S:.+]] = exec.step_size seqs
// CHECK-NEXT: %[[IDS:.+]] = exec.step_input token_ids : !exec.view<?xi64>
// CHECK-NEXT: %[[POS:.+]] = exec.step_input positions : !exec.view<?xi64>
// CHECK-NEXT: %[[EMBED:.+]] = exec.weight "model.embed_tokens.weight" @weights[0] : !exec.view<128256x4096xbf16>
// CHECK-NEXT: %[[LN1:.+]] = exec.weight "model.layers.0.input_layernorm.weight" @weights[1050673152] : !exec.view<4096xbf16>
// CHECK-NEXT: %[[WQKV:.+]] = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[1050681344] : !exec.view<6144x4096xbf16>
// CHECK-NEXT: %[[WO:.+]] = exec.weight "model.layers.0.self_attn.o_proj.weight" @weights[1101012992] : !exec.view<4096x4096xbf16>
// CHECK-NEXT: %[[LN2:.+]] = exec.weight "model.layers.0.post_attention_layernorm.weight" @weights[1134567424] : !exec.view<4096xbf16>
// CHECK-NEXT: %[[WGU:.+]] = exec.weight "model.layers.0.mlp.gate_up_proj.weight" @weights[1134575616] : !exec.view<28672x4096xbf16>
// CHECK-NEXT: %[[WD:.+]] = exec.weight "model.layers.0.mlp.down_proj.weight" @weights[1369456640] : !exec.view<4096x14336xbf16>
// CHECK-NEXT: %[[NORM:.+]] = exec.weight "model.norm.weight" @weights[1486897152] : !exec.view<4096xbf16>
// CHECK-NEXT: %[[LM:.+]] = exec.weight "lm_head.weight" @weights[1486905344] : !exec.view<128256x4096xbf16>
// CHECK-NEXT: %[[X:.+]] = exec.slice @act[tokens 0] sizes(%[[T]]) : !exec.view<?x4096xbf16>
// CHECK-NEXT: %[[H:.+]] = exec.slice @act[tokens 8192] sizes(%[[T]]) : !exec.view<?x4096xbf16>
// CHECK-NEXT: %[[QKV:.+]] = exec.slice @act[tokens 16384] sizes(%[[T]]) : !exec.view<?x6144xbf16>
// CHECK-NEXT: %[[Q:.+]] = exec.slice @act[tokens 28672] sizes(%[[T]]) : !exec.view<?x32x128xbf16>
// CHECK-NEXT: %[[O:.+]] = exec.slice @act[tokens 36864] sizes(%[[T]]) : !exec.view<?x32x128xbf16>
// CHECK-NEXT: %[[O2:.+]] = exec.view %[[O]] : !exec.view<?x32x128xbf16> -> !exec.view<?x4096xbf16>
// CHECK-NEXT: %[[ATTN:.+]] = exec.slice @act[tokens 16384] sizes(%[[T]]) : !exec.view<?x4096xbf16>
// CHECK-NEXT: %[[MLP:.+]] = exec.slice @act[tokens 24576] sizes(%[[T]]) : !exec.view<?x4096xbf16>
// CHECK-NEXT: %[[LOGITS:.+]] = exec.slice @act[seqs 0] sizes(%[[S]]) : !exec.view<?x128256xf32>
// CHECK-NEXT: exec.embedding %[[EMBED]][%[[IDS]]] -> %[[X]]
// CHECK-NEXT: exec.rms_norm %[[X]], %[[LN1]] -> %[[H]] {epsilon = 1.000000e-05 : f64, kernel = @rms_norm_h4096}
// CHECK-NEXT: exec.gemm %[[H]], %[[WQKV]] -> %[[QKV]]
// CHECK-NEXT: exec.qkv_rotary_kv_write %[[QKV]], %[[POS]] -> %[[Q]], @kv[0]
// CHECK-NEXT: exec.attention %[[Q]], @kv[0] -> %[[O]] {causal, num_kv_heads = 8 : i64, scale = 0.088388347648318447 : f64}
// CHECK-NEXT: exec.gemm %[[O2]], %[[WO]] -> %[[ATTN]]
// CHECK-NEXT: exec.add_rms_norm %[[ATTN]], %[[X]], %[[LN2]] -> %[[H]], %[[X]]
// CHECK-NEXT: exec.gated_mlp %[[H]] gate_up(%[[WGU]] : !exec.view<28672x4096xbf16>) down(%[[WD]] : !exec.view<4096x14336xbf16>) -> %[[MLP]]
// CHECK-NEXT: exec.add_rms_norm %[[MLP]], %[[X]], %[[NORM]] -> %[[H]], %[[X]]
// CHECK-NEXT: exec.logits %[[H]], %[[LM]] -> %[[LOGITS]] {select_last}
// CHECK-NEXT: exec.step_output logits %[[LOGITS]] : !exec.view<?x128256xf32>
// CHECK-NEXT: }
exec.arena @weights weights size 2537578496 align 256 section "weights"
exec.arena @act activations size 0 per_token 45056 per_seq 513024 align 256
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.kernel @rms_norm_h4096(!exec.view<?x4096xbf16>, !exec.view<4096xbf16>,
                            !exec.view<?x4096xbf16>, index)
    sm [90] image ptx|cubin implements "rms_norm" {hidden = 4096 : i64}
exec.schedule @llama3_8b mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %ids = exec.step_input token_ids : !exec.view<?xi64>
  %pos = exec.step_input positions : !exec.view<?xi64>
  %embed = exec.weight "model.embed_tokens.weight" @weights[0] : !exec.view<128256x4096xbf16>
  %ln1 = exec.weight "model.layers.0.input_layernorm.weight" @weights[1050673152]
      : !exec.view<4096xbf16>
  %wqkv = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[1050681344]
      : !exec.view<6144x4096xbf16>
  %wo = exec.weight "model.layers.0.self_attn.o_proj.weight" @weights[1101012992]
      : !exec.view<4096x4096xbf16>
  %ln2 = exec.weight "model.layers.0.post_attention_layernorm.weight" @weights[1134567424]
      : !exec.view<4096xbf16>
  %wgu = exec.weight "model.layers.0.mlp.gate_up_proj.weight" @weights[1134575616]
      : !exec.view<28672x4096xbf16>
  %wd = exec.weight "model.layers.0.mlp.down_proj.weight" @weights[1369456640]
      : !exec.view<4096x14336xbf16>
  %norm = exec.weight "model.norm.weight" @weights[1486897152] : !exec.view<4096xbf16>
  %lm = exec.weight "lm_head.weight" @weights[1486905344] : !exec.view<128256x4096xbf16>
  %x = exec.slice @act[tokens 0] sizes(%t) : !exec.view<?x4096xbf16>
  %h = exec.slice @act[tokens 8192] sizes(%t) : !exec.view<?x4096xbf16>
  %qkv = exec.slice @act[tokens 16384] sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.slice @act[tokens 28672] sizes(%t) : !exec.view<?x32x128xbf16>
  %o = exec.slice @act[tokens 36864] sizes(%t) : !exec.view<?x32x128xbf16>
  %o2 = exec.view %o : !exec.view<?x32x128xbf16> -> !exec.view<?x4096xbf16>
  %attn = exec.slice @act[tokens 16384] sizes(%t) : !exec.view<?x4096xbf16>
  %mlp = exec.slice @act[tokens 24576] sizes(%t) : !exec.view<?x4096xbf16>
  %logits = exec.slice @act[seqs 0] sizes(%s) : !exec.view<?x128256xf32>
  exec.embedding %embed[%ids] -> %x
      : !exec.view<128256x4096xbf16>, !exec.view<?xi64> -> !exec.view<?x4096xbf16>
  exec.rms_norm %x, %ln1 -> %h {epsilon = 1.0e-05 : f64, kernel = @rms_norm_h4096}
      : !exec.view<?x4096xbf16>, !exec.view<4096xbf16> -> !exec.view<?x4096xbf16>
  exec.gemm %h, %wqkv -> %qkv
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xbf16> -> !exec.view<?x6144xbf16>
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[0]
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       scaling = #transformer.rope_scaling<llama3, factor = 8.0, original_max_position = 8192,
                                           low_freq_factor = 1.0, high_freq_factor = 4.0>,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
  exec.attention %q, @kv[0] -> %o {causal, num_kv_heads = 8 : i64, scale = 0.08838834764831845 : f64}
      : !exec.view<?x32x128xbf16>
  exec.gemm %o2, %wo -> %attn
      : !exec.view<?x4096xbf16>, !exec.view<4096x4096xbf16> -> !exec.view<?x4096xbf16>
  exec.add_rms_norm %attn, %x, %ln2 -> %h, %x {epsilon = 1.0e-05 : f64}
      : !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>, !exec.view<4096xbf16>
        -> !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>
  exec.gated_mlp %h gate_up(%wgu : !exec.view<28672x4096xbf16>)
      down(%wd : !exec.view<4096x14336xbf16>) -> %mlp {kind = #transformer<activation_kind silu>}
      : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
  exec.add_rms_norm %mlp, %x, %norm -> %h, %x {epsilon = 1.0e-05 : f64}
      : !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>, !exec.view<4096xbf16>
        -> !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>
  exec.logits %h, %lm -> %logits {select_last}
      : !exec.view<?x4096xbf16>, !exec.view<128256x4096xbf16> -> !exec.view<?x128256xf32>
  exec.step_output logits %logits : !exec.view<?x128256xf32>
}
