//===- Sampler.cpp - the next token from a row of logits ------------------===//
//
// Compiled with -ffp-contract=off (see CMakeLists.txt): a fused multiply-add
// would round differently from a multiply then an add, and the weights must
// be the same on every machine for a seed to mean the same tokens.
//
// Cost per call for a vocabulary of V: one pass to check the logits and find
// the max (greedy stops here); top-k: one pass over a bounded heap; else one
// pass computing the weights, and for top-p a threshold pass, a filter pass
// and a sort of only the tokens heavy enough to be in the kept set. The
// whole-vocabulary loops vectorise (and get an AVX2 clone on x86-64).
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/sampler/Sampler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>

namespace accel::rt::sampler {

namespace {

constexpr float kInfF = std::numeric_limits<float>::infinity();

std::string fmt(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

uint64_t entropySeed() {
  try {
    std::random_device rd;
    uint64_t hi = rd(), lo = rd();
    return (hi << 32) ^ lo;
  } catch (...) {
    // No entropy source: the clock and an address are better than nothing.
    static int anchor;
    uint64_t s = uint64_t(
        std::chrono::high_resolution_clock::now().time_since_epoch().count());
    s ^= uint64_t(reinterpret_cast<uintptr_t>(&anchor));
    return splitmix64(s);
  }
}

// e^x for x <= 0, branch-free so that loops over a vocabulary vectorise.
// x = k ln2 + r with k = round(x / ln2) by the 1.5 * 2^52 trick (exact IEEE
// adds, no libm floor), |r| <= ln2 / 2; e^r by Horner on the Taylor series
// to r^13 (truncation < 5e-18); 2^k built from its bits, so the last
// multiplication is exact. ln2Hi has 32 significant bits: k * ln2Hi is exact.
inline double expNonPositive(double x) {
  constexpr double kInvLn2 = 1.44269504088896338700e+00;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kShifter = 0x1.8p52;
  constexpr double c2 = 1.0 / 2.0, c3 = 1.0 / 6.0, c4 = 1.0 / 24.0,
                   c5 = 1.0 / 120.0, c6 = 1.0 / 720.0, c7 = 1.0 / 5040.0,
                   c8 = 1.0 / 40320.0, c9 = 1.0 / 362880.0,
                   c10 = 1.0 / 3628800.0, c11 = 1.0 / 39916800.0,
                   c12 = 1.0 / 479001600.0, c13 = 1.0 / 6227020800.0;
  // Below -708 the result would not be a normal double: 0 (also for -inf).
  const bool live = x > -708.0;
  const double xc = live ? x : -708.0;
  const double t = xc * kInvLn2 + kShifter; // kShifter + k, k in [-1021, 0]
  const double kd = t - kShifter;
  const double r = (xc - kd * kLn2Hi) - kd * kLn2Lo;
  double p = c13;
  p = p * r + c12;
  p = p * r + c11;
  p = p * r + c10;
  p = p * r + c9;
  p = p * r + c8;
  p = p * r + c7;
  p = p * r + c6;
  p = p * r + c5;
  p = p * r + c4;
  p = p * r + c3;
  p = p * r + c2;
  p = p * r + 1.0;
  p = p * r + 1.0;
  int64_t tBits, shifterBits;
  std::memcpy(&tBits, &t, sizeof t);
  std::memcpy(&shifterBits, &kShifter, sizeof kShifter);
  const uint64_t scaleBits = uint64_t(tBits - shifterBits + 1023) << 52;
  double scale;
  std::memcpy(&scale, &scaleBits, sizeof scale);
  return live ? p * scale : 0.0;
}

// The loops over the whole vocabulary get an AVX2 clone on x86-64 (picked
// at load time). Every lane does the same IEEE operations and sums keep
// their written order, so the clones give bit-identical results (the tests
// pin them; -DACCEL_SAMPLER_NO_CLONES builds only the baseline).
#if defined(__x86_64__) && defined(__linux__) &&                               \
    (defined(__GNUC__) || defined(__clang__)) &&                               \
    !defined(ACCEL_SAMPLER_NO_CLONES)
#define ACCEL_SAMPLER_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ACCEL_SAMPLER_CLONES
#endif

/// out[i] = e^((v[i] - m) / t), or 0 below `floor`.
ACCEL_SAMPLER_CLONES
void expWeights(const float *v, int64_t n, double m, double t, double floor,
                double *out) {
  for (int64_t i = 0; i < n; ++i) {
    const double w = expNonPositive((double(v[i]) - m) / t);
    out[i] = w < floor ? 0.0 : w;
  }
}

/// The sum of w[0, n) in a fixed order: four interleaved partial sums.
ACCEL_SAMPLER_CLONES
double fixedOrderSum(const double *w, int64_t n) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += w[i];
    s1 += w[i + 1];
    s2 += w[i + 2];
    s3 += w[i + 3];
  }
  for (; i < n; ++i)
    s0 += w[i];
  return (s0 + s1) + (s2 + s3);
}

constexpr int64_t kBlock = 1024;

/// expWeights, then the sum of each block of kBlock weights into `blocks`;
/// returns the total, the blocks summed in order.
double weights(const float *v, int64_t n, double m, double t, double floor,
               double *out, std::vector<double> &blocks) {
  expWeights(v, n, m, t, floor, out);
  blocks.clear();
  double total = 0.0;
  for (int64_t b = 0; b < n; b += kBlock) {
    blocks.push_back(fixedOrderSum(out + b, std::min(kBlock, n - b)));
    total += blocks.back();
  }
  return total;
}

/// mass[j] = the weight of the tokens with w >= tau[j], j < 4. Only a
/// guide for picking a threshold: its rounding never changes a result.
ACCEL_SAMPLER_CLONES
void massesAbove(const double *w, int64_t n, const double *tau, double *mass) {
  double m[4][2] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};
  int64_t i = 0;
  for (; i + 2 <= n; i += 2)
    for (int j = 0; j < 4; ++j) {
      m[j][0] += w[i] >= tau[j] ? w[i] : 0.0;
      m[j][1] += w[i + 1] >= tau[j] ? w[i + 1] : 0.0;
    }
  for (; i < n; ++i)
    for (int j = 0; j < 4; ++j)
      m[j][0] += w[i] >= tau[j] ? w[i] : 0.0;
  for (int j = 0; j < 4; ++j)
    mass[j] = m[j][0] + m[j][1];
}

/// The float's bits as an int32 that orders like the float (-0 < +0).
inline int32_t orderedBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return int32_t(u ^ (uint32_t(int32_t(u) >> 31) & 0x7FFFFFFFu));
}

/// The max of v[0, n) into `max`; false when some value is NaN or +inf
/// (then `max` is meaningless). An integer max, which vectorises.
ACCEL_SAMPLER_CLONES
bool finiteMax(const float *v, int64_t n, float &max) {
  int32_t m = std::numeric_limits<int32_t>::min();
  int32_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    bad |= v[i] < kInfF ? 0 : 1;
    const int32_t k = orderedBits(v[i]);
    m = k > m ? k : m;
  }
  const uint32_t u = uint32_t(m) ^ (uint32_t(m >> 31) & 0x7FFFFFFFu);
  std::memcpy(&max, &u, sizeof max);
  return bad == 0;
}

/// The first id whose value equals m, or -1.
int32_t firstIndexOf(const float *v, int64_t n, float m) {
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) { // a vectorised test per chunk
    int32_t hit = 0;
    for (int j = 0; j < 64; ++j)
      hit |= v[i + j] == m ? 1 : 0;
    if (hit)
      break;
  }
  for (; i < n; ++i)
    if (v[i] == m)
      return int32_t(i);
  return -1;
}

/// A 64-bit key whose ascending order is: larger value first, then lower
/// id. A strict total order, so every sort gives the same sequence.
inline uint64_t rankKey(float v, int32_t id) {
  if (v == 0.0f)
    v = 0.0f; // -0 ranks with +0
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  const uint32_t ascending = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return (uint64_t(~ascending) << 32) | uint32_t(id);
}
inline int32_t keyId(uint64_t key) { return int32_t(uint32_t(key)); }

/// Sorts keys built in increasing id order. Large arrays: a stable LSD
/// radix sort on the value half (ties keep their id order); small ones:
/// std::sort. Both give the order of the keys.
void sortKeys(std::vector<uint64_t> &keys, std::vector<uint64_t> &tmp) {
  const size_t n = keys.size();
  if (n < 4096) {
    std::sort(keys.begin(), keys.end());
    return;
  }
  tmp.resize(n);
  for (int shift = 32; shift < 64; shift += 8) {
    size_t count[257] = {0};
    for (uint64_t k : keys)
      ++count[((k >> shift) & 255) + 1];
    if (count[((keys[0] >> shift) & 255) + 1] == n)
      continue; // every key has this byte
    for (int b = 0; b < 256; ++b)
      count[b + 1] += count[b];
    for (uint64_t k : keys)
      tmp[count[(k >> shift) & 255]++] = k;
    keys.swap(tmp);
  }
}

/// Keys of the `k` best ids of v[0, n), best first.
void topKeys(const float *v, int64_t n, int64_t k, std::vector<uint64_t> &out,
             std::vector<uint64_t> &tmp) {
  out.clear();
  if (k <= 0 || n <= 0)
    return;
  if (k >= n || k * 8 > n) {
    out.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i)
      out[size_t(i)] = rankKey(v[i], int32_t(i));
    sortKeys(out, tmp);
    out.resize(size_t(std::min(k, n)));
    return;
  }
  // A max-heap of keys: its front is the worst kept id. Most ids lose to it
  // on the value alone, without building a key.
  out.reserve(size_t(k));
  for (int64_t i = 0; i < k; ++i)
    out.push_back(rankKey(v[i], int32_t(i)));
  std::make_heap(out.begin(), out.end());
  float worst = v[keyId(out.front())];
  auto offer = [&](int64_t i) {
    if (v[i] < worst)
      return;
    const uint64_t key = rankKey(v[i], int32_t(i));
    if (key < out.front()) {
      std::pop_heap(out.begin(), out.end());
      out.back() = key;
      std::push_heap(out.begin(), out.end());
      worst = v[keyId(out.front())];
    }
  };
  int64_t i = k;
  for (; i + 64 <= n; i += 64) { // skip chunks with nothing to offer
    int32_t hit = 0;
    for (int j = 0; j < 64; ++j)
      hit |= v[i + j] >= worst ? 1 : 0;
    if (hit)
      for (int j = 0; j < 64; ++j)
        offer(i + j);
  }
  for (; i < n; ++i)
    offer(i);
  std::sort(out.begin(), out.end());
}

/// Buffers reused from call to call, one set per thread.
struct Scratch {
  std::vector<float> penalised;  // the logits after the penalties
  std::vector<double> weight;    // exp((work - max) / T) over the vocab
  std::vector<double> blocks;    // sums of `weight` by blocks of kBlock
  std::vector<uint8_t> seen;     // penalty dedup; all 0 between calls
  std::vector<int32_t> counts;   // output counts; all 0 between calls
  std::vector<uint64_t> keys;    // sort keys: rank order, then id
  std::vector<uint64_t> keysTmp; // radix sort scratch
  std::vector<int32_t> candIds;
  std::vector<double> candWeights;
};

Scratch &threadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

/// The work of one call: the parameters, the thread's buffers, and what
/// prepare() and buildCandidates() found.
class Step {
public:
  Step(const SamplingParams &params, Scratch &s)
      : params_(params), penalised_(s.penalised), weight_(s.weight),
        blocks_(s.blocks), seen_(s.seen), counts_(s.counts), keys_(s.keys),
        keysTmp_(s.keysTmp),
        candIds_(s.candIds), candWeights_(s.candWeights) {}

  /// Validates the logits, applies the penalties, finds the max and argmax.
  Status prepare(const float *logits, int64_t vocab,
                 const std::vector<int32_t> &context, size_t promptLen);
  /// Applies temperature/top-k/top-p/min-p: fills the candidate list.
  void buildCandidates();
  /// The candidate picked by uniform u in [0, 1).
  int32_t pick(double u) const;
  /// Logprob, rank and top-N of `token` under params_.logprobMode.
  void fillLogprobs(const float *logits, int32_t token, int64_t numTop,
                    SampleResult &out);
  /// The candidates as probabilities, most likely first.
  std::vector<TokenProb> distribution() const;
  int32_t argmax() const { return argmax_; }
  /// The row after the penalties (valid after prepare()).
  const float *work() const { return work_; }

private:
  /// Top-p without top-k: the kept prefix of the whole vocabulary.
  void topPCandidates(double z);

  const SamplingParams &params_;
  int64_t vocab_ = 0;
  const float *work_ = nullptr; // the logits, or penalised_ with penalties
  float max_ = 0.0f;            // max of work_
  int32_t argmax_ = -1;         // lowest id holding max_
  std::vector<float> &penalised_;
  std::vector<double> &weight_;
  std::vector<double> &blocks_;
  std::vector<uint8_t> &seen_;
  std::vector<int32_t> &counts_;
  std::vector<uint64_t> &keys_;
  std::vector<uint64_t> &keysTmp_;
  // Candidates: when allTokens_, every id in index order with weight_[id];
  // else candIds_[j] with candWeights_[j], most likely first.
  bool allTokens_ = false;
  std::vector<int32_t> &candIds_;
  std::vector<double> &candWeights_;
  double candTotal_ = 0.0; // sum of the candidate weights
};

} // namespace

double portableExp(double x) {
  if (x > 0.0) // outside the contract; the sampler never asks
    return std::exp(x);
  return expNonPositive(x);
}

// ---------------------------------------------------------------------------
// SamplingParams
// ---------------------------------------------------------------------------
Status SamplingParams::validate() const {
  if (!std::isfinite(temperature) || temperature < 0.0f)
    return invalidArgument("temperature must be a finite number >= 0 (0 means "
                           "greedy), got " + fmt(temperature));
  if (topK < -1)
    return invalidArgument("top_k must be -1 or 0 (off) or a positive number "
                           "of tokens, got " + std::to_string(topK));
  if (!(topP > 0.0f && topP <= 1.0f))
    return invalidArgument("top_p must be in (0, 1] (1 means off), got " +
                           fmt(topP));
  if (!(minP >= 0.0f && minP <= 1.0f))
    return invalidArgument("min_p must be in [0, 1] (0 means off), got " +
                           fmt(minP));
  if (!std::isfinite(repetitionPenalty) || !(repetitionPenalty > 0.0f))
    return invalidArgument("repetition_penalty must be a finite number > 0 (1 "
                           "means off), got " + fmt(repetitionPenalty));
  if (!(frequencyPenalty >= -2.0f && frequencyPenalty <= 2.0f))
    return invalidArgument("frequency_penalty must be in [-2, 2] (0 means "
                           "off), got " + fmt(frequencyPenalty));
  if (!(presencePenalty >= -2.0f && presencePenalty <= 2.0f))
    return invalidArgument("presence_penalty must be in [-2, 2] (0 means "
                           "off), got " + fmt(presencePenalty));
  if (logprobMode != LogprobMode::kRaw && logprobMode != LogprobMode::kProcessed)
    return invalidArgument("logprob mode must be raw or processed, got " +
                           std::to_string(int(logprobMode)));
  return Status::ok();
}

// ---------------------------------------------------------------------------
// Sampler
// ---------------------------------------------------------------------------
Sampler::Sampler(const SamplingParams &params, uint64_t stream)
    : params_(params), paramsStatus_(params.validate()) {
  if (params_.seed) {
    rng_.reseed(*params_.seed);
    for (uint64_t i = 0; i < stream; ++i)
      rng_.jump();
  } else {
    rng_.reseed(entropySeed());
  }
}

Status Step::prepare(const float *logits, int64_t vocab,
                     const std::vector<int32_t> &context, size_t promptLen) {
  if (logits == nullptr)
    return invalidArgument("sampler: the logits pointer is null");
  if (vocab <= 0 || vocab > int64_t(std::numeric_limits<int32_t>::max()))
    return invalidArgument("sampler: the vocabulary size must be in [1, 2^31), "
                           "got " + std::to_string(vocab));
  if (promptLen > context.size())
    return invalidArgument("sampler: the prompt length " +
                           std::to_string(promptLen) +
                           " is larger than the context of " +
                           std::to_string(context.size()) + " tokens");
  float max;
  if (!finiteMax(logits, vocab, max))
    for (int64_t i = 0; i < vocab; ++i) {
      if (std::isnan(logits[i]))
        return invalidArgument("sampler: the logit of token " +
                               std::to_string(i) + " is NaN");
      if (logits[i] == kInfF)
        return invalidArgument("sampler: the logit of token " +
                               std::to_string(i) +
                               " is +inf (only -inf may mask a token)");
    }
  vocab_ = vocab;
  work_ = logits;

  // vLLM's apply_penalties: repetition over the prompt and the output,
  // then frequency and presence over the output only.
  const bool repetition =
      params_.repetitionPenalty != 1.0f && !context.empty();
  const bool occurrence =
      (params_.frequencyPenalty != 0.0f || params_.presencePenalty != 0.0f) &&
      promptLen < context.size();
  if (repetition || occurrence) {
    for (size_t pos = repetition ? 0 : promptLen; pos < context.size(); ++pos) {
      const int32_t t = context[pos];
      if (t < 0 || int64_t(t) >= vocab)
        return invalidArgument(
            "sampler: context token " + std::to_string(t) + " at position " +
            std::to_string(pos) + " is outside the vocabulary [0, " +
            std::to_string(vocab) + ")");
    }
    penalised_.assign(logits, logits + vocab);
  }
  if (repetition) {
    if (int64_t(seen_.size()) != vocab)
      seen_.assign(size_t(vocab), 0);
    // In float, as HF does on float32 logits. An extreme penalty (1e-45,
    // 3e38) can push a finite logit past the float range: it saturates at
    // +-FLT_MAX, keeping its order (a -inf logit stays masked).
    const float p = params_.repetitionPenalty;
    constexpr float kMaxF = std::numeric_limits<float>::max();
    for (int32_t t : context) {
      if (seen_[size_t(t)])
        continue; // each distinct id is penalised once, as in HF
      seen_[size_t(t)] = 1;
      float &w = penalised_[size_t(t)];
      if (w == -kInfF)
        continue;
      w = w > 0.0f ? w / p : w * p;
      w = std::min(std::max(w, -kMaxF), kMaxF);
    }
    for (int32_t t : context)
      seen_[size_t(t)] = 0;
  }
  if (occurrence) {
    // In float, two roundings as vLLM's `logits -= f * counts; logits -=
    // p * mask` on float32 logits: w - f * float(c), then - p. |f * c| is
    // at most 2^32, far below half an ulp of FLT_MAX (2^103), so a finite
    // logit stays finite and -inf stays -inf.
    if (int64_t(counts_.size()) != vocab)
      counts_.assign(size_t(vocab), 0);
    for (size_t pos = promptLen; pos < context.size(); ++pos)
      ++counts_[size_t(context[pos])];
    const float f = params_.frequencyPenalty, pr = params_.presencePenalty;
    for (size_t pos = promptLen; pos < context.size(); ++pos) {
      int32_t &c = counts_[size_t(context[pos])];
      if (c == 0)
        continue; // this id is done (and its count reset)
      float &w = penalised_[size_t(context[pos])];
      w = w - f * float(c);
      w = w - pr;
      c = 0;
    }
  }
  if (repetition || occurrence) {
    work_ = penalised_.data();
    finiteMax(work_, vocab, max); // finite: the logits were, and the penalties keep them so
  }

  max_ = max;
  if (max_ == -kInfF)
    return invalidArgument("sampler: all " + std::to_string(vocab) +
                           " logits are -inf; there is no token to sample");
  argmax_ = firstIndexOf(work_, vocab, max_);
  return Status::ok();
}

void Step::buildCandidates() {
  const int64_t vocab = vocab_;
  allTokens_ = false;
  candIds_.clear();
  candWeights_.clear();
  candTotal_ = 0.0;
  if (params_.isGreedy()) {
    candIds_.push_back(argmax_);
    candWeights_.push_back(1.0);
    candTotal_ = 1.0;
    return;
  }

  // Weights are exp((logit - max) / T): the top token's is exactly 1, so
  // min-p ("below minP times the top probability") is weight < minP.
  const double t = double(params_.temperature);
  const double m = double(max_);
  const double minP = double(params_.minP);
  const bool useTopK = params_.topK > 0 && params_.topK < vocab;
  const bool useTopP = params_.topP < 1.0f;

  if (!useTopK && !useTopP) {
    // No truncation by rank: every token, in id order.
    allTokens_ = true;
    weight_.resize(size_t(vocab));
    candTotal_ = weights(work_, vocab, m, t, minP, weight_.data(), blocks_);
    return;
  }
  if (useTopK) {
    topKeys(work_, vocab, params_.topK, keys_, keysTmp_);
    candIds_.resize(keys_.size());
    candWeights_.resize(keys_.size());
    for (size_t j = 0; j < keys_.size(); ++j) {
      candIds_[j] = keyId(keys_[j]);
      candWeights_[j] =
          expNonPositive((double(work_[candIds_[j]]) - m) / t);
    }
    if (useTopP) {
      double z = 0.0;
      for (double w : candWeights_)
        z += w;
      // Keep j while the mass before it is < top_p of the total.
      const double target = double(params_.topP) * z;
      double cum = 0.0;
      size_t keep = 0;
      while (keep < candWeights_.size() && cum < target)
        cum += candWeights_[keep++];
      candIds_.resize(keep);
      candWeights_.resize(keep);
    }
  } else {
    weight_.resize(size_t(vocab));
    topPCandidates(weights(work_, vocab, m, t, 0.0, weight_.data(), blocks_));
  }

  // min-p on the sorted candidates: a prefix, since weights never increase.
  if (minP > 0.0) {
    size_t keep = 0;
    while (keep < candWeights_.size() && candWeights_[keep] >= minP)
      ++keep;
    candIds_.resize(keep);
    candWeights_.resize(keep);
  }
  double total = 0.0;
  for (double w : candWeights_)
    total += w;
  candTotal_ = total;
}

void Step::topPCandidates(double z) {
  // The kept set is the shortest most-likely-first prefix whose mass
  // reaches top_p * z. Once the tokens of weight >= tau hold that much, the
  // prefix lies among them: so pick a threshold, sort only the tokens above
  // it and scan them. The result does not depend on the threshold (the
  // scan sums the same tokens in the same order), only the cost does.
  // (1 - top_p) * z / (2 V) always holds enough: the tokens below it weigh
  // less than (1 - top_p) z / 2 in all; 0 takes every token.
  const int64_t vocab = vocab_;
  const double topP = double(params_.topP);
  const double target = topP * z;
  const double sure = 0.5 * (1.0 - topP) * z / double(vocab);
  constexpr int kTaus = 12;
  double taus[kTaus] = {0x1p-3,  0x1p-6,  0x1p-9,  0x1p-12,
                        0x1p-15, 0x1p-18, 0x1p-22, 0x1p-27,
                        0x1p-33, 0x1p-40, 0x1p-50, std::max(sure, 0x1p-1000)};
  std::sort(taus, taus + kTaus, std::greater<double>());
  // The masses four thresholds per pass, until one holds enough.
  double mass[kTaus];
  int first = 0;
  for (int batch = 0; batch < kTaus; batch += 4) {
    massesAbove(weight_.data(), vocab, taus + batch, mass + batch);
    first = batch;
    while (first < batch + 4 && mass[first] < target)
      ++first;
    if (first < batch + 4)
      break;
  }
  for (int j = first; j <= kTaus; ++j) {
    const double tau = j < kTaus ? taus[j] : 0.0;
    keys_.clear();
    for (int64_t i = 0; i < vocab; ++i) {
      const double w = weight_[size_t(i)];
      if (w >= tau && w > 0.0)
        keys_.push_back(rankKey(work_[i], int32_t(i)));
    }
    sortKeys(keys_, keysTmp_);
    double cum = 0.0;
    size_t keep = 0;
    while (keep < keys_.size() && cum < target)
      cum += weight_[size_t(keyId(keys_[keep++]))];
    // Not enough above tau (rounding): a lower threshold.
    if (cum < target && j < kTaus)
      continue;
    candIds_.resize(keep);
    candWeights_.resize(keep);
    for (size_t k = 0; k < keep; ++k) {
      candIds_[k] = keyId(keys_[k]);
      candWeights_[k] = weight_[size_t(candIds_[k])];
    }
    return;
  }
}

int32_t Step::pick(double u) const {
  // The first candidate whose running weight exceeds u * total; a weight
  // of 0 is never picked.
  const double target = u * candTotal_;
  double cum = 0.0;
  int32_t last = -1;
  if (allTokens_) {
    // Skip whole blocks by their sums, then walk the weights.
    size_t b = 0;
    while (b < blocks_.size() && !(cum + blocks_[b] > target))
      cum += blocks_[b++];
    const double *w = weight_.data();
    for (int64_t i = int64_t(b) * kBlock; i < vocab_; ++i) {
      if (w[i] <= 0.0)
        continue;
      cum += w[i];
      last = int32_t(i);
      if (cum > target)
        return last;
    }
    // Past the end by rounding: the last token with weight.
    for (int64_t i = vocab_ - 1; i >= 0 && last < 0; --i)
      if (w[i] > 0.0)
        last = int32_t(i);
  } else {
    for (size_t j = 0; j < candIds_.size(); ++j) {
      const double w = candWeights_[j];
      if (w <= 0.0)
        continue;
      cum += w;
      last = candIds_[j];
      if (cum > target)
        return last;
    }
  }
  // u * total rounded up to the total: the last token with weight.
  return last >= 0 ? last : argmax_;
}

StatusOr<std::vector<float>> penalisedLogits(const SamplingParams &params,
                                             const float *logits, int64_t vocab,
                                             const std::vector<int32_t> &context,
                                             size_t promptLen) {
  ACCEL_RT_RETURN_IF_ERROR(params.validate());
  Step step(params, threadScratch());
  ACCEL_RT_RETURN_IF_ERROR(step.prepare(logits, vocab, context, promptLen));
  return std::vector<float>(step.work(), step.work() + vocab);
}

StatusOr<int32_t> Sampler::sample(const float *logits, int64_t vocab,
                                  const std::vector<int32_t> &context,
                                  size_t promptLen) {
  ACCEL_RT_RETURN_IF_ERROR(paramsStatus_);
  Step step(params_, threadScratch());
  ACCEL_RT_RETURN_IF_ERROR(step.prepare(logits, vocab, context, promptLen));
  if (params_.isGreedy())
    return step.argmax();
  step.buildCandidates();
  return step.pick(rng_.uniform());
}

StatusOr<SampleResult>
Sampler::sampleWithLogprobs(const float *logits, int64_t vocab,
                            const std::vector<int32_t> &context,
                            size_t promptLen, int64_t numTopLogprobs,
                            const float *rawLogits) {
  ACCEL_RT_RETURN_IF_ERROR(paramsStatus_);
  if (numTopLogprobs < 0)
    return invalidArgument("top_logprobs must be >= 0, got " +
                           std::to_string(numTopLogprobs));
  Step step(params_, threadScratch());
  ACCEL_RT_RETURN_IF_ERROR(step.prepare(logits, vocab, context, promptLen));
  SampleResult out;
  if (params_.isGreedy()) {
    out.token = step.argmax();
  } else {
    step.buildCandidates();
    out.token = step.pick(rng_.uniform());
  }
  step.fillLogprobs(rawLogits ? rawLogits : logits, out.token, numTopLogprobs, out);
  return out;
}

StatusOr<std::vector<TokenProb>>
Sampler::distribution(const float *logits, int64_t vocab,
                      const std::vector<int32_t> &context,
                      size_t promptLen) {
  ACCEL_RT_RETURN_IF_ERROR(paramsStatus_);
  Step step(params_, threadScratch());
  ACCEL_RT_RETURN_IF_ERROR(step.prepare(logits, vocab, context, promptLen));
  step.buildCandidates();
  return step.distribution();
}

void Step::fillLogprobs(const float *logits, int32_t token, int64_t numTop,
                        SampleResult &out) {
  // logprob_i = (v_i - shift) / t - log sum_j e^((v_j - shift) / t).
  const float *v = logits;
  double shift, t = 1.0;
  if (params_.logprobMode == LogprobMode::kRaw) {
    float rawMax = max_;
    if (work_ != logits)
      finiteMax(logits, vocab_, rawMax); // finite: checked in prepare() or by the caller
    shift = double(rawMax);
  } else {
    v = work_;
    shift = double(max_);
    if (!params_.isGreedy())
      t = double(params_.temperature);
  }
  weight_.resize(size_t(vocab_)); // the draw is done: free for reuse
  const double logZ =
      std::log(weights(v, vocab_, shift, t, 0.0, weight_.data(), blocks_));
  auto logprobOf = [&](int32_t i) {
    return float((double(v[i]) - shift) / t - logZ);
  };

  out.logprob = logprobOf(token);
  const float vt = v[token];
  int64_t above = 0;
  for (int64_t i = 0; i < vocab_; ++i)
    above += v[i] > vt;
  out.rank = above + 1;

  out.topLogprobs.clear();
  if (numTop > 0) {
    topKeys(v, vocab_, std::min<int64_t>(numTop, vocab_), keys_, keysTmp_);
    out.topLogprobs.reserve(keys_.size());
    for (uint64_t key : keys_)
      out.topLogprobs.push_back({keyId(key), logprobOf(keyId(key))});
  }
}

std::vector<TokenProb> Step::distribution() const {
  std::vector<TokenProb> dist;
  auto add = [&](int32_t id, double w) {
    if (w > 0.0)
      dist.push_back({id, w / candTotal_});
  };
  if (allTokens_) {
    for (int64_t i = 0; i < vocab_; ++i)
      add(int32_t(i), weight_[size_t(i)]);
  } else {
    for (size_t j = 0; j < candIds_.size(); ++j)
      add(candIds_[j], candWeights_[j]);
  }
  std::sort(dist.begin(), dist.end(),
            [](const TokenProb &a, const TokenProb &b) {
              return a.prob > b.prob || (a.prob == b.prob && a.token < b.token);
            });
  return dist;
}

} // namespace accel::rt::sampler
