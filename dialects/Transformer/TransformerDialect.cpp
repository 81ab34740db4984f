//===- TransformerDialect.cpp - the transformer dialect -------------------------------===//
#include "accel/dialects/Transformer/TransformerDialect.h"
#include "accel/dialects/Transformer/TransformerOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace accel::transformer;

#include "dialects/Transformer/TransformerDialect.cpp.inc"
#include "dialects/Transformer/TransformerEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dialects/Transformer/TransformerAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "dialects/Transformer/TransformerTypes.cpp.inc"

void TransformerDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Transformer/TransformerOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Transformer/TransformerAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/Transformer/TransformerTypes.cpp.inc"
      >();
}
