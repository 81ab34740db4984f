//===- OnnxDialect.h - the onnx dialect ---------------------*- C++ -*-===//
#ifndef ACCEL_DIALECTS_ONNX_ONNXDIALECT_H
#define ACCEL_DIALECTS_ONNX_ONNXDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"

#include "dialects/Onnx/OnnxDialect.h.inc"
#include "dialects/Onnx/OnnxEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Onnx/OnnxAttrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "dialects/Onnx/OnnxTypes.h.inc"

#endif // ACCEL_DIALECTS_ONNX_ONNXDIALECT_H
