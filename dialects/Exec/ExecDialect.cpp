//===- ExecDialect.cpp - the exec dialect -------------------------------===//
#include "accel/dialects/Exec/ExecDialect.h"
#include "accel/dialects/Exec/ExecOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace accel::exec;

#include "dialects/Exec/ExecDialect.cpp.inc"
#include "dialects/Exec/ExecEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dialects/Exec/ExecAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "dialects/Exec/ExecTypes.cpp.inc"

void ExecDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Exec/ExecOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Exec/ExecAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/Exec/ExecTypes.cpp.inc"
      >();
}
