//===- ExecStepOps.td - exec ops that are runtime steps ---*- tablegen -*-===//
//
// Every op here is one step of the plan (lib/Plan writes it as one
// accel.plan.Step of the StepKind of the same name; docs/plan-format.md has
// the table) and one call of a backend (runtime/cpu, runtime/cuda). Steps
// are destination-passing: they read their input views and write their
// output views, which buffer assignment placed in the activations arena.
//
// Per family: embedding and norms; pointwise (residual_add, activation,
// gated_act, gated_mlp, moe); rotary and the KV cache (rotary, qkv_rotary,
// qkv_rotary_kv_write, kv_write, attention); library calls (gemm, logits);
// data movement (split, copy); collectives (collective, pp_transfer);
// leftovers (onnx: an ONNX operator the raising left; launch: a generated
// kernel with an explicit launch).
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_EXEC_STEP_OPS
#define ACCEL_EXEC_STEP_OPS

// An attribute of the transformer dialect that steps carry as they are
// (the exec dialect depends on it; see ExecDialect.td).
class Exec_TransformerAttr<string cls, string desc>
    : Attr<CPred<"::llvm::isa<::accel::transformer::" # cls # ">($_self)">, desc> {
  let storageType = "::accel::transformer::" # cls;
  let returnType = "::accel::transformer::" # cls;
  let convertFromStorage = "$_self";
}
def Exec_ActivationKindAttr
    : Exec_TransformerAttr<"ActivationKindAttr", "activation kind">;
def Exec_RotaryStyleAttr : Exec_TransformerAttr<"RotaryStyleAttr", "rotary style">;
def Exec_RopeScalingAttr : Exec_TransformerAttr<"RopeScalingAttr", "rope scaling">;
def Exec_MoeRoutingAttr : Exec_TransformerAttr<"MoeRoutingAttr", "moe routing">;
def Exec_QuantGranularityAttr
    : Exec_TransformerAttr<"QuantGranularityAttr", "quantisation granularity">;

// A step: in a schedule body, optionally run by a generated kernel.
class Exec_StepOp<string mnemonic, list<Trait> traits = []>
    : Exec_ScheduleBodyOp<mnemonic, traits>;

// A step that a generated kernel may run (accel-exec-select-kernels sets
// `kernel`); its symbol must be an exec.kernel.
class Exec_KernelStepOp<string mnemonic, list<Trait> traits = []>
    : Exec_StepOp<mnemonic, !listconcat(traits,
          [DeclareOpInterfaceMethods<SymbolUserOpInterface>])>;

// The attributes a rotation carries (transformer.rotary's).
defvar Exec_RotaryArgs = (ins Exec_RotaryStyleAttr:$style,
                              Exec_I64Attr:$rotary_dim,
                              OptionalAttr<F64Attr>:$theta,
                              OptionalAttr<Exec_RopeScalingAttr>:$scaling);

// An FP8 cache's scales (transformer.attention's): per layer, or per KV head
// (the lists hold every tensor-parallel rank's KV heads, rank-major: the pool's
// kv_heads times the module's accel.tp_size entries).
defvar Exec_KvScaleArgs = (ins OptionalAttr<F64Attr>:$k_scale,
                               OptionalAttr<F64Attr>:$v_scale,
                               OptionalAttr<DenseF64ArrayAttr>:$k_head_scales,
                               OptionalAttr<DenseF64ArrayAttr>:$v_head_scales);

//===----------------------------------------------------------------------===//
// EmbeddingOp
//===----------------------------------------------------------------------===//

def Exec_EmbeddingOp : Exec_StepOp<"embedding"> {
  let summary = "gather rows of a table by token id";
  let description = [{
    `out[t] = table[ids[t]] * scale`. In a vocabulary-parallel plan
    (`vocab_shards = N`) the table is this rank's block of rows, rows
    `[rank * R, (rank + 1) * R)` of the vocabulary, and other ids give zero
    rows (an all_reduce follows). `vocab_size` bounds the ids of a padded
    vocabulary.

    ```mlir
    exec.embedding %table[%ids] -> %x : !exec.view<32000x4096xbf16>,
        !exec.view<?xi64> -> !exec.view<?x4096xbf16>
    ```
  }];
  let arguments = (ins Exec_AnyView:$table, Exec_AnyView:$ids, Exec_AnyView:$out,
                       OptionalAttr<F64Attr>:$scale,
                       OptionalAttr<Exec_I64Attr>:$vocab_shards,
                       OptionalAttr<Exec_I64Attr>:$vocab_size);
  let assemblyFormat = [{
    $table `[` $ids `]` `->` $out attr-dict `:` type($table) `,` type($ids) `->` type($out)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

def Exec_RmsNormOp : Exec_KernelStepOp<"rms_norm"> {
  let summary = "RMS normalisation over the last dimension";
  let description = [{
    `out = x / sqrt(mean(x^2) + epsilon) * (weight + weight_offset)`, row by
    row over the last dimension (Gemma's `1 + w` is `weight_offset = 1`).

    ```mlir
    exec.rms_norm %x, %w -> %y {epsilon = 1.0e-05 : f64}
        : !exec.view<?x4096xbf16>, !exec.view<4096xf32> -> !exec.view<?x4096xbf16>
    ```
  }];
  let arguments = (ins Exec_AnyView:$x, Exec_AnyView:$weight, Exec_AnyView:$out,
                       F64Attr:$epsilon, OptionalAttr<F64Attr>:$weight_offset,
                       OptionalAttr<FlatSymbolRefAttr>:$kernel);
  let assemblyFormat = [{
    $x `,` $weight `->` $out attr-dict `:` type($x) `,` type($weight) `->` type($out)
  }];
  let hasVerifier = 1;
}

def Exec_AddRmsNormOp : Exec_KernelStepOp<"add_rms_norm"> {
  let summary = "residual add, then RMS normalisation";
  let description = [{
    `sum = x + residual` (rounded to the activation type), then
    `out = rms_norm(sum)`: the fused residual of a decoder layer; `sum` is
    the next layer's residual.

    ```mlir
    exec.add_rms_norm %x, %r, %w -> %y, %s {epsilon = 1.0e-05 : f64}
        : !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>, !exec.view<4096xf32>
          -> !exec.view<?x4096xbf16>, !exec.view<?x4096xbf16>
    ```
  }];
  let arguments = (ins Exec_AnyView:$x, Exec_AnyView:$residual, Exec_AnyView:$weight,
                       Exec_AnyView:$out, Exec_AnyView:$sum,
                       F64Attr:$epsilon, OptionalAttr<F64Attr>:$weight_offset,
                       OptionalAttr<FlatSymbolRefAttr>:$kernel);
  let assemblyFormat = [{
    $x `,` $residual `,` $weight `->` $out `,` $sum attr-dict `:` type($x) `,`
    type($residual) `,` type($weight) `->` type($out) `,` type($sum)
  }];
  let hasVerifier = 1;
}

def Exec_LayerNormOp : Exec_StepOp<"layer_norm"> {
  let summary = "layer normalisation over the last dimension";
  let description = [{
    `out = (x - mean) / sqrt(var + epsilon) * weight (+ bias)`, row by row.

    ```mlir
    exec.layer_norm %x, %w bias(%b : !exec.view<768xf32>) -> %y {epsilon = 1.0e-05 : f64}
        : !exec.view<?x768xf32>, !exec.view<768xf32> -> !exec.view<?x768xf32>
    ```
  }];
  let arguments = (ins Exec_AnyView:$x, Exec_AnyView:$weight, Optional<Exec_AnyView>:$bias,
                       Exec_AnyView:$out, F64Attr:$epsilon);
  let assemblyFormat = [{
    $x `,` $weight (`bias` `(` $bias^ `:` type($bias) `)`)? `->` $out attr-dict `:` type($x) `,`
    type($weight) `->` type($out)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pointwise
//===----------------------------------------------------------------------===//

def Exec_ResidualAddOp : Exec_KernelStepOp<"residual_add", [
    AllTypesMatch<["residual", "branch", "out"]>]> {
  let summary = "element-wise sum of the residual stream and a branch";
  let description = [{
    ```mlir
    exec.residual_add %r, %b -> %y : !exec.view<?x4096xbf16>
    ```
  }];
  let arguments = (ins Exec_AnyView:$residual, Exec_AnyView:$branch, Exec_AnyView:$out,
                       OptionalAttr<FlatSymbolRefAttr>:$kernel);
  let assemblyFormat = "$residual `,` $branch `->` $out attr-dict `:` type($out)";
  let hasVerifier = 1;
}

def Exec_ActivationOp : Exec_KernelStepOp<"activation", [
    AllTypesMatch<["input", "out"]>]> {
  let summary = "an element-wise activation";
  let description = [{
    `out = kind(input)` (the CPU's formulas, runtime/cpu/transformer).

    ```mlir
    exec.activation %x -> %y {kind = #transformer<activation_kind gelu_tanh>}
        : !exec.view<?x3072xf32>
    ```
  }];
  let arguments = (ins Exec_AnyView:$input, Exec_AnyView:$out,
                       Exec_ActivationKindAttr:$kind,
                       OptionalAttr<FlatSymbolRefAttr>:$kernel);
  let assemblyFormat = "$input `->` $out attr-dict `:` type($out)";
  let hasVerifier = 1;
}

def Exec_GatedActOp : Exec_KernelStepOp<"gated_act"> {
  let summary = "act(gate) * up of a fused [gate; up] projection";
  let description = [{
    `input` is `[tokens, 2I]`, gate columns first; `out[t, i] =
    kind(input[t, i]) * input[t, I + i]` is `[tokens, I]`.

    ```mlir
    exec.gated_act %gu -> %h {kind = #transformer<activation_kind silu>}
        : !exec.view<?x28672xbf16> -> !exec.view<?x14336xbf16>
    ```
  }];
  let arguments = (ins Exec_AnyView:$input, Exec_AnyView:$out,
                       Exec_ActivationKindAttr:$kind,
                       OptionalAttr<FlatSymbolRefAttr>:$kernel);
  let assemblyFormat = "$input `->` $out attr-dict `:` type($input) `->` type($out)";
  let hasVerifier = 1;
}

def Exec_GatedMlpOp : Exec_KernelStepOp<"gated_mlp", [AttrSizedOperandSegments]> {
  let summary = "down(act(x gate^T) * (x up^T)) in one step";
  let description = [{
    A gated MLP with float weights: `gate_up` (`[2I, H]`, gate rows first)
    or separate `gate` and `up` (`[I, H]`), and `down` (`[H, I]`). A GPU runs
    the two GEMMs through its GEMM library and `kernel`, when set, for the
    activation.

    ```mlir
    exec.gated_mlp %x gate_up(%gu : !exec.view<28672x4096xbf16>)
        down(%d : !exec.view<4096x14336xbf16>) -> %y {kind = #transformer<activation_kind silu>}
        : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
    ```
  }];
  let arguments = (ins Exec_AnyView:$x, Optional<Exec_AnyView>:$gate_up,
                       Optional<Exec_AnyView>:$gate, Optional<Exec_AnyView>:$up,
                       Exec_AnyView:$down, Exec_AnyView:$out,
                       Exec_ActivationKindAttr:$kind,
                       OptionalAttr<FlatSymbolRefAttr>:$kernel);
  let assemblyFormat = [{
    $x (`gate_up` `(` $gate_up^ `:` type($gate_up) `)`)?
    (`gate` `(` $gate^ `:` type($gate) `)`)? (`up` `(` $up^ `:` type($up) `)`)?
    `down` `(` $down `:` type($down) `)` `->` $out attr-dict `:` type($x) `->` type($out)
  }];
  let hasVerifier = 1;
}

def Exec_MoeOp : Exec_StepOp<"moe", [AttrSizedOperandSegments]> {
  let summary = "transformer.moe in one step: routing, experts, weighted sum";
  let description = [{
    The sparse mixture of experts of `transformer.moe` (its description has
    the math): the router `[E, H]` (and bias `[E]`), the experts' `gate_up`
    `[E, 2I, H]` or `gate` and `up` `[E, I, H]`, `down` `[E, H, I]`, and an
    optional shared expert (`shared_gate_up` `[2S, H]`, `shared_down`
    `[H, S]`, `shared_expert_gate` `[1, H]`); with i8 or f8E4M3FN experts,
    their f32 scales per expert and row (`gate_up_scale` `[E, 2I]`,
    `gate_scale` / `up_scale` `[E, I]`, `down_scale` `[E, H]`). The CPU runs it
    (runtime/cpu/transformer/Moe), the GPU with the runtime's hand-written
    kernels (runtime/cuda/ops/Moe.cpp; no generated kernel), float or
    quantised experts alike.

    ```mlir
    exec.moe %x router(%r : !exec.view<8x64xf32>) gate_up(%gu : !exec.view<8x256x64xf32>)
        down(%d : !exec.view<8x64x128xf32>) -> %y {kind = #transformer<activation_kind silu>,
        num_experts = 8 : i64, routing = #transformer<moe_routing renormalize>, top_k = 2 : i64}
        : !exec.view<?x64xf32> -> !exec.view<?x64xf32>
    ```
  }];
  let arguments = (ins Exec_AnyView:$x, Exec_AnyView:$router,
                       Optional<Exec_AnyView>:$router_bias,
                       Optional<Exec_AnyView>:$gate_up, Optional<Exec_AnyView>:$gate,
                       Optional<Exec_AnyView>:$up, Exec_AnyView:$down,
                       Optional<Exec_AnyView>:$shared_gate_up,
                       Optional<Exec_AnyView>:$shared_down,
                       Optional<Exec_AnyView>:$shared_expert_gate,
                       Optional<Exec_AnyView>:$gate_up_scale,
                       Optional<Exec_AnyView>:$gate_scale, Optional<Exec_AnyView>:$up_scale,
                       Optional<Exec_AnyView>:$down_scale,
                       Exec_AnyView:$out,
                       Exec_ActivationKindAttr:$kind, Exec_MoeRoutingAttr:$routing,
                       Exec_I64Attr:$num_experts, Exec_I64Attr:$top_k);
  let assemblyFormat = [{
    $x `router` `(` $router `:` type($router) `)`
    (`router_bias` `(` $router_bias^ `:` type($router_bias) `)`)?
    (`gate_up` `(` $gate_up^ `:` type($gate_up) `)`)?
    (`gate` `(` $gate^ `:` type($gate) `)`)? (`up` `(` $up^ `:` type($up) `)`)?
    `down` `(` $down `:` type($down) `)`
    (`shared_gate_up` `(` $shared_gate_up^ `:` type($shared_gate_up) `)`)?
    (`shared_down` `(` $shared_down^ `:` type($shared_down) `)`)?
    (`shared_expert_gate` `(` $shared_expert_gate^ `:` type($shared_expert_gate) `)`)?
    (`gate_up_scale` `(` $gate_up_scale^ `:` type($gate_up_scale) `)`)?
    (`gate_scale` `(` $gate_scale^ `:` type($gate_scale) `)`)?
    (`up_scale` `(` $up_scale^ `:` type($up_scale) `)`)?
    (`down_scale` `(` $down_scale^ `:` type($down_scale) `)`)?
    `->` $out attr-dict `:` type($x) `->` type($out)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Rotary and the KV cache
//===----------------------------------------------------------------------===//

def Exec_RotaryOp : Exec_KernelStepOp<"rotary", [AttrSizedOperandSegments]> {
  let summary = "rotary position embedding of [tokens, heads, head_dim]";
  let description = [{
    Rotates the first `rotary_dim` channels of every head of token `t` by
    its position `positions[t]`: frequencies from `theta` (and `scaling`),
    or the rows of explicit `cos` / `sin` tables (`[positions, rotary_dim /
    2]`); `style` pairs channels as `half_split` or `interleaved`.

    ```mlir
    exec.rotary %q, %pos -> %qr {rotary_dim = 128 : i64, style = #transformer<rotary_style half_split>,
        theta = 5.0e+05 : f64} : !exec.view<?x32x128xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
    ```
  }];
  let arguments = !con((ins Exec_AnyView:$input, Exec_AnyView:$positions,
                            Optional<Exec_AnyView>:$cos, Optional<Exec_AnyView>:$sin,
                            Exec_AnyView:$out),
                       Exec_RotaryArgs,
                       (ins OptionalAttr<FlatSymbolRefAttr>:$kernel));
  let assemblyFormat = [{
    $input `,` $positions (`cos_sin` `(` $cos^ `,` $sin `:` type($cos) `,` type($sin) `)`)?
    `->` $out attr-dict `:` type($input) `,` type($positions) `->` type($out)
  }];
  let hasVerifier = 1;
}

def Exec_QkvRotaryOp : Exec_StepOp<"qkv_rotary", [AttrSizedOperandSegments]> {
  let summary = "split a fused QKV projection into heads and rotate q and k";
  let description = [{
    `qkv` is `[tokens, (heads + 2 * kv_heads) * head_dim]`, q columns first,
    then k, then v; `q` is `[tokens, heads, head_dim]`, `k` and `v`
    `[tokens, kv_heads, head_dim]`, q and k rotated as `exec.rotary` does.

    ```mlir
    exec.qkv_rotary %qkv, %pos -> %q, %k, %v {head_dim = 128 : i64, num_heads = 32 : i64,
        num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
        style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
        : !exec.view<?x6144xbf16>, !exec.view<?xi64>
          -> !exec.view<?x32x128xbf16>, !exec.view<?x8x128xbf16>, !exec.view<?x8x128xbf16>
    ```
  }];
  let arguments = !con((ins Exec_AnyView:$qkv, Exec_AnyView:$positions,
                            Optional<Exec_AnyView>:$cos, Optional<Exec_AnyView>:$sin,
                            Exec_AnyView:$q, Exec_AnyView:$k, Exec_AnyView:$v,
                            Exec_I64Attr:$num_heads, Exec_I64Attr:$num_kv_heads,
                            Exec_I64Attr:$head_dim),
                       Exec_RotaryArgs);
  let assemblyFormat = [{
    $qkv `,` $positions (`cos_sin` `(` $cos^ `,` $sin `:` type($cos) `,` type($sin) `)`)?
    `->` $q `,` $k `,` $v attr-dict `:` type($qkv) `,` type($positions) `->` type($q) `,`
    type($k) `,` type($v)
  }];
  let hasVerifier = 1;
}

def Exec_QkvRotaryKvWriteOp : Exec_StepOp<"qkv_rotary_kv_write", [
    AttrSizedOperandSegments, DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemWrite<Exec_KVCacheResource>]>]> {
  let summary = "qkv_rotary whose k and v go straight into the KV cache";
  let description = [{
    `exec.qkv_rotary` fused with the `exec.kv_write` of the attention that
    reads its k and v: one launch writes the rotated k and v of every token
    at its slot of layer `layer` of the pool and gives q to `exec.attention`.

    ```mlir
    exec.qkv_rotary_kv_write %qkv, %pos -> %q, @kv[0] {head_dim = 128 : i64, num_heads = 32 : i64,
        num_kv_heads = 8 : i64, rotary_dim = 128 : i64,
        style = #transformer<rotary_style half_split>, theta = 5.0e+05 : f64}
        : !exec.view<?x6144xbf16>, !exec.view<?xi64> -> !exec.view<?x32x128xbf16>
    ```
  }];
  let arguments = !con((ins Exec_AnyView:$qkv, Exec_AnyView:$positions,
                            Optional<Exec_AnyView>:$cos, Optional<Exec_AnyView>:$sin,
                            Exec_AnyView:$q, FlatSymbolRefAttr:$pool, Exec_I64Attr:$layer,
                            Exec_I64Attr:$num_heads, Exec_I64Attr:$num_kv_heads,
                            Exec_I64Attr:$head_dim),
                       Exec_RotaryArgs, Exec_KvScaleArgs);
  let assemblyFormat = [{
    $qkv `,` $positions (`cos_sin` `(` $cos^ `,` $sin `:` type($cos) `,` type($sin) `)`)?
    `->` $q `,` $pool `[` $layer `]` attr-dict `:` type($qkv) `,` type($positions) `->` type($q)
  }];
  let hasVerifier = 1;
}

def Exec_KVWriteOp : Exec_StepOp<"kv_write", [
    AllTypesMatch<["k", "v"]>, DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemWrite<Exec_KVCacheResource>]>]> {
  let summary = "write this step's K and V into the paged KV cache";
  let description = [{
    Stores row `t` of `k` and `v` (`[tokens, kv_heads, head_dim]`) at the
    slot the step metadata gives token `t` in layer `layer` of the pool; a
    negative slot skips the token. Into an FP8 pool the values are divided
    by the scales (per layer, or per KV head: every rank's KV heads,
    rank-major, of which each rank reads its own) and rounded.

    ```mlir
    exec.kv_write %k, %v -> @kv[3] : !exec.view<?x8x128xbf16>
    ```
  }];
  let arguments = !con((ins Exec_AnyView:$k, Exec_AnyView:$v,
                            FlatSymbolRefAttr:$pool, Exec_I64Attr:$layer),
                       Exec_KvScaleArgs);
  let assemblyFormat = "$k `,` $v `->` $pool `[` $layer `]` attr-dict `:` type($k)";
  let hasVerifier = 1;
}

def Exec_AttentionOp : Exec_StepOp<"attention", [
    AllTypesMatch<["q", "out"]>, DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead<Exec_KVCacheResource>]>]> {
  let summary = "paged attention of a ragged batch over the KV cache";
  let description = [{
    Hand-written attention (runtime/cuda/kernels; runtime/cpu): the query
    tokens of each sequence of the step (`q`, `[tokens, heads, head_dim]`)
    attend to that sequence's keys and values in layer `layer` of the pool
    (this step's were written before), through its block table.
    Grouped-query attention maps query head `h` to KV head
    `h / (heads / kv_heads)`. `scale` multiplies the logits; `causal` masks
    later positions; `sliding_window` keeps the last positions; `softcap`
    applies `softcap * tanh(x / softcap)`; an FP8 pool is dequantised with
    the scales. The runtime picks the kernel per step: a decode kernel for
    one-token rows, a prefill kernel for chunks.

    ```mlir
    exec.attention %q, @kv[0] -> %o {causal, num_kv_heads = 8 : i64,
        scale = 0.0883883 : f64} : !exec.view<?x32x128xbf16>
    ```
  }];
  let arguments = !con((ins Exec_AnyView:$q, FlatSymbolRefAttr:$pool, Exec_I64Attr:$layer,
                            Exec_AnyView:$out, Exec_I64Attr:$num_kv_heads, F64Attr:$scale,
                            UnitAttr:$causal, OptionalAttr<Exec_I64Attr>:$sliding_window,
                            OptionalAttr<F64Attr>:$softcap),
                       Exec_KvScaleArgs);
  let assemblyFormat = "$q `,` $pool `[` $layer `]` `->` $out attr-dict `:` type($q)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Library calls
//===----------------------------------------------------------------------===//

def Exec_GemmOp : Exec_StepOp<"gemm", [AttrSizedOperandSegments]> {
  let summary = "a dense layer: act(x weight^T + bias), float or quantised";
  let description = [{
    `transformer.linear` as a library call: cuBLASLt (or the runtime's GEMV
    for a few rows; the runtime chooses by the step's row count), the CPU's
    BLAS. `x` is `[rows, in]`, `weight` torch's `[out, in]`, `out`
    `[rows, out]`.

    * Float weights (of x's type, or f32/bf16/f16 read in the compute type).
    * Weight-only quantised (i8, i4, f8E4M3FN, f8E5M2) with `weight_scale`
      (`granularity` per_tensor, per_channel, or per_group with
      `group_size`) and an optional integer `zero_point`.
    * W8A8: `quantize_to` (i8 or f8E4M3FN) quantises the f32 x in the step,
      with the static `input_scale`, or with a scale per token when
      `dynamic_input` is set.
    * `activation`: an epilogue applied after the bias.

    ```mlir
    exec.gemm %x, %w bias(%b) -> %y {activation = #transformer<activation_kind gelu_tanh>}
        : !exec.view<?x768xf32>, !exec.view<3072x768xf32>, !exec.view<3072xf32>
          -> !exec.view<?x3072xf32>
    ```
  }];
  let arguments = (ins Exec_AnyView:$x, Exec_AnyView:$weight, Optional<Exec_AnyView>:$bias,
                       Optional<Exec_AnyView>:$weight_scale,
                       Optional<Exec_AnyView>:$zero_point,
                       Optional<Exec_AnyView>:$input_scale,
                       Exec_AnyView:$out,
                       OptionalAttr<Exec_QuantGranularityAttr>:$granularity,
                       OptionalAttr<Exec_I64Attr>:$group_size,
                       OptionalAttr<Exec_ActivationKindAttr>:$activation,
                       OptionalAttr<TypeAttr>:$quantize_to,
                       UnitAttr:$dynamic_input);
  let assemblyFormat = [{
    $x `,` $weight (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`weight_scale` `(` $weight_scale^ `:` type($weight_scale) `)`)?
    (`zero_point` `(` $zero_point^ `:` type($zero_point) `)`)?
    (`input_scale` `(` $input_scale^ `:` type($input_scale) `)`)?
    `->` $out attr-dict `:` type($x) `,` type($weight) `->` type($out)
  }];
  let hasVerifier = 1;
}

def Exec_LogitsOp : Exec_StepOp<"logits"> {
  let summary = "the LM head: logits of the rows the step samples";
  let description = [{
    `out = softcap(hidden lm_head^T + bias)`. With `select_last`, only the
    last row of every sequence of the step (or the rows the runtime asks
    for, when it scores every position) goes through the GEMM: `out` is
    `[seqs, vocab]`; else `[tokens, vocab]`.

    ```mlir
    exec.logits %h, %lm -> %l {select_last} : !exec.view<?x4096xbf16>,
        !exec.view<128256x4096xbf16> -> !exec.view<?x128256xf32>
    ```
  }];
  let arguments = (ins Exec_AnyView:$hidden, Exec_AnyView:$lm_head, Optional<Exec_AnyView>:$bias,
                       Exec_AnyView:$out, OptionalAttr<F64Attr>:$softcap,
                       UnitAttr:$select_last);
  let assemblyFormat = [{
    $hidden `,` $lm_head (`bias` `(` $bias^ `:` type($bias) `)`)? `->` $out attr-dict
    `:` type($hidden) `,` type($lm_head) `->` type($out)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Exec_SplitOp : Exec_StepOp<"split"> {
  let summary = "split the last dimension into consecutive parts";
  let description = [{
    Copies columns `[c_i, c_i + n_i)` of `input` (`[rows, sum n_i]`) into
    output `i` (`[rows, n_i]`).

    ```mlir
    exec.split %qkv -> %q, %k, %v : !exec.view<?x6144xbf16>
        -> !exec.view<?x4096xbf16>, !exec.view<?x1024xbf16>, !exec.view<?x1024xbf16>
    ```
  }];
  let arguments = (ins Exec_AnyView:$input, Variadic<Exec_AnyView>:$outputs);
  let assemblyFormat = [{
    $input `->` $outputs attr-dict `:` type($input) `->` type($outputs)
  }];
  let hasVerifier = 1;
}

def Exec_CopyOp : Exec_StepOp<"copy"> {
  let summary = "copy one view into another";
  let description = [{
    A copy (`cuMemcpyAsync` on a GPU) of `source` into `target`, which have
    the same element type and shape.

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

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

def Exec_CollectiveOp : Exec_StepOp<"collective"> {
  let summary = "a collective over the tensor-parallel group";
  let description = [{
    Runs a collective over the `group` ranks of the tensor-parallel
    communicator (NCCL between GPUs; small GPU all_reduces by the one-shot
    peer-access kernel; threads or sockets on the CPU):
    * `all_reduce <reduction>`: `output` = reduction of every rank's `input`;
      same type (in place when `output` is `input`).
    * `all_gather`: `output` is the ranks' `input`s concatenated along
      `axis`: `output.shape[axis] = group * input.shape[axis]` (the runtime
      stages a gather along an inner axis itself).
    * `reduce_scatter <reduction>`: the reduction of the inputs, split along
      `axis`: `input.shape[axis] = group * output.shape[axis]`.

    ```mlir
    exec.collective all_reduce sum %y -> %y group 4
        : !exec.view<?x4096xbf16> -> !exec.view<?x4096xbf16>
    exec.collective all_gather %part -> %logits axis 1 group 4
        : !exec.view<?x32000xf32> -> !exec.view<?x128000xf32>
    ```
  }];
  let arguments = (ins Exec_CollectiveKindAttr:$kind,
                       OptionalAttr<Exec_ReduceKindAttr>:$reduction,
                       Arg<Exec_AnyView, "", [MemRead]>:$input,
                       Arg<Exec_AnyView, "", [MemWrite]>:$output,
                       DefaultValuedAttr<Exec_I64Attr, "0">:$axis,
                       Exec_I64Attr:$group);
  let assemblyFormat = [{
    custom<CollectiveKind>($kind, $reduction) $input `->` $output (`axis` $axis^)? `group` $group
    attr-dict `:` type($input) `->` type($output)
  }];
  let hasVerifier = 1;
}

def Exec_PpTransferOp : Exec_StepOp<"pp_transfer", [AllTypesMatch<["input", "output"]>]> {
  let summary = "hand the residual stream to the next pipeline stage";
  let description = [{
    Stage `from_stage` sends `input`; stage `to_stage` receives it into
    `output` (same type). The step belongs to both stages (`accel.pp_stage`
    is its receiving stage).

    ```mlir
    exec.pp_transfer %h -> %h1 from 0 to 1 : !exec.view<?x4096xbf16>
    ```
  }];
  let arguments = (ins Exec_AnyView:$input, Exec_AnyView:$output,
                       Exec_I64Attr:$from_stage, Exec_I64Attr:$to_stage);
  let assemblyFormat = [{
    $input `->` $output `from` $from_stage `to` $to_stage attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Leftovers: ONNX operators and generated kernels
//===----------------------------------------------------------------------===//

def Exec_OnnxOp : Exec_StepOp<"onnx", [AttrSizedOperandSegments]> {
  let summary = "an ONNX operator that raising left in place";
  let description = [{
    Runs ONNX operator `op` (of `domain`, "" for the default one) on
    `inputs` into `outputs` with the ONNX attributes `attrs`, as the ONNX
    specification defines it (runtime/cpu/onnx). `input_present` and
    `output_present` say which ONNX positions are present (absent optional
    ones are not operands), when any is absent. A GPU plan does not run
    these: accel-exec-select-kernels refuses the operator in one sentence
    naming it and its node, unless `allow-onnx` (accelc -allow-host-steps)
    keeps it as a host step. (No generated kernel replaces one yet.)

    ```mlir
    exec.onnx "Transpose"(%x) -> (%y) {attrs = {perm = array<i64: 1, 0>}}
        : (!exec.view<4x8xf32>) -> (!exec.view<8x4xf32>)
    ```
  }];
  let arguments = (ins StrAttr:$op, OptionalAttr<StrAttr>:$domain,
                       Variadic<Exec_AnyView>:$inputs, Variadic<Exec_AnyView>:$outputs,
                       OptionalAttr<DictionaryAttr>:$attrs,
                       OptionalAttr<DenseBoolArrayAttr>:$input_present,
                       OptionalAttr<DenseBoolArrayAttr>:$output_present);
  let assemblyFormat = [{
    $op `(` $inputs `)` `->` `(` $outputs `)` attr-dict `:` custom<TypeList>(type($inputs))
    `->` custom<TypeList>(type($outputs))
  }];
  let hasVerifier = 1;
}

def Exec_LaunchOp : Exec_StepOp<"launch", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "launch a generated kernel";
  let description = [{
    Runs `kernel` on `args` (views and `index` sizes, matching the kernel's
    signature exactly) with a grid of thread blocks of `block` threads and
    `smem` bytes of dynamic shared memory.

    Reserved: no pass produces it yet and the plan writer refuses it (a
    generated kernel runs today as the `kernel` of the step it implements);
    it is the form a kernel generated for a leftover operator will take.

    Each grid dimension is a constant, a step size, or a step size divided by
    a constant and rounded up (`%t ceildiv 64`), so the runtime computes the
    grid of every step without evaluating IR.

    Verifier: `kernel` is an `exec.kernel`; argument count and types match its
    signature; block dimensions are positive with at most 1024 threads; grid
    constants and divisors are positive; `smem` fits every SM the kernel is
    built for.

    ```mlir
    exec.launch @transpose_4x8(%x, %y, %t) grid(%t ceildiv 256, 1, 1) block(256, 1, 1)
        : (!exec.view<?x4x8xf32>, !exec.view<?x8x4xf32>, index)
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

#endif // ACCEL_EXEC_STEP_OPS
