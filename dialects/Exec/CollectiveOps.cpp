//===- CollectiveOps.cpp - exec.collective and exec.copy ------------------===//
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
    return emitOpError("NCCL cannot communicate i4");
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
    for (int64_t d = 0; d < rank; ++d) {
      Extent a = getExtent(getInput(), d), b = getExtent(getOutput(), d);
      if (!extentsAgree(a, b, schedule))
        return emitOpError() << "all_reduce input and output differ at "
                             << "dimension " << d << " (" << a.str() << " vs "
                             << b.str() << ")";
    }
    if (getScratch())
      return emitOpError("all_reduce needs no scratch");
    return success();
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

  // NCCL works rank-major: without staging, the axis must be the outermost
  // dimension that is not 1.
  bool contiguous = true;
  for (int64_t d = 0; d < axis; ++d) {
    Extent e = getExtent(large, d);
    if (!e.isStatic() || e.size != 1)
      contiguous = false;
  }
  if (contiguous && getScratch())
    return emitOpError() << name << " along axis " << axis
                         << " is contiguous and needs no scratch";
  if (!contiguous) {
    if (!getScratch())
      return emitOpError() << name << " along axis " << axis
                           << " needs a scratch view of type "
                           << large.getType()
                           << " to stage the rank-major data";
    if (getScratch().getType() != large.getType())
      return emitOpError() << "scratch must have the " << largeName
                           << " type " << large.getType() << ", got "
                           << getScratch().getType();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// CopyOp
//===----------------------------------------------------------------------===//

LogicalResult CopyOp::verify() {
  ViewType source = viewType(getSource()), target = viewType(getTarget());
  if (source.getElementType() != target.getElementType())
    return emitOpError() << "source and target element types differ ("
                         << source.getElementType() << " vs "
                         << target.getElementType() << ")";
  if (source.getRank() != target.getRank())
    return emitOpError() << "source and target ranks differ ("
                         << source.getRank() << " vs " << target.getRank()
                         << ")";
  ScheduleOp schedule = enclosingSchedule(*this);
  for (int64_t d = 0, rank = source.getRank(); d < rank; ++d) {
    Extent a = getExtent(getSource(), d), b = getExtent(getTarget(), d);
    if (!extentsAgree(a, b, schedule))
      return emitOpError() << "source and target differ at dimension " << d
                           << " (" << a.str() << " vs " << b.str() << ")";
  }
  return success();
}
