//===- ExecOps.cpp - exec op classes and shared helpers -------------------===//
//
// The generated op classes, and the extent helpers of ExecUtils.h that the
// verifiers, the Layout pass and the plan writer share. Each op family's
// verifiers live in their own file.
//
//===----------------------------------------------------------------------===//
#include "ExecAssembly.h"

#include "accel/dialects/Exec/ExecOps.h"
#include "accel/dialects/Exec/ExecUtils.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace accel::exec;

#define GET_OP_CLASSES
#include "dialects/Exec/ExecOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Extents
//===----------------------------------------------------------------------===//

std::string Extent::str() const {
  if (isStatic())
    return std::to_string(size);
  if (!symbol)
    return "?";
  std::string text = stringifyStepSizeKind(*symbol).str();
  if (addend > 0)
    text += " + " + std::to_string(addend);
  else if (addend < 0)
    text += " - " + std::to_string(-addend);
  return text;
}

/// The extent of the leading dimension of a step input of `kind`.
static Extent stepInputRows(StepInputKind kind) {
  switch (kind) {
  case StepInputKind::token_ids:
  case StepInputKind::positions:
  case StepInputKind::slot_mapping:
    return Extent::symbolic(StepSizeKind::tokens);
  case StepInputKind::seq_lens:
  case StepInputKind::block_tables:
  case StepInputKind::logits_indices:
    return Extent::symbolic(StepSizeKind::seqs);
  case StepInputKind::query_start_loc:
    return Extent::symbolic(StepSizeKind::seqs, 1);
  }
  llvm_unreachable("unknown step input kind");
}

Extent accel::exec::getExtent(Value view, unsigned dim) {
  auto type = cast<ViewType>(view.getType());
  assert(dim < type.getRank() && "dimension out of range");
  if (!type.isDynamicDim(dim))
    return Extent::fixed(type.getDimSize(dim));
  Operation *def = view.getDefiningOp();
  if (auto slice = dyn_cast_or_null<SliceOp>(def)) {
    unsigned index = type.getDynamicDimIndex(dim);
    if (index >= slice.getSizes().size())
      return Extent::unknown();
    if (auto size = slice.getSizes()[index].getDefiningOp<StepSizeOp>())
      return Extent::symbolic(size.getKind());
    return Extent::unknown();
  }
  if (auto input = dyn_cast_or_null<StepInputOp>(def))
    return dim == 0 ? stepInputRows(input.getKind()) : Extent::unknown();
  return Extent::unknown();
}

bool accel::exec::extentsAgree(const Extent &a, const Extent &b,
                               ScheduleOp schedule) {
  if (a.isStatic() || b.isStatic())
    return a.size == b.size;
  if (!a.symbol || !b.symbol)
    return true;
  StepSizeKind kindA = *a.symbol, kindB = *b.symbol;
  if (schedule && schedule.getKind() == ScheduleKind::decode) {
    // One token per sequence: tokens and seqs are the same size.
    kindA = StepSizeKind::tokens;
    kindB = StepSizeKind::tokens;
  }
  return kindA == kindB && a.addend == b.addend;
}

std::optional<int64_t> accel::exec::getExtentBound(const Extent &extent,
                                                   ScheduleOp schedule) {
  if (extent.isStatic())
    return extent.size;
  if (!extent.symbol || !schedule)
    return std::nullopt;
  return schedule.getBound(*extent.symbol) + extent.addend;
}

std::optional<int64_t> accel::exec::getMaxByteSize(Value view) {
  auto type = cast<ViewType>(view.getType());
  ScheduleOp schedule = nullptr;
  if (Operation *def = view.getDefiningOp())
    schedule = def->getParentOfType<ScheduleOp>();
  SmallVector<int64_t> dynamicExtents;
  for (unsigned dim = 0, rank = type.getRank(); dim < rank; ++dim) {
    if (!type.isDynamicDim(dim))
      continue;
    std::optional<int64_t> bound =
        getExtentBound(getExtent(view, dim), schedule);
    if (!bound)
      return std::nullopt;
    dynamicExtents.push_back(*bound);
  }
  return type.getByteSize(dynamicExtents);
}

bool accel::exec::isFP8Type(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

bool accel::exec::isWideFloatType(Type type) {
  return type.isF32() || type.isF16() || type.isBF16();
}
