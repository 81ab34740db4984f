//===- LibraryOps.cpp - library calls: exec.gemm, exec.logits -------------===//
#include "ExecVerify.h"

using namespace mlir;
using namespace accel::exec;
using namespace accel::exec::detail;

namespace tf = accel::transformer;

//===----------------------------------------------------------------------===//
// GemmOp
//===----------------------------------------------------------------------===//

/// The element types a weight-only quantised GEMM reads.
static bool isQuantizedWeight(Type t) {
  return isFP8Type(t) || t.isSignlessInteger(8) || t.isSignlessInteger(4);
}

LogicalResult GemmOp::verify() {
  for (auto [v, name] : {std::pair<Value, StringRef>{getX(), "x"},
                         {getWeight(), "weight"},
                         {getOut(), "out"}})
    if (failed(verifyRank(*this, v, name, {2})))
      return failure();
  ViewType x = viewType(getX()), w = viewType(getWeight()), out = viewType(getOut());
  if (w.isDynamicDim(0) || w.isDynamicDim(1))
    return emitOpError() << "the weight must be static, got " << w;
  if (failed(verifyStaticDim(*this, getX(), 1, "x", "feature dimension")) ||
      failed(verifyStaticDim(*this, getOut(), 1, "out", "feature dimension")))
    return failure();
  if (x.getDimSize(1) != w.getDimSize(1))
    return emitOpError() << "x " << x << " has " << x.getDimSize(1)
                         << " input features but the weight " << w << " has "
                         << w.getDimSize(1);
  if (out.getDimSize(1) != w.getDimSize(0))
    return emitOpError() << "out " << out << " must have the weight's " << w.getDimSize(0)
                         << " output features";
  if (failed(verifySameRows(*this, getX(), "x", getOut(), "out")))
    return failure();
  if (getBias() && (viewType(getBias()).getRank() != 1 ||
                    viewType(getBias()).getDimSize(0) != w.getDimSize(0)))
    return emitOpError() << "the bias must be [" << w.getDimSize(0) << "], got "
                         << getBias().getType();
  Type we = w.getElementType();
  bool quantized = isQuantizedWeight(we);
  if (quantized != static_cast<bool>(getWeightScale()))
    return emitOpError() << "a weight_scale is needed exactly when the weight is quantised ("
                         << we << ")";
  if (quantized != getGranularity().has_value())
    return emitOpError("a granularity is needed exactly when the weight is quantised");
  if (getGranularity() && (getGranularity()->getValue() == tf::QuantGranularity::PerGroup) !=
                              getGroupSize().has_value())
    return emitOpError("group_size is needed exactly for per_group scales");
  if (getGroupSize() && (*getGroupSize() < 1 || w.getDimSize(1) % *getGroupSize() != 0))
    return emitOpError() << "group_size " << *getGroupSize() << " must divide the "
                         << w.getDimSize(1) << " input features";
  if (getZeroPoint() && !(we.isSignlessInteger(8) || we.isSignlessInteger(4)))
    return emitOpError("only integer weights have a zero point");
  if (getWeightScale()) {
    // per_tensor: a scalar; per_channel: one per output feature; per_group:
    // [out, in / group_size]. A zero point has the scale's shape.
    int64_t outF = w.getDimSize(0), inF = w.getDimSize(1);
    SmallVector<int64_t> want;
    switch (getGranularity()->getValue()) {
    case tf::QuantGranularity::PerTensor:
      break;
    case tf::QuantGranularity::PerChannel:
      want = {outF};
      break;
    case tf::QuantGranularity::PerGroup:
      want = {outF, inF / *getGroupSize()};
      break;
    }
    ViewType ws = viewType(getWeightScale());
    if (ws.getShape() != ArrayRef<int64_t>(want) || !isWideFloatType(ws.getElementType()))
      return emitOpError() << "a " << tf::stringifyQuantGranularity(getGranularity()->getValue())
                           << " weight_scale is " << ViewType::get(getContext(), want, ws.getElementType())
                           << " of f32, f16 or bf16, got " << ws;
    if (getZeroPoint() && viewType(getZeroPoint()).getShape() != ws.getShape())
      return emitOpError() << "the zero_point " << getZeroPoint().getType()
                           << " must have the weight_scale's shape " << ws;
  }
  if (getInputScale()) {
    ViewType is = viewType(getInputScale());
    if (is.getRank() != 0 || !is.getElementType().isF32())
      return emitOpError() << "a static input_scale is one f32 (!exec.view<f32>), got " << is;
  }
  if (std::optional<Type> q = getQuantizeTo()) {
    if (!(q->isSignlessInteger(8) || isa<Float8E4M3FNType>(*q)))
      return emitOpError() << "x is quantised to i8 or f8E4M3FN, not " << *q;
    if (!x.getElementType().isF32())
      return emitOpError() << "a W8A8 gemm quantises an f32 x, got " << x;
    if (getDynamicInput() == static_cast<bool>(getInputScale()))
      return emitOpError("a W8A8 gemm has a static input_scale or a dynamic one, exactly one");
    if (getActivation())
      return emitOpError("a W8A8 gemm has no activation epilogue");
  } else if (getInputScale() || getDynamicInput()) {
    return emitOpError("an input scale needs quantize_to");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// LogitsOp
//===----------------------------------------------------------------------===//

LogicalResult LogitsOp::verify() {
  for (auto [v, name] : {std::pair<Value, StringRef>{getHidden(), "hidden"},
                         {getLmHead(), "lm_head"},
                         {getOut(), "out"}})
    if (failed(verifyRank(*this, v, name, {2})))
      return failure();
  ViewType h = viewType(getHidden()), lm = viewType(getLmHead()), out = viewType(getOut());
  if (h.getDimSize(1) != lm.getDimSize(1))
    return emitOpError() << "hidden " << h << " and the lm_head " << lm
                         << " differ in hidden size";
  if (out.getDimSize(1) != lm.getDimSize(0))
    return emitOpError() << "out " << out << " must have the lm_head's " << lm.getDimSize(0)
                         << " vocabulary columns";
  if (!isWideFloatType(out.getElementType()))
    return emitOpError() << "logits are f32, f16 or bf16, got " << out;
  if (getBias()) {
    ViewType b = viewType(getBias());
    if (b.getRank() != 1 || b.getDimSize(0) != lm.getDimSize(0) ||
        !isWideFloatType(b.getElementType()))
      return emitOpError() << "the bias must be [" << lm.getDimSize(0)
                           << "] (one per vocabulary entry) of f32, f16 or bf16, got " << b;
  }
  if (getSoftcap() && !(getSoftcap()->convertToDouble() > 0))
    return emitOpError("softcap must be positive");
  if (!getSelectLast() && failed(verifySameRows(*this, getHidden(), "hidden", getOut(), "out")))
    return failure();
  if (getSelectLast()) {
    Extent rows = getExtent(getOut(), 0);
    if (rows.symbol &&
        !extentsAgree(rows, Extent::symbolic(StepSizeKind::seqs), enclosingSchedule(*this)))
      return emitOpError() << "with select_last, out has one row per sequence, got "
                           << rows.str() << " rows";
  }
  return success();
}
