//===- PartitionLogits.cpp - the lm head, vocabulary-parallel -------------===//
//
// The lm head [vocab, hidden] is split by rows: rank r projects onto
// vocabulary entries [r*V/N, (r+1)*V/N) (with its slice of a bias), a final
// softcap (Gemma 2) is elementwise and applies to each slice, and an
// all_gather along the vocabulary axis gives every rank the whole row. With
// tied embeddings the lm head reads the row-sharded table that the
// vocabulary-parallel lookup reads (PartitionEmbedding.cpp): one copy.
//
// A vocabulary V that N does not divide is padded to P, the next multiple
// of N: the head (and its bias) get zero rows up to P, rank r projects onto
// rows [r*P/N, (r+1)*P/N), and after the all_gather a transformer.split
// keeps the first V columns, as vLLM slices its gathered logits to the
// original vocabulary: the padding columns never reach the sampler, the
// scores or the plan's vocabulary size.
//
//===----------------------------------------------------------------------===//
#include "PartitionRules.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace accel;
using namespace accel::partition;
namespace tf = accel::transformer;

LogicalResult accel::partition::partitionLogits(Context &ctx, tf::LogitsOp logits) {
  auto head = cast<RankedTensorType>(logits.getLmHead().getType());
  int64_t vocab = head.getDimSize(0);
  if (ShapedType::isDynamic(vocab))
    return logits.emitError() << "-tp=" << ctx.tp
                              << " needs the lm head's vocabulary size to be static",
           failure();
  const int64_t padded = paddedVocab(ctx.tp, vocab);
  RankRanges rows = evenBlocks(ctx.tp, padded);
  ctx.rewriter.setInsertionPoint(logits);
  Value oldHead = logits.getLmHead();
  FailureOr<Value> w = shardVocabRows(ctx, logits, oldHead, "lm head");
  if (failed(w))
    return failure();
  logits.getLmHeadMutable().assign(*w);
  if (Value oldBias = logits.getBias()) {
    FailureOr<Value> b = shardConstant(ctx, logits, oldBias, 0, rows, "lm head bias");
    if (failed(b))
      return failure();
    logits.getBiasMutable().assign(*b);
    eraseIfDead(ctx.rewriter, oldBias);
  }
  if (oldHead.use_empty())
    ctx.vocabShards.erase(oldHead);
  eraseIfDead(ctx.rewriter, oldHead);
  Value part = logits.getResult();
  RankedTensorType full = cast<RankedTensorType>(part.getType());
  int64_t axis = full.getRank() - 1;
  part.setType(withDim(full, axis, padded / ctx.tp));
  ctx.rewriter.setInsertionPointAfter(logits);
  auto gather = tf::AllGatherOp::create(ctx.rewriter, logits.getLoc(),
                                        withDim(full, axis, padded), part,
                                        static_cast<uint64_t>(axis),
                                        static_cast<uint64_t>(ctx.tp));
  Value whole = gather.getResult();
  if (padded != vocab) {
    // The first `vocab` columns; the padding's are dropped.
    auto split = tf::SplitOp::create(
        ctx.rewriter, logits.getLoc(),
        TypeRange{full, withDim(full, axis, padded - vocab)}, whole);
    whole = split.getResult(0);
  }
  part.replaceAllUsesExcept(whole, gather);
  return success();
}
