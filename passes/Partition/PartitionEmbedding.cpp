//===- PartitionEmbedding.cpp - the token embedding, vocabulary-parallel --===//
//
// The token embedding table [vocab, hidden] is split by rows like the lm
// head: rank r holds rows [r*V/N, (r+1)*V/N), its lookup (vocab_shards = N)
// returns the row of an id in that block and zeros for the others, and an
// all_reduce sum right after the lookup gives every rank the whole
// embedding. Adding zeros is exact, so the result is bit for bit the
// replicated lookup's (the scale of Gemma's embeddings is applied per rank,
// to the one non-zero row).
//
// A vocabulary V that N does not divide is padded to P, the next multiple
// of N, with zero rows (as Megatron and vLLM do): rank r holds rows
// [r*P/N, (r+1)*P/N) of the padded table, the last rank's block ends in the
// padding, and the lookup carries vocab_size = V so that an id >= V is
// still refused rather than read as a zero row.
//
// With tied embeddings (the lookup and the lm head share one table) both
// read the one row-sharded constant: Context::vocabShards hands the lm head
// rule the shard made here.
//
// Only a lookup of the token ids is split: a learned position table (GPT-2's
// wpe, read with transformer.positions) is not vocabulary-sized and stays
// replicated, as does a table that is not a float constant (replicating is
// always exact).
//
//===----------------------------------------------------------------------===//
#include "PartitionRules.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace accel;
using namespace accel::partition;
namespace tf = accel::transformer;

/// Whether `ids` are the function's token ids, through the casts and
/// reshapes exporters put between them and the lookup.
static bool readsTokenIds(Value ids) {
  while (Operation *def = ids.getDefiningOp()) {
    StringRef name = def->getName().getStringRef();
    if (def->getNumOperands() == 0 ||
        !llvm::is_contained({"onnx.Unsqueeze", "onnx.Squeeze", "onnx.Reshape", "onnx.Cast",
                             "onnx.Identity", "transformer.flatten_tokens",
                             "transformer.unflatten_tokens"},
                            name))
      return false;
    ids = def->getOperand(0);
  }
  return isa<BlockArgument>(ids);
}

FailureOr<Value> accel::partition::shardVocabRows(Context &ctx, Operation *user, Value table,
                                                  StringRef what) {
  if (Value shard = ctx.vocabShards.lookup(table))
    return shard;
  int64_t vocab = cast<RankedTensorType>(table.getType()).getDimSize(0);
  // Right after the whole table, so that the shard dominates every reader
  // of the table (the lookup and a tied lm head).
  OpBuilder::InsertionGuard guard(ctx.rewriter);
  if (Operation *def = table.getDefiningOp())
    ctx.rewriter.setInsertionPointAfter(def);
  else
    ctx.rewriter.setInsertionPoint(user);
  FailureOr<Value> shard =
      shardConstant(ctx, user, table, 0, evenBlocks(ctx.tp, paddedVocab(ctx.tp, vocab)), what);
  if (succeeded(shard))
    ctx.vocabShards[table] = *shard;
  return shard;
}

LogicalResult accel::partition::partitionEmbedding(Context &ctx, tf::EmbeddingOp embedding) {
  Value table = embedding.getTable();
  if (!readsTokenIds(embedding.getIds()) || !floatConstant(table))
    return success();
  int64_t vocab = embedding.getTable().getType().getDimSize(0); // static: a float constant
  FailureOr<Value> shard = shardVocabRows(ctx, embedding, table, "embedding table");
  if (failed(shard))
    return failure();
  embedding.getTableMutable().assign(*shard);
  embedding.setVocabShards(static_cast<uint64_t>(ctx.tp));
  if (paddedVocab(ctx.tp, vocab) != vocab)
    embedding.setVocabSize(static_cast<uint64_t>(vocab));
  if (table.use_empty())
    ctx.vocabShards.erase(table);
  eraseIfDead(ctx.rewriter, table);
  allReduceAfter(ctx, embedding);
  return success();
}
