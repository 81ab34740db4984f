//===- PartitionRules.h - the tensor-parallel rules, one per file -*- C++ -*-===//
//
// Each rule rewrites one kind of site of a token-major function for
// ctx.tp ranks (docs/passes/partition.md has the policy table):
//
//   NormalizeHeadLayout.cpp  the ONNX reshape/split/slice glue around
//                            attention → transformer.split / split_heads /
//                            merge_heads, so that the rules see heads
//   PartitionAttention.cpp   q/k/v column-parallel (heads per rank, KV heads
//                            replicated when fewer than ranks), o_proj
//                            row-parallel + all_reduce
//   PartitionMlp.cpp         gated_mlp and linear→activation→linear:
//                            gate/up (fc) column-parallel, down (proj)
//                            row-parallel + all_reduce
//   PartitionMoe.cpp         moe: every expert's gate/up column-parallel
//                            and down row-parallel (1/N of each expert's
//                            intermediate per rank), router replicated,
//                            + all_reduce
//   PartitionEmbedding.cpp   the token embedding vocab-parallel (masked
//                            lookup, vocab_shards = N) + all_reduce
//   PartitionLogits.cpp      lm_head vocab-parallel + all_gather (a tied
//                            table: the embedding's shard)
//
// Every rule reports what it cannot do (a dimension that does not divide, a
// shape it does not recognise) as an error at the op and fails.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_PASSES_PARTITION_PARTITIONRULES_H
#define ACCEL_PASSES_PARTITION_PARTITIONRULES_H

#include "PartitionUtils.h"

#include "accel/dialects/Transformer/TransformerOps.h"

namespace accel::partition {

/// Rewrites the glue between the producers of `attention`'s q, k and v (and
/// the head-wise ops on the way: rotary, per-head norms) and the consumer of
/// its result into transformer.split / split_heads / merge_heads, so that q,
/// k and v are split_heads of a linear's result (or of a transformer.split
/// of one) and the result reaches one linear through merge_heads.
mlir::LogicalResult normalizeHeadLayout(Context &ctx, transformer::AttentionOp attention);

/// The per-rank KV heads of every attention op must agree; this is the
/// number the KV cache argument is given.
struct AttentionShards {
  int64_t kvHeadsPerRank = 0;
};

/// Checks that `attention`'s heads and KV heads split over ctx.tp ranks
/// (the error names the dimension and the layer). Run on every site first,
/// so that a shape that does not divide is what is reported.
mlir::LogicalResult checkHeads(Context &ctx, transformer::AttentionOp attention);

/// One attention site (after normalizeHeadLayout).
mlir::LogicalResult partitionAttention(Context &ctx, transformer::AttentionOp attention,
                                       AttentionShards &shards);

/// A gated_mlp.
mlir::LogicalResult partitionGatedMlp(Context &ctx, transformer::GatedMlpOp mlp);

/// A moe: each expert (and the shared expert) split as a gated_mlp.
mlir::LogicalResult partitionMoe(Context &ctx, transformer::MoeOp moe);

/// linear → activation (or gated_act) → linear, the MLP of GPT-2 and of
/// unfused or quantisation-ready MLPs; `act` may also be a linear with an
/// activation epilogue (accel-fuse-linear-activation), the first linear and
/// the activation in one. Succeeds without change when `act` is not between
/// two linears.
mlir::LogicalResult partitionLinearMlp(Context &ctx, mlir::Operation *act);

/// A lookup of the token ids (a learned position table, or a table that is
/// not a float constant, stays replicated: succeeds without change).
mlir::LogicalResult partitionEmbedding(Context &ctx, transformer::EmbeddingOp embedding);

/// The lm head.
mlir::LogicalResult partitionLogits(Context &ctx, transformer::LogitsOp logits);

/// "layer 3 (at 'node')": names an attention site in messages.
std::string describeLayer(transformer::AttentionOp attention);

} // namespace accel::partition

#endif // ACCEL_PASSES_PARTITION_PARTITIONRULES_H
