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
      `[r*V/N, (r+1)*V/N)`, `vocab_shards = N`: ids of other ranks give
      zeros), then all_reduce.
    - **lm head**: vocabulary-parallel, then `transformer.all_gather` of the
      logits (axis = vocabulary). Tied embeddings: the lookup and the head
      read one sharded table.
    - Everything else (position tables, norms, residual adds) is replicated.
    - The ONNX reshape/split/slice glue around attention is first rewritten
      into `transformer.split` / `split_heads` / `merge_heads` (exact).

    Heads, KV heads, intermediate sizes and the vocabulary must divide by
    (or, for KV heads fewer than ranks, divide) `tp-size`; otherwise the
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

#endif // ACCEL_PASSES_PARTITION
