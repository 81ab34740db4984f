//===- PartitionPasses.td - tensor-parallel partitioning --*- tablegen -*-===//
//
// Partition runs on the fused, token-major transformer dialect (after
// passes/Fusion) and splits the model over `tp-size` tensor-parallel ranks
// the way Megatron-LM does. docs/passes/partition.md has the policy table.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_PASSES_PARTITION
#define ACCEL_PASSES_PARTITION

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// accel-partition
//===----------------------------------------------------------------------===//

def Partition : Pass<"accel-partition", "mlir::func::FuncOp"> {
  let summary = "splits a token-major model over tensor-parallel ranks (Megatron-style)";
  let description = [{
    Rewrites the function into one body that every rank runs, with the
    types of one rank's shard, and weights that differ per rank held as
    `onnx.Constant`s whose `value` is rank 0's shard and whose
    `accel.tp_shards` lists every rank's (the plan writer puts shard r into
    the weights section of rank r). The function gets `accel.tp_size`.

    - **Attention**: q/k/v projections column-parallel, H/N query heads per
      rank; KV heads split KV/N per rank, or, when fewer than the ranks,
      replicated (each rank keeps the KV head its query heads read). A fused
      QKV weight is cut per rank as `[Q_r; K_r; V_r]`. The KV cache argument
      gets the per-rank KV head count. o_proj row-parallel, then
      `transformer.all_reduce`; its bias stays on rank 0 (zeros elsewhere).
    - **MLP**: gate/up (or c_fc) column-parallel (`[gate_r; up_r]` for a
      fused gate_up), down (c_proj) row-parallel, then all_reduce.
    - **Token embedding**: vocabulary-parallel (rank r's rows
      `[r*P/N, (r+1)*P/N)`, `vocab_shards = N`: ids of other ranks give
      zeros), then all_reduce.
    - **lm head**: vocabulary-parallel, then `transformer.all_gather` of the
      logits (axis = vocabulary). Tied embeddings: the lookup and the head
      read one sharded table.
    - **Vocabulary padding**: P is the vocabulary V rounded up to a
      multiple of N. When N does not divide V, the embedding table and the
      lm head (and its bias) get P - V zero rows before they are split, the
      lookup carries `vocab_size = V` (ids >= V stay refused), and a
      `transformer.split` after the all_gather keeps the first V logits.
    - Everything else (position tables, norms, residual adds) is replicated.
    - The ONNX reshape/split/slice glue around attention is first rewritten
      into `transformer.split` / `split_heads` / `merge_heads` (exact).

    Heads, KV heads and intermediate sizes must divide by (or, for KV
    heads fewer than ranks, divide) `tp-size`; otherwise the
    pass fails with an error naming the dimension and the layer. With
    `tp-size=1` it does nothing.

    Before (`tp-size=2`, 4 heads, 2 KV heads, head_dim 16):

    ```mlir
    %qkv = transformer.linear %x, %wqkv : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
    %q, %k, %v = transformer.split %qkv : tensor<?x128xf32> -> tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>
    %q3 = transformer.split_heads %q : tensor<?x64xf32> -> tensor<?x4x16xf32>
    ...
    %o = transformer.attention %q3, %k3, %v3, %cache[0], %batch {num_heads = 4, num_kv_heads = 2, ...}
    %m = transformer.merge_heads %o : tensor<?x4x16xf32> -> tensor<?x64xf32>
    %y = transformer.linear %m, %wo : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
    ```

    After:

    ```mlir
    %wqkv = onnx.Constant {accel.tp_shards = [dense_resource<w.tp0> : tensor<64x64xf32>,
                                               dense_resource<w.tp1> : tensor<64x64xf32>],
                           value = dense_resource<w.tp0> : tensor<64x64xf32>} : () -> tensor<64x64xf32>
    %qkv = transformer.linear %x, %wqkv : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
    %q, %k, %v = transformer.split %qkv : tensor<?x64xf32> -> tensor<?x32xf32>, tensor<?x16xf32>, tensor<?x16xf32>
    %q3 = transformer.split_heads %q : tensor<?x32xf32> -> tensor<?x2x16xf32>
    ...
    %o = transformer.attention %q3, %k3, %v3, %cache[0], %batch {num_heads = 2, num_kv_heads = 1, ...}
    %m = transformer.merge_heads %o : tensor<?x2x16xf32> -> tensor<?x32xf32>
    %p = transformer.linear %m, %wo_shard : (tensor<?x32xf32>, tensor<64x32xf32>) -> tensor<?x64xf32>
    %y = transformer.all_reduce %p kind = sum {group_size = 2} : tensor<?x64xf32>
    ```
  }];
  let options = [
    Option<"tpSize", "tp-size", "int64_t", /*default=*/"1",
           "the number of tensor-parallel ranks">
  ];
  let dependentDialects = ["accel::transformer::TransformerDialect",
                           "accel::onnx::OnnxDialect"];
}

//===----------------------------------------------------------------------===//
// accel-pipeline-stages
//===----------------------------------------------------------------------===//

def PipelineStages : Pass<"accel-pipeline-stages", "mlir::func::FuncOp"> {
  let summary = "splits a token-major model into pipeline stages by decoder layers";
  let description = [{
    Cuts the L decoder layers into `pp-size` = M contiguous ranges balanced
    by layer count (the first L mod M stages get one layer more); the token
    embedding goes with stage 0, the final norm and the lm head with stage
    M-1. A stage begins at its first layer's input norm (the rms_norm /
    add_rms_norm / layer_norm whose result reaches that layer's attention
    query). Every op but the weights gets `accel.pp_stage`; every value a
    stage reads from an earlier stage crosses through a
    `transformer.pp_transfer` at the start of the reading stage (an op that
    reads only the step's batch, `transformer.positions`, is recomputed
    there instead).
    Attention `layer` indices become stage-local and the function gets
    `accel.pp_size = M` and `accel.pp_layers` (each stage's layer count).

    M larger than the number of layers, or smaller than 1, is an error. With
    `pp-size=1` it does nothing. Runs after accel-partition (`-tp`).

    Before (`pp-size=2`, 2 layers, add_rms_norm fused at the boundary):

    ```mlir
    %e = transformer.embedding %table[%ids] : ...
    ...
    %o0 = transformer.attention %q0, %k0, %v0, %cache[0], %batch {...}
    ...
    %m0 = transformer.gated_mlp %n0 gate_up(%wgu0) down(%wd0) kind = silu : ...
    %h1, %r1 = transformer.add_rms_norm %m0, %r0, %w1 {epsilon = 1.0e-6} : ...
    ...
    %o1 = transformer.attention %q1, %k1, %v1, %cache[1], %batch {...}
    ```

    After:

    ```mlir
    %e = transformer.embedding %table[%ids] {accel.pp_stage = 0} : ...
    ...
    %o0 = transformer.attention %q0, %k0, %v0, %cache[0], %batch {accel.pp_stage = 0, ...}
    ...
    %m0 = transformer.gated_mlp ... {accel.pp_stage = 0}
    %pos1 = transformer.positions {accel.pp_stage = 1} : ...
    %m0x = transformer.pp_transfer %m0 {accel.pp_stage = 1, from_stage = 0, to_stage = 1} : ...
    %r0x = transformer.pp_transfer %r0 {accel.pp_stage = 1, from_stage = 0, to_stage = 1} : ...
    %h1, %r1 = transformer.add_rms_norm %m0x, %r0x, %w1 {accel.pp_stage = 1, ...} : ...
    ...
    %o1 = transformer.attention %q1, %k1, %v1, %cache[0], %batch {accel.pp_stage = 1, ...}
    ```
  }];
  let options = [
    Option<"ppSize", "pp-size", "int64_t", /*default=*/"1",
           "the number of pipeline stages">
  ];
  let dependentDialects = ["accel::transformer::TransformerDialect"];
}

#endif // ACCEL_PASSES_PARTITION
