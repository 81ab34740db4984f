//===- TransformerDialect.h - the transformer dialect ---------------------*- C++ -*-===//
#ifndef ACCEL_DIALECTS_TRANSFORMER_TRANSFORMERDIALECT_H
#define ACCEL_DIALECTS_TRANSFORMER_TRANSFORMERDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"

#include "dialects/Transformer/TransformerDialect.h.inc"
#include "dialects/Transformer/TransformerEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Transformer/TransformerAttrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "dialects/Transformer/TransformerTypes.h.inc"

#endif // ACCEL_DIALECTS_TRANSFORMER_TRANSFORMERDIALECT_H
