//===- ExecDialect.cpp - the exec dialect -------------------------------===//
//
// Dialect registration, enums and attributes. Types are in ExecTypes.cpp, op
// verifiers and custom assembly in one file per op family (ScheduleOps.cpp,
// MemoryOps.cpp, LaunchOps.cpp, LibraryOps.cpp, KVCacheOps.cpp,
// CollectiveOps.cpp, NormOps.cpp, PointwiseOps.cpp, OnnxOps.cpp).
//
//===----------------------------------------------------------------------===//
#include "accel/dialects/Exec/ExecDialect.h"
#include "accel/dialects/Exec/ExecOps.h"
#include "accel/dialects/Transformer/TransformerDialect.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace accel::exec;

#include "dialects/Exec/ExecDialect.cpp.inc"
#include "dialects/Exec/ExecEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dialects/Exec/ExecAttrs.cpp.inc"

//===----------------------------------------------------------------------===//
// Attribute assembly
//===----------------------------------------------------------------------===//

Attribute ExecDialect::parseAttribute(DialectAsmParser &parser,
                                      Type type) const {
  SMLoc loc = parser.getCurrentLocation();
  StringRef mnemonic;
  Attribute attr;
  OptionalParseResult result =
      generatedAttributeParser(parser, &mnemonic, type, attr);
  if (result.has_value())
    return attr;
  parser.emitError(loc) << "unknown attribute `" << mnemonic
                        << "` in dialect `exec`";
  return {};
}

void ExecDialect::printAttribute(Attribute attr,
                                 DialectAsmPrinter &printer) const {
  // Every exec attribute is an enum whose own assembly is the bare word; put
  // a space between it and the mnemonic.
  llvm::TypeSwitch<Attribute>(attr)
      .Case<ArenaKindAttr, ArenaRegionAttr, ScheduleKindAttr,
            StepSizeKindAttr, StepInputKindAttr, StepOutputKindAttr,
            KernelImageAttr, CollectiveKindAttr, ReduceKindAttr>([&](auto enumAttr) {
        printer << enumAttr.getMnemonic() << ' ';
        enumAttr.print(printer);
      })
      .Default([&](Attribute) {
        (void)generatedAttributePrinter(attr, printer);
      });
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void ExecDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Exec/ExecOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Exec/ExecAttrs.cpp.inc"
      >();
  registerTypes();
}
