//===- ExecOps.cpp - exec op classes and shared helpers -------------------===//
//
// The generated op classes, and the helpers of ExecUtils.h that the
// verifiers, the exec passes and the plan writer share: extents of views,
// and which views a step reads and writes. Each op family's verifiers live
// in their own file.
//
//===----------------------------------------------------------------------===//
#include "ExecAssembly.h"
#include "accel/dialects/Exec/ExecOps.h"
#include "accel/dialects/Exec/ExecUtils.h"
#include "accel/dialects/Transformer/TransformerDialect.h"

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

/// The step size bound to dynamic dimension `dim` of a view made with
/// `sizes` (alloc, slice).
static Extent boundBy(OperandRange sizes, ViewType type, unsigned dim) {
  unsigned index = type.getDynamicDimIndex(dim);
  if (index >= sizes.size())
    return Extent::unknown();
  if (auto size = sizes[index].getDefiningOp<StepSizeOp>())
    return Extent::symbolic(size.getKind());
  return Extent::unknown();
}

Extent accel::exec::getExtent(Value view, unsigned dim) {
  auto type = cast<ViewType>(view.getType());
  assert(dim < type.getRank() && "dimension out of range");
  if (!type.isDynamicDim(dim))
    return Extent::fixed(type.getDimSize(dim));
  Operation *def = view.getDefiningOp();
  if (auto slice = dyn_cast_or_null<SliceOp>(def))
    return boundBy(slice.getSizes(), type, dim);
  if (auto alloc = dyn_cast_or_null<AllocOp>(def))
    return boundBy(alloc.getSizes(), type, dim);
  if (isa_and_nonnull<StepInputOp>(def))
    return Extent::symbolic(StepSizeKind::tokens);
  // A view's one dynamic dimension has its source's one dynamic extent when
  // the static dimensions hold as many elements on both sides.
  if (auto v = dyn_cast_or_null<ViewOp>(def)) {
    auto source = cast<ViewType>(v.getSource().getType());
    auto staticCount = [](ViewType t) {
      int64_t n = 1;
      for (int64_t d : t.getShape())
        if (!ShapedType::isDynamic(d))
          n *= d;
      return n;
    };
    if (source.getNumDynamicDims() != 1 || staticCount(source) != staticCount(type))
      return Extent::unknown();
    for (unsigned d = 0; d < source.getRank(); ++d)
      if (source.isDynamicDim(d))
        return getExtent(v.getSource(), d);
  }
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

std::optional<int64_t> accel::exec::getBytesPerUnit(ViewType type) {
  if (type.getNumDynamicDims() > 1)
    return std::nullopt;
  SmallVector<int64_t> ones(type.getNumDynamicDims(), 1);
  return type.getByteSize(ones);
}

bool accel::exec::isFP8Type(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

bool accel::exec::isWideFloatType(Type type) {
  return type.isF32() || type.isF16() || type.isBF16();
}

//===----------------------------------------------------------------------===//
// What a step reads and writes
//===----------------------------------------------------------------------===//

bool accel::exec::isStep(Operation *op) {
  return isa<EmbeddingOp, RmsNormOp, AddRmsNormOp, LayerNormOp, ResidualAddOp, ActivationOp,
             GatedActOp, GatedMlpOp, MoeOp, RotaryOp, QkvRotaryOp, QkvRotaryKvWriteOp, KVWriteOp,
             AttentionOp, GemmOp, LogitsOp, SplitOp, CopyOp, CollectiveOp, PpTransferOp, OnnxOp,
             LaunchOp>(op);
}

SmallVector<Value> accel::exec::getStepOutputs(Operation *op) {
  return llvm::TypeSwitch<Operation *, SmallVector<Value>>(op)
      .Case([](EmbeddingOp o) { return SmallVector<Value>{o.getOut()}; })
      .Case([](RmsNormOp o) { return SmallVector<Value>{o.getOut()}; })
      .Case([](AddRmsNormOp o) { return SmallVector<Value>{o.getOut(), o.getSum()}; })
      .Case([](LayerNormOp o) { return SmallVector<Value>{o.getOut()}; })
      .Case([](ResidualAddOp o) { return SmallVector<Value>{o.getOut()}; })
      .Case([](ActivationOp o) { return SmallVector<Value>{o.getOut()}; })
      .Case([](GatedActOp o) { return SmallVector<Value>{o.getOut()}; })
      .Case([](GatedMlpOp o) { return SmallVector<Value>{o.getOut()}; })
      .Case([](MoeOp o) { return SmallVector<Value>{o.getOut()}; })
      .Case([](RotaryOp o) { return SmallVector<Value>{o.getOut()}; })
      .Case([](QkvRotaryOp o) { return SmallVector<Value>{o.getQ(), o.getK(), o.getV()}; })
      .Case([](QkvRotaryKvWriteOp o) { return SmallVector<Value>{o.getQ()}; })
      .Case([](KVWriteOp) { return SmallVector<Value>{}; })
      .Case([](AttentionOp o) { return SmallVector<Value>{o.getOut()}; })
      .Case([](GemmOp o) { return SmallVector<Value>{o.getOut()}; })
      .Case([](LogitsOp o) { return SmallVector<Value>{o.getOut()}; })
      .Case([](SplitOp o) { return SmallVector<Value>(o.getOutputs()); })
      .Case([](CopyOp o) { return SmallVector<Value>{o.getTarget()}; })
      .Case([](CollectiveOp o) { return SmallVector<Value>{o.getOutput()}; })
      .Case([](PpTransferOp o) { return SmallVector<Value>{o.getOutput()}; })
      .Case([](OnnxOp o) { return SmallVector<Value>(o.getOutputs()); })
      .Case([](LaunchOp o) {
        // A generated kernel writes the views it is given after its inputs:
        // launches record how many they read in `accel.num_inputs`.
        SmallVector<Value> views;
        for (Value v : o.getArgs())
          if (isa<ViewType>(v.getType()))
            views.push_back(v);
        int64_t reads = 0;
        if (auto n = o->getAttrOfType<IntegerAttr>("accel.num_inputs"))
          reads = n.getInt();
        return SmallVector<Value>(llvm::drop_begin(views, std::min<size_t>(reads, views.size())));
      })
      .Default([](Operation *) { return SmallVector<Value>{}; });
}

SmallVector<Value> accel::exec::getStepInputs(Operation *op) {
  if (!isStep(op))
    return {};
  SmallVector<Value> outputs = getStepOutputs(op), inputs;
  for (Value v : op->getOperands())
    if (isa<ViewType>(v.getType()) && !llvm::is_contained(outputs, v))
      inputs.push_back(v);
  // An in-place collective reads the view it writes.
  if (auto c = dyn_cast<CollectiveOp>(op); c && c.getInput() == c.getOutput())
    inputs.push_back(c.getInput());
  return inputs;
}

std::string accel::exec::locationName(mlir::Location loc) {
  if (auto name = mlir::dyn_cast<mlir::NameLoc>(loc))
    return name.getName().str();
  if (auto fused = mlir::dyn_cast<mlir::FusedLoc>(loc))
    for (mlir::Location l : fused.getLocations()) {
      std::string s = locationName(l);
      if (!s.empty())
        return s;
    }
  return "";
}
