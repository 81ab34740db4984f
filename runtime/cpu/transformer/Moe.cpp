//===- Moe.cpp - the sparse mixture of experts -----------------------------===//
//-----------------------------===//
#include "runtime/cpu/transformer/Moe.h"

#include "runtime/cpu/transformer/GatedMlp.h"
#include "runtime/cpu/transformer/KernelSupport.h"
#include "runtime/cpu/transformer/Linear.h"
#include "runtime/cpu/transformer/QuantLinear.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace accel::rt::cpu::transformer {

using namespace detail;

namespace {

constexpr const char *kOp = "moe";

/// Expert `e`'s matrix of a stacked [E, rows, cols] weight, viewed.
Tensor expertSlice(const Tensor &w, int64_t e) {
  const int64_t rows = w.dim(1), cols = w.dim(2);
  const char *base = static_cast<const char *>(w.rawData());
  return Tensor::view(w.dtype(), {rows, cols},
                      base + size_t(e * rows * cols) * dtypeSize(w.dtype()), nullptr);
}

/// Row e of a [E, rows] scale, viewed as [rows].
Tensor scaleRow(const Tensor &s, int64_t e) {
  const int64_t rows = s.dim(1);
  return Tensor::view(s.dtype(), {rows}, s.data<float>() + e * rows, nullptr);
}

bool quantised(const Tensor &w) { return w.dtype() == DType::kI8 || w.dtype() == DType::kF8E4M3FN; }

/// A stacked expert weight [E, rows, cols] of `shape`, and its scale when
/// it is quantised: f32 [E, rows].
Status requireExperts(const char *what, const Tensor &w, const Tensor *scale, const Shape &shape) {
  std::string want = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    want += (i ? ", " : "") + std::to_string(shape[i]);
  want += "]";
  if (w.shape() != shape)
    return opError(kOp, std::string(what) + " " + w.describe() + " must be " + want);
  if (!quantised(w)) {
    if (scale)
      return opError(kOp, std::string(what) + "_scale " + scale->describe() +
                              " scales quantised experts, but " + what + " is " + w.describe());
    return requireActivation(kOp, what, w);
  }
  if (!scale)
    return opError(kOp, std::string(what) + " " + w.describe() + " is quantised and needs " + what +
                            "_scale [" + std::to_string(shape[0]) + ", " +
                            std::to_string(shape[1]) + "]");
  if (scale->dtype() != DType::kF32 || scale->shape() != Shape{shape[0], shape[1]})
    return opError(kOp, std::string(what) + "_scale " + scale->describe() + " must be f32 [" +
                            std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + "]");
  return Status();
}

/// x [n, cols] times expert e's rows of w^T (decoded with its scales when
/// quantised), in f32.
StatusOr<Tensor> expertLinear(const Tensor &x, const Tensor &w, const Tensor *scale, int64_t e) {
  Tensor we = expertSlice(w, e);
  if (!scale)
    return linear(x, we, nullptr, DType::kF32);
  return quantLinear(x, we, scaleRow(*scale, e), nullptr, DType::kF32);
}

Status requireShape(const char *what, const Tensor &t, const Shape &shape) {
  if (t.shape() != shape) {
    std::string want = "[";
    for (size_t i = 0; i < shape.size(); ++i)
      want += (i ? ", " : "") + std::to_string(shape[i]);
    return opError(kOp, std::string(what) + " " + t.describe() + " must be " + want + "]");
  }
  return requireActivation(kOp, what, t);
}

} // namespace

std::optional<MoeRouting> moeRoutingFromName(const std::string &name) {
  if (name == "renormalize")
    return MoeRouting::kRenormalize;
  if (name == "softmax")
    return MoeRouting::kSoftmax;
  return std::nullopt;
}

StatusOr<MoeRoute> moeRoute(const Tensor &x, const Tensor &router, const Tensor *routerBias,
                            const MoeParams &p) {
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(kOp, "x", x));
  ACCEL_RT_RETURN_IF_ERROR(requireRank(kOp, "x", x, 2));
  const int64_t e = p.numExperts, k = p.topK;
  if (e < 1 || k < 1 || k > e)
    return opError(kOp, "needs 1 <= top_k <= num_experts, got top_k = " + std::to_string(k) +
                            " and num_experts = " + std::to_string(e));
  ACCEL_RT_RETURN_IF_ERROR(requireShape("router", router, {e, x.dim(1)}));
  Tensor logits;
  ACCEL_RT_ASSIGN_OR_RETURN(logits, linear(x, router, routerBias, DType::kF32));
  const int64_t tokens = x.dim(0);
  MoeRoute route;
  route.topK = k;
  route.experts.resize(size_t(tokens * k));
  route.weights.resize(size_t(tokens * k));
  std::vector<float> prob(static_cast<size_t>(e));
  std::vector<int64_t> order(static_cast<size_t>(e));
  for (int64_t t = 0; t < tokens; ++t) {
    const float *l = logits.data<float>() + t * e;
    // softmax in f32, as torch's F.softmax(..., dtype=torch.float).
    const float mx = *std::max_element(l, l + e);
    float sum = 0.0f;
    for (int64_t j = 0; j < e; ++j)
      sum += prob[size_t(j)] = std::exp(l[j] - mx);
    for (float &q : prob)
      q /= sum;
    std::iota(order.begin(), order.end(), int64_t(0));
    // The k largest; of equal probabilities the lower expert first.
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
      return prob[size_t(a)] > prob[size_t(b)] ||
             (prob[size_t(a)] == prob[size_t(b)] && a < b);
    });
    float selected = 0.0f;
    for (int64_t i = 0; i < k; ++i)
      selected += prob[size_t(order[size_t(i)])];
    for (int64_t i = 0; i < k; ++i) {
      const int64_t j = order[size_t(i)];
      route.experts[size_t(t * k + i)] = j;
      route.weights[size_t(t * k + i)] =
          p.routing == MoeRouting::kRenormalize ? prob[size_t(j)] / selected : prob[size_t(j)];
    }
  }
  return route;
}

StatusOr<Tensor> moe(const Tensor &x, const MoeWeights &w, const MoeParams &p) {
  if (!w.router || !w.down)
    return opError(kOp, "needs a router and the experts' down projections");
  const bool fused = w.gateUp != nullptr;
  if (fused == (w.gate != nullptr || w.up != nullptr) || (!fused && (!w.gate || !w.up)))
    return opError(kOp, "needs either gate_up, or both gate and up");
  if (bool(w.sharedGateUp) != bool(w.sharedDown))
    return opError(kOp, "a shared expert needs both shared_gate_up and shared_down");
  if (w.sharedExpertGate && !w.sharedGateUp)
    return opError(kOp, "shared_expert_gate scales a shared expert, and there is none");
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(kOp, "x", x));
  ACCEL_RT_RETURN_IF_ERROR(requireRank(kOp, "x", x, 2));
  const int64_t tokens = x.dim(0), hidden = x.dim(1), e = p.numExperts;
  ACCEL_RT_RETURN_IF_ERROR(requireRank(kOp, "down", *w.down, 3));
  const int64_t inter = w.down->dim(2);
  ACCEL_RT_RETURN_IF_ERROR(requireExperts("down", *w.down, w.downScale, {e, hidden, inter}));
  if (fused) {
    if (w.gateScale || w.upScale)
      return opError(kOp, "gate_scale and up_scale scale separate gate and up weights, and the "
                          "experts have gate_up");
    ACCEL_RT_RETURN_IF_ERROR(
        requireExperts("gate_up", *w.gateUp, w.gateUpScale, {e, 2 * inter, hidden}));
  } else {
    if (w.gateUpScale)
      return opError(kOp, "gate_up_scale scales a gate_up weight, and the experts have none");
    ACCEL_RT_RETURN_IF_ERROR(requireExperts("gate", *w.gate, w.gateScale, {e, inter, hidden}));
    ACCEL_RT_RETURN_IF_ERROR(requireExperts("up", *w.up, w.upScale, {e, inter, hidden}));
  }
  const bool anyQuantised = w.gateUpScale || w.gateScale || w.upScale || w.downScale;
  if (w.sharedExpertGate) {
    ACCEL_RT_RETURN_IF_ERROR(requireShape("shared_expert_gate", *w.sharedExpertGate, {1, hidden}));
  }

  Tensor xf;
  ACCEL_RT_ASSIGN_OR_RETURN(xf, asF32(kOp, x));
  MoeRoute route;
  ACCEL_RT_ASSIGN_OR_RETURN(route, moeRoute(xf, *w.router, w.routerBias, p));
  Tensor acc;
  ACCEL_RT_ASSIGN_OR_RETURN(acc, newF32(kOp, {tokens, hidden}));
  float *out = acc.data<float>();
  std::fill(out, out + tokens * hidden, 0.0f);

  // Per expert, in ascending order (HF's index_add_ order): its tokens
  // gathered into one [n, H] block, one gated MLP, scattered back weighted.
  const int64_t k = p.topK;
  std::vector<int64_t> rows;
  std::vector<float> scale;
  for (int64_t ex = 0; ex < e; ++ex) {
    rows.clear();
    scale.clear();
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t i = 0; i < k; ++i)
        if (route.experts[size_t(t * k + i)] == ex) {
          rows.push_back(t);
          scale.push_back(route.weights[size_t(t * k + i)]);
        }
    if (rows.empty())
      continue;
    const int64_t n = int64_t(rows.size());
    Tensor gathered;
    ACCEL_RT_ASSIGN_OR_RETURN(gathered, newF32(kOp, {n, hidden}));
    for (int64_t r = 0; r < n; ++r)
      std::copy_n(xf.data<float>() + rows[size_t(r)] * hidden, hidden,
                  gathered.data<float>() + r * hidden);
    Tensor y;
    if (anyQuantised) {
      // Each projection through its own (possibly quantised) weight, in f32.
      Tensor gu;
      if (fused) {
        ACCEL_RT_ASSIGN_OR_RETURN(gu, expertLinear(gathered, *w.gateUp, w.gateUpScale, ex));
      } else {
        Tensor g, u;
        ACCEL_RT_ASSIGN_OR_RETURN(g, expertLinear(gathered, *w.gate, w.gateScale, ex));
        ACCEL_RT_ASSIGN_OR_RETURN(u, expertLinear(gathered, *w.up, w.upScale, ex));
        ACCEL_RT_ASSIGN_OR_RETURN(gu, newF32(kOp, {n, 2 * inter}));
        for (int64_t r = 0; r < n; ++r) {
          std::copy_n(g.data<float>() + r * inter, inter, gu.data<float>() + r * 2 * inter);
          std::copy_n(u.data<float>() + r * inter, inter, gu.data<float>() + r * 2 * inter + inter);
        }
      }
      Tensor act;
      ACCEL_RT_ASSIGN_OR_RETURN(act, gatedAct(gu, p.kind));
      ACCEL_RT_ASSIGN_OR_RETURN(y, expertLinear(act, *w.down, w.downScale, ex));
    } else {
      Tensor gu, g, u, d = expertSlice(*w.down, ex);
      GatedMlpWeights mw;
      mw.down = &d;
      if (fused) {
        gu = expertSlice(*w.gateUp, ex);
        mw.gateUp = &gu;
      } else {
        g = expertSlice(*w.gate, ex);
        u = expertSlice(*w.up, ex);
        mw.gate = &g;
        mw.up = &u;
      }
      ACCEL_RT_ASSIGN_OR_RETURN(y, gatedMlp(gathered, mw, p.kind));
    }
    for (int64_t r = 0; r < n; ++r) {
      const float s = scale[size_t(r)];
      const float *src = y.data<float>() + r * hidden;
      float *dst = out + rows[size_t(r)] * hidden;
      for (int64_t h = 0; h < hidden; ++h)
        dst[h] += s * src[h];
    }
  }

  if (w.sharedGateUp) {
    GatedMlpWeights sw;
    sw.gateUp = w.sharedGateUp;
    sw.down = w.sharedDown;
    Tensor y;
    ACCEL_RT_ASSIGN_OR_RETURN(y, gatedMlp(xf, sw, p.kind));
    Tensor gate;
    if (w.sharedExpertGate) {
      ACCEL_RT_ASSIGN_OR_RETURN(gate, linear(xf, *w.sharedExpertGate, nullptr, DType::kF32));
    }
    for (int64_t t = 0; t < tokens; ++t) {
      const float s =
          w.sharedExpertGate ? 1.0f / (1.0f + std::exp(-gate.data<float>()[t])) : 1.0f;
      const float *src = y.data<float>() + t * hidden;
      float *dst = out + t * hidden;
      for (int64_t h = 0; h < hidden; ++h)
        dst[h] += s * src[h];
    }
  }
  return fromF32(kOp, std::move(acc), x.dtype());
}

} // namespace accel::rt::cpu::transformer
