// Attention (opset 23): GQA, causal masking (bottom-right with a cache),
// boolean and additive masks, past/present KV, softcap, 3-D and 4-D inputs,
// all against a naive loop written out here.
#include "KernelTestUtil.h"

#include <functional>
#include <limits>

using namespace kt;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// Element (b, h, s, d) of a 4-D [B, H, S, D] or 3-D [B, S, H*D] tensor.
struct HeadView {
  std::vector<float> v;
  int64_t heads, seq, dim;
  bool threeD;
  double at(int64_t b, int64_t h, int64_t s, int64_t d) const {
    return threeD ? v[size_t(((b * seq + s) * heads + h) * dim + d)]
                  : v[size_t(((b * heads + h) * seq + s) * dim + d)];
  }
};

struct RefArgs {
  int64_t batch, qHeads, kvHeads, qLen, past, kvLen, dim, vDim;
  double scale, softcap = 0;
  bool causal = false;
  std::function<double(int64_t, int64_t, int64_t, int64_t)> bias; // may be empty
};

/// Y as [B, Hq, Sq, Dv]; K/V include the past as the first `past` positions.
std::vector<double> refAttention(const RefArgs &a, const HeadView &q,
                                 const std::function<double(int64_t, int64_t, int64_t, int64_t)> &k,
                                 const std::function<double(int64_t, int64_t, int64_t, int64_t)> &v) {
  const int64_t total = a.past + a.kvLen, group = a.qHeads / a.kvHeads;
  std::vector<double> y;
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t h = 0; h < a.qHeads; ++h)
      for (int64_t i = 0; i < a.qLen; ++i) {
        std::vector<double> s(static_cast<size_t>(total));
        bool any = false;
        for (int64_t j = 0; j < total; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < a.dim; ++d)
            dot += q.at(b, h, i, d) * k(b, h / group, j, d);
          dot *= a.scale;
          if (a.softcap > 0)
            dot = a.softcap * std::tanh(dot / a.softcap);
          double bias = a.bias ? a.bias(b, h, i, j) : 0.0;
          if (a.causal && j > i + a.past)
            bias = kNegInf;
          any |= bias != kNegInf;
          s[size_t(j)] = dot + bias;
        }
        double m = kNegInf, sum = 0;
        for (double e : s)
          m = std::max(m, e);
        for (double &e : s)
          sum += (e = any ? std::exp(e - m) : 0.0);
        for (int64_t d = 0; d < a.vDim; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < total; ++j)
            acc += any ? s[size_t(j)] / sum * v(b, h / group, j, d) : 0.0;
          y.push_back(acc);
        }
      }
  return y;
}

/// [B, H, S, D] -> [B, S, H*D] of a reference result.
std::vector<double> toThreeD(const std::vector<double> &y, int64_t b, int64_t h, int64_t s,
                             int64_t d) {
  std::vector<double> out(y.size());
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < h; ++j)
      for (int64_t k = 0; k < s; ++k)
        for (int64_t e = 0; e < d; ++e)
          out[size_t(((i * s + k) * h + j) * d + e)] = y[size_t(((i * h + j) * s + k) * d + e)];
  return out;
}

} // namespace

TEST(OnnxAttention, GroupedQueryCausal4D) {
  const int64_t B = 2, Hq = 4, Hkv = 2, S = 5, D = 8;
  Tensor q = rnd({B, Hq, S, D}, 41), k = rnd({B, Hkv, S, D}, 42), v = rnd({B, Hkv, S, D}, 43);
  HeadView qv{q.toFloats(), Hq, S, D, false}, kv{k.toFloats(), Hkv, S, D, false},
      vv{v.toFloats(), Hkv, S, D, false};
  RefArgs a{B, Hq, Hkv, S, 0, S, D, D, 1.0 / std::sqrt(double(D)), 0.0, false, {}};
  a.causal = true;
  std::vector<double> want = refAttention(
      a, qv, [&](auto b, auto h, auto s, auto d) { return kv.at(b, h, s, d); },
      [&](auto b, auto h, auto s, auto d) { return vv.at(b, h, s, d); });
  std::vector<Tensor> out = run("Attention", {{"is_causal", int64_t(1)}}, {q, k, v}, 1);
  EXPECT_TRUE(near(out[0], {B, Hq, S, D}, want));
  // Without is_causal the result differs (the mask matters).
  EXPECT_FALSE(near(run1("Attention", {}, {q, k, v}), {B, Hq, S, D}, want));
}

TEST(OnnxAttention, ThreeDWithPastBoolMaskAndPresent) {
  // MQA: 4 query heads share one kv head; 3 cached positions, 2 new ones.
  const int64_t B = 2, Hq = 4, Hkv = 1, S = 2, P = 3, D = 4, Dv = 6, T = P + S;
  Tensor q = rnd({B, S, Hq * D}, 44), k = rnd({B, S, Hkv * D}, 45), v = rnd({B, S, Hkv * Dv}, 46);
  Tensor pk = rnd({B, Hkv, P, D}, 47), pv = rnd({B, Hkv, P, Dv}, 48);
  // Batch 1 cannot see position 0 (left padding).
  std::vector<bool> mv;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < S; ++i)
      for (int64_t j = 0; j < T; ++j)
        mv.push_back(!(b == 1 && j == 0));
  Tensor mask = kt::B({B, 1, S, T}, mv);
  HeadView qv{q.toFloats(), Hq, S, D, true}, kv{k.toFloats(), Hkv, S, D, true},
      vv{v.toFloats(), Hkv, S, Dv, true}, pkv{pk.toFloats(), Hkv, P, D, false},
      pvv{pv.toFloats(), Hkv, P, Dv, false};
  auto kAll = [&](int64_t b, int64_t h, int64_t j, int64_t d) {
    return j < P ? pkv.at(b, h, j, d) : kv.at(b, h, j - P, d);
  };
  auto vAll = [&](int64_t b, int64_t h, int64_t j, int64_t d) {
    return j < P ? pvv.at(b, h, j, d) : vv.at(b, h, j - P, d);
  };
  RefArgs a{B, Hq, Hkv, S, P, S, D, Dv, 1.0 / std::sqrt(double(D)), 0.0, false, {}};
  a.causal = true;
  a.bias = [&](int64_t b, int64_t, int64_t, int64_t j) { return b == 1 && j == 0 ? kNegInf : 0.0; };
  std::vector<double> want = toThreeD(refAttention(a, qv, kAll, vAll), B, Hq, S, Dv);
  std::vector<Tensor> out =
      run("Attention",
          {{"is_causal", int64_t(1)}, {"q_num_heads", Hq}, {"kv_num_heads", Hkv}},
          {q, k, v, mask, pk, pv}, 3);
  EXPECT_TRUE(near(out[0], {B, S, Hq * Dv}, want));
  std::vector<double> presentK, presentV;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < T; ++j) {
      for (int64_t d = 0; d < D; ++d)
        presentK.push_back(kAll(b, 0, j, d));
      for (int64_t d = 0; d < Dv; ++d)
        presentV.push_back(vAll(b, 0, j, d));
    }
  EXPECT_TRUE(near(out[1], {B, Hkv, T, D}, presentK));
  EXPECT_TRUE(near(out[2], {B, Hkv, T, Dv}, presentV));
}

TEST(OnnxAttention, AdditiveShortMaskSoftcapAndScale) {
  // A [Sq, 3] float mask over 4 keys: the missing key is masked (-inf).
  const int64_t B = 1, H = 2, S = 3, T = 4, D = 4;
  Tensor q = rnd({B, H, S, D}, 51), k = rnd({B, H, T, D}, 52), v = rnd({B, H, T, D}, 53);
  Tensor mask = rnd({S, 3}, 54);
  HeadView qv{q.toFloats(), H, S, D, false}, kv{k.toFloats(), H, T, D, false},
      vv{v.toFloats(), H, T, D, false};
  std::vector<float> mv = mask.toFloats();
  RefArgs a{B, H, H, S, 0, T, D, D, 0.7, 0.0, false, {}};
  a.softcap = 0.5;
  a.bias = [&](int64_t, int64_t, int64_t i, int64_t j) {
    return j < 3 ? double(mv[size_t(i * 3 + j)]) : kNegInf;
  };
  std::vector<double> want = refAttention(
      a, qv, [&](auto b, auto h, auto s, auto d) { return kv.at(b, h, s, d); },
      [&](auto b, auto h, auto s, auto d) { return vv.at(b, h, s, d); });
  Tensor y = run1("Attention", {{"scale", 0.7f}, {"softcap", 0.5f}}, {q, k, v, mask});
  EXPECT_TRUE(near(y, {B, H, S, D}, want));
}

TEST(OnnxAttention, FullyMaskedRowIsZeroAndErrors) {
  Tensor q = rnd({1, 1, 2, 4}, 61), k = rnd({1, 1, 2, 4}, 62), v = rnd({1, 1, 2, 4}, 63);
  Tensor mask = B({2, 2}, {false, false, true, true});
  Tensor y = run1("Attention", {}, {q, k, v, mask});
  std::vector<float> yv = y.toFloats();
  for (int d = 0; d < 4; ++d)
    EXPECT_EQ(yv[size_t(d)], 0.0f);
  EXPECT_NE(yv[4], 0.0f);
  EXPECT_NE(runError("Attention", {}, {rnd({1, 3, 2, 4}, 1), rnd({1, 2, 2, 4}, 2), rnd({1, 2, 2, 4}, 3)})
                .find("multiple of kv heads"),
            std::string::npos);
  EXPECT_NE(runError("Attention", {}, {rnd({1, 2, 8}, 1), rnd({1, 2, 8}, 2), rnd({1, 2, 8}, 3)})
                .find("q_num_heads"),
            std::string::npos);
}
