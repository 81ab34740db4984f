//===- SpeculativeTest.cpp - speculative decoding's proposers and rule ----===//
//
// The acceptance rule of runtime/serving/sampler/SpeculativeAcceptance.h:
// greedy keeps the agreed prefix and the target's own token; sampling keeps
// a draft token x with probability min(1, p(x)/q(x)) and otherwise draws from
// norm(max(0, p - q)), so every emitted token is distributed as p: checked
// with a chi-square bound on a fixed small vocabulary and a fixed seed. And
// runtime/engine/Speculative.h's prompt lookup and flag checks.
//
//===----------------------------------------------------------------------===//
#include "runtime/engine/Speculative.h"
#include "runtime/serving/sampler/SpeculativeAcceptance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace accel::rt;
using namespace accel::rt::sampler;

namespace {

TEST(SpeculativeAcceptance, GreedyKeepsTheAgreedPrefixAndTheTargetsToken) {
  // All agree: K drafts and the target's bonus token.
  EXPECT_EQ(acceptGreedy({5, 6, 7}, {5, 6, 7, 8}), (std::vector<int64_t>{5, 6, 7, 8}));
  // The second differs: the first draft, then the target's token there.
  EXPECT_EQ(acceptGreedy({5, 6, 7}, {5, 9, 7, 8}), (std::vector<int64_t>{5, 9}));
  // The first differs: only the target's token (plain decoding's).
  EXPECT_EQ(acceptGreedy({5, 6, 7}, {4, 6, 7, 8}), (std::vector<int64_t>{4}));
  // No drafts: the one token of a plain step.
  EXPECT_EQ(acceptGreedy({}, {3}), (std::vector<int64_t>{3}));
}

/// Chi-square statistic of `counts` against the probabilities `p` over n draws.
double chiSquare(const std::vector<int64_t> &counts, const std::vector<double> &p, int64_t n) {
  double x2 = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double e = p[i] * double(n);
    if (e > 0)
      x2 += (double(counts[i]) - e) * (double(counts[i]) - e) / e;
    else
      EXPECT_EQ(counts[i], 0) << "token " << i << " has probability 0 but was emitted";
  }
  return x2;
}

std::vector<TokenProb> sparse(const std::vector<double> &p) {
  std::vector<TokenProb> out;
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] > 0)
      out.push_back({int32_t(i), p[i]});
  return out;
}

// 99.9% quantiles of chi-square with 4 and 5 degrees of freedom.
constexpr double kChi2Df4 = 18.467, kChi2Df5 = 20.515;

// A point-mass draft (n-gram lookup, a greedy draft plan): x is kept with
// probability p(x), else a token is drawn from p without x; the emitted
// token is distributed as p, and x is kept about p(x) of the time.
TEST(SpeculativeAcceptance, PointMassDraftEmitsTheTargetDistribution) {
  const std::vector<double> p = {0.1, 0.35, 0.05, 0.3, 0.2};
  const std::vector<TokenProb> ps = sparse(p);
  Xoshiro256StarStar rng(20261207);
  for (int32_t draft : {1, 2, 4}) {
    const int64_t n = 200000;
    std::vector<int64_t> counts(p.size(), 0);
    int64_t kept = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double u1 = rng.uniform(), u2 = rng.uniform();
      DraftDecision d = acceptOrResample(ps, nullptr, draft, u1, u2);
      ASSERT_GE(d.token, 0);
      ++counts[size_t(d.token)];
      kept += d.accepted;
      if (d.accepted)
        ASSERT_EQ(d.token, draft);
      else
        ASSERT_NE(d.token, draft); // p without x
    }
    EXPECT_LT(chiSquare(counts, p, n), kChi2Df4) << "draft " << draft;
    EXPECT_NEAR(double(kept) / double(n), p[size_t(draft)], 0.005) << "draft " << draft;
  }
}

// A draft with its own distribution q: x drawn from q, kept with
// probability min(1, p(x)/q(x)), else drawn from norm(max(0, p - q)); the
// emitted token is distributed as p (the theorem of speculative sampling),
// including a token q never proposes and one p never emits.
TEST(SpeculativeAcceptance, DraftDistributionEmitsTheTargetDistribution) {
  const std::vector<double> p = {0.25, 0.05, 0.3, 0.0, 0.15, 0.25};
  const std::vector<double> q = {0.1, 0.3, 0.2, 0.2, 0.2, 0.0};
  const std::vector<TokenProb> ps = sparse(p), qs = sparse(q);
  Xoshiro256StarStar rng(7);
  const int64_t n = 200000;
  std::vector<int64_t> counts(p.size(), 0);
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t x = drawFrom(qs, rng.uniform());
    const double u1 = rng.uniform(), u2 = rng.uniform();
    DraftDecision d = acceptOrResample(ps, &qs, x, u1, u2);
    ASSERT_GE(d.token, 0);
    ++counts[size_t(d.token)];
    kept += d.accepted;
  }
  EXPECT_LT(chiSquare(counts, p, n), kChi2Df5);
  // The acceptance rate is sum_x min(p(x), q(x)).
  double rate = 0;
  for (size_t i = 0; i < p.size(); ++i)
    rate += std::min(p[i], q[i]);
  EXPECT_NEAR(double(kept) / double(n), rate, 0.005);
}

// The whole rule on a sampler (temperature, top-k): the first emitted token
// of a verification step is distributed as the sampler's own distribution
// of the first row, whatever the draft; and a fully kept run is followed by
// a draw from the last row.
TEST(SpeculativeAcceptance, AcceptSampledFollowsTheSamplersDistribution) {
  const int64_t vocab = 6;
  const std::vector<float> row0 = {1.0f, 2.5f, 0.5f, 2.0f, -1.0f, 1.5f};
  const std::vector<float> row1 = {0.0f, 0.0f, 3.0f, 0.0f, 0.0f, 0.0f};
  std::vector<float> rows = row0;
  rows.insert(rows.end(), row1.begin(), row1.end());
  SamplingParams sp;
  sp.temperature = 0.8f;
  sp.topK = 5;
  sp.seed = 99;
  Sampler s(sp);
  StatusOr<std::vector<TokenProb>> dist = s.distribution(row0.data(), vocab);
  ASSERT_TRUE(dist.isOk());
  std::vector<double> p(size_t(vocab), 0.0);
  for (const TokenProb &t : *dist)
    p[size_t(t.token)] = t.prob;
  EXPECT_EQ(p[4], 0.0); // top-k drops the least likely
  const int64_t n = 100000;
  std::vector<int64_t> counts(size_t(vocab), 0);
  int64_t runs = 0;
  for (int64_t i = 0; i < n; ++i) {
    StatusOr<std::vector<int64_t>> got =
        engine::acceptSampled(s, rows.data(), vocab, {3}, {}, 0);
    ASSERT_TRUE(got.isOk()) << got.status().toString();
    ASSERT_GE(got->size(), 1u);
    ASSERT_LE(got->size(), 2u);
    ++counts[size_t((*got)[0])];
    if (got->size() == 2) {
      EXPECT_EQ((*got)[0], 3); // kept
      ++runs;
    }
  }
  EXPECT_LT(chiSquare(counts, p, n), kChi2Df4);
  EXPECT_NEAR(double(runs) / double(n), p[3], 0.01);
}

TEST(SpeculativeNgram, ProposesWhatFollowedTheLastOccurrence) {
  //                        0  1  2  3  4  5  6  7  8  9
  std::vector<int64_t> t = {1, 2, 3, 4, 9, 1, 2, 3, 5, 1, 2, 3};
  // The last earlier "1 2 3" is at 5..7, followed by 5 1 2 3.
  EXPECT_EQ(engine::proposeNgram(t.data(), int64_t(t.size()), 1, 4, 3),
            (std::vector<int64_t>{5, 1, 2}));
  // Only what follows, up to the end.
  EXPECT_EQ(engine::proposeNgram(t.data(), int64_t(t.size()), 1, 4, 16),
            (std::vector<int64_t>{5, 1, 2, 3}));
  // A longer n-gram that occurs wins over a shorter one's later match.
  std::vector<int64_t> u = {7, 8, 1, 2, 5, 6, 2, 3, 7, 8, 1, 2};
  EXPECT_EQ(engine::proposeNgram(u.data(), int64_t(u.size()), 1, 4, 2),
            (std::vector<int64_t>{5, 6}));
  // ... but with ngram-max 1, the last earlier "2" (at 6) counts.
  EXPECT_EQ(engine::proposeNgram(u.data(), int64_t(u.size()), 1, 1, 2),
            (std::vector<int64_t>{3, 7}));
  // No match, or ngram-min above what matches: nothing.
  std::vector<int64_t> v = {1, 2, 3, 4};
  EXPECT_TRUE(engine::proposeNgram(v.data(), 4, 1, 4, 4).empty());
  EXPECT_TRUE(engine::proposeNgram(u.data(), int64_t(u.size()), 5, 6, 4).empty());
}

TEST(SpeculativeConfig, BadFlagsAreOneSentence) {
  engine::SpeculativeConfig c;
  c.method = engine::SpeculativeMethod::kNgram;
  for (int64_t k : {0, -1, 17}) {
    c.numTokens = k;
    Status s = c.validate();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(), "--num-speculative-tokens must be between 1 and 16, got " +
                               std::to_string(k));
  }
  c.numTokens = 16;
  EXPECT_TRUE(c.validate().isOk());
  c.ngramMin = 3;
  c.ngramMax = 2;
  EXPECT_FALSE(c.validate().isOk());
}

} // namespace
