//===- Embedding.cpp - transformer.embedding, transformer.positions -------===//
#include "Lowering.h"

#include "accel/dialects/Transformer/TransformerOps.h"

using namespace mlir;
namespace ex = accel::exec;
namespace tf = accel::transformer;

namespace accel::conversion {

static LogicalResult lowerEmbedding(tf::EmbeddingOp op, Lowering &l) {
  FailureOr<Value> table = l.view(op.getTable(), op), ids = l.view(op.getIds(), op);
  if (failed(table) || failed(ids))
    return failure();
  FailureOr<Value> out = l.alloc(op.getResult());
  if (failed(out))
    return failure();
  auto step = ex::EmbeddingOp::create(l.builder(), op.getLoc(), *table, *ids, *out, FloatAttr(),
                                      IntegerAttr(), IntegerAttr());
  if (std::optional<APFloat> scale = op.getScale())
    step.setScaleAttr(l.builder().getF64FloatAttr(scale->convertToDouble()));
  if (std::optional<uint64_t> n = op.getVocabShards())
    step.setVocabShardsAttr(l.builder().getI64IntegerAttr(int64_t(*n)));
  if (std::optional<uint64_t> n = op.getVocabSize())
    step.setVocabSizeAttr(l.builder().getI64IntegerAttr(int64_t(*n)));
  l.finish(step, op);
  return success();
}

static LogicalResult lowerPositions(tf::PositionsOp op, Lowering &l) {
  FailureOr<Value> pos = l.stepInput(ex::StepInputKind::positions,
                                     op.getResult().getType().getElementType(), op);
  if (failed(pos))
    return failure();
  l.map(op.getResult(), *pos);
  return success();
}

void populateEmbeddingLowerings(LoweringPatterns &patterns) {
  patterns.add<tf::EmbeddingOp>(lowerEmbedding);
  patterns.add<tf::PositionsOp>(lowerPositions);
}

} // namespace accel::conversion
