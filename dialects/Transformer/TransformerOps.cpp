//===- TransformerOps.cpp - transformer dialect op verifiers --------------===//
#include "accel/dialects/Transformer/TransformerOps.h"

using namespace mlir;
using namespace accel::transformer;

#define GET_OP_CLASSES
#include "dialects/Transformer/TransformerOps.cpp.inc"
