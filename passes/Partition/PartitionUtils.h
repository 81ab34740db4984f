//===- PartitionUtils.h - shared by the tensor-parallel rules ---*- C++ -*-===//
//
// How a partitioned function holds its weights. The partition pass leaves
// one function body that is valid for every rank: every op has the types of
// one rank's shard. A weight that differs between ranks is an onnx.Constant
// whose `value` is rank 0's shard and whose `accel.tp_shards` attribute is
// the array of every rank's shard, in rank order (all of one type); a
// constant without it is replicated (every rank reads the same bytes). The
// plan writer writes shard r into the weights section of rank r.
//
// The function carries `accel.tp_size = N`.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_PASSES_PARTITION_PARTITIONUTILS_H
#define ACCEL_PASSES_PARTITION_PARTITIONUTILS_H

#include "llvm/ADT/DenseMap.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace accel::partition {

/// The onnx.Constant attribute listing every rank's shard.
inline constexpr llvm::StringLiteral kShardsAttr = "accel.tp_shards";
/// The function attribute giving the number of ranks.
inline constexpr llvm::StringLiteral kTpSizeAttr = "accel.tp_size";

/// [begin, end) along one axis.
using Range = std::pair<int64_t, int64_t>;
/// Per rank, the ranges (concatenated in order) that make its shard.
using RankRanges = llvm::SmallVector<llvm::SmallVector<Range>>;

/// What every rule needs: the rank count and the rewriter.
struct Context {
  mlir::RewriterBase &rewriter;
  int64_t tp;
  /// A vocabulary table's row-sharded constant (shardVocabRows), by the
  /// whole table: a tied embedding table is sharded once, for the lookup
  /// and the lm head.
  llvm::DenseMap<mlir::Value, mlir::Value> vocabShards{};
};

/// A new onnx.Constant (at the rewriter's insertion point) whose rank-r
/// value is the concatenation, along `axis` (any axis of a rank-1 to 3
/// constant: 1 or 2 cuts every expert of a stacked [E, rows, cols] weight
/// alike), of `ranges[r]` of the float constant defining `weight`. Along axis 0 a range may reach past
/// the last row: the rows past it are zeros (a padded vocabulary, see
/// paddedVocab). Fails, with an error at `user`, when
/// `weight` is not an onnx.Constant of f32/f16/bf16 or of an 8-bit type
/// (i8, f8E4M3FN, f8E5M2: quantised weights, their zero points), dense or
/// dense_resource, of static shape.
mlir::FailureOr<mlir::Value> shardConstant(Context &ctx, mlir::Operation *user,
                                           mlir::Value weight, int64_t axis,
                                           const RankRanges &ranges,
                                           llvm::StringRef what);

/// Shards the weight of a linear along `axis` (0: its rows, column-parallel;
/// 1: its columns, row-parallel) by `ranges`, with its quantisation
/// operands: per-channel and per-group scales and zero points follow the
/// rows they belong to along axis 0; along axis 1 per-channel ones stay
/// whole on every rank and per-group ones are cut by group (every range
/// must start and end on a group boundary); per-tensor ones and a static
/// input scale stay whole. The bias is the caller's. Fails, with an error
/// at the linear, for 4-bit weights.
mlir::LogicalResult shardLinearWeight(Context &ctx, mlir::Operation *linear, int64_t axis,
                                      const RankRanges &ranges, llvm::StringRef what);

/// The vocabulary `vocab` padded to the next multiple of `tp` (Megatron's
/// and vLLM's vocabulary padding, at the smallest multiple): the sharded
/// tables get zero rows up to it, and the gathered logits lose the padding
/// columns again.
int64_t paddedVocab(int64_t tp, int64_t vocab);

/// `table` [vocab, hidden] padded with zero rows to paddedVocab(N, vocab)
/// and split by rows into ctx.tp even blocks (rank r: rows [r*P/N,
/// (r+1)*P/N) of the padded table), placed right after `table`'s
/// definition; the same value for every caller with the same `table`
/// (ctx.vocabShards).
mlir::FailureOr<mlir::Value> shardVocabRows(Context &ctx, mlir::Operation *user,
                                            mlir::Value table, llvm::StringRef what);

/// A new onnx.Constant whose rank 0 value is `bias`'s and whose other ranks
/// hold zeros: a row-parallel layer's bias, added once by the all_reduce.
mlir::FailureOr<mlir::Value> rankZeroConstant(Context &ctx, mlir::Operation *user,
                                              mlir::Value bias);

/// `ranges` for an even split of [0, size) into ctx.tp contiguous blocks,
/// each shifted by `offset`.
RankRanges evenBlocks(int64_t tp, int64_t size, int64_t offset = 0);

/// Appends `more[r]` to `into[r]` for every rank.
void append(RankRanges &into, const RankRanges &more);

/// Rows of a [gate; up] stack of 2 * `inter` rows, per rank: [gate_r; up_r]
/// (a gated MLP's or an expert's fused gate_up).
RankRanges gateUpRows(int64_t tp, int64_t inter);

/// Replaces every use of `op`'s result (but the new op's) by
/// `transformer.all_reduce sum` of it, placed right after `op`. A
/// row-parallel linear's activation epilogue cannot apply to partial sums:
/// it leaves the linear and becomes a transformer.activation of the sum.
void allReduceAfter(Context &ctx, mlir::Operation *op);

/// `type` with dimension `dim` set to `size`.
mlir::RankedTensorType withDim(mlir::Type type, int64_t dim, int64_t size);

/// A float constant's attribute when `v` is an onnx.Constant the pass can
/// slice; null otherwise.
mlir::ElementsAttr floatConstant(mlir::Value v);

/// Erases the op defining `v` when nothing uses it any more and it has no
/// side effects.
void eraseIfDead(mlir::RewriterBase &rewriter, mlir::Value v);

} // namespace accel::partition

#endif // ACCEL_PASSES_PARTITION_PARTITIONUTILS_H
