//===- Activation.cpp - pointwise and gated activations -------------------===//
#include "runtime/cpu/transformer/Activation.h"

#include "runtime/cpu/transformer/KernelSupport.h"
#include "runtime/cpu/transformer/Parallel.h"

#include <algorithm>
#include <cmath>

namespace accel::rt::cpu::transformer {

using namespace detail;

namespace {

constexpr struct {
  ActivationKind kind;
  const char *name;
} kNames[] = {
    {ActivationKind::kSilu, "silu"},
    {ActivationKind::kGelu, "gelu"},
    {ActivationKind::kGeluTanh, "gelu_tanh"},
    {ActivationKind::kQuickGelu, "quick_gelu"},
    {ActivationKind::kRelu, "relu"},
    {ActivationKind::kReluSquared, "relu_squared"},
    {ActivationKind::kSigmoid, "sigmoid"},
    {ActivationKind::kTanh, "tanh"},
};

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

} // namespace

const char *activationKindName(ActivationKind kind) {
  for (const auto &e : kNames)
    if (e.kind == kind)
      return e.name;
  return "unknown";
}

std::optional<ActivationKind> activationKindFromName(std::string_view name) {
  for (const auto &e : kNames)
    if (name == e.name)
      return e.kind;
  return std::nullopt;
}

float activate(ActivationKind kind, float x) {
  switch (kind) {
  case ActivationKind::kSilu:
    return x * sigmoid(x);
  case ActivationKind::kGelu:
    return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
  case ActivationKind::kGeluTanh: {
    const float c = 0.79788456080286536f; // sqrt(2 / pi)
    return 0.5f * x * (1.0f + std::tanh(c * (x + 0.044715f * x * x * x)));
  }
  case ActivationKind::kQuickGelu:
    return x * sigmoid(1.702f * x);
  case ActivationKind::kRelu:
    return x > 0.0f ? x : 0.0f;
  case ActivationKind::kReluSquared:
    return x > 0.0f ? x * x : 0.0f;
  case ActivationKind::kSigmoid:
    return sigmoid(x);
  case ActivationKind::kTanh:
    return std::tanh(x);
  }
  return x;
}

StatusOr<Tensor> activation(const Tensor &x, ActivationKind kind) {
  const char *op = "activation";
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "input", x));
  Tensor xf, out;
  ACCEL_RT_ASSIGN_OR_RETURN(xf, asF32(op, x));
  ACCEL_RT_ASSIGN_OR_RETURN(out, newF32(op, x.shape()));
  const float *a = xf.data<float>();
  float *y = out.data<float>();
  parallelFor(x.numElements(), 1 << 14, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      y[i] = activate(kind, a[i]);
  });
  return fromF32(op, std::move(out), x.dtype());
}

StatusOr<Tensor> gatedAct(const Tensor &x, ActivationKind kind) {
  const char *op = "gated_act";
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "input", x));
  ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "input", x, 2));
  if (x.dim(1) % 2 != 0)
    return opError(op, "input " + x.describe() +
                           " must have an even number of columns (gate, then up)");
  const int64_t t = x.dim(0), inter = x.dim(1) / 2;
  Tensor xf, out;
  ACCEL_RT_ASSIGN_OR_RETURN(xf, asF32(op, x));
  ACCEL_RT_ASSIGN_OR_RETURN(out, newF32(op, {t, inter}));
  const float *a = xf.data<float>();
  float *y = out.data<float>();
  parallelFor(t, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(inter, 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t r = b; r < e; ++r) {
                  const float *gate = a + r * 2 * inter, *up = gate + inter;
                  float *yr = y + r * inter;
                  for (int64_t j = 0; j < inter; ++j)
                    yr[j] = activate(kind, gate[j]) * up[j];
                }
              });
  return fromF32(op, std::move(out), x.dtype());
}

} // namespace accel::rt::cpu::transformer
