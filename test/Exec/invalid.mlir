// RUN: accel-opt %s -split-input-file -verify-diagnostics

// One section per verifier rule of the exec dialect (dialects/Exec/*.cpp and
// the ODS constraints of ExecOps.td and ExecStepOps.td), each with the
// diagnostic on the offending op. Shapes are Llama-3-8B's unless a comment
// says otherwise.

//===----------------------------------------------------------------------===//
// !exec.view
//===----------------------------------------------------------------------===//

// f64 is not an element type exec views support.
// expected-error @+1 {{element type 'f64' is not supported by exec views (expected f32, f16, bf16, f8E4M3FN, f8E5M2, i8, i4, i32 or i64)}}
exec.kernel @k(!exec.view<4096xf64>) sm [] image none implements "test"

// -----

// Integers must be signless.
// expected-error @+1 {{element type 'ui8' is not supported by exec views}}
exec.kernel @k(!exec.view<4096xui8>) sm [] image none implements "test"

// -----

// 2^24 x (2^24 + 1) elements is more than 2^48.
// expected-error @+1 {{view has more than 2^48 elements}}
exec.kernel @k(!exec.view<16777216x16777217xf32>) sm [] image none implements "test"

// -----

// A view operand given an index (ODS type constraint).
exec.schedule @s mixed {
  %t = exec.step_size tokens
  // expected-error @+1 {{'exec.copy' op operand #0 must be exec view, but got 'index'}}
  "exec.copy"(%t, %t) : (index, index) -> ()
}

// -----

// An unknown exec attribute.
// expected-error @+1 {{unknown attribute `bogus` in dialect `exec`}}
exec.kernel @k() sm [90] image ptx attributes {accel.kind = #exec<bogus tokens>}

// -----

//===----------------------------------------------------------------------===//
// exec.arena
//===----------------------------------------------------------------------===//

// A negative region size.
// expected-error @+1 {{'exec.arena' op sizes must be non-negative, got size 0, per_token -8192, per_seq 0}}
exec.arena @act activations size 0 per_token -8192 align 256

// -----

// The alignment is not a power of two.
// expected-error @+1 {{'exec.arena' op alignment must be a power of two, got 100}}
exec.arena @act activations size 1024 align 100

// -----

// A zero alignment.
// expected-error @+1 {{'exec.arena' op alignment must be a power of two, got 0}}
exec.arena @act activations size 1024 align 0

// -----

// The fixed region is not a whole number of alignment units.
// expected-error @+1 {{'exec.arena' op every region size is a multiple of the alignment 256, got 1000}}
exec.arena @act activations size 1000 align 256

// -----

// Nor is the per-sequence region.
// expected-error @+1 {{'exec.arena' op every region size is a multiple of the alignment 256, got 513000}}
exec.arena @act activations size 0 per_token 8192 per_seq 513000 align 256

// -----

// A weights arena without its plan section.
// expected-error @+1 {{'exec.arena' op a weights arena names the plan section that fills it}}
exec.arena @weights weights size 1048576 align 256

// -----

// A weights arena with an empty section name.
// expected-error @+1 {{'exec.arena' op a weights arena names the plan section that fills it}}
exec.arena @weights weights size 1048576 align 256 section ""

// -----

// Only a weights arena is filled from the plan.
// expected-error @+1 {{'exec.arena' op only a weights arena names a plan section, not an activations arena}}
exec.arena @act activations size 1048576 align 256 section "weights"

// -----

// A workspace arena has no per-token region.
// expected-error @+1 {{'exec.arena' op only an activations arena has per-token and per-sequence regions}}
exec.arena @ws workspace size 4096 per_token 256 align 256

// -----

// Nor does a weights arena have a per-sequence region.
// expected-error @+1 {{'exec.arena' op only an activations arena has per-token and per-sequence regions}}
exec.arena @weights weights size 4096 per_seq 256 align 256 section "weights"

// -----

//===----------------------------------------------------------------------===//
// exec.kv_pool
//===----------------------------------------------------------------------===//

// No layers.
// expected-error @+1 {{'exec.kv_pool' op layers must be positive, got 0}}
exec.kv_pool @kv layers 0 block_size 16 kv_heads 8 head_dim 128 : bf16

// -----

// The block size is not a power of two.
// expected-error @+1 {{'exec.kv_pool' op block_size must be a power of two, got 12}}
exec.kv_pool @kv layers 32 block_size 12 kv_heads 8 head_dim 128 : bf16

// -----

// No KV heads.
// expected-error @+1 {{'exec.kv_pool' op kv_heads must be positive, got 0}}
exec.kv_pool @kv layers 32 block_size 16 kv_heads 0 head_dim 128 : bf16

// -----

// A negative head_dim.
// expected-error @+1 {{'exec.kv_pool' op head_dim must be positive, got -128}}
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim -128 : bf16

// -----

// An int8 cache is not supported.
// expected-error @+1 {{'exec.kv_pool' op a kv pool holds f32, f16, bf16, f8E4M3FN or f8E5M2, got 'i8'}}
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : i8

// -----

// A pipeline stage without layers.
// expected-error @+1 {{'exec.kv_pool' op every pipeline stage holds at least one layer, got 0}}
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 stages [32, 0] : bf16

// -----

// The stages hold 30 of the 32 layers.
// expected-error @+1 {{'exec.kv_pool' op the stages' layers sum to 30, not the pool's 32}}
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 stages [16, 14] : bf16

// -----

//===----------------------------------------------------------------------===//
// exec.kernel
//===----------------------------------------------------------------------===//

// sm_91 is not an architecture exec knows.
// expected-error @+1 {{'exec.kernel' op unknown SM architecture 91 (known: 70 75 80 86 87 89 90 100 120)}}
exec.kernel @k() sm [91] image cubin

// -----

// SMs out of order.
// expected-error @+1 {{'exec.kernel' op SM architectures must be sorted and unique}}
exec.kernel @k() sm [90, 80] image cubin

// -----

// A repeated SM.
// expected-error @+1 {{'exec.kernel' op SM architectures must be sorted and unique}}
exec.kernel @k() sm [90, 90] image ptx

// -----

// A GPU image built for no SM.
// expected-error @+1 {{'exec.kernel' op a kernel with a GPU image names at least one SM}}
exec.kernel @k() sm [] image ptx|cubin implements "rms_norm"

// -----

// Neither a GPU image nor a reference implementation.
// expected-error @+1 {{'exec.kernel' op has no GPU image and no reference implementation; nothing could run it}}
exec.kernel @k() sm [90] image none

// -----

// A kernel argument that is neither a view nor an index.
// expected-error @+1 {{'exec.kernel' op argument #1 must be an exec view or index, got f32}}
exec.kernel @k(!exec.view<?x4096xbf16>, f32) sm [90] image cubin

// -----

//===----------------------------------------------------------------------===//
// exec.schedule
//===----------------------------------------------------------------------===//

// A non-exec op in a schedule body.
// expected-error @+1 {{'exec.schedule' op may hold only exec ops; 'builtin.unrealized_conversion_cast' is not one}}
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %c = builtin.unrealized_conversion_cast %t : index to i64
}

// -----

// The token count declared twice.
exec.schedule @s mixed {
  // expected-note @+1 {{first declared here}}
  %t = exec.step_size tokens
  // expected-error @+1 {{'exec.step_size' op step size 'tokens' is declared twice in the schedule}}
  %t2 = exec.step_size tokens
}

// -----

// The positions bound twice.
exec.schedule @s mixed {
  // expected-note @+1 {{first declared here}}
  %p = exec.step_input positions : !exec.view<?xi32>
  // expected-error @+1 {{'exec.step_input' op step input 'positions' is declared twice in the schedule}}
  %p2 = exec.step_input positions : !exec.view<?xi64>
}

// -----

// Two views claim to be the logits.
exec.schedule @s mixed {
  %s = exec.step_size seqs
  %l = exec.alloc sizes(%s) : !exec.view<?x128256xf32>
  // expected-note @+1 {{first declared here}}
  exec.step_output logits %l : !exec.view<?x128256xf32>
  // expected-error @+1 {{'exec.step_output' op step output 'logits' is declared twice in the schedule}}
  exec.step_output logits %l : !exec.view<?x128256xf32>
}

// -----

// One weight name at two offsets.
exec.arena @weights weights size 1048576 align 256 section "weights"
exec.schedule @s mixed {
  // expected-note @+1 {{first bound here}}
  %w = exec.weight "model.norm.weight" @weights[0] : !exec.view<4096xbf16>
  // expected-error @+1 {{'exec.weight' op weight 'model.norm.weight' is bound to two different places or types}}
  %w2 = exec.weight "model.norm.weight" @weights[8192] : !exec.view<4096xbf16>
}

// -----

// One weight name with two types.
exec.arena @weights weights size 1048576 align 256 section "weights"
exec.schedule @s mixed {
  // expected-note @+1 {{first bound here}}
  %w = exec.weight "model.norm.weight" @weights[0] : !exec.view<4096xbf16>
  // expected-error @+1 {{'exec.weight' op weight 'model.norm.weight' is bound to two different places or types}}
  %w2 = exec.weight "model.norm.weight" @weights[0] : !exec.view<2048xf32>
}

// -----

// A schedule has one block (SizedRegion<1>).
// expected-error @+1 {{'exec.schedule' op expects region #0 to have 0 or 1 blocks}}
exec.schedule @s mixed {
  %t = exec.step_size tokens
^bb1:
  %s = exec.step_size seqs
}

// -----

// A schedule's block has no arguments (NoRegionArguments).
// expected-error @+1 {{'exec.schedule' op region should have no arguments}}
exec.schedule @s decode {
^bb0(%t: index):
}

// -----

// A schedule declaration outside a schedule (HasParent).
// expected-error @+1 {{'exec.step_size' op expects parent op 'exec.schedule'}}
%t = exec.step_size tokens

// -----

// A step outside a schedule (HasParent).
exec.kernel @k() sm [90] image ptx
// expected-error @+1 {{'exec.launch' op expects parent op 'exec.schedule'}}
exec.launch @k() grid(1, 1, 1) block(32, 1, 1)

// -----

//===----------------------------------------------------------------------===//
// exec.step_input, exec.step_output
//===----------------------------------------------------------------------===//

// Token ids are integers.
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.step_input' op a token_ids input is a !exec.view<?xi32> or !exec.view<?xi64>, got '!exec.view<?xf32>'}}
  %ids = exec.step_input token_ids : !exec.view<?xf32>
}

// -----

// Positions have one entry per token of the step: a dynamic vector.
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.step_input' op a positions input is a !exec.view<?xi32> or !exec.view<?xi64>, got '!exec.view<256xi32>'}}
  %pos = exec.step_input positions : !exec.view<256xi32>
}

// -----

// Logits are [rows, vocab].
exec.schedule @s mixed {
  %s = exec.step_size seqs
  %l = exec.alloc sizes(%s) : !exec.view<?x32x4008xf32>
  // expected-error @+1 {{'exec.step_output' op a logits output is a rank-2 f32, f16 or bf16 view, got '!exec.view<?x32x4008xf32>'}}
  exec.step_output logits %l : !exec.view<?x32x4008xf32>
}

// -----

// Hidden states are floats.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %h = exec.alloc sizes(%t) : !exec.view<?x4096xi8>
  // expected-error @+1 {{'exec.step_output' op a hidden_states output is a rank-2 f32, f16 or bf16 view, got '!exec.view<?x4096xi8>'}}
  exec.step_output hidden_states %h : !exec.view<?x4096xi8>
}

// -----

//===----------------------------------------------------------------------===//
// exec.alloc
//===----------------------------------------------------------------------===//

// A dynamic view without its size.
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.alloc' op expected 1 dynamic size(s) for '!exec.view<?x4096xbf16>', got 0}}
  %x = exec.alloc : !exec.view<?x4096xbf16>
}

// -----

// A static view with a size.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  // expected-error @+1 {{'exec.alloc' op expected 0 dynamic size(s) for '!exec.view<16x4096xbf16>', got 1}}
  %x = exec.alloc sizes(%t) : !exec.view<16x4096xbf16>
}

// -----

// A size that is not a step size (the cast also breaks the exec-only rule of
// the schedule, which is verified after the ops in it).
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %c = builtin.unrealized_conversion_cast %t : index to index
  // expected-error @+1 {{'exec.alloc' op dynamic size #0 must be an exec.step_size}}
  %x = exec.alloc sizes(%c) : !exec.view<?x4096xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.slice
//===----------------------------------------------------------------------===//

// A dynamic view without its size.
exec.arena @act activations size 0 per_token 8192 align 256
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.slice' op expected 1 dynamic size(s) for '!exec.view<?x4096xbf16>', got 0}}
  %x = exec.slice @act[tokens 0] : !exec.view<?x4096xbf16>
}

// -----

// A size that is not a step size (see exec.alloc).
exec.arena @act activations size 0 per_token 8192 align 256
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %c = builtin.unrealized_conversion_cast %t : index to index
  // expected-error @+1 {{'exec.slice' op dynamic size #0 must be an exec.step_size}}
  %x = exec.slice @act[tokens 0] sizes(%c) : !exec.view<?x4096xbf16>
}

// -----

// The fixed region holds static views only.
exec.arena @act activations size 1048576 per_token 8192 align 256
exec.schedule @s mixed {
  %t = exec.step_size tokens
  // expected-error @+1 {{'exec.slice' op a view in the fixed region has a static shape, got '!exec.view<?x4096xbf16>'}}
  %x = exec.slice @act[fixed 0] sizes(%t) : !exec.view<?x4096xbf16>
}

// -----

// The token region holds views sized by the token count, not the sequence
// count.
exec.arena @act activations size 0 per_token 8192 per_seq 8192 align 256
exec.schedule @s mixed {
  %s = exec.step_size seqs
  // expected-error @+1 {{'exec.slice' op a view in the tokens region has exactly one dynamic dimension, bound to the tokens step size; got '!exec.view<?x4096xbf16>'}}
  %x = exec.slice @act[tokens 0] sizes(%s) : !exec.view<?x4096xbf16>
}

// -----

// A view in the token region with two dynamic dimensions.
exec.arena @act activations size 0 per_token 8192 align 256
exec.schedule @s mixed {
  %t = exec.step_size tokens
  // expected-error @+1 {{'exec.slice' op a view in the tokens region has exactly one dynamic dimension, bound to the tokens step size; got '!exec.view<?x?xf32>'}}
  %x = exec.slice @act[tokens 0] sizes(%t, %t) : !exec.view<?x?xf32>
}

// -----

// A static view in the sequence region.
exec.arena @act activations size 0 per_seq 513024 align 256
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.slice' op a view in the seqs region has exactly one dynamic dimension, bound to the seqs step size; got '!exec.view<1x128256xf32>'}}
  %l = exec.slice @act[seqs 0] : !exec.view<1x128256xf32>
}

// -----

// A negative offset.
exec.arena @act activations size 0 per_token 8192 align 256
exec.schedule @s mixed {
  %t = exec.step_size tokens
  // expected-error @+1 {{'exec.slice' op offset must be non-negative, got -256}}
  %x = exec.slice @act[tokens -256] sizes(%t) : !exec.view<?x4096xbf16>
}

// -----

// An alignment request that is not a power of two.
exec.arena @act activations size 4096 align 256
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.slice' op align must be a power of two, got 48}}
  %x = exec.slice @act[fixed 0] align 48 : !exec.view<16xf32>
}

// -----

// An alignment request below the element size.
exec.arena @act activations size 4096 align 256
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.slice' op align 2 is smaller than the 4-byte element type 'f32'}}
  %x = exec.slice @act[fixed 0] align 2 : !exec.view<16xf32>
}

// -----

// The arena is not declared.
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.slice' op an exec.arena @act is not declared}}
  %x = exec.slice @act[fixed 0] : !exec.view<16xf32>
}

// -----

// The symbol is a KV pool, not an arena.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.slice' op @kv is not an exec.arena}}
  %x = exec.slice @kv[fixed 0] : !exec.view<16xf32>
}

// -----

// Weights are addressed by exec.weight.
exec.arena @weights weights size 1048576 align 256 section "weights"
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.slice' op cannot address the weights arena @weights; weights are addressed by exec.weight}}
  %x = exec.slice @weights[fixed 0] : !exec.view<4096xbf16>
}

// -----

// An alignment request beyond the arena's alignment.
exec.arena @act activations size 4096 align 256
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.slice' op align 512 exceeds the alignment 256 of arena @act}}
  %x = exec.slice @act[fixed 0] align 512 : !exec.view<16xf32>
}

// -----

// An offset off the arena's alignment.
exec.arena @act activations size 4096 align 256
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.slice' op offset 100 is not a multiple of the alignment 256}}
  %x = exec.slice @act[fixed 100] : !exec.view<16xf32>
}

// -----

// An offset off the requested alignment.
exec.arena @act activations size 4096 align 256
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.slice' op offset 264 is not a multiple of the alignment 16}}
  %x = exec.slice @act[fixed 264] align 16 : !exec.view<16xf32>
}

// -----

// A byte-aligned arena, but the f32 view is not on a 4-byte boundary.
exec.arena @act activations size 4096 align 1
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.slice' op offset 2 is not a multiple of the 4-byte element type 'f32'}}
  %x = exec.slice @act[fixed 2] : !exec.view<16xf32>
}

// -----

// 4096 bytes at offset 1024 overrun a 4096-byte fixed region.
exec.arena @act activations size 4096 align 256
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.slice' op view of 4096 bytes at offset 1024 overruns the fixed region of arena @act (4096 bytes)}}
  %x = exec.slice @act[fixed 1024] : !exec.view<1024xf32>
}

// -----

// 12288 bytes per token overrun an 8192-byte token region.
exec.arena @act activations size 0 per_token 8192 align 256
exec.schedule @s mixed {
  %t = exec.step_size tokens
  // expected-error @+1 {{'exec.slice' op view of 12288 bytes per token at offset 0 overruns the tokens region of arena @act (8192 bytes)}}
  %qkv = exec.slice @act[tokens 0] sizes(%t) : !exec.view<?x6144xbf16>
}

// -----

// Sequence-sized logits past the end of the sequence region.
exec.arena @act activations size 0 per_token 8192 per_seq 513024 align 256
exec.schedule @s mixed {
  %s = exec.step_size seqs
  // expected-error @+1 {{'exec.slice' op view of 513024 bytes per sequence at offset 256 overruns the seqs region of arena @act (513024 bytes)}}
  %l = exec.slice @act[seqs 256] sizes(%s) : !exec.view<?x128256xf32>
}

// -----

// A workspace arena has no token region.
exec.arena @ws workspace size 4194304 align 256
exec.schedule @s mixed {
  %t = exec.step_size tokens
  // expected-error @+1 {{'exec.slice' op view of 8192 bytes per token at offset 0 overruns the tokens region of arena @ws (0 bytes)}}
  %x = exec.slice @ws[tokens 0] sizes(%t) : !exec.view<?x4096xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.weight
//===----------------------------------------------------------------------===//

// A weight needs a name.
exec.arena @weights weights size 1048576 align 256 section "weights"
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.weight' op weight name must not be empty}}
  %w = exec.weight "" @weights[0] : !exec.view<4096xbf16>
}

// -----

// Weights have static shapes.
exec.arena @weights weights size 1048576 align 256 section "weights"
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.weight' op a weight has a static shape, got '!exec.view<?x4096xbf16>'}}
  %w = exec.weight "model.embed_tokens.weight" @weights[0] : !exec.view<?x4096xbf16>
}

// -----

// One value for all ranks and shards per rank.
exec.arena @weights weights size 1048576 align 256 section "weights"
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.weight' op has either one value for every rank or one shard per rank, not both}}
  %w = exec.weight "model.norm.weight" @weights[0]
      {value = dense<1.0> : tensor<4096xbf16>,
       shards = [dense<1.0> : tensor<4096xbf16>, dense<1.0> : tensor<4096xbf16>]}
      : !exec.view<4096xbf16>
}

// -----

// The value has another shape.
exec.arena @weights weights size 1048576 align 256 section "weights"
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.weight' op value of type 'tensor<2048xbf16>' does not match the view '!exec.view<4096xbf16>'}}
  %w = exec.weight "model.norm.weight" @weights[0] {value = dense<1.0> : tensor<2048xbf16>}
      : !exec.view<4096xbf16>
}

// -----

// The value has another element type.
exec.arena @weights weights size 1048576 align 256 section "weights"
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.weight' op value of type 'tensor<4096xf32>' does not match the view '!exec.view<4096xbf16>'}}
  %w = exec.weight "model.norm.weight" @weights[0] {value = dense<1.0> : tensor<4096xf32>}
      : !exec.view<4096xbf16>
}

// -----

// The value is not a tensor (ODS attribute constraint).
exec.arena @weights weights size 1048576 align 256 section "weights"
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.weight' op attribute 'value' failed to satisfy constraint: constant vector/tensor attribute}}
  %w = exec.weight "model.norm.weight" @weights[0] {value = 1.0 : f32} : !exec.view<4096xbf16>
}

// -----

// A shard that is not a tensor.
exec.arena @weights weights size 1048576 align 256 section "weights"
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.weight' op shard 1 is not a tensor}}
  %w = exec.weight "model.norm.weight" @weights[0] {shards = [dense<1.0> : tensor<4096xbf16>, 1 : i64]}
      : !exec.view<4096xbf16>
}

// -----

// Rank 1's shard has the full shape, not the rank's.
exec.arena @weights weights size 67108864 align 256 section "weights"
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.weight' op shard 1 of type 'tensor<4096x4096xbf16>' does not match the view '!exec.view<4096x1024xbf16>'}}
  %w = exec.weight "model.layers.0.self_attn.o_proj.weight" @weights[0]
      {shards = [dense<0.0> : tensor<4096x1024xbf16>, dense<0.0> : tensor<4096x4096xbf16>]}
      : !exec.view<4096x1024xbf16>
}

// -----

// A negative offset.
exec.arena @weights weights size 1048576 align 256 section "weights"
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.weight' op offset must be non-negative, got -8192}}
  %w = exec.weight "model.norm.weight" @weights[-8192] : !exec.view<4096xbf16>
}

// -----

// An alignment request that is not a power of two.
exec.arena @weights weights size 1048576 align 256 section "weights"
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.weight' op align must be a power of two, got 0}}
  %w = exec.weight "model.norm.weight" @weights[0] align 0 : !exec.view<4096xbf16>
}

// -----

// A weight in an activations arena.
exec.arena @act activations size 1048576 align 256
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.weight' op cannot address the activations arena @act; weights live in a weights arena}}
  %w = exec.weight "model.norm.weight" @act[0] : !exec.view<4096xbf16>
}

// -----

// The weights arena is not declared.
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.weight' op an exec.arena @weights is not declared}}
  %w = exec.weight "model.norm.weight" @weights[0] : !exec.view<4096xbf16>
}

// -----

// An offset off the alignment.
exec.arena @weights weights size 1048576 align 256 section "weights"
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.weight' op offset 8200 is not a multiple of the alignment 256}}
  %w = exec.weight "model.norm.weight" @weights[8200] : !exec.view<4096xbf16>
}

// -----

// The embedding table does not fit in the arena.
exec.arena @weights weights size 1048576 align 256 section "weights"
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.weight' op view of 1050673152 bytes at offset 0 overruns the fixed region of arena @weights (1048576 bytes)}}
  %w = exec.weight "model.embed_tokens.weight" @weights[0] : !exec.view<128256x4096xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.view
//===----------------------------------------------------------------------===//

// A view cannot change the element type.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.view' op a view keeps the element type: '!exec.view<?x4096xbf16>' vs '!exec.view<?x4096xf16>'}}
  %y = exec.view %x : !exec.view<?x4096xbf16> -> !exec.view<?x4096xf16>
}

// -----

// A dynamic view seen as a static one.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.view' op both sides have one dynamic dimension, or neither: '!exec.view<?x4096xbf16>' vs '!exec.view<16x4096xbf16>'}}
  %y = exec.view %x : !exec.view<?x4096xbf16> -> !exec.view<16x4096xbf16>
}

// -----

// Two dynamic dimensions on a side.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %x = exec.alloc sizes(%s, %t) : !exec.view<?x?x128xbf16>
  // expected-error @+1 {{'exec.view' op both sides have one dynamic dimension, or neither: '!exec.view<?x?x128xbf16>' vs '!exec.view<?x128xbf16>'}}
  %y = exec.view %x : !exec.view<?x?x128xbf16> -> !exec.view<?x128xbf16>
}

// -----

// 128 elements are not 2 x 32.
exec.schedule @s mixed {
  %b = exec.alloc : !exec.view<128xf32>
  // expected-error @+1 {{'exec.view' op cannot view '!exec.view<128xf32>' as '!exec.view<2x32xf32>': the element counts differ}}
  %c = exec.view %b : !exec.view<128xf32> -> !exec.view<2x32xf32>
}

// -----

// Rows of 4096 cannot be seen as rows of 3000.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.view' op cannot view '!exec.view<?x4096xbf16>' as '!exec.view<?x3000xbf16>': the element counts differ}}
  %y = exec.view %x : !exec.view<?x4096xbf16> -> !exec.view<?x3000xbf16>
}

// -----

// A view of no elements per token cannot grow elements.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x0xf32>
  // expected-error @+1 {{'exec.view' op cannot view '!exec.view<?x0xf32>' as '!exec.view<?x4xf32>': the element counts differ}}
  %y = exec.view %x : !exec.view<?x0xf32> -> !exec.view<?x4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// exec.embedding
//===----------------------------------------------------------------------===//

// The table has a dynamic row count.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %ids = exec.step_input token_ids : !exec.view<?xi64>
  %table = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.embedding' op the table must be a static [rows, hidden], got '!exec.view<?x4096xbf16>'}}
  exec.embedding %table[%ids] -> %x : !exec.view<?x4096xbf16>, !exec.view<?xi64> -> !exec.view<?x4096xbf16>
}

// -----

// Float ids.
exec.arena @weights weights size 1050673152 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %ids = exec.alloc sizes(%t) : !exec.view<?xf32>
  %table = exec.weight "model.embed_tokens.weight" @weights[0] : !exec.view<128256x4096xbf16>
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.embedding' op the ids must be a vector of integers, got '!exec.view<?xf32>'}}
  exec.embedding %table[%ids] -> %x : !exec.view<128256x4096xbf16>, !exec.view<?xf32> -> !exec.view<?x4096xbf16>
}

// -----

// The rows of out are narrower than the table's.
exec.arena @weights weights size 1050673152 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %ids = exec.step_input token_ids : !exec.view<?xi64>
  %table = exec.weight "model.embed_tokens.weight" @weights[0] : !exec.view<128256x4096xbf16>
  %x = exec.alloc sizes(%t) : !exec.view<?x2048xbf16>
  // expected-error @+1 {{'exec.embedding' op out must be [tokens, 4096], got '!exec.view<?x2048xbf16>'}}
  exec.embedding %table[%ids] -> %x : !exec.view<128256x4096xbf16>, !exec.view<?xi64> -> !exec.view<?x2048xbf16>
}

// -----

// One id per token, but one output row per sequence.
exec.arena @weights weights size 1050673152 align 256 section "weights"
exec.schedule @s mixed {
  %s = exec.step_size seqs
  %ids = exec.step_input token_ids : !exec.view<?xi64>
  %table = exec.weight "model.embed_tokens.weight" @weights[0] : !exec.view<128256x4096xbf16>
  %x = exec.alloc sizes(%s) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.embedding' op ids '!exec.view<?xi64>' and out '!exec.view<?x4096xbf16>' differ in rows}}
  exec.embedding %table[%ids] -> %x : !exec.view<128256x4096xbf16>, !exec.view<?xi64> -> !exec.view<?x4096xbf16>
}

// -----

// No vocabulary shards.
exec.arena @weights weights size 1050673152 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %ids = exec.step_input token_ids : !exec.view<?xi64>
  %table = exec.weight "model.embed_tokens.weight" @weights[0] : !exec.view<128256x4096xbf16>
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.embedding' op vocab_shards must be positive}}
  exec.embedding %table[%ids] -> %x {vocab_shards = 0 : i64}
      : !exec.view<128256x4096xbf16>, !exec.view<?xi64> -> !exec.view<?x4096xbf16>
}

// -----

// An empty vocabulary.
exec.arena @weights weights size 1050673152 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %ids = exec.step_input token_ids : !exec.view<?xi64>
  %table = exec.weight "model.embed_tokens.weight" @weights[0] : !exec.view<128256x4096xbf16>
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.embedding' op vocab_size must be positive}}
  exec.embedding %table[%ids] -> %x {vocab_size = -1 : i64}
      : !exec.view<128256x4096xbf16>, !exec.view<?xi64> -> !exec.view<?x4096xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.rms_norm, exec.add_rms_norm, exec.layer_norm
//===----------------------------------------------------------------------===//

// x and out differ in element type.
exec.arena @weights weights size 8192 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xf32>
  %w = exec.weight "model.norm.weight" @weights[0] : !exec.view<4096xbf16>
  // expected-error @+1 {{'exec.rms_norm' op x '!exec.view<?x4096xbf16>' and out '!exec.view<?x4096xf32>' differ in element type}}
  exec.rms_norm %x, %w -> %y {epsilon = 1.0e-05 : f64}
      : !exec.view<?x4096xbf16>, !exec.view<4096xbf16> -> !exec.view<?x4096xf32>
}

// -----

// x has a row per token, out a row per sequence.
exec.arena @weights weights size 8192 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%s) : !exec.view<?x4096xbf16>
  %w = exec.weight "model.norm.weight" @weights[0] : !exec.view<4096xbf16>
  // expected-error @+1 {{'exec.rms_norm' op x '!exec.view<?x4096xbf16>' and out '!exec.view<?x4096xbf16>' differ in shape}}
  exec.rms_norm %x, %w -> %y {epsilon = 1.0e-05 : f64}
      : !exec.view<?x4096xbf16>, !exec.view<4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// The normalised dimension is dynamic.
exec.arena @weights weights size 8192 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<16x?xbf16>
  %w = exec.weight "model.norm.weight" @weights[0] : !exec.view<4096xbf16>
  // expected-error @+1 {{'exec.rms_norm' op x '!exec.view<16x?xbf16>' needs a static last dimension}}
  exec.rms_norm %x, %w -> %x {epsilon = 1.0e-05 : f64}
      : !exec.view<16x?xbf16>, !exec.view<4096xbf16> -> !exec.view<16x?xbf16>
}

// -----

// A weight of the wrong size.
exec.arena @weights weights size 8192 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %w = exec.weight "model.norm.weight" @weights[0] : !exec.view<2048xbf16>
  // expected-error @+1 {{'exec.rms_norm' op the weight must be [4096], the last dimension of x, got '!exec.view<2048xbf16>'}}
  exec.rms_norm %x, %w -> %x {epsilon = 1.0e-05 : f64}
      : !exec.view<?x4096xbf16>, !exec.view<2048xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// A negative epsilon.
exec.arena @weights weights size 8192 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %w = exec.weight "model.norm.weight" @weights[0] : !exec.view<4096xbf16>
  // expected-error @+1 {{'exec.rms_norm' op epsilon must be non-negative}}
  exec.rms_norm %x, %w -> %x {epsilon = -1.0e-05 : f64}
      : !exec.view<?x4096xbf16>, !exec.view<4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// The kernel is not declared.
exec.arena @weights weights size 8192 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %w = exec.weight "model.norm.weight" @weights[0] : !exec.view<4096xbf16>
  // expected-error @+1 {{'exec.rms_norm' op an exec.kernel @rms_norm_h4096 is not declared}}
  exec.rms_norm %x, %w -> %x {epsilon = 1.0e-05 : f64, kernel = @rms_norm_h4096}
      : !exec.view<?x4096xbf16>, !exec.view<4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// The kernel symbol names an arena.
exec.arena @weights weights size 8192 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %w = exec.weight "model.norm.weight" @weights[0] : !exec.view<4096xbf16>
  // expected-error @+1 {{'exec.rms_norm' op @weights is not an exec.kernel}}
  exec.rms_norm %x, %w -> %x {epsilon = 1.0e-05 : f64, kernel = @weights}
      : !exec.view<?x4096xbf16>, !exec.view<4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// The residual has another element type.
exec.arena @weights weights size 8192 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %r = exec.alloc sizes(%t) : !exec.view<?x4096xf32>
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %w = exec.weight "model.norm.weight" @weights[0] : !exec.view<4096xbf16>
  // expected-error @+1 {{'exec.add_rms_norm' op x '!exec.view<?x4096xbf16>' and residual '!exec.view<?x4096xf32>' differ in element type}}
  exec.add_rms_norm %x, %r, %w -> %y, %y {epsilon = 1.0e-05 : f64}
      : !exec.view<?x4096xbf16>, !exec.view<?x4096xf32>, !exec.view<4096xbf16>
        -> !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>
}

// -----

// The sum has a row per sequence.
exec.arena @weights weights size 8192 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %sum = exec.alloc sizes(%s) : !exec.view<?x4096xbf16>
  %w = exec.weight "model.norm.weight" @weights[0] : !exec.view<4096xbf16>
  // expected-error @+1 {{'exec.add_rms_norm' op x '!exec.view<?x4096xbf16>' and sum '!exec.view<?x4096xbf16>' differ in shape}}
  exec.add_rms_norm %x, %x, %w -> %y, %sum {epsilon = 1.0e-05 : f64}
      : !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>, !exec.view<4096xbf16>
        -> !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>
}

// -----

// add_rms_norm shares the weight rule: a [hidden] weight.
exec.arena @weights weights size 65536 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %w = exec.weight "model.norm.weight" @weights[0] : !exec.view<1x4096xbf16>
  // expected-error @+1 {{'exec.add_rms_norm' op the weight must be [4096], the last dimension of x, got '!exec.view<1x4096xbf16>'}}
  exec.add_rms_norm %x, %x, %w -> %x, %x {epsilon = 1.0e-05 : f64}
      : !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>, !exec.view<1x4096xbf16>
        -> !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>
}

// -----

// add_rms_norm's kernel must be an exec.kernel.
exec.arena @weights weights size 8192 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %w = exec.weight "model.norm.weight" @weights[0] : !exec.view<4096xbf16>
  // expected-error @+1 {{'exec.add_rms_norm' op an exec.kernel @add_rms_norm_h4096 is not declared}}
  exec.add_rms_norm %x, %x, %w -> %x, %x {epsilon = 1.0e-05 : f64, kernel = @add_rms_norm_h4096}
      : !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>, !exec.view<4096xbf16>
        -> !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>
}

// -----

// GPT-2's layer norm with a bias of the wrong size.
exec.arena @weights weights size 8192 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x768xf32>
  %w = exec.weight "transformer.h.0.ln_1.weight" @weights[0] : !exec.view<768xf32>
  %b = exec.weight "transformer.h.0.ln_1.bias" @weights[3072] : !exec.view<384xf32>
  // expected-error @+1 {{'exec.layer_norm' op the bias '!exec.view<384xf32>' must be shaped as the weight '!exec.view<768xf32>'}}
  exec.layer_norm %x, %w bias(%b : !exec.view<384xf32>) -> %x {epsilon = 1.0e-05 : f64}
      : !exec.view<?x768xf32>, !exec.view<768xf32> -> !exec.view<?x768xf32>
}

// -----

// layer_norm shares the rules of the row-wise norms: a [hidden] weight.
exec.arena @weights weights size 8192 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x768xf32>
  %w = exec.weight "transformer.h.0.ln_1.weight" @weights[0] : !exec.view<1024xf32>
  // expected-error @+1 {{'exec.layer_norm' op the weight must be [768], the last dimension of x, got '!exec.view<1024xf32>'}}
  exec.layer_norm %x, %w -> %x {epsilon = 1.0e-05 : f64}
      : !exec.view<?x768xf32>, !exec.view<1024xf32> -> !exec.view<?x768xf32>
}

// -----

//===----------------------------------------------------------------------===//
// exec.residual_add, exec.activation, exec.gated_act, exec.gated_mlp
//===----------------------------------------------------------------------===//

// residual, branch and out have one type (AllTypesMatch).
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %r = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %b = exec.alloc sizes(%t) : !exec.view<?x4096xf32>
  // expected-error @+1 {{'exec.residual_add' op failed to verify that all of {residual, branch, out} have same type}}
  "exec.residual_add"(%r, %b, %r) : (!exec.view<?x4096xbf16>, !exec.view<?x4096xf32>, !exec.view<?x4096xbf16>) -> ()
}

// -----

// One type, but the residual has a row per token and out a row per sequence.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %r = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%s) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.residual_add' op residual '!exec.view<?x4096xbf16>' and out '!exec.view<?x4096xbf16>' differ in shape}}
  exec.residual_add %r, %r -> %y : !exec.view<?x4096xbf16>
}

// -----

// The branch differs from out in shape.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %r = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %b = exec.alloc sizes(%s) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.residual_add' op branch '!exec.view<?x4096xbf16>' and out '!exec.view<?x4096xbf16>' differ in shape}}
  exec.residual_add %r, %b -> %r : !exec.view<?x4096xbf16>
}

// -----

// residual_add's kernel must be an exec.kernel.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %r = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.residual_add' op an exec.kernel @residual_add_h4096 is not declared}}
  exec.residual_add %r, %r -> %r {kernel = @residual_add_h4096} : !exec.view<?x4096xbf16>
}

// -----

// An activation of integers.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x3072xi8>
  // expected-error @+1 {{'exec.activation' op activations are f32, f16 or bf16, got '!exec.view<?x3072xi8>'}}
  exec.activation %x -> %x {kind = #transformer<activation_kind relu>} : !exec.view<?x3072xi8>
}

// -----

// input and out have one type (AllTypesMatch).
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x3072xf32>
  %y = exec.alloc sizes(%t) : !exec.view<?x3072xf16>
  // expected-error @+1 {{'exec.activation' op failed to verify that all of {input, out} have same type}}
  "exec.activation"(%x, %y) <{kind = #transformer<activation_kind gelu_tanh>}> : (!exec.view<?x3072xf32>, !exec.view<?x3072xf16>) -> ()
}

// -----

// input has a row per token, out a row per sequence.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %x = exec.alloc sizes(%t) : !exec.view<?x3072xf32>
  %y = exec.alloc sizes(%s) : !exec.view<?x3072xf32>
  // expected-error @+1 {{'exec.activation' op input '!exec.view<?x3072xf32>' and out '!exec.view<?x3072xf32>' differ in shape}}
  exec.activation %x -> %y {kind = #transformer<activation_kind gelu_tanh>} : !exec.view<?x3072xf32>
}

// -----

// activation's kernel must be an exec.kernel.
exec.arena @act activations size 4096 align 256
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x3072xf32>
  // expected-error @+1 {{'exec.activation' op @act is not an exec.kernel}}
  exec.activation %x -> %x {kernel = @act, kind = #transformer<activation_kind gelu_tanh>} : !exec.view<?x3072xf32>
}

// -----

// gated_act halves the columns: 28672 -> 14336, not 28672.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %gu = exec.alloc sizes(%t) : !exec.view<?x28672xbf16>
  %h = exec.alloc sizes(%t) : !exec.view<?x28672xbf16>
  // expected-error @+1 {{'exec.gated_act' op takes [rows, 2I] to [rows, I] of one element type, got '!exec.view<?x28672xbf16>' -> '!exec.view<?x28672xbf16>'}}
  exec.gated_act %gu -> %h {kind = #transformer<activation_kind silu>}
      : !exec.view<?x28672xbf16> -> !exec.view<?x28672xbf16>
}

// -----

// gated_act keeps the element type.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %gu = exec.alloc sizes(%t) : !exec.view<?x28672xbf16>
  %h = exec.alloc sizes(%t) : !exec.view<?x14336xf32>
  // expected-error @+1 {{'exec.gated_act' op takes [rows, 2I] to [rows, I] of one element type, got '!exec.view<?x28672xbf16>' -> '!exec.view<?x14336xf32>'}}
  exec.gated_act %gu -> %h {kind = #transformer<activation_kind silu>}
      : !exec.view<?x28672xbf16> -> !exec.view<?x14336xf32>
}

// -----

// gated_act keeps the rows.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %gu = exec.alloc sizes(%t) : !exec.view<?x28672xbf16>
  %h = exec.alloc sizes(%s) : !exec.view<?x14336xbf16>
  // expected-error @+1 {{'exec.gated_act' op input '!exec.view<?x28672xbf16>' and out '!exec.view<?x14336xbf16>' differ in rows}}
  exec.gated_act %gu -> %h {kind = #transformer<activation_kind silu>}
      : !exec.view<?x28672xbf16> -> !exec.view<?x14336xbf16>
}

// -----

// gated_act's kernel must be declared.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %gu = exec.alloc sizes(%t) : !exec.view<?x28672xbf16>
  %h = exec.alloc sizes(%t) : !exec.view<?x14336xbf16>
  // expected-error @+1 {{'exec.gated_act' op an exec.kernel @silu_mul_i14336 is not declared}}
  exec.gated_act %gu -> %h {kernel = @silu_mul_i14336, kind = #transformer<activation_kind silu>}
      : !exec.view<?x28672xbf16> -> !exec.view<?x14336xbf16>
}

// -----

// gated_mlp without gate or up weights.
exec.arena @weights weights size 117440512 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %down = exec.weight "model.layers.0.mlp.down_proj.weight" @weights[0] : !exec.view<4096x14336xbf16>
  // expected-error @+1 {{'exec.gated_mlp' op takes gate_up, or gate and up}}
  exec.gated_mlp %x down(%down : !exec.view<4096x14336xbf16>) -> %x
      {kind = #transformer<activation_kind silu>} : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// gated_mlp with both gate_up and gate and up.
exec.arena @weights weights size 587202560 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %gate_up = exec.weight "model.layers.0.mlp.gate_up_proj.weight" @weights[0] : !exec.view<28672x4096xbf16>
  %gate = exec.weight "model.layers.0.mlp.gate_proj.weight" @weights[234881024] : !exec.view<14336x4096xbf16>
  %up = exec.weight "model.layers.0.mlp.up_proj.weight" @weights[352321536] : !exec.view<14336x4096xbf16>
  %down = exec.weight "model.layers.0.mlp.down_proj.weight" @weights[469762048] : !exec.view<4096x14336xbf16>
  // expected-error @+1 {{'exec.gated_mlp' op takes gate_up, or gate and up}}
  exec.gated_mlp %x gate_up(%gate_up : !exec.view<28672x4096xbf16>)
      gate(%gate : !exec.view<14336x4096xbf16>) up(%up : !exec.view<14336x4096xbf16>)
      down(%down : !exec.view<4096x14336xbf16>) -> %x
      {kind = #transformer<activation_kind silu>} : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// gated_mlp with a gate and no up.
exec.arena @weights weights size 234881024 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %gate = exec.weight "model.layers.0.mlp.gate_proj.weight" @weights[0] : !exec.view<14336x4096xbf16>
  %down = exec.weight "model.layers.0.mlp.down_proj.weight" @weights[117440512] : !exec.view<4096x14336xbf16>
  // expected-error @+1 {{'exec.gated_mlp' op takes gate_up, or gate and up}}
  exec.gated_mlp %x gate(%gate : !exec.view<14336x4096xbf16>) down(%down : !exec.view<4096x14336xbf16>) -> %x
      {kind = #transformer<activation_kind silu>} : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// gated_mlp keeps x's type.
exec.arena @weights weights size 352321536 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xf32>
  %gate_up = exec.weight "model.layers.0.mlp.gate_up_proj.weight" @weights[0] : !exec.view<28672x4096xbf16>
  %down = exec.weight "model.layers.0.mlp.down_proj.weight" @weights[234881024] : !exec.view<4096x14336xbf16>
  // expected-error @+1 {{'exec.gated_mlp' op x '!exec.view<?x4096xbf16>' and out '!exec.view<?x4096xf32>' differ in element type}}
  exec.gated_mlp %x gate_up(%gate_up : !exec.view<28672x4096xbf16>) down(%down : !exec.view<4096x14336xbf16>) -> %y
      {kind = #transformer<activation_kind silu>} : !exec.view<?x4096xbf16> -> !exec.view<?x4096xf32>
}

// -----

// down is [hidden, I], not [I, hidden].
exec.arena @weights weights size 352321536 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %gate_up = exec.weight "model.layers.0.mlp.gate_up_proj.weight" @weights[0] : !exec.view<28672x4096xbf16>
  %down = exec.weight "model.layers.0.mlp.down_proj.weight" @weights[234881024] : !exec.view<14336x4096xbf16>
  // expected-error @+1 {{'exec.gated_mlp' op down must be [4096, I], got '!exec.view<14336x4096xbf16>'}}
  exec.gated_mlp %x gate_up(%gate_up : !exec.view<28672x4096xbf16>) down(%down : !exec.view<14336x4096xbf16>) -> %x
      {kind = #transformer<activation_kind silu>} : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// gate_up has I rows, not 2I.
exec.arena @weights weights size 234881024 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %gate_up = exec.weight "model.layers.0.mlp.gate_up_proj.weight" @weights[0] : !exec.view<14336x4096xbf16>
  %down = exec.weight "model.layers.0.mlp.down_proj.weight" @weights[117440512] : !exec.view<4096x14336xbf16>
  // expected-error @+1 {{'exec.gated_mlp' op gate_up must be [28672, 4096], got '!exec.view<14336x4096xbf16>'}}
  exec.gated_mlp %x gate_up(%gate_up : !exec.view<14336x4096xbf16>) down(%down : !exec.view<4096x14336xbf16>) -> %x
      {kind = #transformer<activation_kind silu>} : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// gate is transposed.
exec.arena @weights weights size 352321536 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %gate = exec.weight "model.layers.0.mlp.gate_proj.weight" @weights[0] : !exec.view<4096x14336xbf16>
  %up = exec.weight "model.layers.0.mlp.up_proj.weight" @weights[117440512] : !exec.view<14336x4096xbf16>
  %down = exec.weight "model.layers.0.mlp.down_proj.weight" @weights[234881024] : !exec.view<4096x14336xbf16>
  // expected-error @+1 {{'exec.gated_mlp' op gate must be [14336, 4096], got '!exec.view<4096x14336xbf16>'}}
  exec.gated_mlp %x gate(%gate : !exec.view<4096x14336xbf16>) up(%up : !exec.view<14336x4096xbf16>)
      down(%down : !exec.view<4096x14336xbf16>) -> %x
      {kind = #transformer<activation_kind silu>} : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// up has the wrong intermediate size.
exec.arena @weights weights size 352321536 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %gate = exec.weight "model.layers.0.mlp.gate_proj.weight" @weights[0] : !exec.view<14336x4096xbf16>
  %up = exec.weight "model.layers.0.mlp.up_proj.weight" @weights[117440512] : !exec.view<11008x4096xbf16>
  %down = exec.weight "model.layers.0.mlp.down_proj.weight" @weights[234881024] : !exec.view<4096x14336xbf16>
  // expected-error @+1 {{'exec.gated_mlp' op up must be [14336, 4096], got '!exec.view<11008x4096xbf16>'}}
  exec.gated_mlp %x gate(%gate : !exec.view<14336x4096xbf16>) up(%up : !exec.view<11008x4096xbf16>)
      down(%down : !exec.view<4096x14336xbf16>) -> %x
      {kind = #transformer<activation_kind silu>} : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// gated_mlp's kernel must be an exec.kernel.
exec.arena @weights weights size 352321536 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %gate_up = exec.weight "model.layers.0.mlp.gate_up_proj.weight" @weights[0] : !exec.view<28672x4096xbf16>
  %down = exec.weight "model.layers.0.mlp.down_proj.weight" @weights[234881024] : !exec.view<4096x14336xbf16>
  // expected-error @+1 {{'exec.gated_mlp' op an exec.kernel @silu_mul_i14336 is not declared}}
  exec.gated_mlp %x gate_up(%gate_up : !exec.view<28672x4096xbf16>) down(%down : !exec.view<4096x14336xbf16>) -> %x
      {kernel = @silu_mul_i14336, kind = #transformer<activation_kind silu>}
      : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// The operand segments do not add up to the operands
// (AttrSizedOperandSegments).
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.gated_mlp' op operand count (3) does not match with the total size (4) specified in attribute 'operandSegmentSizes'}}
  "exec.gated_mlp"(%x, %x, %x) <{kind = #transformer<activation_kind silu>, operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 1>}>
      : (!exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>) -> ()
}

// -----

//===----------------------------------------------------------------------===//
// exec.rotary, exec.qkv_rotary
//===----------------------------------------------------------------------===//

// Rotated into another element type.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  %qr = exec.alloc sizes(%t) : !exec.view<?x32x128xf32>
  // expected-error @+1 {{'exec.rotary' op input '!exec.view<?x32x128xbf16>' and out '!exec.view<?x32x128xf32>' differ in element type}}
  exec.rotary %q, %pos -> %qr
      {rotary_dim = 128 : i64, style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x32x128xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xf32>
}

// -----

// The input is not split into heads.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %q = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.rotary' op input must be [tokens, heads, head_dim], got '!exec.view<?x4096xbf16>'}}
  exec.rotary %q, %pos -> %q
      {rotary_dim = 128 : i64, style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x4096xbf16>, !exec.view<?xi64> -> !exec.view<?x4096xbf16>
}

// -----

// Float positions.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.alloc sizes(%t) : !exec.view<?xf32>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.rotary' op positions must be a vector of integers, got '!exec.view<?xf32>'}}
  exec.rotary %q, %pos -> %q
      {rotary_dim = 128 : i64, style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x32x128xbf16>, !exec.view<?xf32> -> !exec.view<?x32x128xbf16>
}

// -----

// One position per sequence for a row per token.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %pos = exec.alloc sizes(%s) : !exec.view<?xi64>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.rotary' op input '!exec.view<?x32x128xbf16>' and positions '!exec.view<?xi64>' differ in rows}}
  exec.rotary %q, %pos -> %q
      {rotary_dim = 128 : i64, style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x32x128xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
}

// -----

// A cos table without its sin table (only the generic form can say so).
exec.arena @weights weights size 33554432 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  %cos = exec.weight "model.rotary_emb.cos" @weights[0] : !exec.view<131072x64xf32>
  // expected-error @+1 {{'exec.rotary' op the cos and sin tables come as a pair}}
  "exec.rotary"(%q, %pos, %cos, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1>, rotary_dim = 128 : i64, style = #transformer<rotary_style half_split>}>
      : (!exec.view<?x32x128xbf16>, !exec.view<?xi64>, !exec.view<131072x64xf32>, !exec.view<?x32x128xbf16>) -> ()
}

// -----

// An odd rotary_dim.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.rotary' op rotary_dim must be even and in [2, 128], got 127}}
  exec.rotary %q, %pos -> %q
      {rotary_dim = 127 : i64, style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x32x128xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
}

// -----

// rotary_dim wider than the head.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.rotary' op rotary_dim must be even and in [2, 128], got 256}}
  exec.rotary %q, %pos -> %q
      {rotary_dim = 256 : i64, style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x32x128xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
}

// -----

// Neither theta nor tables: no frequencies.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.rotary' op needs theta or cos/sin tables}}
  exec.rotary %q, %pos -> %q {rotary_dim = 128 : i64, style = #transformer<rotary_style half_split>}
      : !exec.view<?x32x128xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
}

// -----

// rotary's kernel must be declared.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.rotary' op an exec.kernel @rope_h32_d128 is not declared}}
  exec.rotary %q, %pos -> %q
      {kernel = @rope_h32_d128, rotary_dim = 128 : i64, style = #transformer<rotary_style half_split>,
       theta = 5.0e+05 : f64}
      : !exec.view<?x32x128xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
}

// -----

// No KV heads.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  // expected-error @+1 {{'exec.qkv_rotary' op num_heads, num_kv_heads and head_dim must be positive}}
  exec.qkv_rotary %qkv, %pos -> %q, %k, %k
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 0 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64>
        -> !exec.view<?x32x128xbf16>, !exec.view<?x8x128xbf16>, !exec.view<?x8x128xbf16>
}

// -----

// qkv holds 32 + 2 x 8 heads of 128: 6144 columns, not 4096.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  // expected-error @+1 {{'exec.qkv_rotary' op qkv must be [tokens, 6144], got '!exec.view<?x4096xbf16>'}}
  exec.qkv_rotary %qkv, %pos -> %q, %k, %k
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x4096xbf16>, !exec.view<?xi64>
        -> !exec.view<?x32x128xbf16>, !exec.view<?x8x128xbf16>, !exec.view<?x8x128xbf16>
}

// -----

// k has 32 heads, not num_kv_heads.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  %v = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  // expected-error @+1 {{'exec.qkv_rotary' op k must be [tokens, 8, 128] of 'bf16', got '!exec.view<?x32x128xbf16>'}}
  exec.qkv_rotary %qkv, %pos -> %q, %q, %v
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64>
        -> !exec.view<?x32x128xbf16>, !exec.view<?x32x128xbf16>, !exec.view<?x8x128xbf16>
}

// -----

// v in another element type.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  %v = exec.alloc sizes(%t) : !exec.view<?x8x128xf16>
  // expected-error @+1 {{'exec.qkv_rotary' op v must be [tokens, 8, 128] of 'bf16', got '!exec.view<?x8x128xf16>'}}
  exec.qkv_rotary %qkv, %pos -> %q, %k, %v
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64>
        -> !exec.view<?x32x128xbf16>, !exec.view<?x8x128xbf16>, !exec.view<?x8x128xf16>
}

// -----

// q has a row per sequence.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %pos = exec.step_input positions : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%s) : !exec.view<?x32x128xbf16>
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  // expected-error @+1 {{'exec.qkv_rotary' op qkv '!exec.view<?x6144xbf16>' and q '!exec.view<?x32x128xbf16>' differ in rows}}
  exec.qkv_rotary %qkv, %pos -> %q, %k, %k
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64>
        -> !exec.view<?x32x128xbf16>, !exec.view<?x8x128xbf16>, !exec.view<?x8x128xbf16>
}

// -----

// qkv_rotary shares the rotation rules: theta or tables.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  // expected-error @+1 {{'exec.qkv_rotary' op needs theta or cos/sin tables}}
  exec.qkv_rotary %qkv, %pos -> %q, %k, %k
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64>
        -> !exec.view<?x32x128xbf16>, !exec.view<?x8x128xbf16>, !exec.view<?x8x128xbf16>
}

// -----

// A table of rotary_dim columns, not rotary_dim / 2.
exec.arena @weights weights size 50331648 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x96xbf16>
  %cos = exec.weight "cos" @weights[0] : !exec.view<4096x96xf32>
  %sin = exec.weight "sin" @weights[1572864] : !exec.view<4096x96xf32>
  // expected-error @+1 {{'exec.rotary' op the cos and sin tables must be [positions, 48] of f32, f16 or bf16 (rotary_dim / 2 columns), got '!exec.view<4096x96xf32>'}}
  exec.rotary %q, %pos cos_sin(%cos, %sin : !exec.view<4096x96xf32>, !exec.view<4096x96xf32>)
      -> %q {rotary_dim = 96 : i64, style = #transformer<rotary_style half_split>}
      : !exec.view<?x32x96xbf16>, !exec.view<?xi64> -> !exec.view<?x32x96xbf16>
}

// -----

// Tables of two types.
exec.arena @weights weights size 50331648 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x96xbf16>
  %cos = exec.weight "cos" @weights[0] : !exec.view<4096x48xf32>
  %sin = exec.weight "sin" @weights[786432] : !exec.view<4096x48xbf16>
  // expected-error @+1 {{'exec.rotary' op the cos table '!exec.view<4096x48xf32>' and the sin table '!exec.view<4096x48xbf16>' differ in type}}
  exec.rotary %q, %pos cos_sin(%cos, %sin : !exec.view<4096x48xf32>, !exec.view<4096x48xbf16>)
      -> %q {rotary_dim = 96 : i64, style = #transformer<rotary_style half_split>}
      : !exec.view<?x32x96xbf16>, !exec.view<?xi64> -> !exec.view<?x32x96xbf16>
}

// -----

// Integer tables.
exec.arena @weights weights size 50331648 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x96xbf16>
  %cos = exec.weight "cos" @weights[0] : !exec.view<4096x48xi32>
  %sin = exec.weight "sin" @weights[786432] : !exec.view<4096x48xi32>
  // expected-error @+1 {{'exec.rotary' op the cos and sin tables must be [positions, 48] of f32, f16 or bf16 (rotary_dim / 2 columns), got '!exec.view<4096x48xi32>'}}
  exec.rotary %q, %pos cos_sin(%cos, %sin : !exec.view<4096x48xi32>, !exec.view<4096x48xi32>)
      -> %q {rotary_dim = 96 : i64, style = #transformer<rotary_style half_split>}
      : !exec.view<?x32x96xbf16>, !exec.view<?xi64> -> !exec.view<?x32x96xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.kv_write
//===----------------------------------------------------------------------===//

// k is not split into heads.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %k = exec.alloc sizes(%t) : !exec.view<?x1024xbf16>
  // expected-error @+1 {{'exec.kv_write' op k must be [tokens, heads, head_dim] with static heads and head_dim, got '!exec.view<?x1024xbf16>'}}
  exec.kv_write %k, %k -> @kv[0] : !exec.view<?x1024xbf16>
}

// -----

// k and v have one type (AllTypesMatch).
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  %v = exec.alloc sizes(%t) : !exec.view<?x8x128xf16>
  // expected-error @+1 {{'exec.kv_write' op failed to verify that all of {k, v} have same type}}
  "exec.kv_write"(%k, %v) <{layer = 0 : i64, pool = @kv}> : (!exec.view<?x8x128xbf16>, !exec.view<?x8x128xf16>) -> ()
}

// -----

// Heads of 64 channels into a pool of 128.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %k = exec.alloc sizes(%t) : !exec.view<?x8x64xbf16>
  // expected-error @+1 {{'exec.kv_write' op k has head_dim 64 but kv pool @kv has 128}}
  exec.kv_write %k, %k -> @kv[0] : !exec.view<?x8x64xbf16>
}

// -----

// f16 keys into a bf16 pool.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xf16>
  // expected-error @+1 {{'exec.kv_write' op cannot use 'f16' keys and values with kv pool @kv of 'bf16'}}
  exec.kv_write %k, %k -> @kv[0] : !exec.view<?x8x128xf16>
}

// -----

// Layer 32 of a 32-layer pool.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  // expected-error @+1 {{'exec.kv_write' op layer 32 is out of range for kv pool @kv of 32 layers}}
  exec.kv_write %k, %k -> @kv[32] : !exec.view<?x8x128xbf16>
}

// -----

// A negative layer.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  // expected-error @+1 {{'exec.kv_write' op layer -1 is out of range for kv pool @kv of 32 layers}}
  exec.kv_write %k, %k -> @kv[-1] : !exec.view<?x8x128xbf16>
}

// -----

// The pool is not declared.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  // expected-error @+1 {{'exec.kv_write' op an exec.kv_pool @kv is not declared}}
  exec.kv_write %k, %k -> @kv[0] : !exec.view<?x8x128xbf16>
}

// -----

// The symbol is an arena, not a pool.
exec.arena @kv activations size 4096 align 256
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  // expected-error @+1 {{'exec.kv_write' op @kv is not an exec.kv_pool}}
  exec.kv_write %k, %k -> @kv[0] : !exec.view<?x8x128xbf16>
}

// -----

// k_scale without v_scale.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E4M3FN
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  // expected-error @+1 {{'exec.kv_write' op k_scale and v_scale come as a pair}}
  exec.kv_write %k, %k -> @kv[0] {k_scale = 0.0234375 : f64} : !exec.view<?x8x128xbf16>
}

// -----

// Per-head scales of different lengths.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E4M3FN
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  // expected-error @+1 {{'exec.kv_write' op k_head_scales and v_head_scales come as a pair of equal length}}
  exec.kv_write %k, %k -> @kv[0]
      {k_head_scales = array<f64: 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0>,
       v_head_scales = array<f64: 1.0, 1.0, 1.0, 1.0>}
      : !exec.view<?x8x128xbf16>
}

// -----

// Per-head k scales without v scales.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E4M3FN
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  // expected-error @+1 {{'exec.kv_write' op k_head_scales and v_head_scales come as a pair of equal length}}
  exec.kv_write %k, %k -> @kv[0] {k_head_scales = array<f64: 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0>}
      : !exec.view<?x8x128xbf16>
}

// -----

// An FP8 pool needs scales.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E4M3FN
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  // expected-error @+1 {{'exec.kv_write' op the FP8 kv pool @kv needs k and v scales}}
  exec.kv_write %k, %k -> @kv[0] : !exec.view<?x8x128xbf16>
}

// -----

// A bf16 pool takes no scales.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  // expected-error @+1 {{'exec.kv_write' op k and v scales are only for an FP8 kv pool}}
  exec.kv_write %k, %k -> @kv[0] {k_scale = 1.0 : f64, v_scale = 1.0 : f64} : !exec.view<?x8x128xbf16>
}

// -----

// Under -tp=2 the lists hold both ranks' KV heads: 2 x 2, not 2.
module attributes {accel.tp_size = 2 : i64} {
exec.kv_pool @kv layers 32 block_size 16 kv_heads 2 head_dim 128 : f8E4M3FN
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %k = exec.alloc sizes(%t) : !exec.view<?x2x128xbf16>
  // expected-error @+1 {{'exec.kv_write' op has 2 per-head scales but kv pool @kv has 2 KV heads on each of 2 ranks}}
  exec.kv_write %k, %k -> @kv[0]
      {k_head_scales = array<f64: 1.0, 1.0>, v_head_scales = array<f64: 1.0, 1.0>}
      : !exec.view<?x2x128xbf16>
}
}

// -----

// Four per-head scales for a pool of eight KV heads.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E5M2
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %k = exec.alloc sizes(%t) : !exec.view<?x8x128xbf16>
  // expected-error @+1 {{'exec.kv_write' op has 4 per-head scales but kv pool @kv has 8 KV heads}}
  exec.kv_write %k, %k -> @kv[0]
      {k_head_scales = array<f64: 1.0, 1.0, 1.0, 1.0>, v_head_scales = array<f64: 1.0, 1.0, 1.0, 1.0>}
      : !exec.view<?x8x128xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.qkv_rotary_kv_write
//===----------------------------------------------------------------------===//

// q is not split into heads.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.qkv_rotary_kv_write' op q must be [tokens, heads, head_dim] with static heads and head_dim, got '!exec.view<?x4096xbf16>'}}
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[0]
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x4096xbf16>
}

// -----

// qkv of Llama-3-70B's head counts (64 + 2 x 8) with 32 heads declared.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x10240xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.qkv_rotary_kv_write' op qkv must be [tokens, (num_heads + 2 * num_kv_heads) * head_dim] = [tokens, 6144], got '!exec.view<?x10240xbf16>'}}
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[0]
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x10240xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
}

// -----

// q has 16 heads, not num_heads.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x16x128xbf16>
  // expected-error @+1 {{'exec.qkv_rotary_kv_write' op q must be [tokens, 32, 128] of 'bf16', got '!exec.view<?x16x128xbf16>'}}
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[0]
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x16x128xbf16>
}

// -----

// An odd rotary_dim.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.qkv_rotary_kv_write' op rotary_dim must be even and in [2, 128], got 65}}
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[0]
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 65 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
}

// -----

// One position per sequence for a row per token.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %pos = exec.alloc sizes(%s) : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.qkv_rotary_kv_write' op qkv '!exec.view<?x6144xbf16>' and positions '!exec.view<?xi64>' differ in rows}}
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[0]
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
}

// -----

// head_dim 64 into a pool of 128-channel heads.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x3072xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x64xbf16>
  // expected-error @+1 {{'exec.qkv_rotary_kv_write' op head_dim 64 differs from kv pool @kv's 128}}
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[0]
      {head_dim = 64 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 64 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x3072xbf16>, !exec.view<?xi64> -> !exec.view<?x32x64xbf16>
}

// -----

// Layer 40 of a 32-layer pool.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.qkv_rotary_kv_write' op layer 40 is out of range for kv pool @kv of 32 layers}}
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[40]
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
}

// -----

// An FP8 pool without scales.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E4M3FN
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.qkv_rotary_kv_write' op the FP8 kv pool @kv needs k and v scales}}
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[0]
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
}

// -----

// v_scale without k_scale.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E4M3FN
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.qkv_rotary_kv_write' op k_scale and v_scale come as a pair}}
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[0]
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64, v_scale = 0.5 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
}

// -----

// Scales for a bf16 pool.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.qkv_rotary_kv_write' op k and v scales are only for an FP8 kv pool}}
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[0]
      {head_dim = 128 : i64, k_head_scales = array<f64: 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0>,
       num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64,
       v_head_scales = array<f64: 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0>}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
}

// -----

// Per-head scales for 4 heads; the pool has 8.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E4M3FN
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.step_input positions : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.qkv_rotary_kv_write' op has 4 per-head scales but kv pool @kv has 8 KV heads}}
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[0]
      {head_dim = 128 : i64, k_head_scales = array<f64: 1.0, 1.0, 1.0, 1.0>,
       num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64,
       v_head_scales = array<f64: 1.0, 1.0, 1.0, 1.0>}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
}

// -----

// Neither theta nor cos/sin tables.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.alloc sizes(%t) : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.qkv_rotary_kv_write' op needs theta or cos/sin tables}}
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[0]
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
}

// -----

// Float positions.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.alloc sizes(%t) : !exec.view<?xf32>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.qkv_rotary_kv_write' op positions must be a vector of integers, got '!exec.view<?xf32>'}}
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[0]
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xf32> -> !exec.view<?x32x128xbf16>
}

// -----

// No KV heads.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.alloc sizes(%t) : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.qkv_rotary_kv_write' op num_heads, num_kv_heads and head_dim must be positive}}
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[0]
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 0 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
}

// -----

// q of another element type than qkv.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.alloc sizes(%t) : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xf16>
  // expected-error @+1 {{'exec.qkv_rotary_kv_write' op q must be [tokens, 32, 128] of 'bf16', got '!exec.view<?x32x128xf16>'}}
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[0]
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xf16>
}

// -----

// f16 keys into a bf16 pool.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.alloc sizes(%t) : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xf16>
  // expected-error @+1 {{'exec.qkv_rotary_kv_write' op cannot use 'f16' keys and values with kv pool @kv of 'bf16'}}
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[0]
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x6144xf16>, !exec.view<?xi64> -> !exec.view<?x32x128xf16>
}

// -----

// KV heads the pool does not have (4 KV heads: qkv [?, 5120]).
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %pos = exec.alloc sizes(%t) : !exec.view<?xi64>
  %qkv = exec.alloc sizes(%t) : !exec.view<?x5120xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.qkv_rotary_kv_write' op num_kv_heads 4 differs from kv pool @kv's 8}}
  exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[0]
      {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 4 : i64, rotary_dim = 128 : i64,
       style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
      : !exec.view<?x5120xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.attention
//===----------------------------------------------------------------------===//

// q is not split into heads.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %q = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.attention' op q must be [tokens, heads, head_dim] with static heads and head_dim, got '!exec.view<?x4096xbf16>'}}
  exec.attention %q, @kv[0] -> %q {causal, num_kv_heads = 8 : i64, scale = 0.08838834764831845 : f64}
      : !exec.view<?x4096xbf16>
}

// -----

// q and out have one type (AllTypesMatch).
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  %o = exec.alloc sizes(%t) : !exec.view<?x32x128xf32>
  // expected-error @+1 {{'exec.attention' op failed to verify that all of {q, out} have same type}}
  "exec.attention"(%q, %o) <{layer = 0 : i64, num_kv_heads = 8 : i64, pool = @kv, scale = 0.0883883 : f64}>
      : (!exec.view<?x32x128xbf16>, !exec.view<?x32x128xf32>) -> ()
}

// -----

// out has a row per sequence.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  %o = exec.alloc sizes(%s) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.attention' op q '!exec.view<?x32x128xbf16>' and out '!exec.view<?x32x128xbf16>' differ in shape}}
  exec.attention %q, @kv[0] -> %o {causal, num_kv_heads = 8 : i64, scale = 0.08838834764831845 : f64}
      : !exec.view<?x32x128xbf16>
}

// -----

// FP8 queries.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E4M3FN
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xf8E4M3FN>
  // expected-error @+1 {{'exec.attention' op q must be f32, f16 or bf16, got '!exec.view<?x32x128xf8E4M3FN>'}}
  exec.attention %q, @kv[0] -> %q
      {causal, k_scale = 1.0 : f64, num_kv_heads = 8 : i64, scale = 0.08838834764831845 : f64, v_scale = 1.0 : f64}
      : !exec.view<?x32x128xf8E4M3FN>
}

// -----

// 32 query heads do not group over 12 KV heads.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 12 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.attention' op the 32 query heads must be a multiple of num_kv_heads (12)}}
  exec.attention %q, @kv[0] -> %q {causal, num_kv_heads = 12 : i64, scale = 0.08838834764831845 : f64}
      : !exec.view<?x32x128xbf16>
}

// -----

// No KV heads.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.attention' op the 32 query heads must be a multiple of num_kv_heads (0)}}
  exec.attention %q, @kv[0] -> %q {causal, num_kv_heads = 0 : i64, scale = 0.08838834764831845 : f64}
      : !exec.view<?x32x128xbf16>
}

// -----

// A zero logit scale.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.attention' op scale must be positive}}
  exec.attention %q, @kv[0] -> %q {causal, num_kv_heads = 8 : i64, scale = 0.0 : f64}
      : !exec.view<?x32x128xbf16>
}

// -----

// An empty sliding window.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.attention' op sliding_window must be positive}}
  exec.attention %q, @kv[0] -> %q
      {causal, num_kv_heads = 8 : i64, scale = 0.08838834764831845 : f64, sliding_window = 0 : i64}
      : !exec.view<?x32x128xbf16>
}

// -----

// A negative softcap.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.attention' op softcap must be positive}}
  exec.attention %q, @kv[0] -> %q
      {causal, num_kv_heads = 8 : i64, scale = 0.08838834764831845 : f64, softcap = -50.0 : f64}
      : !exec.view<?x32x128xbf16>
}

// -----

// Heads of 64 channels against a pool of 128.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %q = exec.alloc sizes(%t) : !exec.view<?x32x64xbf16>
  // expected-error @+1 {{'exec.attention' op q has head_dim 64 but kv pool @kv has 128}}
  exec.attention %q, @kv[0] -> %q {causal, num_kv_heads = 8 : i64, scale = 0.125 : f64}
      : !exec.view<?x32x64xbf16>
}

// -----

// Layer 32 of a 32-layer pool.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.attention' op layer 32 is out of range for kv pool @kv of 32 layers}}
  exec.attention %q, @kv[32] -> %q {causal, num_kv_heads = 8 : i64, scale = 0.08838834764831845 : f64}
      : !exec.view<?x32x128xbf16>
}

// -----

// The pool is not declared.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.attention' op an exec.kv_pool @kv is not declared}}
  exec.attention %q, @kv[0] -> %q {causal, num_kv_heads = 8 : i64, scale = 0.08838834764831845 : f64}
      : !exec.view<?x32x128xbf16>
}

// -----

// An FP8 pool read without scales.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E4M3FN
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.attention' op the FP8 kv pool @kv needs k and v scales}}
  exec.attention %q, @kv[0] -> %q {causal, num_kv_heads = 8 : i64, scale = 0.08838834764831845 : f64}
      : !exec.view<?x32x128xbf16>
}

// -----

// A bf16 pool read with scales.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.attention' op k and v scales are only for an FP8 kv pool}}
  exec.attention %q, @kv[0] -> %q
      {causal, k_scale = 1.0 : f64, num_kv_heads = 8 : i64, scale = 0.08838834764831845 : f64, v_scale = 1.0 : f64}
      : !exec.view<?x32x128xbf16>
}

// -----

// Per-head scales for 16 heads; the pool has 8.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E4M3FN
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.attention' op has 16 per-head scales but kv pool @kv has 8 KV heads}}
  exec.attention %q, @kv[0] -> %q
      {causal, k_head_scales = array<f64: 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0>,
       num_kv_heads = 8 : i64, scale = 0.08838834764831845 : f64,
       v_head_scales = array<f64: 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0>}
      : !exec.view<?x32x128xbf16>
}

// -----

// f16 queries over a bf16 pool.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xf16>
  // expected-error @+1 {{'exec.attention' op cannot use 'f16' queries with kv pool @kv of 'bf16'}}
  exec.attention %q, @kv[0] -> %q {causal, num_kv_heads = 8 : i64, scale = 0.0883883 : f64} : !exec.view<?x32x128xf16>
}

// -----

// num_kv_heads that is not the pool's.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.attention' op num_kv_heads 4 differs from kv pool @kv's 8}}
  exec.attention %q, @kv[0] -> %q {causal, num_kv_heads = 4 : i64, scale = 0.0883883 : f64} : !exec.view<?x32x128xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.gemm
//===----------------------------------------------------------------------===//

// x split into heads: a GEMM's x is [rows, in].
exec.arena @weights weights size 33554432 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %w = exec.weight "model.layers.0.self_attn.o_proj.weight" @weights[0] : !exec.view<4096x4096xbf16>
  // expected-error @+1 {{'exec.gemm' op x must have rank 2, got '!exec.view<?x32x128xbf16>'}}
  exec.gemm %x, %w -> %y : !exec.view<?x32x128xbf16>, !exec.view<4096x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// A dynamic weight.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %w = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.gemm' op the weight must be static, got '!exec.view<?x4096xbf16>'}}
  exec.gemm %x, %w -> %x : !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// The weight is transposed: [in, out] instead of [out, in].
exec.arena @weights weights size 117440512 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x14336xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %w = exec.weight "model.layers.0.mlp.down_proj.weight" @weights[0] : !exec.view<14336x4096xbf16>
  // expected-error @+1 {{'exec.gemm' op x '!exec.view<?x14336xbf16>' has 14336 input features but the weight '!exec.view<14336x4096xbf16>' has 4096}}
  exec.gemm %x, %w -> %y : !exec.view<?x14336xbf16>, !exec.view<14336x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// out has the input width.
exec.arena @weights weights size 50331648 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[0] : !exec.view<6144x4096xbf16>
  // expected-error @+1 {{'exec.gemm' op out '!exec.view<?x4096xbf16>' must have the weight's 6144 output features}}
  exec.gemm %x, %w -> %x : !exec.view<?x4096xbf16>, !exec.view<6144x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// x has a row per token, out a row per sequence.
exec.arena @weights weights size 50331648 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%s) : !exec.view<?x6144xbf16>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[0] : !exec.view<6144x4096xbf16>
  // expected-error @+1 {{'exec.gemm' op x '!exec.view<?x4096xbf16>' and out '!exec.view<?x6144xbf16>' differ in rows}}
  exec.gemm %x, %w -> %y : !exec.view<?x4096xbf16>, !exec.view<6144x4096xbf16> -> !exec.view<?x6144xbf16>
}

// -----

// A bias of the input width.
exec.arena @weights weights size 50364416 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[0] : !exec.view<6144x4096xbf16>
  %b = exec.weight "model.layers.0.self_attn.qkv_proj.bias" @weights[50331648] : !exec.view<4096xbf16>
  // expected-error @+1 {{'exec.gemm' op the bias must be [6144], got '!exec.view<4096xbf16>'}}
  exec.gemm %x, %w bias(%b : !exec.view<4096xbf16>) -> %y
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xbf16> -> !exec.view<?x6144xbf16>
}

// -----

// An int8 weight without its scale.
exec.arena @weights weights size 25165824 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[0] : !exec.view<6144x4096xi8>
  // expected-error @+1 {{'exec.gemm' op a weight_scale is needed exactly when the weight is quantised ('i8')}}
  exec.gemm %x, %w -> %y {granularity = #transformer<granularity per_channel>}
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xi8> -> !exec.view<?x6144xbf16>
}

// -----

// A scale for a bf16 weight.
exec.arena @weights weights size 50364416 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[0] : !exec.view<6144x4096xbf16>
  %sc = exec.weight "model.layers.0.self_attn.qkv_proj.weight_scale" @weights[50331648] : !exec.view<6144xf32>
  // expected-error @+1 {{'exec.gemm' op a weight_scale is needed exactly when the weight is quantised ('bf16')}}
  exec.gemm %x, %w weight_scale(%sc : !exec.view<6144xf32>) -> %y
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xbf16> -> !exec.view<?x6144xbf16>
}

// -----

// A quantised weight without its granularity.
exec.arena @weights weights size 25190400 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[0] : !exec.view<6144x4096xf8E4M3FN>
  %sc = exec.weight "model.layers.0.self_attn.qkv_proj.weight_scale" @weights[25165824] : !exec.view<6144xf32>
  // expected-error @+1 {{'exec.gemm' op a granularity is needed exactly when the weight is quantised}}
  exec.gemm %x, %w weight_scale(%sc : !exec.view<6144xf32>) -> %y
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xf8E4M3FN> -> !exec.view<?x6144xbf16>
}

// -----

// A granularity for a float weight.
exec.arena @weights weights size 50331648 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[0] : !exec.view<6144x4096xbf16>
  // expected-error @+1 {{'exec.gemm' op a granularity is needed exactly when the weight is quantised}}
  exec.gemm %x, %w -> %y {granularity = #transformer<granularity per_tensor>}
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xbf16> -> !exec.view<?x6144xbf16>
}

// -----

// Per-group scales without a group size.
exec.arena @weights weights size 12976128 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.qweight" @weights[0] : !exec.view<6144x4096xi4>
  %sc = exec.weight "model.layers.0.self_attn.qkv_proj.scales" @weights[12582912] : !exec.view<6144x32xf16>
  // expected-error @+1 {{'exec.gemm' op group_size is needed exactly for per_group scales}}
  exec.gemm %x, %w weight_scale(%sc : !exec.view<6144x32xf16>) -> %y
      {granularity = #transformer<granularity per_group>}
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xi4> -> !exec.view<?x6144xbf16>
}

// -----

// A group size for per-channel scales.
exec.arena @weights weights size 25190400 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[0] : !exec.view<6144x4096xi8>
  %sc = exec.weight "model.layers.0.self_attn.qkv_proj.weight_scale" @weights[25165824] : !exec.view<6144xf32>
  // expected-error @+1 {{'exec.gemm' op group_size is needed exactly for per_group scales}}
  exec.gemm %x, %w weight_scale(%sc : !exec.view<6144xf32>) -> %y
      {granularity = #transformer<granularity per_channel>, group_size = 128 : i64}
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xi8> -> !exec.view<?x6144xbf16>
}

// -----

// Groups of 96 do not divide 4096 input features.
exec.arena @weights weights size 12976128 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.qweight" @weights[0] : !exec.view<6144x4096xi4>
  %sc = exec.weight "model.layers.0.self_attn.qkv_proj.scales" @weights[12582912] : !exec.view<6144x32xf16>
  // expected-error @+1 {{'exec.gemm' op group_size 96 must divide the 4096 input features}}
  exec.gemm %x, %w weight_scale(%sc : !exec.view<6144x32xf16>) -> %y
      {granularity = #transformer<granularity per_group>, group_size = 96 : i64}
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xi4> -> !exec.view<?x6144xbf16>
}

// -----

// An empty group.
exec.arena @weights weights size 12976128 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.qweight" @weights[0] : !exec.view<6144x4096xi4>
  %sc = exec.weight "model.layers.0.self_attn.qkv_proj.scales" @weights[12582912] : !exec.view<6144x32xf16>
  // expected-error @+1 {{'exec.gemm' op group_size 0 must divide the 4096 input features}}
  exec.gemm %x, %w weight_scale(%sc : !exec.view<6144x32xf16>) -> %y
      {granularity = #transformer<granularity per_group>, group_size = 0 : i64}
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xi4> -> !exec.view<?x6144xbf16>
}

// -----

// A zero point for an FP8 weight.
exec.arena @weights weights size 25190400 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[0] : !exec.view<6144x4096xf8E4M3FN>
  %sc = exec.weight "model.layers.0.self_attn.qkv_proj.weight_scale" @weights[25165824] : !exec.view<6144xf32>
  // expected-error @+1 {{'exec.gemm' op only integer weights have a zero point}}
  exec.gemm %x, %w weight_scale(%sc : !exec.view<6144xf32>) zero_point(%sc : !exec.view<6144xf32>) -> %y
      {granularity = #transformer<granularity per_channel>}
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xf8E4M3FN> -> !exec.view<?x6144xbf16>
}

// -----

// Activations quantised to f16.
exec.arena @weights weights size 25190656 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xf32>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xf32>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[0] : !exec.view<6144x4096xi8>
  %sc = exec.weight "model.layers.0.self_attn.qkv_proj.weight_scale" @weights[25165824] : !exec.view<6144xf32>
  %is = exec.weight "model.layers.0.self_attn.qkv_proj.input_scale" @weights[25190400] : !exec.view<f32>
  // expected-error @+1 {{'exec.gemm' op x is quantised to i8 or f8E4M3FN, not 'f16'}}
  exec.gemm %x, %w weight_scale(%sc : !exec.view<6144xf32>) input_scale(%is : !exec.view<f32>) -> %y
      {granularity = #transformer<granularity per_channel>, quantize_to = f16}
      : !exec.view<?x4096xf32>, !exec.view<6144x4096xi8> -> !exec.view<?x6144xf32>
}

// -----

// W8A8 with a bf16 x.
exec.arena @weights weights size 25190656 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xf32>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[0] : !exec.view<6144x4096xi8>
  %sc = exec.weight "model.layers.0.self_attn.qkv_proj.weight_scale" @weights[25165824] : !exec.view<6144xf32>
  %is = exec.weight "model.layers.0.self_attn.qkv_proj.input_scale" @weights[25190400] : !exec.view<f32>
  // expected-error @+1 {{'exec.gemm' op a W8A8 gemm quantises an f32 x, got '!exec.view<?x4096xbf16>'}}
  exec.gemm %x, %w weight_scale(%sc : !exec.view<6144xf32>) input_scale(%is : !exec.view<f32>) -> %y
      {granularity = #transformer<granularity per_channel>, quantize_to = i8}
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xi8> -> !exec.view<?x6144xf32>
}

// -----

// W8A8 with a static input_scale and dynamic_input both.
exec.arena @weights weights size 25190656 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xf32>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xf32>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[0] : !exec.view<6144x4096xi8>
  %sc = exec.weight "model.layers.0.self_attn.qkv_proj.weight_scale" @weights[25165824] : !exec.view<6144xf32>
  %is = exec.weight "model.layers.0.self_attn.qkv_proj.input_scale" @weights[25190400] : !exec.view<f32>
  // expected-error @+1 {{'exec.gemm' op a W8A8 gemm has a static input_scale or a dynamic one, exactly one}}
  exec.gemm %x, %w weight_scale(%sc : !exec.view<6144xf32>) input_scale(%is : !exec.view<f32>) -> %y
      {dynamic_input, granularity = #transformer<granularity per_channel>, quantize_to = i8}
      : !exec.view<?x4096xf32>, !exec.view<6144x4096xi8> -> !exec.view<?x6144xf32>
}

// -----

// W8A8 with neither.
exec.arena @weights weights size 25190400 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xf32>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xf32>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[0] : !exec.view<6144x4096xf8E4M3FN>
  %sc = exec.weight "model.layers.0.self_attn.qkv_proj.weight_scale" @weights[25165824] : !exec.view<6144xf32>
  // expected-error @+1 {{'exec.gemm' op a W8A8 gemm has a static input_scale or a dynamic one, exactly one}}
  exec.gemm %x, %w weight_scale(%sc : !exec.view<6144xf32>) -> %y
      {granularity = #transformer<granularity per_channel>, quantize_to = f8E4M3FN}
      : !exec.view<?x4096xf32>, !exec.view<6144x4096xf8E4M3FN> -> !exec.view<?x6144xf32>
}

// -----

// W8A8 with an activation epilogue.
exec.arena @weights weights size 25190400 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xf32>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xf32>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[0] : !exec.view<6144x4096xf8E4M3FN>
  %sc = exec.weight "model.layers.0.self_attn.qkv_proj.weight_scale" @weights[25165824] : !exec.view<6144xf32>
  // expected-error @+1 {{'exec.gemm' op a W8A8 gemm has no activation epilogue}}
  exec.gemm %x, %w weight_scale(%sc : !exec.view<6144xf32>) -> %y
      {activation = #transformer<activation_kind silu>, dynamic_input,
       granularity = #transformer<granularity per_channel>, quantize_to = f8E4M3FN}
      : !exec.view<?x4096xf32>, !exec.view<6144x4096xf8E4M3FN> -> !exec.view<?x6144xf32>
}

// -----

// A static input scale without quantize_to.
exec.arena @weights weights size 50331904 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[0] : !exec.view<6144x4096xbf16>
  %is = exec.weight "model.layers.0.self_attn.qkv_proj.input_scale" @weights[50331648] : !exec.view<f32>
  // expected-error @+1 {{'exec.gemm' op an input scale needs quantize_to}}
  exec.gemm %x, %w input_scale(%is : !exec.view<f32>) -> %y
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xbf16> -> !exec.view<?x6144xbf16>
}

// -----

// dynamic_input without quantize_to.
exec.arena @weights weights size 50331648 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "model.layers.0.self_attn.qkv_proj.weight" @weights[0] : !exec.view<6144x4096xbf16>
  // expected-error @+1 {{'exec.gemm' op an input scale needs quantize_to}}
  exec.gemm %x, %w -> %y {dynamic_input}
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xbf16> -> !exec.view<?x6144xbf16>
}

// -----

// A per_channel scale of the input width.
exec.arena @weights weights size 50331648 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "w" @weights[0] : !exec.view<6144x4096xi8>
  %sc = exec.weight "s" @weights[25165824] : !exec.view<4096xf32>
  // expected-error @+1 {{'exec.gemm' op a per_channel weight_scale is '!exec.view<6144xf32>' of f32, f16 or bf16, got '!exec.view<4096xf32>'}}
  exec.gemm %x, %w weight_scale(%sc : !exec.view<4096xf32>) -> %y {granularity = #transformer<granularity per_channel>}
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xi8> -> !exec.view<?x6144xbf16>
}

// -----

// A per_tensor scale that is a vector.
exec.arena @weights weights size 50331648 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "w" @weights[0] : !exec.view<6144x4096xi8>
  %sc = exec.weight "s" @weights[25165824] : !exec.view<6144xf32>
  // expected-error @+1 {{'exec.gemm' op a per_tensor weight_scale is '!exec.view<f32>' of f32, f16 or bf16, got '!exec.view<6144xf32>'}}
  exec.gemm %x, %w weight_scale(%sc : !exec.view<6144xf32>) -> %y {granularity = #transformer<granularity per_tensor>}
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xi8> -> !exec.view<?x6144xbf16>
}

// -----

// A per_group scale with one column too few.
exec.arena @weights weights size 50331648 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "w" @weights[0] : !exec.view<6144x4096xi4>
  %sc = exec.weight "s" @weights[25165824] : !exec.view<6144x31xf16>
  // expected-error @+1 {{'exec.gemm' op a per_group weight_scale is '!exec.view<6144x32xf16>' of f32, f16 or bf16, got '!exec.view<6144x31xf16>'}}
  exec.gemm %x, %w weight_scale(%sc : !exec.view<6144x31xf16>) -> %y {granularity = #transformer<granularity per_group>, group_size = 128 : i64}
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xi4> -> !exec.view<?x6144xbf16>
}

// -----

// An integer scale.
exec.arena @weights weights size 50331648 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "w" @weights[0] : !exec.view<6144x4096xi8>
  %sc = exec.weight "s" @weights[25165824] : !exec.view<6144xi32>
  // expected-error @+1 {{'exec.gemm' op a per_channel weight_scale is '!exec.view<6144xi32>' of f32, f16 or bf16, got '!exec.view<6144xi32>'}}
  exec.gemm %x, %w weight_scale(%sc : !exec.view<6144xi32>) -> %y {granularity = #transformer<granularity per_channel>}
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xi8> -> !exec.view<?x6144xbf16>
}

// -----

// A zero point of another shape than the scale.
exec.arena @weights weights size 50331648 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "w" @weights[0] : !exec.view<6144x4096xi4>
  %sc = exec.weight "s" @weights[25165824] : !exec.view<6144x32xf16>
  %zp = exec.weight "z" @weights[26214400] : !exec.view<6144x16xi4>
  // expected-error @+1 {{'exec.gemm' op the zero_point '!exec.view<6144x16xi4>' must have the weight_scale's shape '!exec.view<6144x32xf16>'}}
  exec.gemm %x, %w weight_scale(%sc : !exec.view<6144x32xf16>) zero_point(%zp : !exec.view<6144x16xi4>) -> %y {granularity = #transformer<granularity per_group>, group_size = 128 : i64}
      : !exec.view<?x4096xbf16>, !exec.view<6144x4096xi4> -> !exec.view<?x6144xbf16>
}

// -----

// A static input scale that is a vector.
exec.arena @weights weights size 50331648 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t) : !exec.view<?x4096xf32>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xf32>
  %w = exec.weight "w" @weights[0] : !exec.view<6144x4096xi8>
  %sc = exec.weight "s" @weights[25165824] : !exec.view<6144xf32>
  %is = exec.weight "is" @weights[26214400] : !exec.view<4096xf32>
  // expected-error @+1 {{'exec.gemm' op a static input_scale is one f32 (!exec.view<f32>), got '!exec.view<4096xf32>'}}
  exec.gemm %x, %w weight_scale(%sc : !exec.view<6144xf32>) input_scale(%is : !exec.view<4096xf32>) -> %y {granularity = #transformer<granularity per_channel>, quantize_to = i8}
      : !exec.view<?x4096xf32>, !exec.view<6144x4096xi8> -> !exec.view<?x6144xf32>
}

// -----

// x with a dynamic feature dimension.
exec.arena @weights weights size 50331648 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t, %t) : !exec.view<?x?xbf16>
  %y = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %w = exec.weight "w" @weights[0] : !exec.view<6144x4096xbf16>
  // expected-error @+1 {{'exec.gemm' op x must have a static feature dimension, got '!exec.view<?x?xbf16>'}}
  exec.gemm %x, %w -> %y : !exec.view<?x?xbf16>, !exec.view<6144x4096xbf16> -> !exec.view<?x6144xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.logits
//===----------------------------------------------------------------------===//

// The LM head split into something of rank 3.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %h = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %lm = exec.alloc : !exec.view<2x64128x4096xbf16>
  %l = exec.alloc sizes(%t) : !exec.view<?x128256xf32>
  // expected-error @+1 {{'exec.logits' op lm_head must have rank 2, got '!exec.view<2x64128x4096xbf16>'}}
  exec.logits %h, %lm -> %l : !exec.view<?x4096xbf16>, !exec.view<2x64128x4096xbf16> -> !exec.view<?x128256xf32>
}

// -----

// A hidden size of 3584 for a 4096-wide LM head.
exec.arena @weights weights size 1050673152 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %h = exec.alloc sizes(%t) : !exec.view<?x3584xbf16>
  %lm = exec.weight "lm_head.weight" @weights[0] : !exec.view<128256x4096xbf16>
  %l = exec.alloc sizes(%t) : !exec.view<?x128256xf32>
  // expected-error @+1 {{'exec.logits' op hidden '!exec.view<?x3584xbf16>' and the lm_head '!exec.view<128256x4096xbf16>' differ in hidden size}}
  exec.logits %h, %lm -> %l : !exec.view<?x3584xbf16>, !exec.view<128256x4096xbf16> -> !exec.view<?x128256xf32>
}

// -----

// Logits of Llama 2's vocabulary for Llama 3's LM head.
exec.arena @weights weights size 1050673152 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %h = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %lm = exec.weight "lm_head.weight" @weights[0] : !exec.view<128256x4096xbf16>
  %l = exec.alloc sizes(%t) : !exec.view<?x32000xf32>
  // expected-error @+1 {{'exec.logits' op out '!exec.view<?x32000xf32>' must have the lm_head's 128256 vocabulary columns}}
  exec.logits %h, %lm -> %l : !exec.view<?x4096xbf16>, !exec.view<128256x4096xbf16> -> !exec.view<?x32000xf32>
}

// -----

// Integer logits.
exec.arena @weights weights size 1050673152 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %h = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %lm = exec.weight "lm_head.weight" @weights[0] : !exec.view<128256x4096xbf16>
  %l = exec.alloc sizes(%t) : !exec.view<?x128256xi32>
  // expected-error @+1 {{'exec.logits' op logits are f32, f16 or bf16, got '!exec.view<?x128256xi32>'}}
  exec.logits %h, %lm -> %l : !exec.view<?x4096xbf16>, !exec.view<128256x4096xbf16> -> !exec.view<?x128256xi32>
}

// -----

// A zero softcap.
exec.arena @weights weights size 1050673152 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %h = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %lm = exec.weight "lm_head.weight" @weights[0] : !exec.view<128256x4096xbf16>
  %l = exec.alloc sizes(%t) : !exec.view<?x128256xf32>
  // expected-error @+1 {{'exec.logits' op softcap must be positive}}
  exec.logits %h, %lm -> %l {softcap = 0.0 : f64}
      : !exec.view<?x4096xbf16>, !exec.view<128256x4096xbf16> -> !exec.view<?x128256xf32>
}

// -----

// Without select_last, one row of logits per hidden row, not per sequence.
exec.arena @weights weights size 1050673152 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %h = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %lm = exec.weight "lm_head.weight" @weights[0] : !exec.view<128256x4096xbf16>
  %l = exec.alloc sizes(%s) : !exec.view<?x128256xf32>
  // expected-error @+1 {{'exec.logits' op hidden '!exec.view<?x4096xbf16>' and out '!exec.view<?x128256xf32>' differ in rows}}
  exec.logits %h, %lm -> %l : !exec.view<?x4096xbf16>, !exec.view<128256x4096xbf16> -> !exec.view<?x128256xf32>
}

// -----

// With select_last, one row per sequence, not per token.
exec.arena @weights weights size 1050673152 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %h = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %lm = exec.weight "lm_head.weight" @weights[0] : !exec.view<128256x4096xbf16>
  %l = exec.alloc sizes(%t) : !exec.view<?x128256xf32>
  // expected-error @+1 {{'exec.logits' op with select_last, out has one row per sequence, got tokens rows}}
  exec.logits %h, %lm -> %l {select_last}
      : !exec.view<?x4096xbf16>, !exec.view<128256x4096xbf16> -> !exec.view<?x128256xf32>
}

// -----

// A bias of the hidden size, not the vocabulary.
exec.arena @weights weights size 50331648 align 256 section "weights"
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %h = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %l = exec.alloc sizes(%t) : !exec.view<?x32000xf32>
  %lm = exec.weight "lm_head" @weights[0] : !exec.view<32000x4096xbf16>
  %b = exec.weight "lm_bias" @weights[262144000] : !exec.view<4096xf32>
  // expected-error @+1 {{'exec.logits' op the bias must be [32000] (one per vocabulary entry) of f32, f16 or bf16, got '!exec.view<4096xf32>'}}
  exec.logits %h, %lm bias(%b : !exec.view<4096xf32>) -> %l : !exec.view<?x4096xbf16>, !exec.view<32000x4096xbf16> -> !exec.view<?x32000xf32>
}

// -----

//===----------------------------------------------------------------------===//
// exec.split, exec.copy
//===----------------------------------------------------------------------===//

// A split into nothing (only the generic form can say so).
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  // expected-error @+1 {{'exec.split' op needs at least one output}}
  "exec.split"(%qkv) : (!exec.view<?x6144xbf16>) -> ()
}

// -----

// An output of another element type.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %k = exec.alloc sizes(%t) : !exec.view<?x1024xf16>
  // expected-error @+1 {{'exec.split' op every output has the input's rank and element type, got '!exec.view<?x1024xf16>'}}
  exec.split %qkv -> %q, %k, %k
      : !exec.view<?x6144xbf16> -> !exec.view<?x4096xbf16>, !exec.view<?x1024xf16>, !exec.view<?x1024xf16>
}

// -----

// An output split into heads.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  %k = exec.alloc sizes(%t) : !exec.view<?x1024xbf16>
  // expected-error @+1 {{'exec.split' op every output has the input's rank and element type, got '!exec.view<?x32x128xbf16>'}}
  exec.split %qkv -> %q, %k, %k
      : !exec.view<?x6144xbf16> -> !exec.view<?x32x128xbf16>, !exec.view<?x1024xbf16>, !exec.view<?x1024xbf16>
}

// -----

// An output with a row per sequence.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%s) : !exec.view<?x4096xbf16>
  %k = exec.alloc sizes(%t) : !exec.view<?x1024xbf16>
  // expected-error @+1 {{'exec.split' op output '!exec.view<?x4096xbf16>' differs from the input '!exec.view<?x6144xbf16>' before the last dimension}}
  exec.split %qkv -> %q, %k, %k
      : !exec.view<?x6144xbf16> -> !exec.view<?x4096xbf16>, !exec.view<?x1024xbf16>, !exec.view<?x1024xbf16>
}

// -----

// 4096 + 1024 columns of 6144.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %qkv = exec.alloc sizes(%t) : !exec.view<?x6144xbf16>
  %q = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %k = exec.alloc sizes(%t) : !exec.view<?x1024xbf16>
  // expected-error @+1 {{'exec.split' op the outputs' last dimensions sum to 5120, not the input's 6144}}
  exec.split %qkv -> %q, %k : !exec.view<?x6144xbf16> -> !exec.view<?x4096xbf16>, !exec.view<?x1024xbf16>
}

// -----

// A copy that converts.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %a = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %b = exec.alloc sizes(%t) : !exec.view<?x4096xf32>
  // expected-error @+1 {{'exec.copy' op source '!exec.view<?x4096xbf16>' and target '!exec.view<?x4096xf32>' differ in element type}}
  exec.copy %a -> %b : !exec.view<?x4096xbf16> -> !exec.view<?x4096xf32>
}

// -----

// A copy that reshapes.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %a = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %b = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.copy' op source '!exec.view<?x4096xbf16>' and target '!exec.view<?x32x128xbf16>' differ in shape}}
  exec.copy %a -> %b : !exec.view<?x4096xbf16> -> !exec.view<?x32x128xbf16>
}

// -----

// A split of a dynamic last dimension.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %x = exec.alloc sizes(%t, %t) : !exec.view<?x?xbf16>
  %a = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.split' op input must have a static last dimension, got '!exec.view<?x?xbf16>'}}
  exec.split %x -> %a, %a : !exec.view<?x?xbf16> -> !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.collective
//===----------------------------------------------------------------------===//

// An unknown collective (custom assembly).
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{expected all_reduce, all_gather or reduce_scatter, got 'broadcast'}}
  exec.collective broadcast %y -> %y group 4 : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// An unknown reduction (custom assembly).
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{expected a reduction (sum, max, min), got 'prod'}}
  exec.collective all_reduce prod %y -> %y group 4 : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// A group of one rank.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.collective' op group must have at least 2 ranks, got 1}}
  exec.collective all_reduce sum %y -> %y group 1 : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// A collective does not convert.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %z = exec.alloc sizes(%t) : !exec.view<?x4096xf32>
  // expected-error @+1 {{'exec.collective' op input and output element types differ ('bf16' vs 'f32')}}
  exec.collective all_reduce sum %y -> %z group 4 : !exec.view<?x4096xbf16> -> !exec.view<?x4096xf32>
}

// -----

// Packed int4 cannot be communicated.
exec.schedule @s mixed {
  %y = exec.alloc : !exec.view<8x4096xi4>
  %z = exec.alloc : !exec.view<32x4096xi4>
  // expected-error @+1 {{'exec.collective' op a collective cannot communicate i4}}
  exec.collective all_gather %y -> %z group 4 : !exec.view<8x4096xi4> -> !exec.view<32x4096xi4>
}

// -----

// all_reduce without a reduction.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.collective' op all_reduce needs a reduction (sum, max, min)}}
  exec.collective all_reduce %y -> %y group 4 : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// reduce_scatter without a reduction.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %z = exec.alloc sizes(%t) : !exec.view<?x1024xbf16>
  // expected-error @+1 {{'exec.collective' op reduce_scatter needs a reduction (sum, max, min)}}
  exec.collective reduce_scatter %y -> %z axis 1 group 4 : !exec.view<?x4096xbf16> -> !exec.view<?x1024xbf16>
}

// -----

// all_gather with a reduction.
exec.schedule @s mixed {
  %s = exec.step_size seqs
  %part = exec.alloc sizes(%s) : !exec.view<?x32064xf32>
  %full = exec.alloc sizes(%s) : !exec.view<?x128256xf32>
  // expected-error @+1 {{'exec.collective' op all_gather takes no reduction}}
  exec.collective all_gather sum %part -> %full axis 1 group 4 : !exec.view<?x32064xf32> -> !exec.view<?x128256xf32>
}

// -----

// Input and output of different ranks.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %z = exec.alloc sizes(%t) : !exec.view<?x32x128xbf16>
  // expected-error @+1 {{'exec.collective' op input and output ranks differ (2 vs 3)}}
  exec.collective all_reduce sum %y -> %z group 4 : !exec.view<?x4096xbf16> -> !exec.view<?x32x128xbf16>
}

// -----

// all_reduce has no axis.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.collective' op all_reduce has no axis}}
  exec.collective all_reduce sum %y -> %y axis 1 group 4 : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// all_reduce keeps the shape.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %z = exec.alloc sizes(%s) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.collective' op input '!exec.view<?x4096xbf16>' and output '!exec.view<?x4096xbf16>' differ in shape}}
  exec.collective all_reduce sum %y -> %z group 4 : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// Axis 2 of a rank-2 view.
exec.schedule @s mixed {
  %s = exec.step_size seqs
  %part = exec.alloc sizes(%s) : !exec.view<?x32064xf32>
  %full = exec.alloc sizes(%s) : !exec.view<?x128256xf32>
  // expected-error @+1 {{'exec.collective' op axis 2 is out of range for rank 2}}
  exec.collective all_gather %part -> %full axis 2 group 4 : !exec.view<?x32064xf32> -> !exec.view<?x128256xf32>
}

// -----

// A gather along axis 1 that also changes the rows.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %part = exec.alloc sizes(%t) : !exec.view<?x32064xf32>
  %full = exec.alloc sizes(%s) : !exec.view<?x128256xf32>
  // expected-error @+1 {{'exec.collective' op all_gather input and output differ at dimension 0 (tokens vs seqs)}}
  exec.collective all_gather %part -> %full axis 1 group 4 : !exec.view<?x32064xf32> -> !exec.view<?x128256xf32>
}

// -----

// A gather along the token dimension.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %z = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.collective' op all_gather along a dynamic dimension is not supported}}
  exec.collective all_gather %y -> %z group 4 : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
}

// -----

// Four ranks of 32064 columns make 128256, not 128000.
exec.schedule @s mixed {
  %s = exec.step_size seqs
  %part = exec.alloc sizes(%s) : !exec.view<?x32064xf32>
  %full = exec.alloc sizes(%s) : !exec.view<?x128000xf32>
  // expected-error @+1 {{'exec.collective' op all_gather output dimension 1 is 128000, expected group (4) x input (32064) = 128256}}
  exec.collective all_gather %part -> %full axis 1 group 4 : !exec.view<?x32064xf32> -> !exec.view<?x128000xf32>
}

// -----

// A reduce_scatter over 4 ranks leaves 1024 columns, not 2048.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %y = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %z = exec.alloc sizes(%t) : !exec.view<?x2048xbf16>
  // expected-error @+1 {{'exec.collective' op reduce_scatter input dimension 1 is 4096, expected group (4) x output (2048) = 8192}}
  exec.collective reduce_scatter sum %y -> %z axis 1 group 4 : !exec.view<?x4096xbf16> -> !exec.view<?x2048xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.pp_transfer
//===----------------------------------------------------------------------===//

// Back to an earlier stage.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %h = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.pp_transfer' op hands data from a stage to a later one, got 1 to 0}}
  exec.pp_transfer %h -> %h from 1 to 0 : !exec.view<?x4096xbf16>
}

// -----

// To the same stage.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %h = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.pp_transfer' op hands data from a stage to a later one, got 2 to 2}}
  exec.pp_transfer %h -> %h from 2 to 2 : !exec.view<?x4096xbf16>
}

// -----

// A negative stage.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %h = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.pp_transfer' op hands data from a stage to a later one, got -1 to 0}}
  exec.pp_transfer %h -> %h from -1 to 0 : !exec.view<?x4096xbf16>
}

// -----

// input and output have one type (AllTypesMatch).
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %h = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %h1 = exec.alloc sizes(%t) : !exec.view<?x4096xf32>
  // expected-error @+1 {{'exec.pp_transfer' op failed to verify that all of {input, output} have same type}}
  "exec.pp_transfer"(%h, %h1) <{from_stage = 0 : i64, to_stage = 1 : i64}> : (!exec.view<?x4096xbf16>, !exec.view<?x4096xf32>) -> ()
}

// -----

// A row per token sent, a row per sequence received.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %h = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
  %h1 = exec.alloc sizes(%s) : !exec.view<?x4096xbf16>
  // expected-error @+1 {{'exec.pp_transfer' op input '!exec.view<?x4096xbf16>' and output '!exec.view<?x4096xbf16>' differ in shape}}
  exec.pp_transfer %h -> %h1 from 0 to 1 : !exec.view<?x4096xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.onnx
//===----------------------------------------------------------------------===//

// No operator name.
exec.schedule @s mixed {
  %x = exec.alloc : !exec.view<4x8xf32>
  // expected-error @+1 {{'exec.onnx' op names no ONNX operator}}
  exec.onnx ""(%x) -> (%x) : (!exec.view<4x8xf32>) -> (!exec.view<4x8xf32>)
}

// -----

// No output (only the generic form can say so).
exec.schedule @s mixed {
  %x = exec.alloc : !exec.view<4x8xf32>
  // expected-error @+1 {{'exec.onnx' op ONNX operator 'Relu' writes no output}}
  "exec.onnx"(%x) <{op = "Relu", operandSegmentSizes = array<i32: 1, 0>}> : (!exec.view<4x8xf32>) -> ()
}

// -----

// Clip with one present input marked, but two given.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %a = exec.alloc sizes(%t) : !exec.view<?x4096xf32>
  %max = exec.alloc : !exec.view<f32>
  // expected-error @+1 {{'exec.onnx' op input_present marks 1 present inputs but the op has 2}}
  exec.onnx "Clip"(%a, %max) -> (%a) {input_present = array<i1: true, false, false>}
      : (!exec.view<?x4096xf32>, !exec.view<f32>) -> (!exec.view<?x4096xf32>)
}

// -----

// LayerNormalization with two present outputs marked, but one given.
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %a = exec.alloc sizes(%t) : !exec.view<?x4096xf32>
  %w = exec.alloc : !exec.view<4096xf32>
  // expected-error @+1 {{'exec.onnx' op output_present marks 2 present outputs but the op has 1}}
  exec.onnx "LayerNormalization"(%a, %w, %w) -> (%a) {output_present = array<i1: true, true, false>}
      : (!exec.view<?x4096xf32>, !exec.view<4096xf32>, !exec.view<4096xf32>) -> (!exec.view<?x4096xf32>)
}

// -----

//===----------------------------------------------------------------------===//
// exec.launch
//===----------------------------------------------------------------------===//

// A 2-D grid.
exec.kernel @k() sm [90] image cubin
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.launch' op grid has three dimensions (x, y, z)}}
  exec.launch @k() grid(1, 1) block(32, 1, 1)
}

// -----

// A dynamic grid dimension without its size (only the generic form can say so).
exec.kernel @k() sm [90] image cubin
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.launch' op grid has 1 dynamic dimension(s) but 0 size operand(s)}}
  "exec.launch"() <{block = array<i64: 32, 1, 1>, grid_divisors = array<i64: 1, 1, 1>, kernel = @k, operandSegmentSizes = array<i32: 0, 0>, smem = 0 : i64, static_grid = array<i64: -9223372036854775808, 1, 1>}> : () -> ()
}

// -----

// A zero divisor.
exec.kernel @k(index) sm [90] image cubin
exec.schedule @s mixed {
  %t = exec.step_size tokens
  // expected-error @+1 {{'exec.launch' op grid x divisor must be positive, got 0}}
  exec.launch @k(%t) grid(%t ceildiv 0, 1, 1) block(256, 1, 1) : (index)
}

// -----

// A divisor on a constant grid dimension (only the generic form can say so).
exec.kernel @k() sm [90] image cubin
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.launch' op only a dynamic grid dimension has a divisor}}
  "exec.launch"() <{block = array<i64: 32, 1, 1>, grid_divisors = array<i64: 4, 1, 1>, kernel = @k, operandSegmentSizes = array<i32: 0, 0>, smem = 0 : i64, static_grid = array<i64: 64, 1, 1>}> : () -> ()
}

// -----

// An empty grid.
exec.kernel @k() sm [90] image cubin
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.launch' op grid x must be in [1, 2147483647], got 0}}
  exec.launch @k() grid(0, 1, 1) block(32, 1, 1)
}

// -----

// Past CUDA's 65535 blocks in y.
exec.kernel @k() sm [90] image cubin
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.launch' op grid y must be in [1, 65535], got 65536}}
  exec.launch @k() grid(1, 65536, 1) block(32, 1, 1)
}

// -----

// A grid size that is not a step size (see exec.alloc).
exec.kernel @k(index) sm [90] image cubin
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %c = builtin.unrealized_conversion_cast %t : index to index
  // expected-error @+1 {{'exec.launch' op dynamic grid size #0 must be an exec.step_size}}
  exec.launch @k(%t) grid(%c, 1, 1) block(256, 1, 1) : (index)
}

// -----

// A 2-D block.
exec.kernel @k() sm [90] image cubin
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.launch' op block has three dimensions (x, y, z)}}
  exec.launch @k() grid(1, 1, 1) block(32, 8)
}

// -----

// 2048 threads in x.
exec.kernel @k() sm [90] image cubin
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.launch' op block x must be in [1, 1024], got 2048}}
  exec.launch @k() grid(1, 1, 1) block(2048, 1, 1)
}

// -----

// An empty block in z.
exec.kernel @k() sm [90] image cubin
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.launch' op block z must be in [1, 1024], got 0}}
  exec.launch @k() grid(1, 1, 1) block(32, 1, 0)
}

// -----

// 256 x 8 = 2048 threads in a block.
exec.kernel @k() sm [90] image cubin
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.launch' op block has 2048 threads; at most 1024 are allowed}}
  exec.launch @k() grid(1, 1, 1) block(256, 8, 1)
}

// -----

// Negative shared memory.
exec.kernel @k() sm [90] image cubin
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.launch' op smem must be non-negative, got -1}}
  exec.launch @k() grid(1, 1, 1) block(32, 1, 1) smem -1
}

// -----

// The kernel is not declared.
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.launch' op an exec.kernel @k is not declared}}
  exec.launch @k() grid(1, 1, 1) block(32, 1, 1)
}

// -----

// The symbol is a KV pool.
exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : bf16
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.launch' op @kv is not an exec.kernel}}
  exec.launch @kv() grid(1, 1, 1) block(32, 1, 1)
}

// -----

// The token count is missing from the arguments.
exec.kernel @silu_mul_i14336(!exec.view<?x28672xbf16>, !exec.view<?x14336xbf16>, index) sm [90] image cubin
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %gu = exec.alloc sizes(%t) : !exec.view<?x28672xbf16>
  %h = exec.alloc sizes(%t) : !exec.view<?x14336xbf16>
  // expected-error @+1 {{'exec.launch' op kernel @silu_mul_i14336 takes 3 argument(s), got 2}}
  exec.launch @silu_mul_i14336(%gu, %h) grid(%t, 1, 1) block(256, 1, 1)
      : (!exec.view<?x28672xbf16>, !exec.view<?x14336xbf16>)
}

// -----

// An f32 view where the kernel takes bf16.
exec.kernel @silu_mul_i14336(!exec.view<?x28672xbf16>, !exec.view<?x14336xbf16>, index) sm [90] image cubin
exec.schedule @s mixed {
  %t = exec.step_size tokens
  %gu = exec.alloc sizes(%t) : !exec.view<?x28672xbf16>
  %h = exec.alloc sizes(%t) : !exec.view<?x14336xf32>
  // expected-error @+1 {{'exec.launch' op argument #1 has type '!exec.view<?x14336xf32>' but kernel @silu_mul_i14336 expects '!exec.view<?x14336xbf16>'}}
  exec.launch @silu_mul_i14336(%gu, %h, %t) grid(%t, 1, 1) block(256, 1, 1)
      : (!exec.view<?x28672xbf16>, !exec.view<?x14336xf32>, index)
}

// -----

// 200000 bytes of shared memory: sm_90 allows 232448, sm_80 only 166912.
exec.kernel @k() sm [80, 90] image cubin
exec.schedule @s mixed {
  // expected-error @+1 {{'exec.launch' op smem 200000 exceeds the 166912 bytes that every SM of kernel @k allows}}
  exec.launch @k() grid(1, 1, 1) block(256, 1, 1) smem 200000
}
