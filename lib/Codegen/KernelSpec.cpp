//===- KernelSpec.cpp - names, variants and launch contracts of kernels ---===//
#include "accel/Codegen/KernelSpec.h"

#include <algorithm>

namespace accel::codegen {

const char *familyName(Family f) {
  switch (f) {
  case Family::RmsNorm: return "rms_norm";
  case Family::AddRmsNorm: return "add_rms_norm";
  case Family::ResidualAdd: return "residual_add";
  case Family::Activation: return "activation";
  case Family::GatedAct: return "gated_act";
  case Family::Rotary: return "rotary";
  }
  return "?";
}

const char *elemTypeName(ElemType t) {
  return t == ElemType::BF16 ? "bf16" : t == ElemType::F16 ? "f16" : "f32";
}

unsigned elemTypeBytes(ElemType t) { return t == ElemType::F32 ? 4 : 2; }

std::string KernelSpec::name() const {
  std::string n = familyName(family);
  switch (family) {
  case Family::RmsNorm:
  case Family::AddRmsNorm:
  case Family::ResidualAdd:
    return n + "_h" + std::to_string(hidden);
  case Family::Activation:
    return n + "_" + activation + "_h" + std::to_string(hidden);
  case Family::GatedAct:
    return n + "_" + activation + "_i" + std::to_string(hidden);
  case Family::Rotary:
    return n + "_h" + std::to_string(heads) + "_d" + std::to_string(headDim) + "_r" +
           std::to_string(rotaryDim) + (tables ? "_tab" : "_freq") +
           (positions64 ? "_p64" : "_p32");
  }
  return n;
}

namespace {
/// Threads for a block that loops over `n` items: a multiple of 32 in [32, 1024].
unsigned rowThreads(int64_t n) {
  return unsigned(std::clamp<int64_t>((n + 31) / 32 * 32, 32, 1024));
}
} // namespace

KernelVariant variantOf(const KernelSpec &spec, ElemType dtype) {
  KernelVariant v;
  v.dtype = dtype;
  v.symbol = spec.name() + "_" + elemTypeName(dtype);
  const unsigned wide = 16 / elemTypeBytes(dtype);
  auto fits = [&](int64_t n) { return n > 0 && n % wide == 0; };
  switch (spec.family) {
  case Family::RmsNorm:
  case Family::AddRmsNorm:
    v.vectorWidth = fits(spec.hidden) ? wide : 1;
    v.blockSize = rowThreads(spec.hidden / v.vectorWidth);
    break;
  case Family::ResidualAdd:
  case Family::Activation:
  case Family::GatedAct:
    v.vectorWidth = fits(spec.hidden) ? wide : 1;
    v.blockSize = 256;
    break;
  case Family::Rotary: {
    const int64_t half = spec.rotaryDim / 2, rest = spec.headDim - spec.rotaryDim;
    v.vectorWidth = fits(half) && (rest == 0 || fits(rest)) ? wide : 1;
    v.blockSize = rowThreads(spec.heads * (half + rest) / v.vectorWidth);
    break;
  }
  }
  return v;
}

GridRule gridRule(Family f) {
  return f == Family::RmsNorm || f == Family::AddRmsNorm || f == Family::Rotary
             ? GridRule::Rows
             : GridRule::Elements;
}

std::vector<std::string> kernelParams(const KernelSpec &spec) {
  switch (spec.family) {
  case Family::RmsNorm:
    return {"x:act*", "weight:f32*", "out:act*", "eps:f32", "offset:f32"};
  case Family::AddRmsNorm:
    return {"x:act*", "residual:act*", "weight:f32*", "out:act*", "sum:act*", "eps:f32",
            "offset:f32"};
  case Family::ResidualAdd:
    return {"a:act*", "b:act*", "out:act*", "n:i64"};
  case Family::Activation:
    return {"x:act*", "out:act*", "n:i64"};
  case Family::GatedAct:
    return {"x:act*", "out:act*", "rows:i64"};
  case Family::Rotary: {
    std::vector<std::string> p = {"x:act*", "out:act*",
                                  spec.positions64 ? "positions:i64*" : "positions:i32*"};
    if (spec.tables) {
      p.push_back("cos:f32*");
      p.push_back("sin:f32*");
    } else {
      p.push_back("inv_freq:f32*");
    }
    return p;
  }
  }
  return {};
}

} // namespace accel::codegen
