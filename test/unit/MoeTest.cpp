//===- MoeTest.cpp - the CPU mixture-of-experts kernel ----------------------===//
//
// runtime/cpu/transformer/Moe against a reference written here in double
// precision as plain loops over tokens and experts (softmax over every
// expert, top-k with ties to the lower expert, the routing weights, each
// selected expert's gated MLP, the shared expert and its sigmoid gate), for
// both routings, with and without a (gated) shared expert, fused and
// separate gate/up, f32 and bf16/f16 weights, T = 1 and T = 37 (routing
// that reaches every expert), and router logits that tie.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/transformer/Moe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

using namespace accel::rt;
namespace tk = accel::rt::cpu::transformer;

namespace {

constexpr int64_t kE = 6, kH = 16, kI = 8, kS = 12;

/// Deterministic values in [-a, a).
std::vector<float> values(size_t n, uint32_t seed, float a) {
  std::vector<float> v(n);
  uint32_t x = seed * 2654435761u + 97u;
  for (float &e : v) {
    x = x * 1664525u + 1013904223u;
    e = (float(x >> 8) / float(1 << 24) * 2.0f - 1.0f) * a;
  }
  return v;
}

Tensor tensor(Shape shape, const std::vector<float> &v, DType dt = DType::kF32) {
  Tensor f = Tensor::fromVector<float>(std::move(shape), v).value();
  return dt == DType::kF32 ? f : f.astype(dt);
}

/// A tensor's values as doubles (what the reference reads: the stored,
/// possibly rounded, weights).
std::vector<double> doubles(const Tensor &t) {
  Tensor f = t.toF32();
  return std::vector<double>(f.data<float>(), f.data<float>() + f.numElements());
}

double act(double v, tk::ActivationKind kind) {
  if (kind == tk::ActivationKind::kGeluTanh)
    return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
  return v / (1.0 + std::exp(-v)); // silu
}

struct Model {
  tk::MoeParams params;
  bool fused = true, shared = false, sharedGate = false, bias = false;
  DType weightType = DType::kF32;
  Tensor router, routerBias, gateUp, gate, up, down, sharedGateUp, sharedDown, sharedExpertGate;

  void build(uint32_t seed) {
    router = tensor({kE, kH}, values(kE * kH, seed, 1.0f));
    routerBias = tensor({kE}, values(kE, seed + 1, 0.3f));
    // gate_up [E, 2I, H] and the same numbers as separate gate / up.
    std::vector<float> gu = values(kE * 2 * kI * kH, seed + 2, 0.5f), g, u;
    for (int64_t e = 0; e < kE; ++e) {
      auto at = gu.begin() + e * 2 * kI * kH;
      g.insert(g.end(), at, at + kI * kH);
      u.insert(u.end(), at + kI * kH, at + 2 * kI * kH);
    }
    gateUp = tensor({kE, 2 * kI, kH}, gu, weightType);
    gate = tensor({kE, kI, kH}, g, weightType);
    up = tensor({kE, kI, kH}, u, weightType);
    down = tensor({kE, kH, kI}, values(kE * kH * kI, seed + 3, 0.5f), weightType);
    sharedGateUp = tensor({2 * kS, kH}, values(2 * kS * kH, seed + 4, 0.5f), weightType);
    sharedDown = tensor({kH, kS}, values(kH * kS, seed + 5, 0.5f), weightType);
    sharedExpertGate = tensor({1, kH}, values(kH, seed + 6, 1.0f));
  }

  tk::MoeWeights weights() const {
    tk::MoeWeights w;
    w.router = &router;
    w.routerBias = bias ? &routerBias : nullptr;
    if (fused) {
      w.gateUp = &gateUp;
    } else {
      w.gate = &gate;
      w.up = &up;
    }
    w.down = &down;
    if (shared) {
      w.sharedGateUp = &sharedGateUp;
      w.sharedDown = &sharedDown;
    }
    if (sharedGate)
      w.sharedExpertGate = &sharedExpertGate;
    return w;
  }

  /// The reference: plain loops in double. `hits[e]` counts the tokens
  /// routed to expert e.
  std::vector<double> reference(const Tensor &xt, std::vector<int> *hits = nullptr) const {
    const std::vector<double> x = doubles(xt), r = doubles(router), rb = doubles(routerBias),
                              gu = doubles(gateUp), d = doubles(down),
                              sgu = doubles(sharedGateUp), sd = doubles(sharedDown),
                              sg = doubles(sharedExpertGate);
    const int64_t tokens = xt.dim(0), k = params.topK;
    std::vector<double> out(size_t(tokens * kH), 0.0);
    for (int64_t t = 0; t < tokens; ++t) {
      const double *xr = &x[size_t(t * kH)];
      std::vector<double> p(kE);
      double mx = -1e300;
      for (int64_t e = 0; e < kE; ++e) {
        double l = bias ? rb[size_t(e)] : 0.0;
        for (int64_t h = 0; h < kH; ++h)
          l += xr[h] * r[size_t(e * kH + h)];
        p[size_t(e)] = l;
        mx = std::max(mx, l);
      }
      double sum = 0;
      for (double &v : p)
        sum += v = std::exp(v - mx);
      for (double &v : p)
        v /= sum;
      // Top-k by selection: the largest p, the lower expert on a tie.
      std::vector<int64_t> chosen;
      std::vector<bool> taken(kE, false);
      for (int64_t i = 0; i < k; ++i) {
        int64_t best = -1;
        for (int64_t e = 0; e < kE; ++e)
          if (!taken[size_t(e)] && (best < 0 || p[size_t(e)] > p[size_t(best)]))
            best = e;
        taken[size_t(best)] = true;
        chosen.push_back(best);
      }
      double selected = 0;
      for (int64_t e : chosen)
        selected += p[size_t(e)];
      for (int64_t e : chosen) {
        if (hits)
          ++(*hits)[size_t(e)];
        const double w = params.routing == tk::MoeRouting::kRenormalize ? p[size_t(e)] / selected
                                                                        : p[size_t(e)];
        std::vector<double> a(kI);
        for (int64_t i = 0; i < kI; ++i) {
          double gv = 0, uv = 0;
          for (int64_t h = 0; h < kH; ++h) {
            gv += xr[h] * gu[size_t((e * 2 * kI + i) * kH + h)];
            uv += xr[h] * gu[size_t((e * 2 * kI + kI + i) * kH + h)];
          }
          a[size_t(i)] = act(gv, params.kind) * uv;
        }
        for (int64_t h = 0; h < kH; ++h) {
          double y = 0;
          for (int64_t i = 0; i < kI; ++i)
            y += d[size_t((e * kH + h) * kI + i)] * a[size_t(i)];
          out[size_t(t * kH + h)] += w * y;
        }
      }
      if (shared) {
        double gate = 1.0;
        if (sharedGate) {
          double z = 0;
          for (int64_t h = 0; h < kH; ++h)
            z += xr[h] * sg[size_t(h)];
          gate = 1.0 / (1.0 + std::exp(-z));
        }
        std::vector<double> a(kS);
        for (int64_t i = 0; i < kS; ++i) {
          double gv = 0, uv = 0;
          for (int64_t h = 0; h < kH; ++h) {
            gv += xr[h] * sgu[size_t(i * kH + h)];
            uv += xr[h] * sgu[size_t((kS + i) * kH + h)];
          }
          a[size_t(i)] = act(gv, params.kind) * uv;
        }
        for (int64_t h = 0; h < kH; ++h) {
          double y = 0;
          for (int64_t i = 0; i < kS; ++i)
            y += sd[size_t(h * kS + i)] * a[size_t(i)];
          out[size_t(t * kH + h)] += gate * y;
        }
      }
    }
    return out;
  }
};

void expectClose(const Tensor &got, const std::vector<double> &want, double tol) {
  Tensor f = got.toF32();
  ASSERT_EQ(size_t(f.numElements()), want.size());
  double scale = 0;
  for (double v : want)
    scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(f.data<float>()[i], want[i], tol * std::max(scale, 1.0)) << "element " << i;
}

TEST(Moe, MatchesTheDoubleReferenceInEveryForm) {
  for (tk::MoeRouting routing : {tk::MoeRouting::kRenormalize, tk::MoeRouting::kSoftmax})
    for (int sharedForm = 0; sharedForm < 3; ++sharedForm)
      for (bool fused : {true, false})
        for (int64_t tokens : {int64_t(1), int64_t(37)}) {
          SCOPED_TRACE(::testing::Message()
                       << "routing " << int(routing) << ", shared " << sharedForm << ", fused "
                       << fused << ", T = " << tokens);
          Model m;
          m.params = {kE, 2, tk::ActivationKind::kSilu, routing};
          m.fused = fused;
          m.shared = sharedForm > 0;
          m.sharedGate = sharedForm > 1;
          m.bias = sharedForm == 2;
          m.build(7);
          Tensor x = tensor({tokens, kH}, values(size_t(tokens * kH), 11, 1.5f));
          std::vector<int> hits(kE, 0);
          std::vector<double> want = m.reference(x, &hits);
          if (tokens == 37)
            for (int64_t e = 0; e < kE; ++e)
              ASSERT_GT(hits[size_t(e)], 0) << "the routing reaches no token to expert " << e;
          StatusOr<Tensor> got = tk::moe(x, m.weights(), m.params);
          ASSERT_TRUE(got.isOk()) << got.status().message();
          ASSERT_EQ(got->dtype(), DType::kF32);
          ASSERT_EQ(got->shape(), (Shape{tokens, kH}));
          expectClose(*got, want, 2e-5);
        }
}

TEST(Moe, TopKOfOneToAllExpertsAndGeluTanh) {
  for (int64_t k : {int64_t(1), int64_t(3), kE}) {
    SCOPED_TRACE(::testing::Message() << "top_k " << k);
    Model m;
    m.params = {kE, k, tk::ActivationKind::kGeluTanh, tk::MoeRouting::kRenormalize};
    m.build(3);
    Tensor x = tensor({37, kH}, values(37 * kH, 5, 1.0f));
    StatusOr<Tensor> got = tk::moe(x, m.weights(), m.params);
    ASSERT_TRUE(got.isOk()) << got.status().message();
    expectClose(*got, m.reference(x), 2e-5);
  }
}

TEST(Moe, HalfWeightsAndActivations) {
  for (DType wt : {DType::kBF16, DType::kF16}) {
    Model m;
    m.params = {kE, 2, tk::ActivationKind::kSilu, tk::MoeRouting::kSoftmax};
    m.weightType = wt;
    m.shared = m.sharedGate = true;
    m.build(21);
    Tensor x = tensor({37, kH}, values(37 * kH, 13, 1.0f));
    // f32 activations reading narrowed weights: the reference reads the
    // same rounded weights.
    StatusOr<Tensor> got = tk::moe(x, m.weights(), m.params);
    ASSERT_TRUE(got.isOk()) << got.status().message();
    expectClose(*got, m.reference(x), 2e-5);
    // Activations of the weights' type: the result rounded once to it.
    Tensor xh = x.astype(wt);
    StatusOr<Tensor> half = tk::moe(xh, m.weights(), m.params);
    ASSERT_TRUE(half.isOk()) << half.status().message();
    ASSERT_EQ(half->dtype(), wt);
    expectClose(*half, m.reference(xh), wt == DType::kBF16 ? 1e-2 : 2e-3);
  }
}

TEST(Moe, TiedLogitsGoToTheLowerExpert) {
  // Experts 2 and 3 have the same router row, so their logits are equal
  // for every token; with top_k = 1 whenever they lead, and with top_k = 2
  // whenever they are second and third, only expert 2 may be chosen.
  Model m;
  m.params = {kE, 1, tk::ActivationKind::kSilu, tk::MoeRouting::kRenormalize};
  m.build(9);
  float *r = m.router.data<float>();
  std::copy_n(r + 2 * kH, kH, r + 3 * kH);
  Tensor x = tensor({37, kH}, values(37 * kH, 17, 1.5f));
  for (int64_t k : {int64_t(1), int64_t(2)}) {
    SCOPED_TRACE(::testing::Message() << "top_k " << k);
    m.params.topK = k;
    StatusOr<tk::MoeRoute> route = tk::moeRoute(x, m.router, nullptr, m.params);
    ASSERT_TRUE(route.isOk()) << route.status().message();
    int ties = 0;
    for (int64_t t = 0; t < 37; ++t) {
      bool two = false, three = false;
      for (int64_t i = 0; i < k; ++i) {
        two |= route->experts[size_t(t * k + i)] == 2;
        three |= route->experts[size_t(t * k + i)] == 3;
      }
      EXPECT_FALSE(three && !two) << "token " << t << " took expert 3 over its tie, expert 2";
      ties += two && !three;
    }
    EXPECT_GT(ties, 0) << "no token's choice was decided by the tie";
    StatusOr<Tensor> got = tk::moe(x, m.weights(), m.params);
    ASSERT_TRUE(got.isOk()) << got.status().message();
    expectClose(*got, m.reference(x), 2e-5);
  }
  // A single token whose logits tie outright: [0, 1, 1, ...] picks 1.
  Tensor r1 = tensor({3, 1}, {0.0f, 1.0f, 1.0f});
  Tensor x1 = tensor({1, 1}, {1.0f});
  StatusOr<tk::MoeRoute> one =
      tk::moeRoute(x1, r1, nullptr, {3, 1, tk::ActivationKind::kSilu, tk::MoeRouting::kSoftmax});
  ASSERT_TRUE(one.isOk());
  EXPECT_EQ(one->experts, (std::vector<int64_t>{1}));
  EXPECT_NEAR(one->weights[0], std::exp(1.0) / (1.0 + 2.0 * std::exp(1.0)), 1e-6);
}

TEST(Moe, RefusesInconsistentWeights) {
  Model m;
  m.params = {kE, 2, tk::ActivationKind::kSilu, tk::MoeRouting::kRenormalize};
  m.build(1);
  Tensor x = tensor({2, kH}, values(2 * kH, 1, 1.0f));
  tk::MoeWeights w = m.weights();
  w.gate = &m.gate;
  EXPECT_EQ(tk::moe(x, w, m.params).status().message(),
            "moe: needs either gate_up, or both gate and up");
  tk::MoeParams tooMany = m.params;
  tooMany.topK = kE + 1;
  EXPECT_EQ(tk::moe(x, m.weights(), tooMany).status().message(),
            "moe: needs 1 <= top_k <= num_experts, got top_k = 7 and num_experts = 6");
  w = m.weights();
  w.down = &m.gate; // [6, 8, 16]: I = 16 read off its columns
  EXPECT_EQ(tk::moe(x, w, m.params).status().message(),
            "moe: down f32[6, 8, 16] must be [6, 16, 16]");
  w.down = &m.gateUp; // [6, 16, 16]: then gate_up must be [6, 32, 16]
  EXPECT_EQ(tk::moe(x, w, m.params).status().message(),
            "moe: gate_up f32[6, 16, 16] must be [6, 32, 16]");
  w = m.weights();
  w.sharedGateUp = &m.sharedGateUp;
  EXPECT_EQ(tk::moe(x, w, m.params).status().message(),
            "moe: a shared expert needs both shared_gate_up and shared_down");
}

} // namespace

namespace {

/// An f8E4M3FN byte's value, decoded here (sign, 4 exponent bits of bias 7,
/// 3 mantissa bits; subnormals; 0x7f / 0xff are NaN).
double decodeE4M3(uint8_t b) {
  const int sign = b >> 7, exp = (b >> 3) & 15, man = b & 7;
  double v = exp == 0 ? std::ldexp(man / 8.0, -6) : std::ldexp(1.0 + man / 8.0, exp - 7);
  return sign ? -v : v;
}

/// `w` [E, R, C] quantised per expert and row as accel-quantize-weights
/// does (scale = max |row| / qmax); `*dequantised` gets q * scale, the
/// weights the reference then reads.
std::pair<Tensor, Tensor> quantiseExperts(const Tensor &w, bool i8, Tensor *dequantised) {
  const int64_t e = w.dim(0), r = w.dim(1), c = w.dim(2);
  std::vector<float> scales(size_t(e * r)), deq(size_t(e * r * c));
  Tensor q = Tensor::zeros(i8 ? DType::kI8 : DType::kF8E4M3FN, {e, r, c});
  auto *qb = static_cast<uint8_t *>(q.rawData());
  const float *src = w.data<float>();
  for (int64_t row = 0; row < e * r; ++row) {
    float mx = 0.0f;
    for (int64_t i = 0; i < c; ++i)
      mx = std::max(mx, std::fabs(src[row * c + i]));
    const float s = mx > 0.0f ? mx / (i8 ? 127.0f : 448.0f) : 1.0f;
    scales[size_t(row)] = s;
    for (int64_t i = 0; i < c; ++i) {
      const float v = src[row * c + i] / s;
      uint8_t bits;
      double value;
      if (i8) {
        const int iv = int(std::max(-127.0f, std::min(127.0f, std::nearbyint(v))));
        bits = uint8_t(int8_t(iv));
        value = iv;
      } else {
        bits = f32ToF8E4M3FN(v, /*saturate=*/true);
        value = decodeE4M3(bits);
      }
      qb[row * c + i] = bits;
      deq[size_t(row * c + i)] = float(value * s);
    }
  }
  *dequantised = tensor({e, r, c}, deq);
  return {std::move(q), tensor({e, r}, scales)};
}

} // namespace

TEST(Moe, QuantisedExpertsReadAsTheirScaledValues) {
  // i8 and f8E4M3FN experts with f32 scales per expert and row: the kernel
  // equals the f32 reference over the dequantised weights (q * scale).
  for (bool i8 : {true, false})
    for (bool fused : {true, false}) {
      SCOPED_TRACE(::testing::Message() << (i8 ? "i8" : "f8E4M3FN") << ", fused " << fused);
      Model m;
      m.params = {kE, 2, tk::ActivationKind::kSilu, tk::MoeRouting::kRenormalize};
      m.fused = fused;
      m.shared = m.sharedGate = true;
      m.build(31);
      Tensor guD, gD, uD, dD;
      auto [guQ, guS] = quantiseExperts(m.gateUp, i8, &guD);
      auto [gQ, gS] = quantiseExperts(m.gate, i8, &gD);
      auto [uQ, uS] = quantiseExperts(m.up, i8, &uD);
      auto [dQ, dS] = quantiseExperts(m.down, i8, &dD);
      tk::MoeWeights w = m.weights();
      if (fused) {
        w.gateUp = &guQ;
        w.gateUpScale = &guS;
      } else {
        w.gate = &gQ;
        w.gateScale = &gS;
        w.up = &uQ;
        w.upScale = &uS;
      }
      w.down = &dQ;
      w.downScale = &dS;
      Tensor x = tensor({37, kH}, values(37 * kH, 19, 1.0f));
      StatusOr<Tensor> got = tk::moe(x, w, m.params);
      ASSERT_TRUE(got.isOk()) << got.status().message();
      m.gateUp = guD;
      m.gate = gD;
      m.up = uD;
      m.down = dD;
      expectClose(*got, m.reference(x), 2e-5);
    }
}

TEST(Moe, RefusesQuantisedExpertsWithoutTheirScales) {
  Model m;
  m.params = {kE, 2, tk::ActivationKind::kSilu, tk::MoeRouting::kRenormalize};
  m.build(1);
  Tensor x = tensor({2, kH}, values(2 * kH, 1, 1.0f));
  Tensor deq;
  auto [q, s] = quantiseExperts(m.gateUp, true, &deq);
  tk::MoeWeights w = m.weights();
  w.gateUp = &q;
  EXPECT_EQ(tk::moe(x, w, m.params).status().message(),
            "moe: gate_up i8[6, 16, 16] is quantised and needs gate_up_scale "
            "[6, 16]");
  Tensor wrong = tensor({kE, 3}, values(kE * 3, 2, 1.0f));
  w.gateUpScale = &wrong;
  EXPECT_EQ(tk::moe(x, w, m.params).status().message(),
            "moe: gate_up_scale f32[6, 3] must be f32 [6, 16]");
  w = m.weights();
  w.downScale = &s;
  EXPECT_EQ(tk::moe(x, w, m.params).status().message(),
            "moe: down_scale f32[6, 16] scales quantised experts, but down is "
            "f32[6, 16, 8]");
}
