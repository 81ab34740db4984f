//===- OnnxDialect.cpp - the onnx dialect -------------------------------===//
#include "accel/dialects/Onnx/OnnxDialect.h"
#include "accel/dialects/Onnx/OnnxOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace accel::onnx;

#include "dialects/Onnx/OnnxDialect.cpp.inc"
#include "dialects/Onnx/OnnxEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dialects/Onnx/OnnxAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "dialects/Onnx/OnnxTypes.cpp.inc"

void OnnxDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Onnx/OnnxOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Onnx/OnnxAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/Onnx/OnnxTypes.cpp.inc"
      >();
}
