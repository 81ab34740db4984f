//===- ExecOps.td - exec dialect ops ----------------------*- tablegen -*-===//
//
// Declarations (module level): exec.arena, exec.kv_pool, exec.kernel,
// exec.schedule. Declarations (schedule level): exec.step_size,
// exec.step_input, exec.slice, exec.weight, exec.step_output. Runtime steps:
// exec.launch, exec.gemm, exec.attention_prefill, exec.attention_decode,
// exec.kv_write, exec.collective, exec.copy.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_EXEC_OPS
#define ACCEL_EXEC_OPS

include "ExecDialect.td"
include "ExecEnums.td"
include "ExecTypes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// The paged KV cache, as a side-effect resource: exec.kv_write writes it,
// the attention ops read it.
def Exec_KVCacheResource : Resource<"::accel::exec::KVCacheResource">;

// A signed 64-bit integer attribute (sizes, offsets, counts): its getter
// returns int64_t, so a negative value reaches the verifiers as negative.
def Exec_I64Attr : TypedSignlessIntegerAttrBase<I64, "int64_t",
                                                "64-bit signless integer attribute"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}

// An op that may appear only in a schedule body.
class Exec_ScheduleBodyOp<string mnemonic, list<Trait> traits = []>
    : Exec_Op<mnemonic, !listconcat(traits,
                                    [HasParent<"::accel::exec::ScheduleOp">])>;

//===----------------------------------------------------------------------===//
// ArenaOp
//===----------------------------------------------------------------------===//

def Exec_ArenaOp : Exec_Op<"arena", [Symbol]> {
  let summary = "declare a byte-addressed memory region";
  let description = [{
    Declares a region of `size` bytes whose base address is a multiple of
    `align` (a power of two). `exec.slice`, `exec.weight` and
    `exec.step_input` carve typed views out of it; by default every view's
    offset is a multiple of the arena's alignment.

    Kinds:
    * `activations`: per-step temporaries; the Layout pass packs them by
      liveness, so slices may overlap when their lifetimes do not.
    * `weights`: read-only; its bytes are the plan section named by
      `section` (one per tensor-parallel rank: the plan writer appends the
      rank). Only `exec.weight` addresses it.
    * `workspace`: scratch for library routines (split-KV partials).
    * `step_inputs`: the per-step metadata the runtime writes before every
      step (token ids, positions, block tables...). Only `exec.step_input`
      addresses it. Its addresses are fixed, so CUDA graphs can replay it.

    Arenas are module-level symbols, so every schedule of the plan (decode and
    mixed) shares them.

    ```mlir
    exec.arena @weights weights size 67108864 align 256 section "weights"
    exec.arena @act activations size 1048576 align 256
    exec.arena @inputs step_inputs size 65536 align 256
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       Exec_ArenaKindAttr:$kind,
                       Exec_I64Attr:$size,
                       Exec_I64Attr:$alignment,
                       OptionalAttr<StrAttr>:$section);
  let assemblyFormat = [{
    $sym_name $kind `size` $size `align` $alignment
    (`section` $section^)? attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// KVPoolOp
//===----------------------------------------------------------------------===//

def Exec_KVPoolOp : Exec_Op<"kv_pool", [Symbol]> {
  let summary = "declare the paged KV cache";
  let description = [{
    Declares the paged KV cache of `layers` attention layers. The runtime
    chooses the number of blocks at load time (from
    `--gpu-memory-utilization`), so the pool has no static byte size. For
    each layer, K and V are each laid out
    `[num_blocks, block_size, kv_heads, head_dim]` of `dtype`; a token's slot
    is `block * block_size + offset_in_block`. One block of one layer takes
    `2 * block_size * kv_heads * head_dim * sizeof(dtype)` bytes
    (`getBytesPerBlock()`).

    `dtype` is `f32`, `f16`, `bf16`, `f8E4M3FN` or `f8E5M2`; with an FP8 pool,
    `exec.kv_write` quantises and the attention ops dequantise with per-layer
    scales. A model whose layers differ in KV geometry uses one pool per
    geometry.

    ```mlir
    exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E4M3FN
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       Exec_I64Attr:$layers,
                       Exec_I64Attr:$block_size,
                       Exec_I64Attr:$kv_heads,
                       Exec_I64Attr:$head_dim,
                       TypeAttr:$dtype);
  let assemblyFormat = [{
    $sym_name `layers` $layers `block_size` $block_size `kv_heads` $kv_heads
    `head_dim` $head_dim attr-dict `:` $dtype
  }];
  let extraClassDeclaration = [{
    /// Bytes of one block of one layer, K and V together.
    int64_t getBytesPerBlock();
    /// The element type of the cache.
    ::mlir::Type getElementType() { return getDtype(); }
    /// Whether the cache stores FP8 (and needs scales).
    bool isFP8();
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

def Exec_KernelOp : Exec_Op<"kernel", [Symbol]> {
  let summary = "declare a generated kernel";
  let description = [{
    Declares a kernel that `exec.launch` runs: its argument types (views and
    `index` sizes, passed in order), the SM architectures it is built for
    (`sm`), and which GPU images the plan carries for it (`image`: `none`,
    `ptx`, `cubin`, or `ptx|cubin`; lib/Codegen fills images in and the plan
    writer stores them as kernel sections named by the symbol).

    `implements` names the operation the kernel computes and its parameters;
    the CPU backend runs its plain C++ implementation of that operation, and
    GPU results are checked against it. A kernel needs an image or a
    reference implementation, or nothing could run it.

    Verifier: SMs are known architectures, sorted and unique; an image needs
    at least one SM; arguments are views or `index`.

    ```mlir
    exec.kernel @rms_norm_4096(!exec.view<?x4096xbf16>, !exec.view<4096xbf16>,
                               !exec.view<?x4096xbf16>, index)
        sm [80, 90] image ptx|cubin implements "rms_norm" {epsilon = 1.0e-05 : f32}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeArrayAttr:$arg_types,
                       DenseI32ArrayAttr:$sm,
                       Exec_KernelImageAttr:$image,
                       OptionalAttr<StrAttr>:$reference,
                       OptionalAttr<DictionaryAttr>:$config);
  let assemblyFormat = [{
    $sym_name `` custom<ArgTypes>($arg_types) `sm` $sm `image` $image
    (`implements` $reference^ ($config^)?)? attr-dict-with-keyword
  }];
  let extraClassDeclaration = [{
    /// The largest dynamic shared memory (bytes) that every listed SM allows.
    int64_t getMaxSharedMemory();
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ScheduleOp
//===----------------------------------------------------------------------===//

def Exec_ScheduleOp : Exec_Op<"schedule", [
    Symbol, IsolatedFromAbove, NoTerminator, SingleBlock, NoRegionArguments]> {
  let summary = "one runtime step, its ops in execution order";
  let description = [{
    The body lists declarations (sizes, inputs, views) and steps; the runtime
    executes the steps in order, one op per step. `kind` says which batches
    the schedule serves: `mixed` (any ragged batch of prefill chunks and
    decode tokens) or `decode` (one token per sequence: `max_tokens` must
    equal `max_seqs`, and it is the only kind that may use
    `exec.attention_decode`). `max_tokens` and `max_seqs` bound the per-step
    sizes; every byte size of a dynamic view is checked against them, and the
    runtime never runs the schedule on a bigger batch.

    Verifier: `max_seqs <= max_tokens`, both positive; the body holds exec
    ops only (the runtime knows no other); each `exec.step_size`,
    `exec.step_input` and `exec.step_output` kind appears at most once; a
    named weight is bound to one place and type.

    Views may alias (the Layout pass reuses bytes once a value is dead, and
    a view may be re-sliced with another shape), so the order of the steps
    is the schedule's order: a transformation must not reorder steps
    without comparing the byte ranges they touch.

    ```mlir
    exec.schedule @decode decode max_tokens 256 max_seqs 256 {
      %t = exec.step_size tokens
      %x = exec.slice @act[0] sizes(%t) : !exec.view<?x4096xbf16>
      ...
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       Exec_ScheduleKindAttr:$kind,
                       Exec_I64Attr:$max_tokens,
                       Exec_I64Attr:$max_seqs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name $kind `max_tokens` $max_tokens `max_seqs` $max_seqs
    attr-dict-with-keyword $body
  }];
  let extraClassDeclaration = [{
    /// The schedule's upper bound for a per-step size.
    int64_t getBound(StepSizeKind kind);
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// StepSizeOp
//===----------------------------------------------------------------------===//

def Exec_StepSizeOp : Exec_ScheduleBodyOp<"step_size", [Pure]> {
  let summary = "a size that varies per step";
  let description = [{
    The number of query tokens (`tokens`) or sequences (`seqs`) of the
    current step, at most the schedule's `max_tokens` / `max_seqs`. Dynamic
    view dimensions are bound to it, kernels receive it as an argument, and
    launch grids scale with it.

    ```mlir
    %t = exec.step_size tokens
    %s = exec.step_size seqs
    ```
  }];
  let arguments = (ins Exec_StepSizeKindAttr:$kind);
  let results = (outs Index:$result);
  let assemblyFormat = "$kind attr-dict";
}

//===----------------------------------------------------------------------===//
// StepInputOp
//===----------------------------------------------------------------------===//

def Exec_StepInputOp : Exec_ScheduleBodyOp<"step_input", [
    Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "per-step metadata the runtime writes before the step";
  let description = [{
    A view of a `step_inputs` arena that the runtime fills before every step.
    The kind fixes the type, so the runtime knows what to write:

    | kind | type | extent of `?` |
    |---|---|---|
    | `token_ids`, `positions`, `slot_mapping` | `!exec.view<?xi32>` | tokens |
    | `seq_lens`, `logits_indices` | `!exec.view<?xi32>` | seqs |
    | `query_start_loc` | `!exec.view<?xi32>` | seqs + 1 |
    | `block_tables` | `!exec.view<?xNxi32>` (N = max blocks per sequence) | seqs |

    Verifier: the arena is a `step_inputs` arena, the offset is a multiple of
    its alignment, and the view at the schedule's bounds fits in it.

    ```mlir
    %pos = exec.step_input positions @inputs[0] : !exec.view<?xi32>
    %bt = exec.step_input block_tables @inputs[4096] : !exec.view<?x64xi32>
    ```
  }];
  let arguments = (ins Exec_StepInputKindAttr:$kind,
                       FlatSymbolRefAttr:$arena,
                       Exec_I64Attr:$offset);
  let results = (outs Exec_AnyView:$result);
  let assemblyFormat = [{
    $kind $arena `[` $offset `]` attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

def Exec_SliceOp : Exec_ScheduleBodyOp<"slice", [
    Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a typed view of an activations or workspace arena";
  let description = [{
    The view of type `result` that starts `offset` bytes into `arena`. Each
    `?` dimension is bound, in order, to one of `sizes`, which come from
    `exec.step_size`.

    Verifier:
    * the arena is an `activations` or `workspace` arena (weights are
      addressed by `exec.weight`, step inputs by `exec.step_input`);
    * `offset` is a multiple of the alignment: the arena's, or `align` when
      given (a power of two, at least the element size, at most the arena's
      alignment), and so a multiple of the element size;
    * `offset` plus the view's byte size, with every `?` at the schedule's
      bound for its size, is at most the arena's size.

    ```mlir
    %t = exec.step_size tokens
    %x = exec.slice @act[0] sizes(%t) : !exec.view<?x4096xbf16>
    %s = exec.slice @ws[64] align 16 : !exec.view<16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$arena,
                       Exec_I64Attr:$offset,
                       Variadic<Index>:$sizes,
                       OptionalAttr<Exec_I64Attr>:$align);
  let results = (outs Exec_AnyView:$result);
  let assemblyFormat = [{
    $arena `[` $offset `]` (`sizes` `(` $sizes^ `)`)? (`align` $align^)?
    attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// WeightOp
//===----------------------------------------------------------------------===//

def Exec_WeightOp : Exec_ScheduleBodyOp<"weight", [
    Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a named weight tensor in the weights arena";
  let description = [{
    The weight tensor `name` (its name in the plan's tensor table, after the
    compiler's weight transformations), stored `offset` bytes into a
    `weights` arena with the static type `result`. The plan writer copies the
    tensor's bytes there.

    Verifier: the arena is a `weights` arena; the type is static; alignment
    and bounds as for `exec.slice`.

    ```mlir
    %w = exec.weight "model.layers.0.mlp.down_proj.weight" @weights[1048576]
        : !exec.view<4096x14336xbf16>
    ```
  }];
  let arguments = (ins StrAttr:$name,
                       FlatSymbolRefAttr:$arena,
                       Exec_I64Attr:$offset,
                       OptionalAttr<Exec_I64Attr>:$align);
  let results = (outs Exec_AnyView:$result);
  let assemblyFormat = [{
    $name $arena `[` $offset `]` (`align` $align^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// StepOutputOp
//===----------------------------------------------------------------------===//

def Exec_StepOutputOp : Exec_ScheduleBodyOp<"step_output"> {
  let summary = "where the runtime reads the step's result";
  let description = [{
    After the last step, the runtime reads `view` as the step's `logits` (for
    the sampler) or `hidden_states` (embedding models). It is a marker, not a
    step. The view is a rank-2 `f32`, `f16` or `bf16` view (rows, vocab or
    hidden).

    ```mlir
    exec.step_output logits %logits : !exec.view<?x32000xf32>
    ```
  }];
  let arguments = (ins Exec_StepOutputKindAttr:$kind, Exec_AnyView:$view);
  let assemblyFormat = "$kind $view attr-dict `:` type($view)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// LaunchOp
//===----------------------------------------------------------------------===//

def Exec_LaunchOp : Exec_ScheduleBodyOp<"launch", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "launch a generated kernel";
  let description = [{
    Runs `kernel` on `args` (views and `index` sizes, matching the kernel's
    signature exactly) with a grid of thread blocks of `block` threads and
    `smem` bytes of dynamic shared memory.

    Each grid dimension is a constant, a step size, or a step size divided by
    a constant and rounded up (`%t ceildiv 64`), so the runtime computes the
    grid of every step without evaluating IR.

    Verifier: `kernel` is an `exec.kernel`; argument count and types match its
    signature; block dimensions are positive with at most 1024 threads; grid
    constants and divisors are positive; `smem` fits every SM the kernel is
    built for.

    ```mlir
    exec.launch @rms_norm_4096(%x, %w, %y, %t)
        grid(%t, 1, 1) block(256, 1, 1)
        : (!exec.view<?x4096xbf16>, !exec.view<4096xbf16>,
           !exec.view<?x4096xbf16>, index)
    exec.launch @tiled(%a, %t) grid(%t ceildiv 64, 32, 1) block(128, 1, 1)
        smem 49152 : (!exec.view<?x4096xbf16>, index)
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel,
                       Variadic<AnyTypeOf<[Exec_AnyView, Index]>>:$args,
                       Variadic<Index>:$grid_sizes,
                       DenseI64ArrayAttr:$static_grid,
                       DenseI64ArrayAttr:$grid_divisors,
                       DenseI64ArrayAttr:$block,
                       DefaultValuedAttr<Exec_I64Attr, "0">:$smem);
  let assemblyFormat = [{
    $kernel `(` $args `)`
    `grid` `` custom<GridDims>($grid_sizes, $static_grid, $grid_divisors)
    `block` `` custom<BlockDims>($block) (`smem` $smem^)?
    attr-dict (`:` `(` type($args)^ `)`)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// GemmOp
//===----------------------------------------------------------------------===//

def Exec_GemmOp : Exec_ScheduleBodyOp<"gemm", [AttrSizedOperandSegments]> {
  let summary = "matrix multiply through cuBLASLt";
  let description = [{
    `c = activation(op(a) * op(b) + bias + residual)`, where `op(a)` is
    `[M, K]` (`a` is `[K, M]` with `transpose_a`) and `op(b)` is `[K, N]`
    (`b` is `[N, K]` with `transpose_b`, the layout of an ONNX/PyTorch linear
    weight); `c` is `[M, N]`. `bias` is `[N]`, added in the epilogue;
    `residual` is `[M, N]` of `c`'s type, added with beta = 1 (it may be `c`
    itself). `activation` is `none`, `relu` or `gelu_tanh`, the epilogues
    cuBLASLt fuses. The CPU backend implements the same contract.

    Element types (`a`, `b` -> `c`, compute):
    * `f32`, `f16`, `bf16` (a and b the same) -> that type or `f32`;
      compute `f32` (`tf32` for f32 inputs, `f16` for f16 inputs with f16 out);
    * FP8 (`f8E4M3FN`/`f8E5M2`, not both `f8E5M2`) -> `f32`, `f16`, `bf16`
      or `f8E4M3FN`, compute `f32`, with per-tensor `scale_a`, `scale_b`
      (and `scale_c` for an FP8 `c`), each a `!exec.view<f32>`;
    * `i8` x `i8` -> `i32`, compute `i32`, no bias, residual or activation.

    Verifier: all rank 2; K, M and N agree (static extents equal, dynamic
    ones bound to the same step size); element types, compute type, scales,
    bias and residual as above.

    ```mlir
    exec.gemm %h, %w_qkv -> %qkv transpose_b compute f32
        : !exec.view<?x4096xbf16>, !exec.view<6144x4096xbf16>
          -> !exec.view<?x6144xbf16>
    exec.gemm %x8, %w8 -> %y transpose_b scale_a(%sa) scale_b(%sb)
        bias(%b : !exec.view<4096xbf16>) activation gelu_tanh compute f32
        : !exec.view<?x4096xf8E4M3FN>, !exec.view<4096x4096xf8E4M3FN>
          -> !exec.view<?x4096xbf16>
    ```
  }];
  let arguments = (ins Arg<Exec_AnyView, "A", [MemRead]>:$a,
                       Arg<Exec_AnyView, "B", [MemRead]>:$b,
                       Arg<Exec_AnyView, "C (written)", [MemWrite]>:$c,
                       Arg<Optional<Exec_AnyView>, "bias", [MemRead]>:$bias,
                       Arg<Optional<Exec_AnyView>, "residual", [MemRead]>:$residual,
                       Arg<Optional<Exec_ScaleView>, "", [MemRead]>:$a_scale,
                       Arg<Optional<Exec_ScaleView>, "", [MemRead]>:$b_scale,
                       Arg<Optional<Exec_ScaleView>, "", [MemRead]>:$c_scale,
                       UnitAttr:$transpose_a,
                       UnitAttr:$transpose_b,
                       DefaultValuedAttr<Exec_GemmActivationAttr,
                                         "::accel::exec::GemmActivation::none">:$activation,
                       Exec_ComputeTypeAttr:$compute);
  let assemblyFormat = [{
    $a `,` $b `->` $c (`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)?
    (`scale_a` `(` $a_scale^ `)`)? (`scale_b` `(` $b_scale^ `)`)?
    (`scale_c` `(` $c_scale^ `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`residual` `(` $residual^ `:` type($residual) `)`)?
    (`activation` $activation^)? `compute` $compute
    attr-dict `:` type($a) `,` type($b) `->` type($c)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// AttentionPrefillOp
//===----------------------------------------------------------------------===//

def Exec_AttentionPrefillOp : Exec_ScheduleBodyOp<"attention_prefill", [
    AttrSizedOperandSegments, AllTypesMatch<["q", "out"]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead<Exec_KVCacheResource>]>]> {
  let summary = "paged attention over a ragged batch (prefill chunks and decode tokens)";
  let description = [{
    Hand-written paged attention (runtime/kernels) for a ragged batch: the
    query tokens of sequence `i` are rows
    `[query_start_loc[i], query_start_loc[i+1])` of `q`; they attend to the
    `seq_lens[i]` tokens of the sequence in layer `layer` of the KV pool (this
    step's K and V were written there by `exec.kv_write` before), whose
    blocks are listed in row `i` of `block_tables`. `q` and `out` are
    `[tokens, heads, head_dim]`; grouped-query attention maps query head `h`
    to KV head `h / (heads / kv_heads)`. `scale` multiplies the logits;
    `causal` masks later positions; `window` limits attention to the last
    `window` positions; `softcap` applies `softcap * tanh(x / softcap)`.
    With an FP8 pool, `kv_scales` dequantise K and V.

    Verifier: the pool exists and has the layer; `q` is rank 3 of `f32`,
    `f16` or `bf16`; `head_dim` equals the pool's; `heads` is a multiple of
    the pool's `kv_heads`; the pool's dtype is `q`'s, or FP8 with
    `kv_scales`; `scale` is positive.

    ```mlir
    exec.attention_prefill %q, @kv[0] -> %o
        query_start_loc(%qsl) seq_lens(%lens)
        block_tables(%bt : !exec.view<?x64xi32>) scale 0.0883883 causal
        : !exec.view<?x32x128xbf16>
    ```
  }];
  let arguments = (ins Arg<Exec_AnyView, "queries", [MemRead]>:$q,
                       FlatSymbolRefAttr:$pool,
                       Exec_I64Attr:$layer,
                       Arg<Exec_MetadataVector, "", [MemRead]>:$query_start_loc,
                       Arg<Exec_MetadataVector, "", [MemRead]>:$seq_lens,
                       Arg<Exec_BlockTableView, "", [MemRead]>:$block_tables,
                       Arg<Exec_AnyView, "output", [MemWrite]>:$out,
                       Arg<Optional<Exec_ScaleView>, "", [MemRead]>:$k_scale,
                       Arg<Optional<Exec_ScaleView>, "", [MemRead]>:$v_scale,
                       F32Attr:$scale,
                       UnitAttr:$causal,
                       OptionalAttr<Exec_I64Attr>:$window,
                       OptionalAttr<F32Attr>:$softcap);
  let assemblyFormat = [{
    $q `,` $pool `[` $layer `]` `->` $out
    `query_start_loc` `(` $query_start_loc `)` `seq_lens` `(` $seq_lens `)`
    `block_tables` `(` $block_tables `:` type($block_tables) `)`
    (`kv_scales` `(` $k_scale^ `,` $v_scale `)`)?
    `scale` $scale (`causal` $causal^)? (`window` $window^)?
    (`softcap` $softcap^)? attr-dict `:` type($q)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// AttentionDecodeOp
//===----------------------------------------------------------------------===//

def Exec_AttentionDecodeOp : Exec_ScheduleBodyOp<"attention_decode", [
    AttrSizedOperandSegments, AllTypesMatch<["q", "out"]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead<Exec_KVCacheResource>]>]> {
  let summary = "paged split-KV attention, one query token per sequence";
  let description = [{
    Hand-written decode attention (runtime/kernels): row `i` of `q`
    (`[seqs, heads, head_dim]`, one token per sequence) attends to the
    `seq_lens[i]` cached tokens of sequence `i` in layer `layer` of the KV
    pool, through row `i` of `block_tables`. GQA, `scale`, `window`,
    `softcap` and `kv_scales` as in `exec.attention_prefill`.

    With `split_kv N` (N >= 2) each sequence's context is split into N
    chunks reduced in a second pass; the partial results live in `workspace`,
    which must hold `max_seqs * heads * N * (head_dim + 2) * 4` bytes (f32
    partial outputs, maxima and sums). Without it the kernel runs one pass.

    Verifier: as for `exec.attention_prefill`, plus: the schedule is a
    `decode` schedule; the workspace is static and big enough.

    ```mlir
    // In a decode schedule with max_seqs 16:
    // 16 seqs x 32 heads x 4 splits x (128 + 2) x 4 bytes = 1064960.
    exec.attention_decode %q, @kv[0] -> %o seq_lens(%lens)
        block_tables(%bt : !exec.view<?x64xi32>) scale 0.0883883
        split_kv 4 workspace(%ws : !exec.view<1064960xi8>)
        : !exec.view<?x32x128xbf16>
    ```
  }];
  let arguments = (ins Arg<Exec_AnyView, "queries", [MemRead]>:$q,
                       FlatSymbolRefAttr:$pool,
                       Exec_I64Attr:$layer,
                       Arg<Exec_MetadataVector, "", [MemRead]>:$seq_lens,
                       Arg<Exec_BlockTableView, "", [MemRead]>:$block_tables,
                       Arg<Exec_AnyView, "output", [MemWrite]>:$out,
                       Arg<Optional<Exec_ScaleView>, "", [MemRead]>:$k_scale,
                       Arg<Optional<Exec_ScaleView>, "", [MemRead]>:$v_scale,
                       Arg<Optional<Exec_AnyView>, "split-KV partials",
                           [MemRead, MemWrite]>:$workspace,
                       F32Attr:$scale,
                       OptionalAttr<Exec_I64Attr>:$window,
                       OptionalAttr<F32Attr>:$softcap,
                       OptionalAttr<Exec_I64Attr>:$split_kv);
  let assemblyFormat = [{
    $q `,` $pool `[` $layer `]` `->` $out
    `seq_lens` `(` $seq_lens `)`
    `block_tables` `(` $block_tables `:` type($block_tables) `)`
    (`kv_scales` `(` $k_scale^ `,` $v_scale `)`)?
    `scale` $scale (`window` $window^)? (`softcap` $softcap^)?
    (`split_kv` $split_kv^ `workspace` `(` $workspace `:` type($workspace) `)`)?
    attr-dict `:` type($q)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// KVWriteOp
//===----------------------------------------------------------------------===//

def Exec_KVWriteOp : Exec_ScheduleBodyOp<"kv_write", [
    AttrSizedOperandSegments, AllTypesMatch<["k", "v"]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemWrite<Exec_KVCacheResource>]>]> {
  let summary = "write this step's K and V into the paged KV cache";
  let description = [{
    Stores row `t` of `k` and `v` (`[tokens, kv_heads, head_dim]`) at slot
    `slot_mapping[t]` of layer `layer` of the KV pool; a negative slot skips
    the token (padding). When the pool is FP8 and `k`/`v` are not, the values
    are divided by `kv_scales` and rounded to the pool's type.

    Verifier: the pool exists and has the layer; `kv_heads` and `head_dim`
    equal the pool's; `k`'s element type is the pool's, or the pool is FP8
    and `k` is `f32`, `f16` or `bf16`, with `kv_scales` (and only then);
    `slot_mapping` has one entry per row of `k`.

    ```mlir
    exec.kv_write %k, %v -> @kv[3] slots(%slots) kv_scales(%ks, %vs)
        : !exec.view<?x8x128xbf16>
    ```
  }];
  let arguments = (ins Arg<Exec_AnyView, "keys", [MemRead]>:$k,
                       Arg<Exec_AnyView, "values", [MemRead]>:$v,
                       FlatSymbolRefAttr:$pool,
                       Exec_I64Attr:$layer,
                       Arg<Exec_MetadataVector, "", [MemRead]>:$slot_mapping,
                       Arg<Optional<Exec_ScaleView>, "", [MemRead]>:$k_scale,
                       Arg<Optional<Exec_ScaleView>, "", [MemRead]>:$v_scale);
  let assemblyFormat = [{
    $k `,` $v `->` $pool `[` $layer `]` `slots` `(` $slot_mapping `)`
    (`kv_scales` `(` $k_scale^ `,` $v_scale `)`)? attr-dict `:` type($k)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// CollectiveOp
//===----------------------------------------------------------------------===//

def Exec_CollectiveOp : Exec_ScheduleBodyOp<"collective"> {
  let summary = "an NCCL collective over the tensor-parallel group";
  let description = [{
    Runs an NCCL collective over the `group` ranks of the tensor-parallel
    communicator:
    * `all_reduce <reduction>`: `output` = reduction of every rank's `input`;
      same type (in place when `output` is `input`).
    * `all_gather`: `output` is the ranks' `input`s concatenated along
      `axis`: `output.shape[axis] = group * input.shape[axis]`.
    * `reduce_scatter <reduction>`: the reduction of the inputs, split along
      `axis`: `input.shape[axis] = group * output.shape[axis]`.

    NCCL gathers and scatters rank-major. When `axis` is not the outermost
    non-unit dimension, the runtime stages the rank-major buffer in `scratch`
    (of the type of the larger side) and permutes; `scratch` is required then
    and forbidden otherwise.

    Verifier: `group` >= 2; same element type, not `i4`; a reduction exactly
    for `all_reduce` and `reduce_scatter`; shapes as above (dynamic extents
    bound to the same step size); `scratch` as above.

    ```mlir
    exec.collective all_reduce sum %y -> %y group 4
        : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
    exec.collective all_gather %part -> %logits axis 1 group 4
        scratch(%tmp : !exec.view<?x128000xf32>)
        : !exec.view<?x32000xf32> -> !exec.view<?x128000xf32>
    ```
  }];
  let arguments = (ins Exec_CollectiveKindAttr:$kind,
                       OptionalAttr<Exec_ReduceKindAttr>:$reduction,
                       Arg<Exec_AnyView, "", [MemRead]>:$input,
                       Arg<Exec_AnyView, "", [MemWrite]>:$output,
                       Arg<Optional<Exec_AnyView>, "", [MemRead, MemWrite]>:$scratch,
                       DefaultValuedAttr<Exec_I64Attr, "0">:$axis,
                       Exec_I64Attr:$group);
  let assemblyFormat = [{
    custom<CollectiveKind>($kind, $reduction) $input `->` $output (`axis` $axis^)? `group` $group
    (`scratch` `(` $scratch^ `:` type($scratch) `)`)?
    attr-dict `:` type($input) `->` type($output)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// CopyOp
//===----------------------------------------------------------------------===//

def Exec_CopyOp : Exec_ScheduleBodyOp<"copy"> {
  let summary = "copy one view into another";
  let description = [{
    A device-to-device copy (`cuMemcpyAsync`) of `source` into `target`,
    which have the same element type and the same shape (dynamic extents
    bound to the same step size).

    ```mlir
    exec.copy %a -> %b : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
    ```
  }];
  let arguments = (ins Arg<Exec_AnyView, "", [MemRead]>:$source,
                       Arg<Exec_AnyView, "", [MemWrite]>:$target);
  let assemblyFormat = [{
    $source `->` $target attr-dict `:` type($source) `->` type($target)
  }];
  let hasVerifier = 1;
}

#endif // ACCEL_EXEC_OPS
