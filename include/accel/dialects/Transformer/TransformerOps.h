//===- TransformerOps.h - transformer dialect ops -------------------------*- C++ -*-===//
#ifndef ACCEL_DIALECTS_TRANSFORMER_TRANSFORMEROPS_H
#define ACCEL_DIALECTS_TRANSFORMER_TRANSFORMEROPS_H

#include "accel/dialects/Transformer/TransformerDialect.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/Transformer/TransformerOps.h.inc"

#endif // ACCEL_DIALECTS_TRANSFORMER_TRANSFORMEROPS_H
