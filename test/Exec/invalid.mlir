// RUN: accel-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of the exec dialect.

//===----------------------------------------------------------------------===//
// !exec.view
//===----------------------------------------------------------------------===//

// f64 is not an element type the runtime supports.
// expected-error @+1 {{element type 'f64' is not supported by exec views (expected f32, f16, bf16, f8E4M3FN, f8E5M2, i8, i4, i32 or i64)}}
exec.kernel @k(!exec.view<4xf64>) sm [] image none implements "test"

// -----

// Unsigned integers are not signless.
// expected-error @+1 {{element type 'ui8' is not supported by exec views}}
exec.kernel @k(!exec.view<4xui8>) sm [] image none implements "test"

// -----

//===----------------------------------------------------------------------===//
// exec.arena
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'exec.arena' op size must be positive, got 0}}
exec.arena @act activations size 0 align 256

// -----

// expected-error @+1 {{'exec.arena' op alignment must be a power of two, got 100}}
exec.arena @act activations size 1024 align 100

// -----

// expected-error @+1 {{'exec.arena' op a weights arena names the plan section that fills it}}
exec.arena @w weights size 1024 align 256

// -----

// expected-error @+1 {{'exec.arena' op only a weights arena names a plan section, not an activations arena}}
exec.arena @act activations size 1024 align 256 section "weights"

// -----

// expected-note @+1 {{see existing symbol definition here}}
exec.arena @act activations size 1024 align 256
// expected-error @+1 {{redefinition of symbol named 'act'}}
exec.arena @act workspace size 1024 align 256

// -----

//===----------------------------------------------------------------------===//
// exec.kv_pool
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'exec.kv_pool' op layers must be positive, got 0}}
exec.kv_pool @kv layers 0 block_size 16 kv_heads 8 head_dim 128 : bf16

// -----

// expected-error @+1 {{'exec.kv_pool' op block_size must be a power of two, got 12}}
exec.kv_pool @kv layers 2 block_size 12 kv_heads 8 head_dim 128 : bf16

// -----

// expected-error @+1 {{'exec.kv_pool' op kv_heads must be positive, got 0}}
exec.kv_pool @kv layers 2 block_size 16 kv_heads 0 head_dim 128 : bf16

// -----

// expected-error @+1 {{'exec.kv_pool' op head_dim must be positive, got -1}}
exec.kv_pool @kv layers 2 block_size 16 kv_heads 8 head_dim -1 : bf16

// -----

// expected-error @+1 {{'exec.kv_pool' op a kv pool holds f32, f16, bf16, f8E4M3FN or f8E5M2, got 'i8'}}
exec.kv_pool @kv layers 2 block_size 16 kv_heads 8 head_dim 128 : i8

// -----

//===----------------------------------------------------------------------===//
// exec.kernel
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'exec.kernel' op unknown SM architecture 85 (known: 70 75 80 86 87 89 90 100 120)}}
exec.kernel @k(!exec.view<?xf32>) sm [80, 85] image cubin

// -----

// expected-error @+1 {{'exec.kernel' op SM architectures must be sorted and unique}}
exec.kernel @k(!exec.view<?xf32>) sm [90, 80] image cubin

// -----

// expected-error @+1 {{'exec.kernel' op a kernel with a GPU image names at least one SM}}
exec.kernel @k(!exec.view<?xf32>) sm [] image ptx

// -----

// expected-error @+1 {{'exec.kernel' op has no GPU image and no reference implementation; nothing could run it}}
exec.kernel @k(!exec.view<?xf32>) sm [80] image none

// -----

// expected-error @+1 {{'exec.kernel' op argument #1 must be an exec view or index, got f32}}
exec.kernel @k(!exec.view<?xf32>, f32) sm [80] image cubin

// -----

//===----------------------------------------------------------------------===//
// exec.schedule
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'exec.schedule' op max_tokens and max_seqs must be positive}}
exec.schedule @s mixed max_tokens 0 max_seqs 0 {
}

// -----

// expected-error @+1 {{'exec.schedule' op max_seqs (8) exceeds max_tokens (4): every sequence brings at least one token}}
exec.schedule @s mixed max_tokens 4 max_seqs 8 {
}

// -----

// expected-error @+1 {{'exec.schedule' op a decode schedule has one token per sequence: max_tokens (8) must equal max_seqs (4)}}
exec.schedule @s decode max_tokens 8 max_seqs 4 {
}

// -----

// The runtime executes exec ops only.
// expected-error @+1 {{'exec.schedule' op may hold only exec ops; 'arith.constant' is not one}}
exec.schedule @s mixed max_tokens 8 max_seqs 8 {
  %c = arith.constant 4 : index
}

// -----

exec.schedule @s mixed max_tokens 8 max_seqs 8 {
  // expected-note @+1 {{first declared here}}
  %t = exec.step_size tokens
  // expected-error @+1 {{'exec.step_size' op step size 'tokens' is declared twice in the schedule}}
  %u = exec.step_size tokens
}

// -----

exec.arena @in step_inputs size 1024 align 256
exec.schedule @s mixed max_tokens 8 max_seqs 8 {
  // expected-note @+1 {{first declared here}}
  %p = exec.step_input positions @in[0] : !exec.view<?xi32>
  // expected-error @+1 {{'exec.step_input' op step input 'positions' is declared twice in the schedule}}
  %q = exec.step_input positions @in[256] : !exec.view<?xi32>
}

// -----

exec.arena @act activations size 1024 align 256
exec.schedule @s mixed max_tokens 8 max_seqs 8 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x4xf32>
  // expected-note @+1 {{first declared here}}
  exec.step_output logits %x : !exec.view<?x4xf32>
  // expected-error @+1 {{'exec.step_output' op step output 'logits' is declared twice in the schedule}}
  exec.step_output logits %x : !exec.view<?x4xf32>
}

// -----

exec.arena @w weights size 4096 align 256 section "weights"
exec.schedule @s mixed max_tokens 8 max_seqs 8 {
  // expected-note @+1 {{first bound here}}
  %a = exec.weight "norm" @w[0] : !exec.view<16xbf16>
  // expected-error @+1 {{'exec.weight' op weight 'norm' is bound to two different places or types}}
  %b = exec.weight "norm" @w[256] : !exec.view<16xbf16>
}

// -----

// Views exist only inside a schedule.
exec.arena @act activations size 1024 align 256
// expected-error @+1 {{'exec.slice' op expects parent op 'exec.schedule'}}
%x = exec.slice @act[0] : !exec.view<4xf32>

// -----

//===----------------------------------------------------------------------===//
// exec.slice
//===----------------------------------------------------------------------===//

exec.arena @act activations size 131072 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  %t = exec.step_size tokens
  // 64 tokens x 1024 x bf16 = 131072 bytes do not fit after 256 bytes.
  // expected-error @+1 {{'exec.slice' op view of 131072 bytes at offset 256 overruns arena @act of 131072 bytes}}
  %x = exec.slice @act[256] sizes(%t) : !exec.view<?x1024xbf16>
}

// -----

exec.arena @act activations size 4096 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  // expected-error @+1 {{'exec.slice' op offset 100 is not a multiple of the alignment 256}}
  %x = exec.slice @act[100] : !exec.view<4xf32>
}

// -----

exec.arena @act activations size 4096 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  // expected-error @+1 {{'exec.slice' op offset 24 is not a multiple of the alignment 16}}
  %x = exec.slice @act[24] align 16 : !exec.view<4xf32>
}

// -----

// An arena aligned to 2 bytes lets the element size decide.
exec.arena @act activations size 4096 align 2
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  // expected-error @+1 {{'exec.slice' op offset 2 is not a multiple of the 4-byte element type 'f32'}}
  %x = exec.slice @act[2] : !exec.view<4xf32>
}

// -----

exec.arena @act activations size 4096 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  // expected-error @+1 {{'exec.slice' op align 2 is smaller than the 4-byte element type 'f32'}}
  %x = exec.slice @act[0] align 2 : !exec.view<4xf32>
}

// -----

exec.arena @act activations size 4096 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  // expected-error @+1 {{'exec.slice' op align must be a power of two, got 48}}
  %x = exec.slice @act[0] align 48 : !exec.view<4xf32>
}

// -----

exec.arena @act activations size 4096 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  // expected-error @+1 {{'exec.slice' op align 512 exceeds the alignment 256 of arena @act}}
  %x = exec.slice @act[0] align 512 : !exec.view<4xf32>
}

// -----

exec.arena @act activations size 4096 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  // expected-error @+1 {{'exec.slice' op offset must be non-negative, got -256}}
  %x = exec.slice @act[-256] : !exec.view<4xf32>
}

// -----

exec.arena @act activations size 4096 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  // expected-error @+1 {{'exec.slice' op expected 1 dynamic size(s) for '!exec.view<?x4xf32>', got 0}}
  %x = exec.slice @act[0] : !exec.view<?x4xf32>
}

// -----

exec.arena @act activations size 4096 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  %c = arith.constant 4 : index
  // expected-error @+1 {{'exec.slice' op dynamic size #0 must be an exec.step_size}}
  %x = exec.slice @act[0] sizes(%c) : !exec.view<?x4xf32>
}

// -----

exec.arena @w weights size 4096 align 256 section "weights"
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  // expected-error @+1 {{'exec.slice' op cannot address the weights arena @w; weights are addressed by exec.weight, step inputs by exec.step_input}}
  %x = exec.slice @w[0] : !exec.view<4xf32>
}

// -----

exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  // expected-error @+1 {{'exec.slice' op an exec.arena @nope is not declared}}
  %x = exec.slice @nope[0] : !exec.view<4xf32>
}

// -----

exec.kv_pool @kv layers 1 block_size 16 kv_heads 1 head_dim 64 : bf16
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  // expected-error @+1 {{'exec.slice' op @kv is not an exec.arena}}
  %x = exec.slice @kv[0] : !exec.view<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// exec.weight
//===----------------------------------------------------------------------===//

exec.arena @w weights size 4096 align 256 section "weights"
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  %t = exec.step_size tokens
  // expected-error @+1 {{'exec.weight' op a weight has a static shape, got '!exec.view<?x4xf32>'}}
  %x = exec.weight "w" @w[0] : !exec.view<?x4xf32>
}

// -----

exec.arena @w weights size 4096 align 256 section "weights"
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  // expected-error @+1 {{'exec.weight' op weight name must not be empty}}
  %x = exec.weight "" @w[0] : !exec.view<4xf32>
}

// -----

exec.arena @act activations size 4096 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  // expected-error @+1 {{'exec.weight' op cannot address the activations arena @act; weights live in a weights arena}}
  %x = exec.weight "w" @act[0] : !exec.view<4xf32>
}

// -----

exec.arena @w weights size 4096 align 256 section "weights"
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  // 64 x 16 x f32 = 4096 bytes after 256 bytes.
  // expected-error @+1 {{'exec.weight' op view of 4096 bytes at offset 256 overruns arena @w of 4096 bytes}}
  %x = exec.weight "w" @w[256] : !exec.view<64x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// exec.step_input
//===----------------------------------------------------------------------===//

exec.arena @in step_inputs size 4096 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  // expected-error @+1 {{'exec.step_input' op a positions input is a !exec.view<?xi32>, got '!exec.view<?xi64>'}}
  %p = exec.step_input positions @in[0] : !exec.view<?xi64>
}

// -----

exec.arena @in step_inputs size 4096 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  // expected-error @+1 {{'exec.step_input' op a block_tables input is a !exec.view<?xNxi32> with N >= 1, got '!exec.view<?x?xi32>'}}
  %p = exec.step_input block_tables @in[0] : !exec.view<?x?xi32>
}

// -----

exec.arena @act activations size 4096 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  // expected-error @+1 {{'exec.step_input' op cannot address the activations arena @act; step inputs live in a step_inputs arena}}
  %p = exec.step_input positions @act[0] : !exec.view<?xi32>
}

// -----

// query_start_loc has max_seqs + 1 entries: 65 x 4 = 260 bytes.
exec.arena @in step_inputs size 256 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  // expected-error @+1 {{'exec.step_input' op view of 260 bytes at offset 0 overruns arena @in of 256 bytes}}
  %p = exec.step_input query_start_loc @in[0] : !exec.view<?xi32>
}

// -----

//===----------------------------------------------------------------------===//
// exec.step_output
//===----------------------------------------------------------------------===//

exec.arena @act activations size 4096 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?xf32>
  // expected-error @+1 {{'exec.step_output' op a logits output is a rank-2 f32, f16 or bf16 view, got '!exec.view<?xf32>'}}
  exec.step_output logits %x : !exec.view<?xf32>
}

// -----

//===----------------------------------------------------------------------===//
// exec.launch
//===----------------------------------------------------------------------===//

exec.arena @act activations size 65536 align 256
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x64xf32>
  // expected-error @+1 {{'exec.launch' op an exec.kernel @nope is not declared}}
  exec.launch @nope(%x, %t) grid(%t, 1, 1) block(64, 1, 1) : (!exec.view<?x64xf32>, index)
}

// -----

exec.arena @act activations size 65536 align 256
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x64xf32>
  // expected-error @+1 {{'exec.launch' op @act is not an exec.kernel}}
  exec.launch @act(%x, %t) grid(%t, 1, 1) block(64, 1, 1) : (!exec.view<?x64xf32>, index)
}

// -----

exec.arena @act activations size 65536 align 256
exec.kernel @k(!exec.view<?x64xf32>, index) sm [80] image cubin
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x64xf32>
  // expected-error @+1 {{'exec.launch' op kernel @k takes 2 argument(s), got 1}}
  exec.launch @k(%x) grid(%t, 1, 1) block(64, 1, 1) : (!exec.view<?x64xf32>)
}

// -----

exec.arena @act activations size 65536 align 256
exec.kernel @k(!exec.view<?x64xf32>, index) sm [80] image cubin
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x64xf16>
  // expected-error @+1 {{'exec.launch' op argument #0 has type '!exec.view<?x64xf16>' but kernel @k expects '!exec.view<?x64xf32>'}}
  exec.launch @k(%x, %t) grid(%t, 1, 1) block(64, 1, 1) : (!exec.view<?x64xf16>, index)
}

// -----

exec.arena @act activations size 65536 align 256
exec.kernel @k(!exec.view<?x64xf32>, index) sm [80] image cubin
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x64xf32>
  // expected-error @+1 {{'exec.launch' op block has 2048 threads; at most 1024 are allowed}}
  exec.launch @k(%x, %t) grid(%t, 1, 1) block(512, 4, 1) : (!exec.view<?x64xf32>, index)
}

// -----

exec.arena @act activations size 65536 align 256
exec.kernel @k(!exec.view<?x64xf32>, index) sm [80] image cubin
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x64xf32>
  // expected-error @+1 {{'exec.launch' op block x must be in [1, 1024], got 0}}
  exec.launch @k(%x, %t) grid(%t, 1, 1) block(0, 1, 1) : (!exec.view<?x64xf32>, index)
}

// -----

exec.arena @act activations size 65536 align 256
exec.kernel @k(!exec.view<?x64xf32>, index) sm [80] image cubin
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x64xf32>
  // expected-error @+1 {{'exec.launch' op block has three dimensions (x, y, z)}}
  exec.launch @k(%x, %t) grid(%t, 1, 1) block(64, 1) : (!exec.view<?x64xf32>, index)
}

// -----

exec.arena @act activations size 65536 align 256
exec.kernel @k(!exec.view<?x64xf32>, index) sm [80] image cubin
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x64xf32>
  // expected-error @+1 {{'exec.launch' op grid has three dimensions (x, y, z)}}
  exec.launch @k(%x, %t) grid(%t) block(64, 1, 1) : (!exec.view<?x64xf32>, index)
}

// -----

exec.arena @act activations size 65536 align 256
exec.kernel @k(!exec.view<?x64xf32>, index) sm [80] image cubin
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x64xf32>
  // expected-error @+1 {{'exec.launch' op grid y must be in [1, 65535], got 70000}}
  exec.launch @k(%x, %t) grid(%t, 70000, 1) block(64, 1, 1) : (!exec.view<?x64xf32>, index)
}

// -----

exec.arena @act activations size 65536 align 256
exec.kernel @k(!exec.view<?x64xf32>, index) sm [80] image cubin
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x64xf32>
  // expected-error @+1 {{'exec.launch' op grid x divisor must be positive, got 0}}
  exec.launch @k(%x, %t) grid(%t ceildiv 0, 1, 1) block(64, 1, 1) : (!exec.view<?x64xf32>, index)
}

// -----

exec.arena @act activations size 65536 align 256
exec.kernel @k(!exec.view<?x64xf32>, index) sm [80] image cubin
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %c = arith.constant 4 : index
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x64xf32>
  // expected-error @+1 {{'exec.launch' op dynamic grid size #0 must be an exec.step_size}}
  exec.launch @k(%x, %t) grid(%c, 1, 1) block(64, 1, 1) : (!exec.view<?x64xf32>, index)
}

// -----

// sm_80 allows 163 KiB of shared memory per block, sm_90 227 KiB.
exec.arena @act activations size 65536 align 256
exec.kernel @k(!exec.view<?x64xf32>, index) sm [80, 90] image cubin
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x64xf32>
  // expected-error @+1 {{'exec.launch' op smem 200000 exceeds the 166912 bytes that every SM of kernel @k allows}}
  exec.launch @k(%x, %t) grid(%t, 1, 1) block(64, 1, 1) smem 200000 : (!exec.view<?x64xf32>, index)
}

// -----

//===----------------------------------------------------------------------===//
// exec.gemm
//===----------------------------------------------------------------------===//

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 1048576 align 256 section "weights"
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %a = exec.slice @act[0] sizes(%t) : !exec.view<?x1024xbf16>
  %b = exec.weight "b" @w[0] : !exec.view<64x1000xbf16>
  %c = exec.slice @act[65536] sizes(%t) : !exec.view<?x64xbf16>
  // expected-error @+1 {{'exec.gemm' op K of A (1024) does not match K of B (1000)}}
  exec.gemm %a, %b -> %c transpose_b compute f32 : !exec.view<?x1024xbf16>, !exec.view<64x1000xbf16> -> !exec.view<?x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 1048576 align 256 section "weights"
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %a = exec.slice @act[0] sizes(%t) : !exec.view<?x64xbf16>
  %b = exec.weight "b" @w[0] : !exec.view<64x64xbf16>
  %c = exec.slice @act[65536] sizes(%s) : !exec.view<?x64xbf16>
  // Tokens and sequences differ in a mixed schedule.
  // expected-error @+1 {{'exec.gemm' op M of A (tokens) does not match M of C (seqs)}}
  exec.gemm %a, %b -> %c compute f32 : !exec.view<?x64xbf16>, !exec.view<64x64xbf16> -> !exec.view<?x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 1048576 align 256 section "weights"
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %a = exec.slice @act[0] sizes(%t) : !exec.view<?x64xbf16>
  %b = exec.weight "b" @w[0] : !exec.view<128x64xbf16>
  %c = exec.slice @act[65536] sizes(%t) : !exec.view<?x64xbf16>
  // expected-error @+1 {{'exec.gemm' op N of B (128) does not match N of C (64)}}
  exec.gemm %a, %b -> %c transpose_b compute f32 : !exec.view<?x64xbf16>, !exec.view<128x64xbf16> -> !exec.view<?x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 1048576 align 256 section "weights"
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %a = exec.slice @act[0] sizes(%t) : !exec.view<?x2x32xbf16>
  %b = exec.weight "b" @w[0] : !exec.view<64x64xbf16>
  %c = exec.slice @act[65536] sizes(%t) : !exec.view<?x64xbf16>
  // expected-error @+1 {{'exec.gemm' op A must be rank 2, got '!exec.view<?x2x32xbf16>'}}
  exec.gemm %a, %b -> %c compute f32 : !exec.view<?x2x32xbf16>, !exec.view<64x64xbf16> -> !exec.view<?x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 1048576 align 256 section "weights"
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %a = exec.slice @act[0] sizes(%t) : !exec.view<?x64xbf16>
  %b = exec.weight "b" @w[0] : !exec.view<64x64xf16>
  %c = exec.slice @act[65536] sizes(%t) : !exec.view<?x64xbf16>
  // expected-error @+1 {{'exec.gemm' op A and B must have the same element type (bf16 x f16 -> bf16)}}
  exec.gemm %a, %b -> %c compute f32 : !exec.view<?x64xbf16>, !exec.view<64x64xf16> -> !exec.view<?x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 1048576 align 256 section "weights"
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %a = exec.slice @act[0] sizes(%t) : !exec.view<?x64xbf16>
  %b = exec.weight "b" @w[0] : !exec.view<64x64xbf16>
  %c = exec.slice @act[65536] sizes(%t) : !exec.view<?x64xf16>
  // expected-error @+1 {{'exec.gemm' op C must be 'bf16' or f32 (bf16 x bf16 -> f16)}}
  exec.gemm %a, %b -> %c compute f32 : !exec.view<?x64xbf16>, !exec.view<64x64xbf16> -> !exec.view<?x64xf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 1048576 align 256 section "weights"
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %a = exec.slice @act[0] sizes(%t) : !exec.view<?x64xbf16>
  %b = exec.weight "b" @w[0] : !exec.view<64x64xbf16>
  %c = exec.slice @act[65536] sizes(%t) : !exec.view<?x64xbf16>
  // expected-error @+1 {{'exec.gemm' op compute type f16 does not fit this GEMM (bf16 x bf16 -> bf16)}}
  exec.gemm %a, %b -> %c compute f16 : !exec.view<?x64xbf16>, !exec.view<64x64xbf16> -> !exec.view<?x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 1048576 align 256 section "weights"
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %a = exec.slice @act[0] sizes(%t) : !exec.view<?x64xf8E4M3FN>
  %b = exec.weight "b" @w[0] : !exec.view<64x64xf8E4M3FN>
  %c = exec.slice @act[65536] sizes(%t) : !exec.view<?x64xbf16>
  // expected-error @+1 {{'exec.gemm' op an FP8 GEMM needs scale_a and scale_b}}
  exec.gemm %a, %b -> %c compute f32 : !exec.view<?x64xf8E4M3FN>, !exec.view<64x64xf8E4M3FN> -> !exec.view<?x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 1048576 align 256 section "weights"
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %a = exec.slice @act[0] sizes(%t) : !exec.view<?x64xf8E5M2>
  %b = exec.weight "b" @w[0] : !exec.view<64x64xf8E5M2>
  %c = exec.slice @act[65536] sizes(%t) : !exec.view<?x64xbf16>
  %s = exec.weight "s" @w[4096] : !exec.view<f32>
  // expected-error @+1 {{'exec.gemm' op cuBLASLt has no GEMM with both operands f8E5M2 (f8E5M2 x f8E5M2 -> bf16)}}
  exec.gemm %a, %b -> %c scale_a(%s) scale_b(%s) compute f32 : !exec.view<?x64xf8E5M2>, !exec.view<64x64xf8E5M2> -> !exec.view<?x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 1048576 align 256 section "weights"
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %a = exec.slice @act[0] sizes(%t) : !exec.view<?x64xf8E4M3FN>
  %b = exec.weight "b" @w[0] : !exec.view<64x64xf8E4M3FN>
  %c = exec.slice @act[65536] sizes(%t) : !exec.view<?x64xf8E4M3FN>
  %s = exec.weight "s" @w[4096] : !exec.view<f32>
  // expected-error @+1 {{'exec.gemm' op scale_c is needed exactly when C is FP8}}
  exec.gemm %a, %b -> %c scale_a(%s) scale_b(%s) compute f32 : !exec.view<?x64xf8E4M3FN>, !exec.view<64x64xf8E4M3FN> -> !exec.view<?x64xf8E4M3FN>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 1048576 align 256 section "weights"
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %a = exec.slice @act[0] sizes(%t) : !exec.view<?x64xf8E4M3FN>
  %b = exec.weight "b" @w[0] : !exec.view<64x64xf8E4M3FN>
  %c = exec.slice @act[65536] sizes(%t) : !exec.view<?x64xi32>
  %s = exec.weight "s" @w[4096] : !exec.view<f32>
  // expected-error @+1 {{'exec.gemm' op C of an FP8 GEMM must be f32, f16, bf16 or f8E4M3FN (f8E4M3FN x f8E4M3FN -> i32)}}
  exec.gemm %a, %b -> %c scale_a(%s) scale_b(%s) compute f32 : !exec.view<?x64xf8E4M3FN>, !exec.view<64x64xf8E4M3FN> -> !exec.view<?x64xi32>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 1048576 align 256 section "weights"
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %a = exec.slice @act[0] sizes(%t) : !exec.view<?x64xbf16>
  %b = exec.weight "b" @w[0] : !exec.view<64x64xbf16>
  %c = exec.slice @act[65536] sizes(%t) : !exec.view<?x64xbf16>
  %s = exec.weight "s" @w[8192] : !exec.view<f32>
  // expected-error @+1 {{'exec.gemm' op scales are only for FP8 GEMMs}}
  exec.gemm %a, %b -> %c scale_a(%s) scale_b(%s) compute f32 : !exec.view<?x64xbf16>, !exec.view<64x64xbf16> -> !exec.view<?x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 1048576 align 256 section "weights"
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %a = exec.slice @act[0] sizes(%t) : !exec.view<?x64xi8>
  %b = exec.weight "b" @w[0] : !exec.view<64x64xi8>
  %c = exec.slice @act[65536] sizes(%t) : !exec.view<?x64xbf16>
  // expected-error @+1 {{'exec.gemm' op C of an i8 GEMM must be i32 (i8 x i8 -> bf16)}}
  exec.gemm %a, %b -> %c compute i32 : !exec.view<?x64xi8>, !exec.view<64x64xi8> -> !exec.view<?x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 1048576 align 256 section "weights"
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %a = exec.slice @act[0] sizes(%t) : !exec.view<?x64xi8>
  %b = exec.weight "b" @w[0] : !exec.view<64x64xi8>
  %c = exec.slice @act[65536] sizes(%t) : !exec.view<?x64xi32>
  // expected-error @+1 {{'exec.gemm' op an i8 GEMM has no bias, residual or activation; dequantise in a kernel}}
  exec.gemm %a, %b -> %c activation relu compute i32 : !exec.view<?x64xi8>, !exec.view<64x64xi8> -> !exec.view<?x64xi32>
}

// -----

// W4A16 is not a cuBLASLt GEMM: it belongs to a kernel.
exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 1048576 align 256 section "weights"
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %a = exec.slice @act[0] sizes(%t) : !exec.view<?x64xbf16>
  %b = exec.weight "b" @w[0] : !exec.view<64x64xi4>
  %c = exec.slice @act[65536] sizes(%t) : !exec.view<?x64xbf16>
  // expected-error @+1 {{'exec.gemm' op unsupported GEMM element types (bf16 x i4 -> bf16)}}
  exec.gemm %a, %b -> %c compute f32 : !exec.view<?x64xbf16>, !exec.view<64x64xi4> -> !exec.view<?x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 1048576 align 256 section "weights"
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %a = exec.slice @act[0] sizes(%t) : !exec.view<?x64xbf16>
  %b = exec.weight "b" @w[0] : !exec.view<64x64xbf16>
  %c = exec.slice @act[65536] sizes(%t) : !exec.view<?x64xbf16>
  %bias = exec.weight "bias" @w[8192] : !exec.view<32xbf16>
  // expected-error @+1 {{'exec.gemm' op bias has 32 elements but N is 64}}
  exec.gemm %a, %b -> %c bias(%bias : !exec.view<32xbf16>) compute f32 : !exec.view<?x64xbf16>, !exec.view<64x64xbf16> -> !exec.view<?x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 1048576 align 256 section "weights"
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %a = exec.slice @act[0] sizes(%t) : !exec.view<?x64xbf16>
  %b = exec.weight "b" @w[0] : !exec.view<64x64xbf16>
  %c = exec.slice @act[65536] sizes(%t) : !exec.view<?x64xbf16>
  %bias = exec.weight "bias" @w[8192] : !exec.view<64xi32>
  // expected-error @+1 {{'exec.gemm' op bias must be a rank-1 f32, f16 or bf16 view, got '!exec.view<64xi32>'}}
  exec.gemm %a, %b -> %c bias(%bias : !exec.view<64xi32>) compute f32 : !exec.view<?x64xbf16>, !exec.view<64x64xbf16> -> !exec.view<?x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 1048576 align 256 section "weights"
exec.schedule @s mixed max_tokens 16 max_seqs 16 {
  %t = exec.step_size tokens
  %a = exec.slice @act[0] sizes(%t) : !exec.view<?x64xbf16>
  %b = exec.weight "b" @w[0] : !exec.view<64x64xbf16>
  %c = exec.slice @act[65536] sizes(%t) : !exec.view<?x64xbf16>
  %r = exec.slice @act[131072] sizes(%t) : !exec.view<?x64xf32>
  // expected-error @+1 {{'exec.gemm' op residual must have C's type '!exec.view<?x64xbf16>', got '!exec.view<?x64xf32>'}}
  exec.gemm %a, %b -> %c residual(%r : !exec.view<?x64xf32>) compute f32 : !exec.view<?x64xbf16>, !exec.view<64x64xbf16> -> !exec.view<?x64xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.attention_prefill, exec.attention_decode
//===----------------------------------------------------------------------===//

exec.arena @act activations size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 2 block_size 16 kv_heads 2 head_dim 128 : bf16
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %qsl = exec.step_input query_start_loc @in[0] : !exec.view<?xi32>
  %lens = exec.step_input seq_lens @in[256] : !exec.view<?xi32>
  %bt = exec.step_input block_tables @in[512] : !exec.view<?x16xi32>
  %q = exec.slice @act[0] sizes(%t) : !exec.view<?x8x64xbf16>
  %o = exec.slice @act[65536] sizes(%t) : !exec.view<?x8x64xbf16>
  // expected-error @+1 {{'exec.attention_prefill' op q has head_dim 64 but kv pool @kv has 128}}
  exec.attention_prefill %q, @kv[0] -> %o query_start_loc(%qsl) seq_lens(%lens) block_tables(%bt : !exec.view<?x16xi32>) scale 0.125 causal : !exec.view<?x8x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 2 block_size 16 kv_heads 4 head_dim 64 : bf16
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %qsl = exec.step_input query_start_loc @in[0] : !exec.view<?xi32>
  %lens = exec.step_input seq_lens @in[256] : !exec.view<?xi32>
  %bt = exec.step_input block_tables @in[512] : !exec.view<?x16xi32>
  %q = exec.slice @act[0] sizes(%t) : !exec.view<?x6x64xbf16>
  %o = exec.slice @act[65536] sizes(%t) : !exec.view<?x6x64xbf16>
  // expected-error @+1 {{'exec.attention_prefill' op q has 6 heads, not a multiple of the 4 kv heads of kv pool @kv}}
  exec.attention_prefill %q, @kv[0] -> %o query_start_loc(%qsl) seq_lens(%lens) block_tables(%bt : !exec.view<?x16xi32>) scale 0.125 causal : !exec.view<?x6x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 2 block_size 16 kv_heads 2 head_dim 64 : bf16
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %qsl = exec.step_input query_start_loc @in[0] : !exec.view<?xi32>
  %lens = exec.step_input seq_lens @in[256] : !exec.view<?xi32>
  %bt = exec.step_input block_tables @in[512] : !exec.view<?x16xi32>
  %q = exec.slice @act[0] sizes(%t) : !exec.view<?x8x64xf16>
  %o = exec.slice @act[65536] sizes(%t) : !exec.view<?x8x64xf16>
  // expected-error @+1 {{'exec.attention_prefill' op q is 'f16' but kv pool @kv holds 'bf16'}}
  exec.attention_prefill %q, @kv[0] -> %o query_start_loc(%qsl) seq_lens(%lens) block_tables(%bt : !exec.view<?x16xi32>) scale 0.125 causal : !exec.view<?x8x64xf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 2 block_size 16 kv_heads 2 head_dim 64 : f8E4M3FN
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %qsl = exec.step_input query_start_loc @in[0] : !exec.view<?xi32>
  %lens = exec.step_input seq_lens @in[256] : !exec.view<?xi32>
  %bt = exec.step_input block_tables @in[512] : !exec.view<?x16xi32>
  %q = exec.slice @act[0] sizes(%t) : !exec.view<?x8x64xbf16>
  %o = exec.slice @act[65536] sizes(%t) : !exec.view<?x8x64xbf16>
  // expected-error @+1 {{'exec.attention_prefill' op reading the FP8 kv pool @kv needs kv_scales}}
  exec.attention_prefill %q, @kv[0] -> %o query_start_loc(%qsl) seq_lens(%lens) block_tables(%bt : !exec.view<?x16xi32>) scale 0.125 causal : !exec.view<?x8x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 4096 align 256 section "weights"
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 2 block_size 16 kv_heads 2 head_dim 64 : bf16
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %qsl = exec.step_input query_start_loc @in[0] : !exec.view<?xi32>
  %lens = exec.step_input seq_lens @in[256] : !exec.view<?xi32>
  %bt = exec.step_input block_tables @in[512] : !exec.view<?x16xi32>
  %q = exec.slice @act[0] sizes(%t) : !exec.view<?x8x64xbf16>
  %o = exec.slice @act[65536] sizes(%t) : !exec.view<?x8x64xbf16>
  %ks = exec.weight "ks" @w[0] : !exec.view<f32>
  // expected-error @+1 {{'exec.attention_prefill' op kv_scales are only for an FP8 kv pool}}
  exec.attention_prefill %q, @kv[0] -> %o query_start_loc(%qsl) seq_lens(%lens) block_tables(%bt : !exec.view<?x16xi32>) kv_scales(%ks, %ks) scale 0.125 causal : !exec.view<?x8x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 2 block_size 16 kv_heads 2 head_dim 64 : bf16
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %qsl = exec.step_input query_start_loc @in[0] : !exec.view<?xi32>
  %lens = exec.step_input seq_lens @in[256] : !exec.view<?xi32>
  %bt = exec.step_input block_tables @in[512] : !exec.view<?x16xi32>
  %q = exec.slice @act[0] sizes(%t) : !exec.view<?x8x64xbf16>
  %o = exec.slice @act[65536] sizes(%t) : !exec.view<?x8x64xbf16>
  // expected-error @+1 {{'exec.attention_prefill' op layer 2 is out of range for kv pool @kv of 2 layers}}
  exec.attention_prefill %q, @kv[2] -> %o query_start_loc(%qsl) seq_lens(%lens) block_tables(%bt : !exec.view<?x16xi32>) scale 0.125 causal : !exec.view<?x8x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %qsl = exec.step_input query_start_loc @in[0] : !exec.view<?xi32>
  %lens = exec.step_input seq_lens @in[256] : !exec.view<?xi32>
  %bt = exec.step_input block_tables @in[512] : !exec.view<?x16xi32>
  %q = exec.slice @act[0] sizes(%t) : !exec.view<?x8x64xbf16>
  %o = exec.slice @act[65536] sizes(%t) : !exec.view<?x8x64xbf16>
  // expected-error @+1 {{'exec.attention_prefill' op an exec.kv_pool @kv is not declared}}
  exec.attention_prefill %q, @kv[0] -> %o query_start_loc(%qsl) seq_lens(%lens) block_tables(%bt : !exec.view<?x16xi32>) scale 0.125 causal : !exec.view<?x8x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 2 block_size 16 kv_heads 2 head_dim 64 : bf16
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %qsl = exec.step_input query_start_loc @in[0] : !exec.view<?xi32>
  %lens = exec.step_input seq_lens @in[256] : !exec.view<?xi32>
  %bt = exec.step_input block_tables @in[512] : !exec.view<?x16xi32>
  %q = exec.slice @act[0] sizes(%t) : !exec.view<?x512xbf16>
  %o = exec.slice @act[65536] sizes(%t) : !exec.view<?x512xbf16>
  // expected-error @+1 {{'exec.attention_prefill' op q must be [tokens, heads, head_dim], got '!exec.view<?x512xbf16>'}}
  exec.attention_prefill %q, @kv[0] -> %o query_start_loc(%qsl) seq_lens(%lens) block_tables(%bt : !exec.view<?x16xi32>) scale 0.125 causal : !exec.view<?x512xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 2 block_size 16 kv_heads 2 head_dim 64 : bf16
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %qsl = exec.step_input query_start_loc @in[0] : !exec.view<?xi32>
  %lens = exec.step_input seq_lens @in[256] : !exec.view<?xi32>
  %bt = exec.step_input block_tables @in[512] : !exec.view<?x16xi32>
  %q = exec.slice @act[0] sizes(%t) : !exec.view<?x8x64xbf16>
  %o = exec.slice @act[65536] sizes(%t) : !exec.view<?x8x64xbf16>
  // expected-error @+1 {{'exec.attention_prefill' op scale must be positive}}
  exec.attention_prefill %q, @kv[0] -> %o query_start_loc(%qsl) seq_lens(%lens) block_tables(%bt : !exec.view<?x16xi32>) scale 0.0 causal : !exec.view<?x8x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 2 block_size 16 kv_heads 2 head_dim 64 : bf16
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %qsl = exec.step_input query_start_loc @in[0] : !exec.view<?xi32>
  %lens = exec.step_input seq_lens @in[256] : !exec.view<?xi32>
  %bt = exec.step_input block_tables @in[512] : !exec.view<?x16xi32>
  %q = exec.slice @act[0] sizes(%t) : !exec.view<?x8x64xbf16>
  %o = exec.slice @act[65536] sizes(%t) : !exec.view<?x8x64xbf16>
  // expected-error @+1 {{'exec.attention_prefill' op window must be positive}}
  exec.attention_prefill %q, @kv[0] -> %o query_start_loc(%qsl) seq_lens(%lens) block_tables(%bt : !exec.view<?x16xi32>) scale 0.125 causal window 0 : !exec.view<?x8x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 1 block_size 16 kv_heads 2 head_dim 64 : bf16
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %lens = exec.step_input seq_lens @in[256] : !exec.view<?xi32>
  %bt = exec.step_input block_tables @in[512] : !exec.view<?x16xi32>
  %q = exec.slice @act[0] sizes(%t) : !exec.view<?x8x64xbf16>
  %o = exec.slice @act[65536] sizes(%t) : !exec.view<?x8x64xbf16>
  // expected-error @+1 {{'exec.attention_decode' op needs a decode schedule (one token per sequence); @s is mixed}}
  exec.attention_decode %q, @kv[0] -> %o seq_lens(%lens) block_tables(%bt : !exec.view<?x16xi32>) scale 0.125 : !exec.view<?x8x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @ws workspace size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 1 block_size 16 kv_heads 2 head_dim 64 : bf16
exec.schedule @s decode max_tokens 32 max_seqs 32 {
  %t = exec.step_size tokens
  %lens = exec.step_input seq_lens @in[0] : !exec.view<?xi32>
  %bt = exec.step_input block_tables @in[256] : !exec.view<?x16xi32>
  %q = exec.slice @act[0] sizes(%t) : !exec.view<?x8x64xbf16>
  %o = exec.slice @act[65536] sizes(%t) : !exec.view<?x8x64xbf16>
  %ws = exec.slice @ws[0] : !exec.view<1024xi8>
  // 32 seqs x 8 heads x 4 splits x (64 + 2) x 4 bytes.
  // expected-error @+1 {{'exec.attention_decode' op workspace of 1024 bytes is too small for split_kv 4: it needs 270336 bytes (max_seqs x heads x splits x (head_dim + 2) x 4)}}
  exec.attention_decode %q, @kv[0] -> %o seq_lens(%lens) block_tables(%bt : !exec.view<?x16xi32>) scale 0.125 split_kv 4 workspace(%ws : !exec.view<1024xi8>) : !exec.view<?x8x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @ws workspace size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 1 block_size 16 kv_heads 2 head_dim 64 : bf16
exec.schedule @s decode max_tokens 32 max_seqs 32 {
  %t = exec.step_size tokens
  %lens = exec.step_input seq_lens @in[0] : !exec.view<?xi32>
  %bt = exec.step_input block_tables @in[256] : !exec.view<?x16xi32>
  %q = exec.slice @act[0] sizes(%t) : !exec.view<?x8x64xbf16>
  %o = exec.slice @act[65536] sizes(%t) : !exec.view<?x8x64xbf16>
  %ws = exec.slice @ws[0] : !exec.view<1024xi8>
  // expected-error @+1 {{'exec.attention_decode' op split_kv must be at least 2, got 1}}
  exec.attention_decode %q, @kv[0] -> %o seq_lens(%lens) block_tables(%bt : !exec.view<?x16xi32>) scale 0.125 split_kv 1 workspace(%ws : !exec.view<1024xi8>) : !exec.view<?x8x64xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.kv_write
//===----------------------------------------------------------------------===//

exec.arena @act activations size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 2 block_size 16 kv_heads 1 head_dim 128 : bf16
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %slots = exec.step_input slot_mapping @in[0] : !exec.view<?xi32>
  %k = exec.slice @act[0] sizes(%t) : !exec.view<?x2x128xbf16>
  %v = exec.slice @act[65536] sizes(%t) : !exec.view<?x2x128xbf16>
  // expected-error @+1 {{'exec.kv_write' op k has 2 kv heads but kv pool @kv has 1}}
  exec.kv_write %k, %v -> @kv[0] slots(%slots) : !exec.view<?x2x128xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 2 block_size 16 kv_heads 1 head_dim 128 : bf16
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %slots = exec.step_input slot_mapping @in[0] : !exec.view<?xi32>
  %k = exec.slice @act[0] sizes(%t) : !exec.view<?x1x64xbf16>
  %v = exec.slice @act[65536] sizes(%t) : !exec.view<?x1x64xbf16>
  // expected-error @+1 {{'exec.kv_write' op k has head_dim 64 but kv pool @kv has 128}}
  exec.kv_write %k, %v -> @kv[0] slots(%slots) : !exec.view<?x1x64xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 2 block_size 16 kv_heads 1 head_dim 128 : bf16
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %slots = exec.step_input slot_mapping @in[0] : !exec.view<?xi32>
  %k = exec.slice @act[0] sizes(%t) : !exec.view<?x1x128xf16>
  %v = exec.slice @act[65536] sizes(%t) : !exec.view<?x1x128xf16>
  // expected-error @+1 {{'exec.kv_write' op cannot write 'f16' keys and values into kv pool @kv of 'bf16'}}
  exec.kv_write %k, %v -> @kv[0] slots(%slots) : !exec.view<?x1x128xf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 2 block_size 16 kv_heads 1 head_dim 128 : f8E4M3FN
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %slots = exec.step_input slot_mapping @in[0] : !exec.view<?xi32>
  %k = exec.slice @act[0] sizes(%t) : !exec.view<?x1x128xbf16>
  %v = exec.slice @act[65536] sizes(%t) : !exec.view<?x1x128xbf16>
  // expected-error @+1 {{'exec.kv_write' op writing 'bf16' into the FP8 kv pool @kv needs kv_scales}}
  exec.kv_write %k, %v -> @kv[0] slots(%slots) : !exec.view<?x1x128xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @w weights size 4096 align 256 section "weights"
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 2 block_size 16 kv_heads 1 head_dim 128 : bf16
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %slots = exec.step_input slot_mapping @in[0] : !exec.view<?xi32>
  %k = exec.slice @act[0] sizes(%t) : !exec.view<?x1x128xbf16>
  %v = exec.slice @act[65536] sizes(%t) : !exec.view<?x1x128xbf16>
  %ks = exec.weight "ks" @w[0] : !exec.view<f32>
  // expected-error @+1 {{'exec.kv_write' op kv_scales are only for quantising into an FP8 pool}}
  exec.kv_write %k, %v -> @kv[0] slots(%slots) kv_scales(%ks, %ks) : !exec.view<?x1x128xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 2 block_size 16 kv_heads 1 head_dim 128 : bf16
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %slots = exec.step_input slot_mapping @in[0] : !exec.view<?xi32>
  %k = exec.slice @act[0] sizes(%t) : !exec.view<?x1x128xbf16>
  %v = exec.slice @act[65536] sizes(%t) : !exec.view<?x1x128xbf16>
  // expected-error @+1 {{'exec.kv_write' op layer 5 is out of range for kv pool @kv of 2 layers}}
  exec.kv_write %k, %v -> @kv[5] slots(%slots) : !exec.view<?x1x128xbf16>
}

// -----

// seq_lens has one entry per sequence, not per token.
exec.arena @act activations size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 2 block_size 16 kv_heads 1 head_dim 128 : bf16
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %lens = exec.step_input seq_lens @in[0] : !exec.view<?xi32>
  %k = exec.slice @act[0] sizes(%t) : !exec.view<?x1x128xbf16>
  %v = exec.slice @act[65536] sizes(%t) : !exec.view<?x1x128xbf16>
  // expected-error @+1 {{'exec.kv_write' op slot_mapping has seqs entries but k has tokens rows}}
  exec.kv_write %k, %v -> @kv[0] slots(%lens) : !exec.view<?x1x128xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.arena @in step_inputs size 65536 align 256
exec.kv_pool @kv layers 2 block_size 16 kv_heads 1 head_dim 128 : bf16
exec.schedule @s mixed max_tokens 64 max_seqs 8 {
  %t = exec.step_size tokens
  %slots = exec.step_input slot_mapping @in[0] : !exec.view<?xi32>
  %k = exec.slice @act[0] sizes(%t) : !exec.view<?x128xbf16>
  %v = exec.slice @act[65536] sizes(%t) : !exec.view<?x128xbf16>
  // expected-error @+1 {{'exec.kv_write' op k and v must be [tokens, kv_heads, head_dim] with static kv_heads and head_dim, got '!exec.view<?x128xbf16>'}}
  exec.kv_write %k, %v -> @kv[0] slots(%slots) : !exec.view<?x128xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// exec.collective
//===----------------------------------------------------------------------===//

exec.arena @act activations size 1048576 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  %x = exec.slice @act[0] : !exec.view<1x1024xf32>
  %y = exec.slice @act[65536] : !exec.view<1x4000xf32>
  // expected-error @+1 {{'exec.collective' op all_gather output dimension 1 is 4000, expected group (4) x input (1024) = 4096}}
  exec.collective all_gather %x -> %y axis 1 group 4 : !exec.view<1x1024xf32> -> !exec.view<1x4000xf32>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  %x = exec.slice @act[0] : !exec.view<64x1024xf32>
  %y = exec.slice @act[262144] : !exec.view<8x1024xf32>
  // expected-error @+1 {{'exec.collective' op reduce_scatter input dimension 0 is 64, expected group (4) x output (8) = 32}}
  exec.collective reduce_scatter sum %x -> %y group 4 : !exec.view<64x1024xf32> -> !exec.view<8x1024xf32>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x1024xf32>
  // expected-error @+1 {{'exec.collective' op all_reduce needs a reduction (sum, max, min)}}
  exec.collective all_reduce %x -> %x group 2 : !exec.view<?x1024xf32> -> !exec.view<?x1024xf32>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  %x = exec.slice @act[0] : !exec.view<16x1024xf32>
  %y = exec.slice @act[65536] : !exec.view<32x1024xf32>
  // expected-error @+1 {{'exec.collective' op all_gather takes no reduction}}
  exec.collective all_gather sum %x -> %y group 2 : !exec.view<16x1024xf32> -> !exec.view<32x1024xf32>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x1024xf32>
  // expected-error @+1 {{'exec.collective' op group must have at least 2 ranks, got 1}}
  exec.collective all_reduce sum %x -> %x group 1 : !exec.view<?x1024xf32> -> !exec.view<?x1024xf32>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x1024xbf16>
  %y = exec.slice @act[262144] sizes(%t) : !exec.view<?x1024xf32>
  // expected-error @+1 {{'exec.collective' op input and output element types differ ('bf16' vs 'f32')}}
  exec.collective all_reduce sum %x -> %y group 2 : !exec.view<?x1024xbf16> -> !exec.view<?x1024xf32>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  %x = exec.slice @act[0] : !exec.view<16x1024xi4>
  // expected-error @+1 {{'exec.collective' op NCCL cannot communicate i4}}
  exec.collective all_reduce sum %x -> %x group 2 : !exec.view<16x1024xi4> -> !exec.view<16x1024xi4>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 64 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x1024xf32>
  %y = exec.slice @act[262144] sizes(%t) : !exec.view<?x2048xf32>
  // expected-error @+1 {{'exec.collective' op all_reduce input and output differ at dimension 1 (1024 vs 2048)}}
  exec.collective all_reduce sum %x -> %y group 2 : !exec.view<?x1024xf32> -> !exec.view<?x2048xf32>
}

// -----

// Gathering along the vocabulary of [seqs, vocab] logits is not contiguous.
exec.arena @act activations size 1048576 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 16 {
  %s = exec.step_size seqs
  %x = exec.slice @act[0] sizes(%s) : !exec.view<?x1000xf32>
  %y = exec.slice @act[65536] sizes(%s) : !exec.view<?x4000xf32>
  // expected-error @+1 {{'exec.collective' op all_gather along axis 1 needs a scratch view of type '!exec.view<?x4000xf32>' to stage the rank-major data}}
  exec.collective all_gather %x -> %y axis 1 group 4 : !exec.view<?x1000xf32> -> !exec.view<?x4000xf32>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 16 {
  %x = exec.slice @act[0] : !exec.view<16x1024xf32>
  %y = exec.slice @act[65536] : !exec.view<64x1024xf32>
  %z = exec.slice @act[327680] : !exec.view<64x1024xf32>
  // expected-error @+1 {{'exec.collective' op all_gather along axis 0 is contiguous and needs no scratch}}
  exec.collective all_gather %x -> %y group 4 scratch(%z : !exec.view<64x1024xf32>) : !exec.view<16x1024xf32> -> !exec.view<64x1024xf32>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 16 {
  %s = exec.step_size seqs
  %x = exec.slice @act[0] sizes(%s) : !exec.view<?x1000xf32>
  %y = exec.slice @act[65536] sizes(%s) : !exec.view<?x4000xf32>
  %z = exec.slice @act[327680] sizes(%s) : !exec.view<?x4000xbf16>
  // expected-error @+1 {{'exec.collective' op scratch must have the output type '!exec.view<?x4000xf32>', got '!exec.view<?x4000xbf16>'}}
  exec.collective all_gather %x -> %y axis 1 group 4 scratch(%z : !exec.view<?x4000xbf16>) : !exec.view<?x1000xf32> -> !exec.view<?x4000xf32>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 16 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x1024xf32>
  %y = exec.slice @act[262144] sizes(%t) : !exec.view<?x1024xf32>
  // Sequence parallelism would gather tokens: a dynamic extent times the group.
  // expected-error @+1 {{'exec.collective' op all_gather along a dynamic dimension is not supported}}
  exec.collective all_gather %x -> %y group 4 : !exec.view<?x1024xf32> -> !exec.view<?x1024xf32>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 16 {
  %x = exec.slice @act[0] : !exec.view<16x1024xf32>
  %y = exec.slice @act[65536] : !exec.view<64x1024xf32>
  // expected-error @+1 {{'exec.collective' op axis 2 is out of range for rank 2}}
  exec.collective all_gather %x -> %y axis 2 group 4 : !exec.view<16x1024xf32> -> !exec.view<64x1024xf32>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 16 {
  %x = exec.slice @act[0] : !exec.view<16x1024xf32>
  // expected-error @+1 {{expected all_reduce, all_gather or reduce_scatter, got 'broadcast'}}
  exec.collective broadcast %x -> %x group 4 : !exec.view<16x1024xf32> -> !exec.view<16x1024xf32>
}

// -----

//===----------------------------------------------------------------------===//
// exec.copy
//===----------------------------------------------------------------------===//

exec.arena @act activations size 1048576 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 16 {
  %t = exec.step_size tokens
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x1024xf32>
  %y = exec.slice @act[262144] sizes(%t) : !exec.view<?x1024xbf16>
  // expected-error @+1 {{'exec.copy' op source and target element types differ ('f32' vs 'bf16')}}
  exec.copy %x -> %y : !exec.view<?x1024xf32> -> !exec.view<?x1024xbf16>
}

// -----

exec.arena @act activations size 1048576 align 256
exec.schedule @s mixed max_tokens 64 max_seqs 16 {
  %t = exec.step_size tokens
  %s = exec.step_size seqs
  %x = exec.slice @act[0] sizes(%t) : !exec.view<?x1024xf32>
  %y = exec.slice @act[262144] sizes(%s) : !exec.view<?x1024xf32>
  // expected-error @+1 {{'exec.copy' op source and target differ at dimension 0 (tokens vs seqs)}}
  exec.copy %x -> %y : !exec.view<?x1024xf32> -> !exec.view<?x1024xf32>
}
