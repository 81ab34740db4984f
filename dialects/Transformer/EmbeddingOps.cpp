//===- EmbeddingOps.cpp - embedding and logits verifiers ------------------===//
#include "accel/dialects/Transformer/TransformerOps.h"

#include "VerifyUtils.h"

using namespace mlir;
using namespace accel::transformer;
using namespace accel::transformer::detail;

//===----------------------------------------------------------------------===//
// EmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::verify() {
  RankedTensorType table = getTable().getType();
  RankedTensorType ids = getIds().getType();
  RankedTensorType result = getResult().getType();
  if (!compatible(result.getDimSize(1), table.getDimSize(1)))
    return emitOpError("result hidden size ")
           << dim(result.getDimSize(1))
           << " does not match the table's embedding size "
           << dim(table.getDimSize(1));
  if (!compatible(result.getDimSize(0), ids.getDimSize(0)))
    return emitOpError("result has ")
           << dim(result.getDimSize(0)) << " tokens but ids has "
           << dim(ids.getDimSize(0));
  if (!isCompatibleFloatWeight(table.getElementType(), result.getElementType()))
    return emitOpError("result element type ")
           << result.getElementType()
           << " does not match the table element type "
           << table.getElementType() << " (only an f32 result may read an f16 or bf16 table)";
  if (std::optional<uint64_t> vocab = getVocabSize()) {
    int64_t rows = table.getDimSize(0);
    uint64_t shards = getVocabShards().value_or(1);
    if (!ShapedType::isDynamic(rows) && *vocab > uint64_t(rows) * shards)
      return emitOpError("vocab_size ")
             << *vocab << " is more than the " << uint64_t(rows) * shards
             << " rows of the table"
             << (shards > 1 ? " times vocab_shards" : "");
  }
  return verifyPositive(*this, "scale", getScale());
}

//===----------------------------------------------------------------------===//
// LogitsOp
//===----------------------------------------------------------------------===//

LogicalResult LogitsOp::verify() {
  RankedTensorType hidden = getHidden().getType();
  RankedTensorType lmHead = getLmHead().getType();
  RankedTensorType result = getResult().getType();
  int64_t vocab = lmHead.getDimSize(0);
  if (!compatible(lmHead.getDimSize(1), hidden.getDimSize(1)))
    return emitOpError("lm_head must be [vocab, hidden = ")
           << dim(hidden.getDimSize(1)) << "], got " << lmHead;
  if (!isCompatibleFloatWeight(lmHead.getElementType(), hidden.getElementType()))
    return emitOpError("lm_head element type ")
           << lmHead.getElementType()
           << " does not match the hidden element type "
           << hidden.getElementType() << " (only f32 hidden may read an f16 or bf16 lm_head)";
  if (!compatible(result.getDimSize(1), vocab))
    return emitOpError("result vocab size ")
           << dim(result.getDimSize(1))
           << " does not match the lm_head vocab size " << dim(vocab);
  if (!getBatch() && !compatible(result.getDimSize(0), hidden.getDimSize(0)))
    return emitOpError("result has ")
           << dim(result.getDimSize(0)) << " rows but hidden has "
           << dim(hidden.getDimSize(0))
           << " tokens; only select_last changes the row count";
  if (Value bias = getBias()) {
    auto biasType = cast<RankedTensorType>(bias.getType());
    if (!compatible(biasType.getDimSize(0), vocab))
      return emitOpError("bias has ")
             << dim(biasType.getDimSize(0))
             << " elements but the vocab size is " << dim(vocab);
  }
  return verifyPositive(*this, "softcap", getSoftcap());
}
