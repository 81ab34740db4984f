//===- CollectiveOps.cpp - exec.collective, exec.pp_transfer, exec.copy ---===//
#include "ExecAssembly.h"
#include "ExecVerify.h"

using namespace mlir;
using namespace accel::exec;
using namespace accel::exec::detail;

//===----------------------------------------------------------------------===//
// CollectiveOp
//===----------------------------------------------------------------------===//

ParseResult accel::exec::parseCollectiveKind(OpAsmParser &parser,
                                             CollectiveKindAttr &kind,
                                             ReduceKindAttr &reduction) {
  MLIRContext *context = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  StringRef word;
  if (parser.parseKeyword(&word))
    return failure();
  std::optional<CollectiveKind> parsedKind = symbolizeCollectiveKind(word);
  if (!parsedKind)
    return parser.emitError(loc) << "expected all_reduce, all_gather or "
                                    "reduce_scatter, got '"
                                 << word << "'";
  kind = CollectiveKindAttr::get(context, *parsedKind);
  loc = parser.getCurrentLocation();
  if (failed(parser.parseOptionalKeyword(&word)))
    return success();
  std::optional<ReduceKind> parsedReduction = symbolizeReduceKind(word);
  if (!parsedReduction)
    return parser.emitError(loc)
           << "expected a reduction (sum, max, min), got '" << word << "'";
  reduction = ReduceKindAttr::get(context, *parsedReduction);
  return success();
}

void accel::exec::printCollectiveKind(OpAsmPrinter &printer, Operation *,
                                      CollectiveKindAttr kind,
                                      ReduceKindAttr reduction) {
  printer << stringifyCollectiveKind(kind.getValue());
  if (reduction)
    printer << ' ' << stringifyReduceKind(reduction.getValue());
}

LogicalResult CollectiveOp::verify() {
  ScheduleOp schedule = enclosingSchedule(*this);
  ViewType in = viewType(getInput()), out = viewType(getOutput());
  CollectiveKind kind = getKind();
  StringRef name = stringifyCollectiveKind(kind);
  if (getGroup() < 2)
    return emitOpError() << "group must have at least 2 ranks, got "
                         << getGroup();
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "input and output element types differ ("
                         << in.getElementType() << " vs "
                         << out.getElementType() << ")";
  if (in.getElementType().isInteger(4))
    return emitOpError("a collective cannot communicate i4");
  bool reduces = kind != CollectiveKind::all_gather;
  if (reduces && !getReduction())
    return emitOpError() << name << " needs a reduction (sum, max, min)";
  if (!reduces && getReduction())
    return emitOpError("all_gather takes no reduction");
  if (in.getRank() != out.getRank())
    return emitOpError() << "input and output ranks differ (" << in.getRank()
                         << " vs " << out.getRank() << ")";
  int64_t rank = in.getRank();
  int64_t axis = getAxis();

  if (kind == CollectiveKind::all_reduce) {
    if (axis != 0)
      return emitOpError("all_reduce has no axis");
    return verifySameShape(*this, getInput(), "input", getOutput(), "output");
  }

  // all_gather / reduce_scatter: one side is group times the other along
  // the axis.
  if (axis < 0 || axis >= rank)
    return emitOpError() << "axis " << axis << " is out of range for rank "
                         << rank;
  Value small = kind == CollectiveKind::all_gather ? getInput() : getOutput();
  Value large = kind == CollectiveKind::all_gather ? getOutput() : getInput();
  StringRef smallName = kind == CollectiveKind::all_gather ? "input" : "output";
  StringRef largeName = kind == CollectiveKind::all_gather ? "output" : "input";
  for (int64_t d = 0; d < rank; ++d) {
    Extent s = getExtent(small, d), l = getExtent(large, d);
    if (d != axis) {
      if (!extentsAgree(s, l, schedule))
        return emitOpError() << name << " input and output differ at "
                             << "dimension " << d << " (" << s.str()
                             << " vs " << l.str() << ")";
      continue;
    }
    if (!s.isStatic() || !l.isStatic())
      return emitOpError() << name << " along a dynamic dimension is not "
                                      "supported";
    if (l.size != getGroup() * s.size)
      return emitOpError() << name << " " << largeName << " dimension " << d
                           << " is " << l.size << ", expected group ("
                           << getGroup() << ") x " << smallName << " ("
                           << s.size << ") = " << getGroup() * s.size;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// PpTransferOp
//===----------------------------------------------------------------------===//

LogicalResult PpTransferOp::verify() {
  if (getFromStage() < 0 || getToStage() <= getFromStage())
    return emitOpError() << "hands data from a stage to a later one, got " << getFromStage()
                         << " to " << getToStage();
  return verifySameType(*this, getInput(), "input", getOutput(), "output");
}

//===----------------------------------------------------------------------===//
// CopyOp
//===----------------------------------------------------------------------===//

LogicalResult CopyOp::verify() {
  return verifySameType(*this, getSource(), "source", getTarget(), "target");
}
