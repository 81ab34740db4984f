//===- ConversionPasses.td - lowering to the exec dialect -*- tablegen -*-===//
//
// TransformerToExec/: the token-major function (transformer ops and the ONNX
// glue raising left) becomes an exec.schedule of steps over views, one file
// per op family.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_PASSES_CONVERSION
#define ACCEL_PASSES_CONVERSION

include "mlir/Pass/PassBase.td"

def LowerToExec : Pass<"accel-lower-to-exec", "mlir::ModuleOp"> {
  let summary = "lowers the token-major function to an exec.schedule of steps over views";
  let description = [{
    Replaces the module's public token-major function (raised, fused,
    partitioned) by:

    * `exec.kv_pool @kv` (from its `!transformer.kv_cache` argument;
      `stage_layers` from `accel.pp_layers`),
    * `exec.arena @weights` holding every weight a step reads (64-byte
      aligned, in order of first use; `accel.tp_shards` become per-rank
      `shards`),
    * `exec.schedule @main mixed`, whose body has one step per op:
      `exec.embedding`, norms, pointwise ops, rotary, `exec.kv_write` +
      `exec.attention` (or `exec.qkv_rotary_kv_write` when a qkv_rotary's k
      and v feed one attention), `exec.gemm` (W8A8 quantize ops fold into
      the gemm that reads them), `exec.logits`, collectives, `exec.split`,
      and `exec.onnx` for ONNX operators left by raising.

    Every tensor becomes a view: the token ids and positions are
    `exec.step_input`s, constants `exec.weight`s, reshapes (split_heads,
    flatten_tokens, onnx.Reshape, ...) `exec.view`s of their source, and
    every other result a new `exec.alloc` (placed in the activations arena
    later by `accel-exec-assign-buffers`). Shapes come from a symbolic
    analysis in terms of the step's tokens T and sequences S (TokenShapes.h):
    a `?` that is always 1 becomes static, a dimension of k x T is allocated
    as `[k, ?]` and viewed. Shape arithmetic whose values are known (Shape,
    Concat, Gather, ...) lowers to nothing unless a step reads it.

    Before:
    ```mlir
    func.func @main_graph(%ids: tensor<?xi64>, %b: !transformer.batch,
        %kv: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 16, block_size = 16, f32>)
        -> tensor<?x256xf32> {
      %x = transformer.embedding %table[%ids] : (tensor<256x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
      %y = transformer.rms_norm %x, %w {epsilon = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>
      ...
    ```
    After:
    ```mlir
    exec.kv_pool @kv layers 1 block_size 16 kv_heads 2 head_dim 16 : f32
    exec.arena @weights weights size 66304 align 64 section "weights"
    exec.schedule @main mixed {
      %t = exec.step_size tokens
      %ids = exec.step_input token_ids : !exec.view<?xi64>
      %table = exec.weight "embed" @weights[0] {value = ...} : !exec.view<256x64xf32>
      %x = exec.alloc sizes(%t) : !exec.view<?x64xf32>
      exec.embedding %table[%ids] -> %x : ...
      ...
    ```
    An op without a lowering, or a value whose shape cannot be related to
    the step's tokens, is an error located at the ONNX node.
  }];
  let dependentDialects = ["::accel::exec::ExecDialect"];
}

#endif // ACCEL_PASSES_CONVERSION
