//===- ExecOps.cpp - exec dialect op verifiers ----------------------------===//
#include "accel/dialects/Exec/ExecOps.h"

using namespace mlir;
using namespace accel::exec;

#define GET_OP_CLASSES
#include "dialects/Exec/ExecOps.cpp.inc"
