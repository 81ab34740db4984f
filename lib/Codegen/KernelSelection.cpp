//===- KernelSelection.cpp - which exec steps get generated kernels --------===//
//
// The exec steps a generated kernel can run, each specialised by what its
// view types say statically. A step whose shapes are not static enough (a
// dynamic hidden size, an odd gated width, interleaved rotary) keeps the
// runtime's hand-written kernel. accel-exec-select-kernels declares one
// exec.kernel per specialisation (its config holds the KernelSpec) and
// names it in the step's `kernel` attribute; generateKernels builds the
// declared ones.
//
//===----------------------------------------------------------------------===//
#include "accel/Codegen/Codegen.h"

#include "IRWriter.h"

#include "accel/dialects/Exec/ExecOps.h"
#include "accel/dialects/Transformer/TransformerDialect.h"

#include "mlir/IR/Builders.h"

#include <map>

using namespace mlir;
namespace ex = accel::exec;
namespace tf = accel::transformer;

namespace accel::codegen {

namespace {
/// The static last dimension of a view, or 0.
int64_t lastDim(Value v) {
  auto t = dyn_cast<ex::ViewType>(v.getType());
  if (!t || t.getRank() == 0 || t.isDynamicDim(t.getRank() - 1))
    return 0;
  return t.getShape().back();
}

bool isActivationFloat(Value v) {
  auto t = dyn_cast<ex::ViewType>(v.getType());
  return t && (t.getElementType().isF32() || t.getElementType().isBF16() ||
               t.getElementType().isF16());
}

std::optional<KernelSpec> specFor(Operation *o) {
  KernelSpec s;
  if (auto op = dyn_cast<ex::RmsNormOp>(o)) {
    s.family = Family::RmsNorm;
    s.hidden = lastDim(op.getX());
    return s.hidden > 0 && isActivationFloat(op.getX()) ? std::optional(s) : std::nullopt;
  }
  if (auto op = dyn_cast<ex::AddRmsNormOp>(o)) {
    s.family = Family::AddRmsNorm;
    s.hidden = lastDim(op.getX());
    return s.hidden > 0 && isActivationFloat(op.getX()) ? std::optional(s) : std::nullopt;
  }
  if (auto op = dyn_cast<ex::ResidualAddOp>(o)) {
    s.family = Family::ResidualAdd;
    s.hidden = lastDim(op.getResidual());
    return isActivationFloat(op.getResidual()) ? std::optional(s) : std::nullopt;
  }
  if (auto op = dyn_cast<ex::ActivationOp>(o)) {
    s.family = Family::Activation;
    s.activation = tf::stringifyActivationKind(op.getKind().getValue()).str();
    s.hidden = lastDim(op.getInput());
    return isActivationFloat(op.getInput()) && isKnownActivation(s.activation)
               ? std::optional(s)
               : std::nullopt;
  }
  if (auto op = dyn_cast<ex::GatedActOp>(o)) {
    s.family = Family::GatedAct;
    s.activation = tf::stringifyActivationKind(op.getKind().getValue()).str();
    const int64_t cols = lastDim(op.getInput());
    s.hidden = cols / 2;
    return cols > 0 && cols % 2 == 0 && isActivationFloat(op.getInput()) &&
                   isKnownActivation(s.activation)
               ? std::optional(s)
               : std::nullopt;
  }
  if (auto op = dyn_cast<ex::GatedMlpOp>(o)) {
    // The activation between the fused gate_up GEMM and the down GEMM.
    if (!op.getGateUp())
      return std::nullopt;
    auto w = cast<ex::ViewType>(op.getGateUp().getType());
    if (w.getRank() != 2 || w.isDynamicDim(0) || w.getDimSize(0) % 2 != 0)
      return std::nullopt;
    s.family = Family::GatedAct;
    s.activation = tf::stringifyActivationKind(op.getKind().getValue()).str();
    s.hidden = w.getDimSize(0) / 2;
    return isActivationFloat(op.getX()) && isKnownActivation(s.activation) ? std::optional(s)
                                                                            : std::nullopt;
  }
  if (auto op = dyn_cast<ex::RotaryOp>(o)) {
    if (op.getStyle().getValue() != tf::RotaryStyle::HalfSplit ||
        !isActivationFloat(op.getInput()))
      return std::nullopt;
    auto x = cast<ex::ViewType>(op.getInput().getType());
    auto pos = cast<ex::ViewType>(op.getPositions().getType());
    if (x.getRank() != 3 || x.isDynamicDim(1) || x.isDynamicDim(2))
      return std::nullopt;
    if (!pos.getElementType().isInteger(64) && !pos.getElementType().isInteger(32))
      return std::nullopt;
    s.family = Family::Rotary;
    s.heads = x.getDimSize(1);
    s.headDim = x.getDimSize(2);
    s.rotaryDim = op.getRotaryDim();
    s.tables = op.getCos() != nullptr;
    s.positions64 = pos.getElementType().isInteger(64);
    if (s.rotaryDim <= 0 || s.rotaryDim % 2 != 0 || s.rotaryDim > s.headDim)
      return std::nullopt;
    return s;
  }
  return std::nullopt;
}

std::optional<Family> familyOf(StringRef name) {
  for (Family f : {Family::RmsNorm, Family::AddRmsNorm, Family::ResidualAdd, Family::Activation,
                   Family::GatedAct, Family::Rotary})
    if (name == familyName(f))
      return f;
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

DictionaryAttr specConfig(const KernelSpec &s, MLIRContext *context) {
  Builder b(context);
  SmallVector<NamedAttribute> attrs;
  auto i = [&](StringRef key, int64_t v) { attrs.push_back(b.getNamedAttr(key, b.getI64IntegerAttr(v))); };
  switch (s.family) {
  case Family::RmsNorm:
  case Family::AddRmsNorm:
  case Family::ResidualAdd:
    i("hidden", s.hidden);
    break;
  case Family::Activation:
  case Family::GatedAct:
    i(s.family == Family::GatedAct ? "intermediate" : "hidden", s.hidden);
    attrs.push_back(b.getNamedAttr("activation", b.getStringAttr(s.activation)));
    break;
  case Family::Rotary:
    i("heads", s.heads);
    i("head_dim", s.headDim);
    i("rotary_dim", s.rotaryDim);
    attrs.push_back(b.getNamedAttr("tables", b.getBoolAttr(s.tables)));
    attrs.push_back(b.getNamedAttr("positions_i64", b.getBoolAttr(s.positions64)));
    break;
  }
  return b.getDictionaryAttr(attrs);
}

std::optional<KernelSpec> specFromKernel(Operation *kernelOp) {
  auto k = dyn_cast<ex::KernelOp>(kernelOp);
  if (!k || !k.getReference())
    return std::nullopt;
  std::optional<Family> family = familyOf(*k.getReference());
  DictionaryAttr c = k.getConfigAttr();
  if (!family || !c)
    return std::nullopt;
  KernelSpec s;
  s.family = *family;
  auto i = [&](StringRef key) -> int64_t {
    auto a = c.getAs<IntegerAttr>(key);
    return a ? a.getInt() : 0;
  };
  auto flag = [&](StringRef key) {
    auto a = c.getAs<BoolAttr>(key);
    return a && a.getValue();
  };
  s.hidden = *family == Family::GatedAct ? i("intermediate") : i("hidden");
  if (auto a = c.getAs<StringAttr>("activation"))
    s.activation = a.getValue().str();
  s.heads = i("heads");
  s.headDim = i("head_dim");
  s.rotaryDim = i("rotary_dim");
  s.tables = flag("tables");
  s.positions64 = flag("positions_i64");
  if (s.name() != k.getSymName())
    return std::nullopt;
  return s;
}

} // namespace accel::codegen
