//===- SamplerTest.cpp - sampler, seeds, logprobs and stop conditions -----===//
#include "runtime/serving/sampler/Sampler.h"
#include "runtime/serving/sampler/StopCriteria.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace accel::rt;
using namespace accel::rt::sampler;

namespace accel::rt::sampler {
// For EXPECT_EQ on distributions (found by ADL).
bool operator==(const TokenProb &a, const TokenProb &b) {
  return a.token == b.token && a.prob == b.prob;
}
std::ostream &operator<<(std::ostream &os, const TokenProb &t) {
  return os << "{" << t.token << ", " << t.prob << "}";
}
} // namespace accel::rt::sampler

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

SamplingParams params(float temperature, int64_t topK = 0, float topP = 1.0f,
                      float minP = 0.0f, float penalty = 1.0f,
                      std::optional<uint64_t> seed = 1234) {
  SamplingParams p;
  p.temperature = temperature;
  p.topK = topK;
  p.topP = topP;
  p.minP = minP;
  p.repetitionPenalty = penalty;
  p.seed = seed;
  return p;
}

/// softmax(l / T) in double with std::exp: the reference.
std::vector<double> softmax(const std::vector<float> &l, double t = 1.0) {
  double m = -std::numeric_limits<double>::infinity();
  for (float x : l)
    m = std::max(m, double(x) / t);
  std::vector<double> p(l.size());
  double z = 0.0;
  for (size_t i = 0; i < l.size(); ++i)
    z += p[i] = std::exp(double(l[i]) / t - m);
  for (double &x : p)
    x /= z;
  return p;
}

/// Logits whose softmax is `probs` (up to float rounding).
std::vector<float> logitsOf(const std::vector<double> &probs) {
  std::vector<float> l;
  for (double p : probs)
    l.push_back(p > 0 ? float(std::log(p)) : -kInf);
  return l;
}

std::set<int32_t> tokensOf(const std::vector<TokenProb> &dist) {
  std::set<int32_t> s;
  for (const TokenProb &tp : dist)
    s.insert(tp.token);
  return s;
}

std::vector<TokenProb> dist(const SamplingParams &p, const std::vector<float> &l,
                            const std::vector<int32_t> &context = {}) {
  Sampler s(p);
  auto d = s.distribution(l.data(), int64_t(l.size()), context, 0);
  EXPECT_TRUE(d.isOk()) << d.status().toString();
  return d.isOk() ? *d : std::vector<TokenProb>{};
}

double probOf(const std::vector<TokenProb> &d, int32_t token) {
  for (const TokenProb &tp : d)
    if (tp.token == token)
      return tp.prob;
  return 0.0;
}

int32_t argmaxLowest(const std::vector<float> &l) {
  return int32_t(std::max_element(l.begin(), l.end()) - l.begin());
}

/// Reproducible pseudo-random logits for the tests (N(0, scale)-ish).
std::vector<float> randomLogits(uint64_t seed, int64_t vocab, double scale) {
  Xoshiro256StarStar g(seed);
  std::vector<float> l(static_cast<size_t>(vocab));
  for (float &x : l) {
    double s = 0;
    for (int i = 0; i < 4; ++i)
      s += g.uniform() - 0.5;
    x = float(s * scale * 1.7320508);
  }
  return l;
}

/// Brute-force reference of the kept set: full sort, top-k, top-p, min-p.
std::set<int32_t> referenceKept(const std::vector<float> &l, double t,
                                int64_t k, double topP, double minP) {
  std::vector<int32_t> ids(l.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    return l[a] > l[b] || (l[a] == l[b] && a < b);
  });
  if (k > 0 && k < int64_t(ids.size()))
    ids.resize(size_t(k));
  double m = double(l[ids[0]]) / t;
  std::vector<double> w;
  double z = 0;
  for (int32_t i : ids)
    z += w.emplace_back(std::exp(double(l[i]) / t - m));
  size_t keep = 0;
  double cum = 0;
  while (keep < ids.size() && cum < topP * z)
    cum += w[keep++];
  std::set<int32_t> s;
  for (size_t j = 0; j < keep; ++j)
    if (w[j] >= minP && w[j] > 0)
      s.insert(ids[j]);
  return s;
}

/// |count - N p| within `sigmas` binomial standard deviations (+1 for the
/// discreteness of a count).
void expectFrequencies(const std::vector<int64_t> &counts, int64_t n,
                       const std::vector<double> &expected, double sigmas = 5) {
  ASSERT_EQ(counts.size(), expected.size());
  for (size_t i = 0; i < counts.size(); ++i) {
    const double mean = double(n) * expected[i];
    const double sd = std::sqrt(double(n) * expected[i] * (1 - expected[i]));
    EXPECT_LE(std::abs(double(counts[i]) - mean), sigmas * sd + 1.0)
        << "token " << i << ": " << counts[i] << " draws, expected " << mean
        << " +- " << sd;
  }
}

// ---------------------------------------------------------------------------
// The PRNG and exp.
// ---------------------------------------------------------------------------
TEST(SamplerRandom, SplitMix64ReferenceValues) {
  uint64_t s = 0;
  EXPECT_EQ(splitmix64(s), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(splitmix64(s), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(splitmix64(s), 0x06c45d188009454fULL);
}

TEST(SamplerRandom, UniformIsInUnitIntervalAndJumpChangesStream) {
  Xoshiro256StarStar a(7), b(7);
  for (int i = 0; i < 10000; ++i) {
    double u = a.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    ASSERT_EQ(u, b.uniform());
  }
  Xoshiro256StarStar c(7), d(7);
  d.jump();
  int same = 0;
  for (int i = 0; i < 100; ++i)
    same += c.next() == d.next();
  EXPECT_EQ(same, 0);
}

TEST(SamplerRandom, PortableExpMatchesStdExp) {
  EXPECT_EQ(portableExp(0.0), 1.0);
  EXPECT_EQ(portableExp(-std::numeric_limits<double>::infinity()), 0.0);
  EXPECT_EQ(portableExp(-800.0), 0.0);
  double worst = 0;
  for (double x = -707.5; x < 0; x += 0.0137) {
    const double ref = std::exp(x);
    worst = std::max(worst, std::abs(portableExp(x) - ref) / ref);
  }
  for (double x = -1e-3; x < 0; x += 1.7e-6) {
    const double ref = std::exp(x);
    worst = std::max(worst, std::abs(portableExp(x) - ref) / ref);
  }
  EXPECT_LE(worst, 3e-16); // about 1 ulp
}

TEST(SamplerRandom, PortableExpIsBitExact) {
  // Pinned bits: these change if the build rounds differently, e.g. when
  // Sampler.cpp is compiled without -ffp-contract=off on a machine with FMA.
  EXPECT_EQ(portableExp(-0.5), 0x1.368b2fc6f960ap-1);
  EXPECT_EQ(portableExp(-3.3), 0x1.2e259bb85be84p-5);
  EXPECT_EQ(portableExp(-100.7), 0x1.a5db5419c7533p-146);
  EXPECT_EQ(portableExp(-700.1), 0x1.f52f93df4dfcfp-1011);
  uint64_t h = 0;
  for (int i = 1; i <= 20000; ++i) {
    const double y = portableExp(-i * 0.0353);
    uint64_t bits;
    std::memcpy(&bits, &y, sizeof bits);
    h = (h ^ bits) * 0x100000001b3ULL;
  }
  EXPECT_EQ(h, 0x8f5e31bb1d803477ULL);
}

// ---------------------------------------------------------------------------
// Parameters and bad input.
// ---------------------------------------------------------------------------
TEST(SamplerParams, DefaultsAreValid) {
  EXPECT_TRUE(SamplingParams().validate().isOk());
  EXPECT_FALSE(SamplingParams().isGreedy());
  EXPECT_TRUE(params(0.0f).isGreedy());
  EXPECT_TRUE(params(0.5f, -1, 1.0f, 1.0f, 0.01f).validate().isOk());
}

TEST(SamplerParams, BadValuesAreNamed) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Case {
    SamplingParams p;
    const char *name;
  } cases[] = {
      {params(-0.1f), "temperature"},
      {params(nan), "temperature"},
      {params(kInf), "temperature"},
      {params(1.0f, -2), "top_k"},
      {params(1.0f, 0, 0.0f), "top_p"},
      {params(1.0f, 0, -0.5f), "top_p"},
      {params(1.0f, 0, 1.01f), "top_p"},
      {params(1.0f, 0, nan), "top_p"},
      {params(1.0f, 0, 1.0f, -0.1f), "min_p"},
      {params(1.0f, 0, 1.0f, 1.5f), "min_p"},
      {params(1.0f, 0, 1.0f, nan), "min_p"},
      {params(1.0f, 0, 1.0f, 0.0f, 0.0f), "repetition_penalty"},
      {params(1.0f, 0, 1.0f, 0.0f, -1.0f), "repetition_penalty"},
      {params(1.0f, 0, 1.0f, 0.0f, nan), "repetition_penalty"},
      {params(1.0f, 0, 1.0f, 0.0f, kInf), "repetition_penalty"},
  };
  for (const Case &c : cases) {
    Status s = c.p.validate();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(s.message().find(c.name), std::string::npos) << s.message();
  }
  Status s = params(1.0f, 0, 1.5f).validate();
  EXPECT_EQ(s.message(), "top_p must be in (0, 1] (1 means off), got 1.5");
}

TEST(SamplerParams, InvalidParamsFailEveryCall) {
  Sampler s(params(1.0f, 0, 2.0f));
  EXPECT_FALSE(s.paramsStatus().isOk());
  std::vector<float> l = {1, 2, 3};
  auto t = s.sample(l.data(), 3);
  ASSERT_FALSE(t.isOk());
  EXPECT_NE(t.status().message().find("top_p"), std::string::npos);
  EXPECT_FALSE(s.distribution(l.data(), 3).isOk());
  EXPECT_FALSE(s.sampleWithLogprobs(l.data(), 3, {}, 0, 2).isOk());
}

TEST(SamplerInput, NaNLogitFails) {
  std::vector<float> l = {1, 2, std::numeric_limits<float>::quiet_NaN(), 0};
  for (float t : {0.0f, 1.0f}) {
    Sampler s(params(t));
    auto r = s.sample(l.data(), 4);
    ASSERT_FALSE(r.isOk());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(), "sampler: the logit of token 2 is NaN");
  }
}

TEST(SamplerInput, PlusInfLogitFails) {
  std::vector<float> l = {1, kInf, 0};
  Sampler s(params(0.7f));
  auto r = s.sample(l.data(), 3);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("token 1 is +inf"), std::string::npos)
      << r.status().message();
}

TEST(SamplerInput, AllMinusInfFails) {
  std::vector<float> l(5, -kInf);
  for (float t : {0.0f, 1.0f}) {
    Sampler s(params(t));
    auto r = s.sample(l.data(), 5);
    ASSERT_FALSE(r.isOk());
    EXPECT_EQ(r.status().message(),
              "sampler: all 5 logits are -inf; there is no token to sample");
  }
}

TEST(SamplerInput, MinusInfMasksAToken) {
  // Token 1 would be the most likely; -inf masks it, even for greedy.
  std::vector<float> l = {0.0f, -kInf, 0.1f, -0.2f};
  Sampler g(params(0.0f));
  EXPECT_EQ(*g.sample(l.data(), 4), 2);
  Sampler s(params(5.0f));
  for (int i = 0; i < 2000; ++i)
    ASSERT_NE(*s.sample(l.data(), 4), 1);
  EXPECT_EQ(tokensOf(dist(params(5.0f), l)), (std::set<int32_t>{0, 2, 3}));
}

TEST(SamplerInput, BadArgumentsFail) {
  std::vector<float> l = {1, 2};
  Sampler s(params(1.0f));
  EXPECT_FALSE(s.sample(nullptr, 2).isOk());
  EXPECT_FALSE(s.sample(l.data(), 0).isOk());
  EXPECT_FALSE(s.sample(l.data(), -3).isOk());
  EXPECT_FALSE(s.sampleWithLogprobs(l.data(), 2, {}, 0, -1).isOk());
  Sampler p(params(1.0f, 0, 1.0f, 0.0f, 1.3f));
  auto r = p.sample(l.data(), 2, {0, 2}, 0);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(), "sampler: context token 2 at position 1 is "
                                  "outside the vocabulary [0, 2)");
  // Still usable afterwards, and the failed call left no penalty behind.
  EXPECT_EQ(*p.distribution(l.data(), 2, {}, 0), *Sampler(params(1.0f)).distribution(l.data(), 2));
}

// ---------------------------------------------------------------------------
// Greedy and temperature.
// ---------------------------------------------------------------------------
TEST(SamplerGreedy, PicksTheArgmax) {
  std::vector<float> l = {0.5f, -2.0f, 3.25f, 3.0f, -kInf, 1.0f};
  Sampler s(params(0.0f));
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(*s.sample(l.data(), 6), 2);
  auto d = dist(params(0.0f), l);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].token, 2);
  EXPECT_EQ(d[0].prob, 1.0);
}

TEST(SamplerGreedy, TiesGoToTheLowestId) {
  std::vector<float> l = {1.0f, 4.0f, 2.0f, 4.0f, 4.0f};
  EXPECT_EQ(*Sampler(params(0.0f)).sample(l.data(), 5), 1);
  std::vector<float> first = {7.0f, 7.0f, 7.0f};
  EXPECT_EQ(*Sampler(params(0.0f)).sample(first.data(), 3), 0);
  std::vector<float> last = {-kInf, -kInf, -3.0f};
  EXPECT_EQ(*Sampler(params(0.0f)).sample(last.data(), 3), 2);
}

TEST(SamplerGreedy, TemperatureBelowEpsilonIsGreedy) {
  std::vector<float> l = {1.0f, 2.0f, 2.0f, 1.9999f};
  for (float t : {0.0f, 1e-7f, 9e-6f}) {
    SamplingParams p = params(t);
    EXPECT_TRUE(p.isGreedy()) << t;
    Sampler s(p);
    for (int i = 0; i < 50; ++i)
      ASSERT_EQ(*s.sample(l.data(), 4), 1);
  }
  EXPECT_FALSE(params(1e-5f).isGreedy());
}

TEST(SamplerTemperature, DistributionIsSoftmaxOfScaledLogits) {
  std::vector<float> l = {1.0f, 2.0f, 0.5f, -1.0f, 1.5f};
  for (float t : {2.0f, 1.0f, 0.5f, 0.1f}) {
    auto d = dist(params(t), l);
    std::vector<double> ref = softmax(l, t);
    for (int32_t i = 0; i < 5; ++i)
      EXPECT_NEAR(probOf(d, i), ref[size_t(i)], 1e-12) << "T=" << t;
  }
}

TEST(SamplerTemperature, ZeroLimitConvergesToGreedy) {
  std::vector<float> l = {1.0f, 2.0f, 0.5f, 1.9f, 1.5f};
  double prev = 0;
  for (float t : {4.0f, 1.0f, 0.3f, 0.1f, 0.03f, 0.01f}) {
    double top = probOf(dist(params(t), l), 1);
    EXPECT_GT(top, prev) << "T=" << t;
    prev = top;
  }
  EXPECT_NEAR(prev, 1.0, 1e-4); // e^{-0.1 / 0.01} = 4.5e-5
  // Just above the greedy threshold the runner-up's weight e^{-1e4} is 0.
  auto d = dist(params(1.01e-5f), l);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].token, 1);
  Sampler s(params(1e-3f));
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(*s.sample(l.data(), 5), 1);
}

// ---------------------------------------------------------------------------
// top-k, top-p, min-p.
// ---------------------------------------------------------------------------
TEST(SamplerTopK, OneEqualsGreedy) {
  for (uint64_t row = 0; row < 50; ++row) {
    std::vector<float> l = randomLogits(row, 1000, 2.0);
    if (row % 5 == 0) // a tie for first place at two ids
      l[17] = l[900] = *std::max_element(l.begin(), l.end()) + 0.5f;
    Sampler k1(params(1.3f, 1, 1.0f, 0.0f, 1.0f, row));
    Sampler greedy(params(0.0f));
    const int32_t g = *greedy.sample(l.data(), 1000);
    ASSERT_EQ(g, argmaxLowest(l));
    for (int i = 0; i < 20; ++i)
      ASSERT_EQ(*k1.sample(l.data(), 1000), g) << "row " << row;
  }
}

TEST(SamplerTopK, KeepsExactlyTheKMostLikelyRenormalised) {
  std::vector<float> l = {0.1f, 3.0f, -1.0f, 2.5f, 2.0f, 0.0f, 2.9f};
  auto d = dist(params(1.0f, 3), l);
  EXPECT_EQ(tokensOf(d), (std::set<int32_t>{1, 6, 3}));
  std::vector<double> ref = softmax({3.0f, 2.9f, 2.5f});
  EXPECT_NEAR(probOf(d, 1), ref[0], 1e-12);
  EXPECT_NEAR(probOf(d, 6), ref[1], 1e-12);
  EXPECT_NEAR(probOf(d, 3), ref[2], 1e-12);
  // Ties at the k-th place go to the lower ids: exactly k are kept.
  std::vector<float> ties = {1.0f, 2.0f, 1.0f, 1.0f, 0.0f};
  EXPECT_EQ(tokensOf(dist(params(1.0f, 2), ties)), (std::set<int32_t>{1, 0}));
  // k >= vocab and -1 are off.
  EXPECT_EQ(dist(params(1.0f, 7), l).size(), 7u);
  EXPECT_EQ(dist(params(1.0f, 100), l).size(), 7u);
  EXPECT_EQ(dist(params(1.0f, -1), l).size(), 7u);
}

TEST(SamplerTopP, KeepsTheSmallestSetWithMassAtLeastP) {
  // probabilities 0.05, 0.5, 0.15, 0.1, 0.2 (sorted: 1, 4, 2, 3, 0)
  std::vector<float> l = logitsOf({0.05, 0.5, 0.15, 0.1, 0.2});
  struct Case {
    float p;
    std::set<int32_t> kept;
  } cases[] = {
      {0.3f, {1}},             // 0.5 >= 0.3
      {0.49f, {1}},            // 0.5 >= 0.49
      {0.51f, {1, 4}},         // 0.5 < 0.51 <= 0.7
      {0.69f, {1, 4}},         //
      {0.71f, {1, 4, 2}},      // 0.7 < 0.71 <= 0.85
      {0.86f, {1, 4, 2, 3}},   // 0.85 < 0.86 <= 0.95
      {0.96f, {1, 4, 2, 3, 0}} // 0.95 < 0.96
  };
  const std::vector<double> probs = {0.05, 0.5, 0.15, 0.1, 0.2};
  for (const Case &c : cases) {
    auto d = dist(params(1.0f, 0, c.p), l);
    EXPECT_EQ(tokensOf(d), c.kept) << "top_p=" << c.p;
    double mass = 0;
    for (int32_t t : c.kept)
      mass += probs[size_t(t)];
    for (const TokenProb &tp : d) // renormalised over the kept set
      EXPECT_NEAR(tp.prob, probs[size_t(tp.token)] / mass, 1e-6);
  }
}

TEST(SamplerTopP, AppliesToTheTopKRenormalisedDistribution) {
  // probabilities 0.4, 0.3, 0.2, 0.1. top_p=0.5 alone keeps {0, 1}
  // (0.4 < 0.5); after top_k=2 they are 0.571, 0.429 and it keeps {0}.
  std::vector<float> l = logitsOf({0.4, 0.3, 0.2, 0.1});
  EXPECT_EQ(tokensOf(dist(params(1.0f, 0, 0.5f), l)), (std::set<int32_t>{0, 1}));
  EXPECT_EQ(tokensOf(dist(params(1.0f, 2, 0.5f), l)), (std::set<int32_t>{0}));
  EXPECT_EQ(tokensOf(dist(params(1.0f, 3, 0.8f), l)), (std::set<int32_t>{0, 1, 2}));
  // Temperature comes first: at T=0.5 the probabilities are 16:9:4:1 / 30,
  // so top_p=0.6 keeps {0, 1} (16/30 = 0.533 < 0.6).
  EXPECT_EQ(tokensOf(dist(params(0.5f, 0, 0.6f), l)), (std::set<int32_t>{0, 1}));
  EXPECT_EQ(tokensOf(dist(params(0.5f, 0, 0.53f), l)), (std::set<int32_t>{0}));
  // An exact boundary: four equal weights, mass 0.5 is reached by two
  // tokens, so the third (mass before it = 0.5 = top_p) is not kept.
  std::vector<float> eq = {-kInf, 1.0f, 1.0f, 0.0f, 1.0f, 1.0f};
  EXPECT_EQ(tokensOf(dist(params(1.0f, 4, 0.5f), eq)), (std::set<int32_t>{1, 2}));
  eq[3] = -kInf;
  EXPECT_EQ(tokensOf(dist(params(1.0f, 0, 0.5f), eq)), (std::set<int32_t>{1, 2}));
}

TEST(SamplerTopP, LargeVocabularyEqualLogits) {
  // 5000 equal weights (exactly 1 each): the kept set is the lowest ids,
  // grown over several chunks of the partial sort.
  std::vector<float> l(5000, 0.25f);
  auto d = dist(params(0.7f, 0, 0.5f), l);
  ASSERT_EQ(d.size(), 2500u);
  EXPECT_EQ(*tokensOf(d).rbegin(), 2499);
  EXPECT_EQ(d.front().prob, 1.0 / 2500);
  EXPECT_EQ(dist(params(0.7f, 0, 0.9f), l).size(), 4500u);
}

TEST(SamplerTopP, MatchesABruteForceReferenceAt128k) {
  const int64_t vocab = 128256;
  struct Case {
    float t;
    int64_t k;
    float p;
    float minP;
    double scale;
  } cases[] = {
      {1.0f, 0, 0.9f, 0.0f, 3.0},   // a peaked row: few chunks
      {1.0f, 0, 0.95f, 0.0f, 0.5},  // a flat row: most of the vocab
      {0.7f, 50, 0.9f, 0.0f, 2.0},  // top-k then top-p
      {1.2f, 0, 0.8f, 0.05f, 2.0},  // top-p then min-p
      {1.0f, 0, 1.0f, 0.1f, 2.0},   // min-p alone
      {0.8f, 1000, 1.0f, 0.0f, 2.0}, // top-k alone (bounded heap)
      {1.0f, 50000, 1.0f, 0.0f, 2.0}, // a large top-k (sorts everything)
      {1.5f, 0, 0.99f, 0.0f, 4.0},    // a long tail
      {0.3f, 0, 0.5f, 0.0f, 1.0},     // a low temperature
  };
  for (size_t c = 0; c < std::size(cases); ++c) {
    const Case &cs = cases[c];
    std::vector<float> l = randomLogits(100 + c, vocab, cs.scale);
    auto d = dist(params(cs.t, cs.k, cs.p, cs.minP), l);
    std::set<int32_t> ref = referenceKept(l, cs.t, cs.k, cs.p, cs.minP);
    EXPECT_EQ(tokensOf(d), ref) << "case " << c << ": " << d.size() << " vs "
                                << ref.size();
    double sum = 0;
    for (const TokenProb &tp : d)
      sum += tp.prob;
    EXPECT_NEAR(sum, 1.0, 1e-9);
  }
}

TEST(SamplerMinP, DropsTokensBelowMinPTimesTheTop) {
  // probabilities 0.5, 0.3, 0.15, 0.05: min_p=0.2 cuts below 0.1.
  std::vector<float> l = logitsOf({0.15, 0.5, 0.05, 0.3});
  EXPECT_EQ(tokensOf(dist(params(1.0f, 0, 1.0f, 0.2f), l)),
            (std::set<int32_t>{1, 3, 0}));
  EXPECT_EQ(tokensOf(dist(params(1.0f, 0, 1.0f, 0.35f), l)),
            (std::set<int32_t>{1, 3}));
  // The same through the sorted path (top_k on), and after top-p.
  EXPECT_EQ(tokensOf(dist(params(1.0f, 4, 1.0f, 0.2f), l)),
            (std::set<int32_t>{1, 3, 0}));
  EXPECT_EQ(tokensOf(dist(params(1.0f, 0, 0.7f, 0.2f), l)),
            (std::set<int32_t>{1, 3}));
  auto d = dist(params(1.0f, 0, 1.0f, 0.2f), l);
  EXPECT_NEAR(probOf(d, 0), 0.15 / 0.95, 1e-6);
  // min_p=1 keeps only the top token (and its ties).
  EXPECT_EQ(tokensOf(dist(params(1.0f, 0, 1.0f, 1.0f), l)), (std::set<int32_t>{1}));
  std::vector<float> ties = {2.0f, 1.0f, 2.0f, 1.5f};
  EXPECT_EQ(tokensOf(dist(params(1.0f, 0, 1.0f, 1.0f), ties)),
            (std::set<int32_t>{0, 2}));
  EXPECT_EQ(tokensOf(dist(params(1.0f, 3, 1.0f, 1.0f), ties)),
            (std::set<int32_t>{0, 2}));
}

// ---------------------------------------------------------------------------
// Repetition penalty.
// ---------------------------------------------------------------------------
TEST(SamplerPenalty, DividesPositiveAndMultipliesNegativeLogits) {
  // Penalty 2 on tokens {0, 1}: 2.0 -> 1.0, -1.0 -> -2.0; 2 and 3 unchanged.
  std::vector<float> l = {2.0f, -1.0f, 0.5f, 3.0f};
  std::vector<double> ref = softmax({1.0f, -2.0f, 0.5f, 3.0f});
  auto d = dist(params(1.0f, 0, 1.0f, 0.0f, 2.0f), l, {0, 1, 1, 0});
  for (int32_t i = 0; i < 4; ++i)
    EXPECT_NEAR(probOf(d, i), ref[size_t(i)], 1e-12) << i;
  // Repeats count once: {0, 1} gives the same.
  EXPECT_EQ(dist(params(1.0f, 0, 1.0f, 0.0f, 2.0f), l, {0, 1}), d);
  // Penalty < 1 encourages: 2.0 / 0.5 = 4 > 3.
  Sampler enc(params(0.0f, 0, 1.0f, 0.0f, 0.5f));
  EXPECT_EQ(*enc.sample(l.data(), 4, {0}, 0), 0);
  // The context is ignored without a penalty.
  EXPECT_EQ(dist(params(1.0f), l, {0, 1}), dist(params(1.0f), l));
}

TEST(SamplerPenalty, ChangesTheGreedyChoice) {
  std::vector<float> l = {2.0f, 1.5f, -0.5f};
  Sampler plain(params(0.0f));
  Sampler pen(params(0.0f, 0, 1.0f, 0.0f, 1.5f));
  EXPECT_EQ(*plain.sample(l.data(), 3, {0}, 0), 0);
  EXPECT_EQ(*pen.sample(l.data(), 3, {0}, 0), 1);    // 2.0 / 1.5 = 1.33 < 1.5
  EXPECT_EQ(*pen.sample(l.data(), 3, {0, 1}, 0), 0); // 1.33 > 1.0
  // A negative logit moves further down: -0.5 * 1.5 = -0.75.
  auto d = dist(params(1.0f, 0, 1.0f, 0.0f, 1.5f), l, {2});
  std::vector<double> ref = softmax({2.0f, 1.5f, -0.75f});
  EXPECT_NEAR(probOf(d, 2), ref[2], 1e-12);
}

// Any penalty > 0 that a float holds is usable: extreme ones saturate at the
// float range instead of failing the request (issue 20: 1e-45 was a 500).
TEST(SamplerPenalty, ExtremePenaltiesSaturate) {
  std::vector<float> l = {2.0f, 30.0f, -2.0f, -kInf};
  const float tiny = 1e-45f, huge = 3e38f;
  ASSERT_GT(tiny, 0.0f);
  Sampler enc(params(0.0f, 0, 1.0f, 0.0f, tiny));
  StatusOr<int32_t> t = enc.sample(l.data(), 4, {0, 3}, 0);
  ASSERT_TRUE(t.isOk()) << t.status().toString();
  EXPECT_EQ(*t, 0); // 2 / 1.4e-45 -> FLT_MAX beats 30
  StatusOr<SampleResult> r = enc.sampleWithLogprobs(l.data(), 4, {0, 2, 3}, 0, 2);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(r->token, 0);
  Sampler warm(params(1.0f, 0, 1.0f, 0.0f, tiny, 7));
  auto d = warm.distribution(l.data(), 4, {0, 2, 3}, 0);
  ASSERT_TRUE(d.isOk()) << d.status().toString();
  EXPECT_EQ(tokensOf(*d), (std::set<int32_t>{0})); // the others weigh 0 next to FLT_MAX
  Sampler discourage(params(0.0f, 0, 1.0f, 0.0f, huge));
  StatusOr<int32_t> u = discourage.sample(l.data(), 4, {1, 2, 3}, 0);
  ASSERT_TRUE(u.isOk()) << u.status().toString();
  EXPECT_EQ(*u, 0); // 30 / 3e38 ~ 0 < 2; -2 * 3e38 -> -FLT_MAX
  auto all = Sampler(params(1.0f, 0, 1.0f, 0.0f, huge, 7)).distribution(l.data(), 4, {0, 1, 2}, 0);
  ASSERT_TRUE(all.isOk()) << all.status().toString();
  EXPECT_EQ(tokensOf(*all), (std::set<int32_t>{0, 1})); // 3 stays masked, 2 weighs 0
}

// ---------------------------------------------------------------------------
// Frequency and presence penalties (OpenAI's formula, vLLM's rules): with
// c(t) the count of t among the generated tokens only,
// logit -= frequency * c(t), then logit -= presence * (c(t) > 0).
// ---------------------------------------------------------------------------
SamplingParams occurrence(float frequency, float presence, float temperature = 0.0f) {
  SamplingParams p = params(temperature);
  p.frequencyPenalty = frequency;
  p.presencePenalty = presence;
  return p;
}

/// `w - f * c - p` in float, one rounding per operation as vLLM's two
/// float32 subtractions (volatile: no contraction into a fused multiply-add).
float shifted(float w, float f, int c, float p) {
  volatile float fc = f * float(c);
  volatile float a = w - fc;
  volatile float b = a - p;
  return b;
}

std::vector<float> penalised(const SamplingParams &p, const std::vector<float> &l,
                             const std::vector<int32_t> &context, size_t promptLen) {
  StatusOr<std::vector<float>> r =
      penalisedLogits(p, l.data(), int64_t(l.size()), context, promptLen);
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  return r.isOk() ? *r : std::vector<float>();
}

TEST(SamplerOccurrencePenalty, ShiftsByTheOutputCountsOnly) {
  const std::vector<float> l = {1.0f, 2.0f, 0.5f, -1.0f, 3.0f, -kInf, 0.25f};
  // Prompt {0, 0, 1, 6}; output {2, 4, 2, 2, 5, 6}: c(2) = 3, c(4) = 1,
  // c(5) = 1 (masked), c(6) = 1 (also in the prompt, counted once).
  const std::vector<int32_t> context = {0, 0, 1, 6, 2, 4, 2, 2, 5, 6};
  const size_t promptLen = 4;
  const std::vector<float> got = penalised(occurrence(0.5f, 0.25f), l, context, promptLen);
  const std::vector<float> want = {1.0f, 2.0f, -1.25f, -1.0f, 2.25f, -kInf, -0.5f};
  EXPECT_EQ(got, want);
  // The same with the helper's formula for every entry.
  for (size_t t = 0; t < l.size(); ++t) {
    const int c = int(std::count(context.begin() + promptLen, context.end(), int32_t(t)));
    EXPECT_EQ(got[t], c ? shifted(l[t], 0.5f, c, 0.25f) : l[t]) << "token " << t;
  }
  // Frequency alone scales with the count; presence alone does not.
  EXPECT_EQ(penalised(occurrence(0.5f, 0.0f), l, context, promptLen),
            (std::vector<float>{1.0f, 2.0f, -1.0f, -1.0f, 2.5f, -kInf, -0.25f}));
  EXPECT_EQ(penalised(occurrence(0.0f, 0.25f), l, context, promptLen),
            (std::vector<float>{1.0f, 2.0f, 0.25f, -1.0f, 2.75f, -kInf, 0.0f}));
  // The prompt does not count: were it output (promptLen 0), tokens 0, 1
  // and 6 would move too.
  const std::vector<float> all = penalised(occurrence(0.5f, 0.25f), l, context, 0);
  EXPECT_EQ(all[0], 1.0f - 1.0f - 0.25f);
  EXPECT_EQ(all[1], 2.0f - 0.5f - 0.25f);
  EXPECT_EQ(all[6], 0.25f - 1.0f - 0.25f);
  // Only the prompt: nothing generated yet, nothing moves.
  EXPECT_EQ(penalised(occurrence(2.0f, 2.0f), l, {0, 1, 2, 4}, 4), l);
}

TEST(SamplerOccurrencePenalty, NegativeValuesEncourageAndRoundAsFloat32) {
  const std::vector<float> l = {1.0f, 2.0f, 0.5f, -1.0f, 3.0f};
  const std::vector<int32_t> context = {1, 2, 2, 2, 3, 3};
  // f = -1, p = -0.5: token 2 (c 3) gains 3.5, token 3 (c 2) 2.5.
  EXPECT_EQ(penalised(occurrence(-1.0f, -0.5f), l, context, 1),
            (std::vector<float>{1.0f, 2.0f, 4.0f, 1.5f, 3.0f}));
  // The extremes, -2 and 2, with a count of 5.
  const std::vector<int32_t> fives = {0, 4, 4, 4, 4, 4};
  EXPECT_EQ(penalised(occurrence(2.0f, 2.0f), l, fives, 1)[4], 3.0f - 10.0f - 2.0f);
  EXPECT_EQ(penalised(occurrence(-2.0f, -2.0f), l, fives, 1)[4], 3.0f + 10.0f + 2.0f);
  // A penalty with no exact float product: f * c and the two
  // subtractions each round in float32, as vLLM's float32 tensors do.
  const std::vector<float> tenths = penalised(occurrence(0.1f, 0.3f), l, context, 1);
  EXPECT_EQ(tenths[2], shifted(0.5f, 0.1f, 3, 0.3f));
  EXPECT_EQ(tenths[3], shifted(-1.0f, 0.1f, 2, 0.3f));
  EXPECT_NE(double(tenths[2]), 0.5 - 0.1 * 3 - 0.3); // not double arithmetic
}

TEST(SamplerOccurrencePenalty, AfterTheRepetitionPenaltyBeforeTemperature) {
  // vLLM's apply_penalties: repetition (prompt and output) first, then
  // frequency and presence (output).
  const std::vector<float> l = {1.0f, 2.0f, 0.5f, -1.0f, 3.0f};
  const std::vector<int32_t> context = {0, 4, 4, 3};
  SamplingParams p = occurrence(0.5f, 0.25f);
  p.repetitionPenalty = 2.0f;
  const std::vector<float> got = penalised(p, l, context, 1);
  EXPECT_EQ(got[0], 0.5f);                         // prompt: repetition only
  EXPECT_EQ(got[4], 3.0f / 2.0f - 1.0f - 0.25f);    // 0.25, not (3 - 1.25) / 2
  EXPECT_EQ(got[3], -1.0f * 2.0f - 0.5f - 0.25f);   // -2.75
  EXPECT_EQ(got[1], 2.0f);
  // The draw uses that row: with temperature 0.5, softmax(row / 0.5).
  p.temperature = 0.5f;
  std::vector<double> ref = softmax(got, 0.5);
  Sampler s(p);
  StatusOr<std::vector<TokenProb>> dd = s.distribution(l.data(), 5, context, 1);
  ASSERT_TRUE(dd.isOk());
  for (int32_t i = 0; i < 5; ++i)
    EXPECT_NEAR(probOf(*dd, i), ref[size_t(i)], 1e-12) << i;
  // Processed logprobs are of the penalised row (temperature 1 when greedy).
  p.temperature = 0.0f;
  p.logprobMode = LogprobMode::kProcessed;
  StatusOr<SampleResult> r = Sampler(p).sampleWithLogprobs(l.data(), 5, context, 1, 5);
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(r->token, 1); // 2.0 is now the largest
  std::vector<double> ref1 = softmax(got);
  for (const TokenLogprob &t : r->topLogprobs)
    EXPECT_NEAR(t.logprob, std::log(ref1[size_t(t.token)]), 1e-6) << t.token;
}

TEST(SamplerOccurrencePenalty, ChangesTheGreedyChoice) {
  const std::vector<float> l = {2.0f, 1.5f, 1.9f};
  // Token 0 was generated twice: 2 - 0.2 * 2 = 1.6 < 1.9.
  EXPECT_EQ(*Sampler(params(0.0f)).sample(l.data(), 3, {1, 0, 0}, 1), 0);
  EXPECT_EQ(*Sampler(occurrence(0.2f, 0.0f)).sample(l.data(), 3, {1, 0, 0}, 1), 2);
  // Generated once: 2 - 0.05 = 1.95 stays first; the presence penalty
  // takes it to 1.85 < 1.9.
  EXPECT_EQ(*Sampler(occurrence(0.05f, 0.0f)).sample(l.data(), 3, {1, 0}, 1), 0);
  EXPECT_EQ(*Sampler(occurrence(0.05f, 0.1f)).sample(l.data(), 3, {1, 0}, 1), 2);
  // In the prompt only: not penalised.
  EXPECT_EQ(*Sampler(occurrence(2.0f, 2.0f)).sample(l.data(), 3, {0, 0, 0}, 3), 0);
  // A negative penalty pulls a generated token up: 1.5 + 2 * 0.3 = 2.1.
  EXPECT_EQ(*Sampler(occurrence(-0.3f, 0.0f)).sample(l.data(), 3, {0, 1, 1}, 1), 1);
}

// Any non-zero penalty keeps a greedy sequence off the engine's argmax
// (Scheduler plainGreedy, TextGenerator), which would not see it.
TEST(SamplerOccurrencePenalty, GreedyWithAPenaltyIsNotPlainArgmax) {
  EXPECT_FALSE(params(0.0f).hasPenalties());
  EXPECT_FALSE(occurrence(0.0f, 0.0f).hasPenalties());
  EXPECT_TRUE(occurrence(0.5f, 0.0f).hasPenalties());
  EXPECT_TRUE(occurrence(0.0f, -0.5f).hasPenalties());
  EXPECT_TRUE(params(0.0f, 0, 1.0f, 0.0f, 1.1f).hasPenalties());
}

TEST(SamplerOccurrencePenalty, CountsAreFreshEveryCall) {
  // The per-thread counts go back to 0: the same call twice, and calls of
  // other samplers between, give the same row.
  const std::vector<float> l = {1.0f, 2.0f, 0.5f, -1.0f, 3.0f};
  const std::vector<int32_t> context = {0, 2, 2, 4};
  const std::vector<float> first = penalised(occurrence(0.5f, 0.25f), l, context, 1);
  EXPECT_EQ(penalised(occurrence(-2.0f, 1.0f), l, {4, 4, 4}, 0)[4], 3.0f + 6.0f - 1.0f);
  EXPECT_EQ(penalised(occurrence(0.5f, 0.25f), l, context, 1), first);
  // A larger vocabulary on the same thread afterwards.
  std::vector<float> big(4000, 0.0f);
  const std::vector<float> b = penalised(occurrence(1.0f, 0.0f), big, {3999, 3999, 7}, 0);
  EXPECT_EQ(b[3999], -2.0f);
  EXPECT_EQ(b[7], -1.0f);
  EXPECT_EQ(b[0], 0.0f);
  EXPECT_EQ(penalised(occurrence(0.5f, 0.25f), l, context, 1), first);
}

TEST(SamplerOccurrencePenalty, BadInputIsNamed) {
  const std::vector<float> l = {1.0f, 2.0f};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (float bad : {2.01f, -2.5f, nan, kInf, -kInf}) {
    Status f = occurrence(bad, 0.0f).validate();
    EXPECT_EQ(f.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(f.message().rfind("frequency_penalty must be in [-2, 2] (0 means off), got ", 0), 0u)
        << f.message();
    Status p = occurrence(0.0f, bad).validate();
    EXPECT_EQ(p.message().rfind("presence_penalty must be in [-2, 2] (0 means off), got ", 0), 0u)
        << p.message();
    EXPECT_FALSE(Sampler(occurrence(bad, 0.0f)).sample(l.data(), 2).isOk());
  }
  for (float ok : {-2.0f, 2.0f, 0.0f, -0.0f})
    EXPECT_TRUE(occurrence(ok, ok).validate().isOk()) << ok;
  // A generated token outside the vocabulary is named with its position.
  Sampler s(occurrence(0.5f, 0.0f));
  StatusOr<int32_t> r = s.sample(l.data(), 2, {0, 1, 5}, 1);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(),
            "sampler: context token 5 at position 2 is outside the vocabulary [0, 2)");
  // A prompt length past the context.
  StatusOr<int32_t> q = s.sample(l.data(), 2, {0, 1}, 3);
  ASSERT_FALSE(q.isOk());
  EXPECT_EQ(q.status().message(),
            "sampler: the prompt length 3 is larger than the context of 2 tokens");
  EXPECT_EQ(*s.sample(l.data(), 2, {0, 1}, 2), 1); // still usable
}

// ---------------------------------------------------------------------------
// Statistics and determinism.
// ---------------------------------------------------------------------------
TEST(SamplerStatistics, FrequenciesMatchTheSoftmax) {
  std::vector<float> l = {1.0f, 2.0f, 0.5f, -1.0f, 1.5f, 0.0f, 2.2f, -3.0f};
  const float t = 0.8f;
  const int64_t n = 200000;
  Sampler s(params(t, 0, 1.0f, 0.0f, 1.0f, 99));
  std::vector<int64_t> counts(l.size(), 0);
  for (int64_t i = 0; i < n; ++i)
    ++counts[size_t(*s.sample(l.data(), int64_t(l.size())))];
  expectFrequencies(counts, n, softmax(l, t));
}

TEST(SamplerStatistics, FrequenciesMatchTheTruncatedDistribution) {
  // top_k=5 keeps {6, 1, 4, 0, 2}; top_p=0.8 of those then min_p=0.1.
  std::vector<float> l = {1.0f, 2.0f, 0.5f, -1.0f, 1.5f, 0.0f, 2.2f, -3.0f};
  for (auto p : {params(1.0f, 5, 1.0f, 0.0f, 1.0f, 5),
                 params(1.0f, 5, 0.8f, 0.0f, 1.0f, 6),
                 params(1.0f, 0, 1.0f, 0.3f, 1.0f, 7),
                 params(1.0f, 0, 0.9f, 0.0f, 1.0f, 8)}) {
    std::set<int32_t> kept =
        referenceKept(l, p.temperature, p.topK, p.topP, p.minP);
    std::vector<double> expected = softmax(l, p.temperature);
    double mass = 0;
    for (size_t i = 0; i < l.size(); ++i)
      mass += kept.count(int32_t(i)) ? expected[i] : 0;
    for (size_t i = 0; i < l.size(); ++i)
      expected[i] = kept.count(int32_t(i)) ? expected[i] / mass : 0;
    const int64_t n = 100000;
    Sampler s(p);
    std::vector<int64_t> counts(l.size(), 0);
    for (int64_t i = 0; i < n; ++i)
      ++counts[size_t(*s.sample(l.data(), int64_t(l.size())))];
    expectFrequencies(counts, n, expected);
  }
}

TEST(SamplerStatistics, FrequenciesOverALargeVocabulary) {
  // 5000 tokens, no truncation: the draw skips blocks of 1024 weights by
  // their sums. Three heavy tokens in different blocks and the rest.
  std::vector<float> l(5000, 0.0f);
  l[1000] = 7.0f;
  l[2500] = 6.5f;
  l[4999] = 6.0f;
  std::vector<double> p = softmax(l);
  const std::vector<int32_t> heavy = {1000, 2500, 4999};
  std::vector<double> expected = {p[1000], p[2500], p[4999], 0.0};
  expected[3] = 1.0 - expected[0] - expected[1] - expected[2];
  const int64_t n = 100000;
  Sampler s(params(1.0f, 0, 1.0f, 0.0f, 1.0f, 31));
  std::vector<int64_t> counts(4, 0);
  std::vector<int64_t> perBlock(5, 0);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t t = *s.sample(l.data(), 5000);
    const auto it = std::find(heavy.begin(), heavy.end(), t);
    ++counts[size_t(it - heavy.begin())];
    if (it == heavy.end())
      ++perBlock[size_t(t / 1024)];
  }
  expectFrequencies(counts, n, expected);
  // The light tokens spread over the blocks by their number.
  expectFrequencies(perBlock, counts[3],
                    {1023 / 4997.0, 1024 / 4997.0, 1023 / 4997.0,
                     1024 / 4997.0, 903 / 4997.0});
}

TEST(SamplerSeed, SameSeedSameTokens) {
  Sampler a(params(1.0f, 0, 0.95f, 0.0f, 1.1f, 42));
  Sampler b(params(1.0f, 0, 0.95f, 0.0f, 1.1f, 42));
  std::vector<int32_t> context;
  for (uint64_t step = 0; step < 300; ++step) {
    std::vector<float> l = randomLogits(step, 2000, 1.0);
    int32_t x = *a.sample(l.data(), 2000, context, 0);
    ASSERT_EQ(x, *b.sample(l.data(), 2000, context, 0)) << "step " << step;
    context.push_back(x);
  }
}

TEST(SamplerSeed, DifferentSeedsAndStreamsDiffer) {
  std::vector<float> l(1000, 0.0f);
  auto run = [&](Sampler s) {
    std::vector<int32_t> v;
    for (int i = 0; i < 50; ++i)
      v.push_back(*s.sample(l.data(), 1000));
    return v;
  };
  EXPECT_NE(run(Sampler(params(1.0f, 0, 1.0f, 0.0f, 1.0f, 1))),
            run(Sampler(params(1.0f, 0, 1.0f, 0.0f, 1.0f, 2))));
  EXPECT_NE(run(Sampler(params(1.0f, 0, 1.0f, 0.0f, 1.0f, 1), 0)),
            run(Sampler(params(1.0f, 0, 1.0f, 0.0f, 1.0f, 1), 1)));
  EXPECT_EQ(run(Sampler(params(1.0f, 0, 1.0f, 0.0f, 1.0f, 1), 3)),
            run(Sampler(params(1.0f, 0, 1.0f, 0.0f, 1.0f, 1), 3)));
  // Unseeded samplers draw from std::random_device.
  EXPECT_NE(run(Sampler(params(1.0f, 0, 1.0f, 0.0f, 1.0f, std::nullopt))),
            run(Sampler(params(1.0f, 0, 1.0f, 0.0f, 1.0f, std::nullopt))));
}

TEST(SamplerSeed, SamplersOnOtherThreadsAgree) {
  // Scratch buffers are per thread: threads running samplers of different
  // vocabularies side by side still give the single-threaded tokens.
  auto run = [](uint64_t seed, int64_t vocab, std::vector<int32_t> *out) {
    Sampler s(params(0.9f, 0, 0.9f, 0.0f, 1.2f, seed));
    std::vector<int32_t> context;
    for (uint64_t step = 0; step < 40; ++step) {
      std::vector<float> l = randomLogits(step + 7 * seed, vocab, 2.0);
      context.push_back(*s.sample(l.data(), vocab, context, 0));
    }
    *out = context;
  };
  std::vector<int32_t> a1, b1, a2, b2;
  run(1, 3000, &a1);
  run(2, 5000, &b1);
  std::thread ta(run, 1, 3000, &a2), tb(run, 2, 5000, &b2);
  ta.join();
  tb.join();
  EXPECT_EQ(a1, a2);
  EXPECT_EQ(b1, b2);
}

TEST(SamplerSeed, DistributionDrawsNoRandomNumber) {
  std::vector<float> l = randomLogits(3, 500, 1.0);
  Sampler a(params(1.0f, 0, 1.0f, 0.0f, 1.0f, 11));
  Sampler b(params(1.0f, 0, 1.0f, 0.0f, 1.0f, 11));
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(b.distribution(l.data(), 500).isOk());
    ASSERT_EQ(*a.sample(l.data(), 500), *b.sample(l.data(), 500));
  }
}

TEST(SamplerSeed, GoldenSequenceIsTheSameEverywhere) {
  // Pinned output: a change here means a seed no longer gives the tokens it
  // gave before (on this or any other machine). Do not update casually.
  std::vector<float> l = randomLogits(2024, 32000, 2.5);
  std::vector<int32_t> got;
  for (auto p : {params(0.9f, 0, 1.0f, 0.0f, 1.0f, 42),
                 params(0.7f, 40, 0.9f, 0.0f, 1.0f, 42),
                 params(1.1f, 0, 0.95f, 0.02f, 1.0f, 42)}) {
    Sampler s(p);
    for (int i = 0; i < 6; ++i)
      got.push_back(*s.sample(l.data(), 32000));
  }
  const std::vector<int32_t> golden = {
      3085,  12281, 21668, 29394, 31527, 24964, // temperature 0.9
      21100, 8656,  26704, 5160,  5900,  9769,  // top_k 40, top_p 0.9
      9769,  9585,  1317,  8907,  4073,  8062}; // top_p 0.95, min_p 0.02
  EXPECT_EQ(got, golden);
}

// ---------------------------------------------------------------------------
// Logprobs.
// ---------------------------------------------------------------------------
TEST(SamplerLogprobs, RawIsLogSoftmaxOfTheGivenLogits) {
  std::vector<float> l = {1.0f, 2.0f, 0.5f, -1.0f, 1.5f};
  std::vector<double> ref = softmax(l);
  Sampler s(params(0.3f, 2, 0.9f, 0.0f, 1.7f, 5)); // none of these matter
  auto r = s.sampleWithLogprobs(l.data(), 5, {1}, 0, 3);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_NEAR(r->logprob, std::log(ref[size_t(r->token)]), 1e-6);
  ASSERT_EQ(r->topLogprobs.size(), 3u);
  EXPECT_EQ(r->topLogprobs[0].token, 1);
  EXPECT_EQ(r->topLogprobs[1].token, 4);
  EXPECT_EQ(r->topLogprobs[2].token, 0);
  for (const TokenLogprob &t : r->topLogprobs)
    EXPECT_NEAR(t.logprob, std::log(ref[size_t(t.token)]), 1e-6);
  // rank: 1 + tokens with a larger raw logit.
  int64_t above = 0;
  for (float x : l)
    above += x > l[size_t(r->token)];
  EXPECT_EQ(r->rank, above + 1);
}

TEST(SamplerLogprobs, ProcessedIsAfterPenaltyAndTemperatureBeforeTruncation) {
  std::vector<float> l = {1.0f, 2.0f, 0.5f, -1.0f, 1.5f};
  SamplingParams p = params(0.5f, 1, 1.0f, 0.0f, 2.0f, 5);
  p.logprobMode = LogprobMode::kProcessed;
  // Penalty on 1: 2.0 -> 1.0; then / 0.5. top_k=1 keeps only token 4.
  std::vector<double> ref = softmax({1.0f, 1.0f, 0.5f, -1.0f, 1.5f}, 0.5);
  Sampler s(p);
  auto r = s.sampleWithLogprobs(l.data(), 5, {1}, 0, 5);
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(r->token, 4);
  EXPECT_EQ(r->rank, 1);
  EXPECT_NEAR(r->logprob, std::log(ref[4]), 1e-6);
  ASSERT_EQ(r->topLogprobs.size(), 5u);
  EXPECT_EQ(r->topLogprobs[1].token, 0); // ties (0 and 1) by lower id
  EXPECT_EQ(r->topLogprobs[2].token, 1);
  EXPECT_NEAR(r->topLogprobs[4].logprob, std::log(ref[3]), 1e-5);
  // Greedy: temperature 1 after the penalty.
  p.temperature = 0.0f;
  auto g = Sampler(p).sampleWithLogprobs(l.data(), 5, {1}, 0, 0);
  std::vector<double> ref1 = softmax({1.0f, 1.0f, 0.5f, -1.0f, 1.5f});
  EXPECT_EQ(g->token, 4);
  EXPECT_NEAR(g->logprob, std::log(ref1[4]), 1e-6);
  EXPECT_TRUE(g->topLogprobs.empty());
}

TEST(SamplerLogprobs, MaskedTokensAndLargeCounts) {
  std::vector<float> l = {0.0f, -kInf, 1.0f};
  auto r = Sampler(params(1.0f)).sampleWithLogprobs(l.data(), 3, {}, 0, 10);
  ASSERT_TRUE(r.isOk());
  ASSERT_EQ(r->topLogprobs.size(), 3u);
  EXPECT_EQ(r->topLogprobs[2].token, 1);
  EXPECT_EQ(r->topLogprobs[2].logprob, -kInf);
  EXPECT_NE(r->token, 1);
}

// ---------------------------------------------------------------------------
// Stop conditions.
// ---------------------------------------------------------------------------
/// Feeds `pieces` (the decoded text of each token) one by one; returns the
/// decision at the step that finished, or the last one.
struct Fed {
  StopDecision decision;
  size_t steps = 0;
  std::string output;
};
Fed feed(const StopCriteria &c, const std::vector<std::pair<int32_t, std::string>> &pieces) {
  Fed f;
  std::string text;
  for (const auto &[token, piece] : pieces) {
    text += piece;
    ++f.steps;
    f.decision = checkStop(c, text, piece.size(), token, int64_t(f.steps));
    if (f.decision.finished())
      break;
  }
  f.output = text.substr(0, f.decision.outputBytes);
  return f;
}

TEST(SamplerStop, StopStringSpanningTokens) {
  StopCriteria c;
  c.stopStrings = {"<|end|>"};
  Fed f = feed(c, {{1, "Hello"}, {2, " wor"}, {3, "ld<|e"}, {4, "nd|"}, {5, ">more"}, {6, "x"}});
  EXPECT_EQ(f.decision.reason, FinishReason::kStop);
  EXPECT_EQ(f.steps, 5u);
  EXPECT_EQ(f.decision.stopStringIndex, 0);
  EXPECT_EQ(f.output, "Hello world");
  EXPECT_STREQ(finishReasonName(f.decision.reason), "stop");
  // Kept with include_stop_str_in_output; what follows it is still dropped.
  c.includeStopStringInOutput = true;
  f = feed(c, {{1, "Hello"}, {2, " wor"}, {3, "ld<|e"}, {4, "nd|"}, {5, ">more"}});
  EXPECT_EQ(f.output, "Hello world<|end|>");
}

TEST(SamplerStop, EarliestOfSeveralStopStrings) {
  StopCriteria c;
  c.stopStrings = {"world", "lo w", "\n\n"};
  Fed f = feed(c, {{1, "Hel"}, {2, "lo world\n\nmore"}});
  EXPECT_EQ(f.decision.stopStringIndex, 1);
  EXPECT_EQ(f.output, "Hel");
  // Only matches ending in the new bytes are looked for.
  EXPECT_FALSE(findStopString({"ab"}, "abcd", 2).has_value());
  auto m = findStopString({"bc"}, "abcd", 2); // "b|c" straddles the boundary
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->position, 1u);
  EXPECT_FALSE(findStopString({""}, "abc").has_value());
}

TEST(SamplerStop, StopTokenAndMaxTokens) {
  StopCriteria c;
  c.stopTokenIds = {2, 128009};
  c.maxTokens = 4;
  Fed f = feed(c, {{5, "a"}, {6, "b"}, {128009, "<|eot_id|>"}, {7, "c"}});
  EXPECT_EQ(f.decision.reason, FinishReason::kStop);
  EXPECT_EQ(f.decision.stopTokenId, 128009);
  EXPECT_EQ(f.output, "ab"); // the stop token's text is not output
  f = feed(c, {{5, "a"}, {6, "b"}, {7, "c"}, {8, "d"}, {9, "e"}});
  EXPECT_EQ(f.decision.reason, FinishReason::kLength);
  EXPECT_EQ(f.steps, 4u);
  EXPECT_EQ(f.output, "abcd");
  EXPECT_STREQ(finishReasonName(FinishReason::kLength), "length");
  // A stop token at the last allowed step is a stop, not a length.
  f = feed(c, {{5, "a"}, {6, "b"}, {7, "c"}, {2, ""}});
  EXPECT_EQ(f.decision.reason, FinishReason::kStop);
  // No limit, no stop: never finished.
  StopCriteria none;
  f = feed(none, {{5, "a"}, {6, "b"}});
  EXPECT_FALSE(f.decision.finished());
  EXPECT_EQ(f.output, "ab");
}

// vLLM's min_tokens and include_stop_str_in_output on stop tokens.
TEST(SamplerStop, MinTokensAndIncludedStopToken) {
  StopCriteria c;
  c.stopTokenIds = {2};
  c.stopStrings = {"x"};
  c.maxTokens = 6;
  c.minTokens = 3;
  // No stop token or string ends any of the first three tokens.
  Fed f = feed(c, {{2, ""}, {5, "x"}, {6, "a"}, {2, "!"}, {7, "b"}});
  EXPECT_EQ(f.decision.reason, FinishReason::kStop);
  EXPECT_EQ(f.steps, 4u);
  EXPECT_EQ(f.output, "xa");
  f = feed(c, {{5, "a"}, {6, "b"}, {7, "cx"}, {8, "d"}});
  EXPECT_FALSE(f.decision.finished()); // "x" ended in the third token's text
  f = feed(c, {{5, "a"}, {6, "b"}, {7, "c"}, {8, "xd"}});
  EXPECT_EQ(f.steps, 4u);
  EXPECT_EQ(f.decision.stopStringIndex, 0);
  EXPECT_EQ(f.output, "abc");
  // The length still ends it, and min_tokens may equal max_tokens.
  c.minTokens = 6;
  EXPECT_TRUE(c.validate().isOk());
  f = feed(c, {{2, ""}, {2, ""}, {2, ""}, {2, ""}, {2, ""}, {2, ""}, {2, ""}});
  EXPECT_EQ(f.decision.reason, FinishReason::kLength);
  EXPECT_EQ(f.steps, 6u);
  c.minTokens = 7;
  EXPECT_NE(c.validate().message().find("min_tokens"), std::string::npos);
  c.minTokens = -1;
  EXPECT_FALSE(c.validate().isOk());
  // include_stop_str_in_output keeps a stop token's text too.
  StopCriteria inc;
  inc.stopTokenIds = {9};
  inc.includeStopStringInOutput = true;
  f = feed(inc, {{5, "a"}, {9, "."}, {7, "b"}});
  EXPECT_EQ(f.decision.stopTokenId, 9);
  EXPECT_EQ(f.output, "a.");
}

TEST(SamplerStop, StreamingHoldsBackAPossibleStopString) {
  StopCriteria c;
  c.stopStrings = {"<|end|>", "###"};
  EXPECT_EQ(streamableBytes(c, "Hello <|e", false), 6u);
  EXPECT_EQ(streamableBytes(c, "Hello ##", false), 6u);
  EXPECT_EQ(streamableBytes(c, "Hello <|x", false), 9u);
  EXPECT_EQ(streamableBytes(c, "Hello <|e", true), 9u);
  // An incomplete UTF-8 character is held back too.
  StopCriteria plain;
  EXPECT_EQ(streamableBytes(plain, "caf\xC3", false), 3u);
  EXPECT_EQ(streamableBytes(plain, "caf\xC3\xA9", false), 5u);
  EXPECT_EQ(streamableBytes(plain, "\xE2\x82", false), 0u);
}

TEST(SamplerStop, ValidateRejectsBadCriteria) {
  StopCriteria c;
  EXPECT_TRUE(c.validate().isOk());
  c.stopStrings = {"ok", ""};
  EXPECT_EQ(c.validate().code(), StatusCode::kInvalidArgument);
  c.stopStrings = {"ok"};
  c.maxTokens = 0;
  EXPECT_NE(c.validate().message().find("max_tokens"), std::string::npos);
  c.maxTokens = 16;
  c.stopTokenIds = {-4};
  EXPECT_FALSE(c.validate().isOk());
}

} // namespace
