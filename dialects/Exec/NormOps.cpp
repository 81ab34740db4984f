//===- NormOps.cpp - exec.rms_norm, exec.add_rms_norm, exec.layer_norm ----===//
//
// Also the verifier helpers every step family shares (ExecVerify.h).
//
//===----------------------------------------------------------------------===//
#include "ExecVerify.h"

using namespace mlir;
using namespace accel::exec;
using namespace accel::exec::detail;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

LogicalResult accel::exec::detail::verifySameShape(Operation *op, Value a, StringRef aName,
                                                   Value b, StringRef bName) {
  ViewType ta = viewType(a), tb = viewType(b);
  bool same = ta.getRank() == tb.getRank();
  ScheduleOp schedule = enclosingSchedule(op);
  for (unsigned d = 0; same && d < ta.getRank(); ++d)
    same = extentsAgree(getExtent(a, d), getExtent(b, d), schedule);
  if (!same)
    return op->emitOpError() << aName << " " << ta << " and " << bName << " " << tb
                             << " differ in shape";
  return success();
}

LogicalResult accel::exec::detail::verifySameType(Operation *op, Value a, StringRef aName,
                                                  Value b, StringRef bName) {
  if (viewType(a).getElementType() != viewType(b).getElementType())
    return op->emitOpError() << aName << " " << a.getType() << " and " << bName << " "
                             << b.getType() << " differ in element type";
  return verifySameShape(op, a, aName, b, bName);
}

LogicalResult accel::exec::detail::verifySameRows(Operation *op, Value a, StringRef aName,
                                                  Value b, StringRef bName) {
  ViewType ta = viewType(a), tb = viewType(b);
  if (ta.getRank() == 0 || tb.getRank() == 0 ||
      !extentsAgree(getExtent(a, 0), getExtent(b, 0), enclosingSchedule(op)))
    return op->emitOpError() << aName << " " << ta << " and " << bName << " " << tb
                             << " differ in rows";
  return success();
}

LogicalResult accel::exec::detail::verifyRank(Operation *op, Value value, StringRef name,
                                              ArrayRef<int64_t> ranks) {
  int64_t rank = viewType(value).getRank();
  if (llvm::is_contained(ranks, rank))
    return success();
  InFlightDiagnostic diag = op->emitOpError() << name << " must have rank";
  for (auto [i, r] : llvm::enumerate(ranks))
    diag << (i == 0 ? " " : " or ") << r;
  return diag << ", got " << value.getType();
}

LogicalResult accel::exec::detail::verifyKernelRef(Operation *op, SymbolTableCollection &symbols,
                                                   FlatSymbolRefAttr kernel) {
  if (!kernel)
    return success();
  return success(lookupSymbol<KernelOp>(op, symbols, kernel, "an exec.kernel") != nullptr);
}

/// The last dimension of a view (a row's length), -1 when dynamic.
static int64_t lastDim(Value v) {
  ViewType t = viewType(v);
  return t.getRank() == 0 ? 1 : t.getDimSize(t.getRank() - 1);
}

/// x and out of a row-wise op, and its [hidden] weight.
static LogicalResult verifyRowwise(Operation *op, Value x, Value weight, Value out) {
  if (failed(verifySameType(op, x, "x", out, "out")))
    return failure();
  if (lastDim(x) < 1)
    return op->emitOpError() << "x " << x.getType() << " needs a static last dimension";
  ViewType w = viewType(weight);
  if (w.getRank() != 1 || w.getDimSize(0) != lastDim(x))
    return op->emitOpError() << "the weight must be [" << lastDim(x)
                             << "], the last dimension of x, got " << w;
  return success();
}

static LogicalResult verifyEpsilon(Operation *op, APFloat epsilon) {
  if (!(epsilon.convertToDouble() >= 0))
    return op->emitOpError("epsilon must be non-negative");
  return success();
}

//===----------------------------------------------------------------------===//
// RmsNormOp, AddRmsNormOp, LayerNormOp
//===----------------------------------------------------------------------===//

LogicalResult RmsNormOp::verify() {
  if (failed(verifyRowwise(*this, getX(), getWeight(), getOut())))
    return failure();
  return verifyEpsilon(*this, getEpsilon());
}

LogicalResult RmsNormOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyKernelRef(*this, symbols, getKernelAttr());
}

LogicalResult AddRmsNormOp::verify() {
  if (failed(verifyRowwise(*this, getX(), getWeight(), getOut())) ||
      failed(verifySameType(*this, getX(), "x", getResidual(), "residual")) ||
      failed(verifySameType(*this, getX(), "x", getSum(), "sum")))
    return failure();
  return verifyEpsilon(*this, getEpsilon());
}

LogicalResult AddRmsNormOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyKernelRef(*this, symbols, getKernelAttr());
}

LogicalResult LayerNormOp::verify() {
  if (failed(verifyRowwise(*this, getX(), getWeight(), getOut())))
    return failure();
  if (getBias() && viewType(getBias()).getShape() != viewType(getWeight()).getShape())
    return emitOpError() << "the bias " << getBias().getType() << " must be shaped as the weight "
                         << getWeight().getType();
  return verifyEpsilon(*this, getEpsilon());
}
