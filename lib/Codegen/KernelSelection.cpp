//===- KernelSelection.cpp - which steps get generated kernels -------------===//
//
// The transformer ops whose steps run a generated kernel, each specialised
// by what its types say statically. An op whose shapes are not static
// enough (a dynamic hidden size, an odd gated width, interleaved rotary)
// keeps the runtime's hand-written kernel: its step names no kernel.
//
//===----------------------------------------------------------------------===//
#include "accel/Codegen/Codegen.h"

#include "IRWriter.h"

#include "accel/dialects/Transformer/TransformerOps.h"

#include <map>

using namespace mlir;
namespace tf = accel::transformer;

namespace accel::codegen {

namespace {
/// The static last dimension of a ranked tensor, or 0.
int64_t lastDim(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || t.getRank() == 0 || t.isDynamicDim(t.getRank() - 1))
    return 0;
  return t.getShape().back();
}

bool isActivationFloat(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && (t.getElementType().isF32() || t.getElementType().isBF16() ||
               t.getElementType().isF16());
}

std::optional<KernelSpec> specFor(Operation *o) {
  KernelSpec s;
  if (auto op = dyn_cast<tf::RmsNormOp>(o)) {
    s.family = Family::RmsNorm;
    s.hidden = lastDim(op.getX());
    return s.hidden > 0 && isActivationFloat(op.getX()) ? std::optional(s) : std::nullopt;
  }
  if (auto op = dyn_cast<tf::AddRmsNormOp>(o)) {
    s.family = Family::AddRmsNorm;
    s.hidden = lastDim(op.getX());
    return s.hidden > 0 && isActivationFloat(op.getX()) ? std::optional(s) : std::nullopt;
  }
  if (auto op = dyn_cast<tf::ResidualAddOp>(o)) {
    s.family = Family::ResidualAdd;
    s.hidden = lastDim(op.getResidual());
    return isActivationFloat(op.getResidual()) ? std::optional(s) : std::nullopt;
  }
  if (auto op = dyn_cast<tf::ActivationOp>(o)) {
    s.family = Family::Activation;
    s.activation = tf::stringifyActivationKind(op.getKind()).str();
    s.hidden = lastDim(op.getInput());
    return isActivationFloat(op.getInput()) && isKnownActivation(s.activation)
               ? std::optional(s)
               : std::nullopt;
  }
  if (auto op = dyn_cast<tf::GatedActOp>(o)) {
    s.family = Family::GatedAct;
    s.activation = tf::stringifyActivationKind(op.getKind()).str();
    const int64_t cols = lastDim(op.getInput());
    s.hidden = cols / 2;
    return cols > 0 && cols % 2 == 0 && isActivationFloat(op.getInput()) &&
                   isKnownActivation(s.activation)
               ? std::optional(s)
               : std::nullopt;
  }
  if (auto op = dyn_cast<tf::GatedMlpOp>(o)) {
    // The activation between the fused gate_up GEMM and the down GEMM.
    if (!op.getGateUp())
      return std::nullopt;
    auto w = dyn_cast<RankedTensorType>(op.getGateUp().getType());
    if (!w || w.getRank() != 2 || w.isDynamicDim(0) || w.getDimSize(0) % 2 != 0)
      return std::nullopt;
    s.family = Family::GatedAct;
    s.activation = tf::stringifyActivationKind(op.getKind()).str();
    s.hidden = w.getDimSize(0) / 2;
    return isActivationFloat(op.getX()) && isKnownActivation(s.activation) ? std::optional(s)
                                                                            : std::nullopt;
  }
  if (auto op = dyn_cast<tf::RotaryOp>(o)) {
    if (op.getStyle() != tf::RotaryStyle::HalfSplit || !isActivationFloat(op.getInput()))
      return std::nullopt;
    auto x = dyn_cast<RankedTensorType>(op.getInput().getType());
    auto pos = dyn_cast<RankedTensorType>(op.getPositions().getType());
    if (!x || x.getRank() != 3 || x.isDynamicDim(1) || x.isDynamicDim(2) || !pos)
      return std::nullopt;
    if (!pos.getElementType().isInteger(64) && !pos.getElementType().isInteger(32))
      return std::nullopt;
    s.family = Family::Rotary;
    s.heads = x.getDimSize(1);
    s.headDim = x.getDimSize(2);
    s.rotaryDim = int64_t(op.getRotaryDim());
    s.tables = op.getCosCache() != nullptr;
    s.positions64 = pos.getElementType().isInteger(64);
    if (s.rotaryDim <= 0 || s.rotaryDim % 2 != 0 || s.rotaryDim > s.headDim)
      return std::nullopt;
    return s;
  }
  return std::nullopt;
}
} // namespace

KernelSelection selectKernels(Operation *scope) {
  KernelSelection sel;
  std::map<std::string, KernelSpec> byName;
  scope->walk([&](Operation *op) {
    if (std::optional<KernelSpec> s = specFor(op)) {
      std::string name = s->name();
      sel.kernelOf[op] = name;
      byName.emplace(name, *s);
    }
  });
  for (auto &[name, spec] : byName)
    sel.kernels.push_back(spec);
  return sel;
}

} // namespace accel::codegen
