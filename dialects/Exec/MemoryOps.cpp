//===- MemoryOps.cpp - arenas and the views carved out of them ------------===//
//
// exec.arena, exec.slice, exec.weight, exec.step_input.
//
//===----------------------------------------------------------------------===//
#include "ExecVerify.h"

using namespace mlir;
using namespace accel::exec;
using namespace accel::exec::detail;

//===----------------------------------------------------------------------===//
// ArenaOp
//===----------------------------------------------------------------------===//

LogicalResult ArenaOp::verify() {
  if (getSize() < 1)
    return emitOpError() << "size must be positive, got " << getSize();
  if (getAlignment() < 1 || !llvm::isPowerOf2_64(getAlignment()))
    return emitOpError() << "alignment must be a power of two, got "
                         << getAlignment();
  bool isWeights = getKind() == ArenaKind::weights;
  if (isWeights && (!getSection() || getSection()->empty()))
    return emitOpError("a weights arena names the plan section that fills it");
  if (!isWeights && getSection())
    return emitOpError() << "only a weights arena names a plan section, not "
                            "an "
                         << stringifyArenaKind(getKind()) << " arena";
  return success();
}

//===----------------------------------------------------------------------===//
// Placement: what slice, weight and step_input share
//===----------------------------------------------------------------------===//

/// Checks an explicit `align` request against the view's element size.
static LogicalResult verifyAlignRequest(Operation *op,
                                        std::optional<int64_t> align,
                                        ViewType type) {
  if (!align)
    return success();
  if (*align < 1 || !llvm::isPowerOf2_64(*align))
    return op->emitOpError() << "align must be a power of two, got " << *align;
  int64_t elemBytes = elementBytes(type.getElementType());
  if (*align < elemBytes)
    return op->emitOpError()
           << "align " << *align << " is smaller than the " << elemBytes
           << "-byte element type " << type.getElementType();
  return success();
}

/// Checks that `view`, placed `offset` bytes into `arena`, is aligned and in
/// bounds at the schedule's bounds.
static LogicalResult verifyPlacement(Operation *op, ArenaOp arena,
                                     int64_t offset,
                                     std::optional<int64_t> align,
                                     Value view) {
  ViewType type = viewType(view);
  int64_t arenaAlign = arena.getAlignment();
  int64_t required = align.value_or(arenaAlign);
  if (required > arenaAlign)
    return op->emitOpError()
           << "align " << required << " exceeds the alignment " << arenaAlign
           << " of arena @" << arena.getSymName();
  if (offset % required != 0)
    return op->emitOpError() << "offset " << offset
                             << " is not a multiple of the alignment "
                             << required;
  int64_t elemBytes = elementBytes(type.getElementType());
  if (offset % elemBytes != 0)
    return op->emitOpError() << "offset " << offset
                             << " is not a multiple of the " << elemBytes
                             << "-byte element type " << type.getElementType();
  std::optional<int64_t> bytes = getMaxByteSize(view);
  if (!bytes)
    return op->emitOpError("every dynamic dimension needs a bound");
  if (*bytes > arena.getSize() - offset)
    return op->emitOpError()
           << "view of " << *bytes << " bytes at offset " << offset
           << " overruns arena @" << arena.getSymName() << " of "
           << arena.getSize() << " bytes";
  return success();
}

/// Looks up the arena `name` from `op` and checks it is one of `kinds`.
static ArenaOp lookupArena(Operation *op, SymbolTableCollection &symbolTable,
                           FlatSymbolRefAttr name,
                           ArrayRef<ArenaKind> kinds, StringRef hint) {
  auto arena = lookupSymbol<ArenaOp>(op, symbolTable, name, "an exec.arena");
  if (!arena)
    return nullptr;
  if (!llvm::is_contained(kinds, arena.getKind())) {
    op->emitOpError() << "cannot address the "
                      << stringifyArenaKind(arena.getKind()) << " arena "
                      << name << hint;
    return nullptr;
  }
  return arena;
}

static LogicalResult verifyOffset(Operation *op, int64_t offset) {
  if (offset < 0)
    return op->emitOpError() << "offset must be non-negative, got " << offset;
  return success();
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::verify() {
  ViewType type = viewType(getResult());
  if (getSizes().size() != type.getNumDynamicDims())
    return emitOpError() << "expected " << type.getNumDynamicDims()
                         << " dynamic size(s) for " << type << ", got "
                         << getSizes().size();
  for (auto [index, size] : llvm::enumerate(getSizes()))
    if (!size.getDefiningOp<StepSizeOp>())
      return emitOpError() << "dynamic size #" << index
                           << " must be an exec.step_size";
  if (failed(verifyOffset(*this, getOffset())))
    return failure();
  return verifyAlignRequest(*this, getAlign(), type);
}

LogicalResult SliceOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  ArenaOp arena =
      lookupArena(*this, symbolTable, getArenaAttr(),
                  {ArenaKind::activations, ArenaKind::workspace},
                  "; weights are addressed by exec.weight, step inputs by "
                  "exec.step_input");
  if (!arena)
    return failure();
  return verifyPlacement(*this, arena, getOffset(), getAlign(), getResult());
}

//===----------------------------------------------------------------------===//
// WeightOp
//===----------------------------------------------------------------------===//

LogicalResult WeightOp::verify() {
  if (getName().empty())
    return emitOpError("weight name must not be empty");
  ViewType type = viewType(getResult());
  if (!type.hasStaticShape())
    return emitOpError() << "a weight has a static shape, got " << type;
  if (failed(verifyOffset(*this, getOffset())))
    return failure();
  return verifyAlignRequest(*this, getAlign(), type);
}

LogicalResult WeightOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  ArenaOp arena = lookupArena(*this, symbolTable, getArenaAttr(),
                              {ArenaKind::weights}, "; weights live in a "
                                                    "weights arena");
  if (!arena)
    return failure();
  return verifyPlacement(*this, arena, getOffset(), getAlign(), getResult());
}

//===----------------------------------------------------------------------===//
// StepInputOp
//===----------------------------------------------------------------------===//

LogicalResult StepInputOp::verify() {
  ViewType type = viewType(getResult());
  bool isI32 = type.getElementType().isSignlessInteger(32);
  bool ok;
  StringRef expected;
  if (getKind() == StepInputKind::block_tables) {
    ok = isI32 && type.getRank() == 2 && type.isDynamicDim(0) &&
         !type.isDynamicDim(1) && type.getDimSize(1) >= 1;
    expected = "!exec.view<?xNxi32> with N >= 1";
  } else {
    ok = isI32 && type.getRank() == 1 && type.isDynamicDim(0);
    expected = "!exec.view<?xi32>";
  }
  if (!ok)
    return emitOpError() << "a " << stringifyStepInputKind(getKind())
                         << " input is a " << expected << ", got " << type;
  return verifyOffset(*this, getOffset());
}

LogicalResult
StepInputOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  ArenaOp arena = lookupArena(*this, symbolTable, getArenaAttr(),
                              {ArenaKind::step_inputs},
                              "; step inputs live in a step_inputs arena");
  if (!arena)
    return failure();
  return verifyPlacement(*this, arena, getOffset(), std::nullopt,
                         getResult());
}
