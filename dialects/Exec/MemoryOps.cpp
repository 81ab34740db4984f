//===- MemoryOps.cpp - arenas and the views carved out of them ------------===//
//
// exec.arena, exec.alloc, exec.slice, exec.weight, exec.view,
// exec.step_input.
//
//===----------------------------------------------------------------------===//
#include "ExecVerify.h"

using namespace mlir;
using namespace accel::exec;
using namespace accel::exec::detail;

//===----------------------------------------------------------------------===//
// ArenaOp
//===----------------------------------------------------------------------===//

int64_t ArenaOp::getRegionSize(ArenaRegion region) {
  switch (region) {
  case ArenaRegion::fixed:
    return getSize();
  case ArenaRegion::tokens:
    return getPerToken();
  case ArenaRegion::seqs:
    return getPerSeq();
  }
  llvm_unreachable("unknown arena region");
}

LogicalResult ArenaOp::verify() {
  if (getSize() < 0 || getPerToken() < 0 || getPerSeq() < 0)
    return emitOpError() << "sizes must be non-negative, got size " << getSize()
                         << ", per_token " << getPerToken() << ", per_seq " << getPerSeq();
  if (getAlignment() < 1 || !llvm::isPowerOf2_64(getAlignment()))
    return emitOpError() << "alignment must be a power of two, got "
                         << getAlignment();
  for (int64_t size : {getSize(), getPerToken(), getPerSeq()})
    if (size % getAlignment() != 0)
      return emitOpError() << "every region size is a multiple of the alignment "
                           << getAlignment() << ", got " << size;
  bool isWeights = getKind() == ArenaKind::weights;
  if (isWeights && (!getSection() || getSection()->empty()))
    return emitOpError("a weights arena names the plan section that fills it");
  if (!isWeights && getSection())
    return emitOpError() << "only a weights arena names a plan section, not "
                            "an "
                         << stringifyArenaKind(getKind()) << " arena";
  if (getKind() != ArenaKind::activations && (getPerToken() || getPerSeq()))
    return emitOpError("only an activations arena has per-token and per-sequence regions");
  return success();
}

//===----------------------------------------------------------------------===//
// Placement: what slice and weight share
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

/// Checks that a view of `bytes` bytes (per unit of its region), placed
/// `offset` bytes into `region` of `arena`, is aligned and in bounds.
static LogicalResult verifyPlacement(Operation *op, ArenaOp arena, ArenaRegion region,
                                     int64_t offset, std::optional<int64_t> align,
                                     ViewType type, int64_t bytes) {
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
  int64_t size = arena.getRegionSize(region);
  if (bytes > size - offset) {
    InFlightDiagnostic diag = op->emitOpError() << "view of " << bytes << " bytes";
    if (region != ArenaRegion::fixed)
      diag << " per " << (region == ArenaRegion::tokens ? "token" : "sequence");
    return diag << " at offset " << offset << " overruns the "
                << stringifyArenaRegion(region) << " region of arena @" << arena.getSymName()
                << " (" << size << " bytes)";
  }
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

/// Every size of an alloc or slice is an exec.step_size, one per `?`.
static LogicalResult verifySizes(Operation *op, OperandRange sizes, ViewType type) {
  if (sizes.size() != type.getNumDynamicDims())
    return op->emitOpError() << "expected " << type.getNumDynamicDims()
                             << " dynamic size(s) for " << type << ", got " << sizes.size();
  for (auto [index, size] : llvm::enumerate(sizes))
    if (!size.getDefiningOp<StepSizeOp>())
      return op->emitOpError() << "dynamic size #" << index << " must be an exec.step_size";
  return success();
}

//===----------------------------------------------------------------------===//
// AllocOp
//===----------------------------------------------------------------------===//

LogicalResult AllocOp::verify() {
  return verifySizes(*this, getSizes(), viewType(getResult()));
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::verify() {
  ViewType type = viewType(getResult());
  if (failed(verifySizes(*this, getSizes(), type)))
    return failure();
  ArenaRegion region = getRegion();
  if (region == ArenaRegion::fixed && !type.hasStaticShape())
    return emitOpError() << "a view in the fixed region has a static shape, got " << type;
  if (region != ArenaRegion::fixed) {
    StepSizeKind want =
        region == ArenaRegion::tokens ? StepSizeKind::tokens : StepSizeKind::seqs;
    if (type.getNumDynamicDims() != 1 ||
        getSizes()[0].getDefiningOp<StepSizeOp>().getKind() != want)
      return emitOpError() << "a view in the " << stringifyArenaRegion(region)
                           << " region has exactly one dynamic dimension, bound to the "
                           << stringifyStepSizeKind(want) << " step size; got " << type;
  }
  if (failed(verifyOffset(*this, getOffset())))
    return failure();
  return verifyAlignRequest(*this, getAlign(), type);
}

LogicalResult SliceOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  ArenaOp arena =
      lookupArena(*this, symbolTable, getArenaAttr(),
                  {ArenaKind::activations, ArenaKind::workspace},
                  "; weights are addressed by exec.weight");
  if (!arena)
    return failure();
  ViewType type = viewType(getResult());
  return verifyPlacement(*this, arena, getRegion(), getOffset(), getAlign(), type,
                         *getBytesPerUnit(type));
}

//===----------------------------------------------------------------------===//
// WeightOp
//===----------------------------------------------------------------------===//

/// Whether the tensor attribute `value` has the view's shape and element type.
static LogicalResult checkWeightData(WeightOp op, Attribute value, StringRef what) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements)
    return op.emitOpError() << what << " is not a tensor";
  ViewType type = viewType(op.getResult());
  auto shaped = cast<ShapedType>(elements.getType());
  if (shaped.getShape() != type.getShape() || shaped.getElementType() != type.getElementType())
    return op.emitOpError() << what << " of type " << shaped << " does not match the view "
                            << type;
  return success();
}

LogicalResult WeightOp::verify() {
  if (getName().empty())
    return emitOpError("weight name must not be empty");
  ViewType type = viewType(getResult());
  if (!type.hasStaticShape())
    return emitOpError() << "a weight has a static shape, got " << type;
  if (getValue() && getShards())
    return emitOpError("has either one value for every rank or one shard per rank, not both");
  if (getValue() && failed(checkWeightData(*this, *getValue(), "value")))
    return failure();
  if (getShards())
    for (auto [rank, shard] : llvm::enumerate(*getShards()))
      if (failed(checkWeightData(*this, shard, "shard " + std::to_string(rank))))
        return failure();
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
  ViewType type = viewType(getResult());
  return verifyPlacement(*this, arena, ArenaRegion::fixed, getOffset(), getAlign(), type,
                         type.getStaticByteSize());
}

//===----------------------------------------------------------------------===//
// ViewOp
//===----------------------------------------------------------------------===//

LogicalResult ViewOp::verify() {
  ViewType from = viewType(getSource()), to = viewType(getResult());
  if (from.getElementType() != to.getElementType())
    return emitOpError() << "a view keeps the element type: " << from << " vs " << to;
  if (from.getNumDynamicDims() > 1 || to.getNumDynamicDims() > 1 ||
      from.getNumDynamicDims() != to.getNumDynamicDims())
    return emitOpError() << "both sides have one dynamic dimension, or neither: " << from
                         << " vs " << to;
  // Elements per unit of the dynamic extent (or in all) must agree.
  auto staticCount = [](ViewType t) {
    int64_t n = 1;
    for (int64_t d : t.getShape())
      if (!ShapedType::isDynamic(d))
        n *= d;
    return n;
  };
  int64_t a = staticCount(from), b = staticCount(to);
  // With a dynamic extent, one count must divide the other (the extent
  // scales by the quotient); a zero count only views a zero count.
  bool agree = from.getNumDynamicDims() == 0 ? a == b
               : (a == 0 || b == 0)            ? a == b
                                               : (a % b == 0 || b % a == 0);
  if (!agree)
    return emitOpError() << "cannot view " << from << " as " << to
                         << ": the element counts differ";
  return success();
}

//===----------------------------------------------------------------------===//
// StepInputOp
//===----------------------------------------------------------------------===//

LogicalResult StepInputOp::verify() {
  ViewType type = viewType(getResult());
  Type e = type.getElementType();
  if (type.getRank() != 1 || !type.isDynamicDim(0) ||
      !(e.isSignlessInteger(32) || e.isSignlessInteger(64)))
    return emitOpError() << "a " << stringifyStepInputKind(getKind())
                         << " input is a !exec.view<?xi32> or !exec.view<?xi64>, got " << type;
  return success();
}
