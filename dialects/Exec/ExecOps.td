//===- ExecOps.td - exec dialect ops ----------------------*- tablegen -*-===//
//
// Declarations (module level): exec.arena, exec.kv_pool, exec.kernel,
// exec.schedule. Declarations (schedule level, not steps): exec.step_size,
// exec.step_input, exec.alloc, exec.slice, exec.weight, exec.view,
// exec.step_output. Runtime steps (one op, one plan step): ExecStepOps.td.
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
    Declares a region of memory whose base address is a multiple of `align`
    (a power of two). `exec.slice` and `exec.weight` carve typed views out of
    it; every view's offset is a multiple of the arena's alignment.

    Kinds:
    * `activations`: per-step temporaries, packed by liveness by
      `accel-exec-assign-buffers`, so slices overlap when their lifetimes do
      not. It has three regions, laid out one after the other when the
      runtime allocates it: `size` fixed bytes; `per_token` bytes for every
      token of the largest step the runtime runs (its `max tokens`); and
      `per_seq` bytes for every sequence of it (its `max seqs`). A view whose
      dynamic dimension is the token count lives in the token region and
      takes at most `bytes per token x max tokens`; one plan therefore serves
      any batch size, and every view keeps one address for the life of the
      arena (what CUDA graphs replay).
    * `weights`: read-only; its bytes are the plan section named by
      `section` (one per tensor-parallel rank: the plan writer appends the
      rank). Only `exec.weight` addresses it.
    * `workspace`: scratch for library routines.

    ```mlir
    exec.arena @weights weights size 67108864 align 64 section "weights"
    exec.arena @act activations size 512 per_token 24576 per_seq 1024 align 256
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       Exec_ArenaKindAttr:$kind,
                       Exec_I64Attr:$size,
                       DefaultValuedAttr<Exec_I64Attr, "0">:$per_token,
                       DefaultValuedAttr<Exec_I64Attr, "0">:$per_seq,
                       Exec_I64Attr:$alignment,
                       OptionalAttr<StrAttr>:$section);
  let assemblyFormat = [{
    $sym_name $kind `size` $size (`per_token` $per_token^)? (`per_seq` $per_seq^)?
    `align` $alignment (`section` $section^)? attr-dict
  }];
  let extraClassDeclaration = [{
    /// The bytes of `region` per unit of its size (fixed: bytes).
    int64_t getRegionSize(ArenaRegion region);
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
    (`getBytesPerBlock()`). In a tensor-parallel plan `kv_heads` are one
    rank's heads (every rank has a pool of that shape); in a pipeline-parallel
    plan `stage_layers` gives
    the layers of each stage's own cache, in stage order.

    `dtype` is `f32`, `f16`, `bf16`, `f8E4M3FN` or `f8E5M2`; with an FP8 pool,
    `exec.kv_write` quantises and the attention ops dequantise with per-layer
    or per-KV-head scales.

    ```mlir
    exec.kv_pool @kv layers 32 block_size 16 kv_heads 8 head_dim 128 : f8E4M3FN
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       Exec_I64Attr:$layers,
                       Exec_I64Attr:$block_size,
                       Exec_I64Attr:$kv_heads,
                       Exec_I64Attr:$head_dim,
                       TypeAttr:$dtype,
                       OptionalAttr<DenseI64ArrayAttr>:$stage_layers);
  let assemblyFormat = [{
    $sym_name `layers` $layers `block_size` $block_size `kv_heads` $kv_heads
    `head_dim` $head_dim (`stages` $stage_layers^)? attr-dict `:` $dtype
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
    Declares a kernel the compiler generated (lib/Codegen): its argument
    types (views and `index` sizes, passed in order, when `exec.launch` runs
    it), the SM architectures it is built for (`sm`), and which GPU images
    the plan carries for it (`image`: `none`, `ptx`, `cubin`, or
    `ptx|cubin`).

    `implements` names the operation the kernel computes and its parameters
    (its specialisation); the CPU backend runs its plain C++ implementation
    of that operation, and GPU results are checked against it. A step op
    that names a kernel in its `kernel` attribute runs it on a GPU instead of
    the runtime's hand-written kernel. A kernel needs an image or a
    reference implementation, or nothing could run it.

    Verifier: SMs are known architectures, sorted and unique; an image needs
    at least one SM; arguments are views or `index`.

    ```mlir
    exec.kernel @rms_norm_h4096() sm [90] image ptx|cubin implements "rms_norm"
        {hidden = 4096 : i64}
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
    The body lists declarations (sizes, inputs, buffers, weights, views) and
    steps; the runtime executes the steps in order, one op per step. `kind`
    says which batches the schedule serves: `mixed` (any ragged batch of
    prefill chunks and decode tokens) or `decode` (one token per sequence).
    The runtime fixes the largest step (tokens and sequences) when it
    allocates the activations arena, not the plan.

    Verifier: the body holds exec ops only (the runtime knows no other);
    each `exec.step_size`, `exec.step_input` and `exec.step_output` kind
    appears at most once; a named weight is bound to one place and type.

    Views may alias (the buffer assignment reuses bytes once a value is
    dead, and `exec.view` reinterprets a buffer with another shape), so the
    order of the steps is the schedule's order: a transformation must not
    reorder steps without comparing the byte ranges they touch.

    ```mlir
    exec.schedule @main mixed {
      %t = exec.step_size tokens
      %x = exec.slice @act[tokens 0] sizes(%t) : !exec.view<?x4096xbf16>
      ...
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       Exec_ScheduleKindAttr:$kind);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name $kind attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// StepSizeOp
//===----------------------------------------------------------------------===//

def Exec_StepSizeOp : Exec_ScheduleBodyOp<"step_size", [Pure]> {
  let summary = "a size that varies per step";
  let description = [{
    The number of query tokens (`tokens`) or sequences (`seqs`) of the
    current step. Dynamic view dimensions are bound to it, kernels receive
    it as an argument, and launch grids scale with it.

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

def Exec_StepInputOp : Exec_ScheduleBodyOp<"step_input", [Pure]> {
  let summary = "per-step data the runtime binds before the step";
  let description = [{
    A view the runtime fills (or points at its own copy of) before every
    step: `token_ids` (the step's tokens) and `positions` (each token's
    position in its sequence), both `!exec.view<?xi32>` or
    `!exec.view<?xi64>` of the step's token count. The other per-step data
    (slot mapping, sequence lengths, block tables) is read by the steps that
    need it (`exec.kv_write`, `exec.attention`) from the runtime's step
    metadata directly.

    ```mlir
    %ids = exec.step_input token_ids : !exec.view<?xi64>
    %pos = exec.step_input positions : !exec.view<?xi32>
    ```
  }];
  let arguments = (ins Exec_StepInputKindAttr:$kind);
  let results = (outs Exec_AnyView:$result);
  let assemblyFormat = "$kind attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// AllocOp
//===----------------------------------------------------------------------===//

def Exec_AllocOp : Exec_ScheduleBodyOp<"alloc", [
    MemoryEffects<[MemAlloc<DefaultResource>]>]> {
  let summary = "an activation buffer not placed in an arena yet";
  let description = [{
    What the lowering to exec makes for every activation: a view with its own
    bytes, each `?` bound in order to one of `sizes` (`exec.step_size`
    values). `accel-exec-assign-buffers` replaces every alloc by an
    `exec.slice` of the activations arena; the plan writer refuses a
    schedule that still holds one.

    ```mlir
    %t = exec.step_size tokens
    %x = exec.alloc sizes(%t) : !exec.view<?x4096xbf16>
    ```
  }];
  let arguments = (ins Variadic<Index>:$sizes);
  let results = (outs Exec_AnyView:$result);
  let assemblyFormat = [{
    (`sizes` `(` $sizes^ `)`)? attr-dict `:` type($result)
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
    The view of type `result` in region `region` of `arena` (see
    `exec.arena`), `offset` bytes into it (`fixed`), or `offset` bytes per
    token (`tokens`) or per sequence (`seqs`) of the runtime's largest step.
    Each `?` dimension is bound, in order, to one of `sizes`.

    Verifier:
    * the arena is an `activations` or `workspace` arena;
    * a `fixed` view has a static shape; a `tokens` (`seqs`) view has exactly
      one dynamic dimension, bound to the `tokens` (`seqs`) step size;
    * `offset` is a multiple of the alignment (the arena's, or `align` when
      given: a power of two, at least the element size, at most the arena's);
    * the view fits its region: `offset` plus its bytes (per token or per
      sequence) is at most the region's size.

    ```mlir
    %t = exec.step_size tokens
    %x = exec.slice @act[tokens 0] sizes(%t) : !exec.view<?x4096xbf16>
    %c = exec.slice @act[fixed 256] : !exec.view<16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$arena,
                       Exec_ArenaRegionAttr:$region,
                       Exec_I64Attr:$offset,
                       Variadic<Index>:$sizes,
                       OptionalAttr<Exec_I64Attr>:$align);
  let results = (outs Exec_AnyView:$result);
  let assemblyFormat = [{
    $arena `[` $region $offset `]` (`sizes` `(` $sizes^ `)`)? (`align` $align^)?
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
    `weights` arena with the static type `result`. Its bytes are `value`
    (every tensor-parallel rank holds the same), or one tensor per rank in
    `shards` (passes/Partition), each of the view's shape and element type;
    the plan writer copies them into each rank's weights section. IR printed
    for reading (`accelc -emit=exec`) may have them elided.

    Verifier: the arena is a `weights` arena; the type is static; alignment
    and bounds as for `exec.slice`; `value` and every shard have the view's
    shape and element type.

    ```mlir
    %w = exec.weight "model.layers.0.mlp.down_proj.weight" @weights[1048576]
        {value = dense_resource<down> : tensor<4096x14336xbf16>}
        : !exec.view<4096x14336xbf16>
    ```
  }];
  let arguments = (ins StrAttr:$name,
                       FlatSymbolRefAttr:$arena,
                       Exec_I64Attr:$offset,
                       OptionalAttr<Exec_I64Attr>:$align,
                       OptionalAttr<ElementsAttr>:$value,
                       OptionalAttr<ArrayAttr>:$shards);
  let results = (outs Exec_AnyView:$result);
  let assemblyFormat = [{
    $name $arena `[` $offset `]` (`align` $align^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ViewOp
//===----------------------------------------------------------------------===//

def Exec_ViewOp : Exec_ScheduleBodyOp<"view", [Pure]> {
  let summary = "the same bytes seen with another shape";
  let description = [{
    A reshape without a copy: `result` views the bytes of `source` (dense,
    row-major) with another shape of the same element type. Not a step: the
    runtime gives the result the source's address. A dynamic dimension of
    the result has the extent that makes the element counts equal, so at
    most one dimension of each side is dynamic, and both are, or neither.

    ```mlir
    %h = exec.view %x : !exec.view<?x4096xbf16> -> !exec.view<?x32x128xbf16>
    ```
  }];
  let arguments = (ins Exec_AnyView:$source);
  let results = (outs Exec_AnyView:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
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

include "ExecStepOps.td"

#endif // ACCEL_EXEC_OPS
