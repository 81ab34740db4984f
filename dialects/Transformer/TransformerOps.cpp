//===- TransformerOps.cpp - transformer dialect op definitions ------------===//
//
// The generated op classes. Verifiers and folders live in one file per
// concern: EmbeddingOps, NormOps, LinearOps, AttentionOps, MlpOps, MoeOps,
// HeadLayoutOps, TokenLayoutOps, CollectiveOps, QuantOps.
//
//===----------------------------------------------------------------------===//
#include "accel/dialects/Transformer/TransformerOps.h"

using namespace mlir;
using namespace accel::transformer;

#define GET_OP_CLASSES
#include "dialects/Transformer/TransformerOps.cpp.inc"
