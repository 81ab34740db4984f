//===- Sampler.h - the next token from a row of logits ----------*- C++ -*-===//
//
// Picks the next token of one sequence from its float32 logits, with the
// parameters of vLLM's and Hugging Face's samplers, applied in this order
// (the penalties as vLLM's apply_penalties, before temperature; the
// truncations as HF's, min-p last):
//
//   repetition penalty -> frequency penalty -> presence penalty
//     -> temperature -> top-k -> top-p -> min-p -> draw
//
// The penalties read the sequence's tokens so far (`context`, whose first
// `promptLen` tokens are the prompt), as vLLM's apply_penalties does:
//   repetition (HF semantics): every distinct id of the prompt and the
//     output: logit > 0 ? logit / r : logit * r;
//   frequency and presence (OpenAI's formula): with c(t) the number of
//     times t was generated (the output only, never the prompt),
//     logit -= frequency * c(t), then logit -= presence * (c(t) > 0).
//
// A temperature below kGreedyTemperature (1e-5, vLLM's _SAMPLING_EPS) means
// greedy decoding: the argmax of the penalised logits, ties to the lowest
// token id; top-k/top-p/min-p are then irrelevant and no random number is
// drawn. Otherwise one uniform draw per sample() picks a token from the
// renormalised surviving distribution.
//
// Determinism: with a seed, the same logits and context give the same token
// on every machine. The PRNG is ours (Random.h), the weights use our own
// exp() built only from correctly rounded IEEE operations (portableExp
// below; the library is compiled with -ffp-contract=off), sums run in a
// fixed order, and every sort breaks ties by token id, so no result depends
// on the C library, the standard library's sort, the vector width or FMA.
// The penalties are applied in float32 (as HF and vLLM do), the rest in
// double.
//
// Logprobs (sampleWithLogprobs): by default "raw", as vLLM's default
// --logprobs-mode=raw_logprobs: log_softmax of the logits exactly as given,
// before penalties, temperature and truncation. LogprobMode::kProcessed
// gives log_softmax after the penalties and temperature (1 when
// greedy) but before top-k/top-p/min-p truncation, so a token outside the
// truncated set still has a finite logprob. See docs/sampling.md.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_SAMPLER_SAMPLER_H
#define ACCEL_RUNTIME_SERVING_SAMPLER_SAMPLER_H

#include "core/Status.h"
#include "runtime/serving/sampler/Random.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace accel::rt::sampler {

/// Temperatures below this are greedy decoding (vLLM's _SAMPLING_EPS).
inline constexpr float kGreedyTemperature = 1e-5f;

/// Which distribution sampleWithLogprobs reports log-probabilities of.
enum class LogprobMode {
  /// log_softmax(logits as given): no penalty, temperature or truncation
  /// (vLLM's default, raw_logprobs).
  kRaw,
  /// log_softmax(penalised logits / temperature) (every penalty), temperature taken as 1
  /// when greedy; before top-k/top-p/min-p.
  kProcessed,
};

struct SamplingParams {
  /// >= 0; below kGreedyTemperature => greedy (argmax, ties -> lowest id).
  float temperature = 1.0f;
  /// Keep the k most likely tokens (exactly k: ties at the k-th place go to
  /// the lower ids). 0 or -1 => off; a k >= vocab is off.
  int64_t topK = 0;
  /// In (0, 1]: keep the smallest most-likely-first set whose probability
  /// mass is >= topP. 1 => off.
  float topP = 1.0f;
  /// In [0, 1]: drop tokens whose probability is below minP times the most
  /// likely token's. 0 => off.
  float minP = 0.0f;
  /// > 0; HF semantics for every distinct token id in the context (prompt
  /// and output): logit > 0 ? logit / p : logit * p. 1 => off.
  float repetitionPenalty = 1.0f;
  /// In [-2, 2] (OpenAI's range): logit -= frequencyPenalty * c(t), c(t)
  /// the count of t in the generated tokens. 0 => off; < 0 encourages.
  float frequencyPenalty = 0.0f;
  /// In [-2, 2]: logit -= presencePenalty for every token generated at least
  /// once (after the frequency penalty). 0 => off; < 0 encourages.
  float presencePenalty = 0.0f;
  /// Same seed + same logits + same context => same tokens everywhere.
  /// Without one the sampler seeds itself from std::random_device.
  std::optional<uint64_t> seed;
  LogprobMode logprobMode = LogprobMode::kRaw;

  bool isGreedy() const { return temperature < kGreedyTemperature; }
  /// Some penalty can change the logits: then a greedy token is not the
  /// plain argmax of the model's logits (no device argmax fast path).
  bool hasPenalties() const {
    return repetitionPenalty != 1.0f || frequencyPenalty != 0.0f || presencePenalty != 0.0f;
  }
  /// Ok, or kInvalidArgument with one sentence naming the bad parameter by
  /// its OpenAI/vLLM name (temperature, top_k, top_p, min_p,
  /// repetition_penalty, frequency_penalty, presence_penalty) and its value.
  Status validate() const;
};

/// One token and its log-probability.
struct TokenLogprob {
  int32_t token = -1;
  float logprob = 0.0f; // may be -inf for a masked token
};

/// A token and its probability in the final (truncated, renormalised)
/// distribution that sample() draws from.
struct TokenProb {
  int32_t token = -1;
  double prob = 0.0;
};

struct SampleResult {
  int32_t token = -1;
  /// log-probability of `token` under params.logprobMode.
  float logprob = 0.0f;
  /// 1 + the number of tokens with a strictly larger logprob (vLLM's rank).
  int64_t rank = 1;
  /// The numTopLogprobs most likely tokens under params.logprobMode, best
  /// first, ties by lower id. `token` need not be among them.
  std::vector<TokenLogprob> topLogprobs;
};

/// e^x for x <= 0 (or -inf), identical on every IEEE-754 machine: Cody-Waite
/// range reduction, a degree-13 Taylor polynomial and an exact power-of-two
/// scale. Within about 1 ulp of the true value; 0 for x < -708 (below
/// DBL_MIN), exactly 1 for x == 0. Public for the tests.
double portableExp(double x);

/// The row after the penalties (repetition, frequency, presence: step 2
/// of the order above), exactly as the sampler draws from it, or the error
/// sample() would give (invalid params, a bad logit or context token). For
/// tests and debugging; `context` and `promptLen` as in Sampler::sample().
StatusOr<std::vector<float>> penalisedLogits(const SamplingParams &params,
                                             const float *logits, int64_t vocab,
                                             const std::vector<int32_t> &context,
                                             size_t promptLen);

/// One per sequence: holds the parameters and the PRNG state (a few dozen
/// bytes). The scratch buffers of a call (up to about 40 bytes per
/// vocabulary entry) belong to the calling thread and are reused by every
/// sampler on it. One sampler must not be used by two threads at once;
/// distinct samplers are independent.
class Sampler {
public:
  /// Invalid params are not fatal here: every call then returns
  /// params.validate()'s error. `stream` selects one of 2^128
  /// non-overlapping streams of the seed (the i-th sequence of a request
  /// with n > 1 and a seed uses stream i); it is ignored without a seed.
  explicit Sampler(const SamplingParams &params, uint64_t stream = 0);

  const SamplingParams &params() const { return params_; }
  /// params().validate(), computed once.
  const Status &paramsStatus() const { return paramsStatus_; }

  /// The next token from `vocab` logits. `context` is the sequence so far:
  /// its first `promptLen` (<= context.size()) tokens are the prompt, the
  /// rest were generated. It matters only for the penalties (the repetition
  /// penalty reads all of it, frequency and presence the generated part),
  /// and every id they read must be in [0, vocab). Fails on invalid params,
  /// a NaN or +inf logit, or when every logit is -inf. -inf masks a token
  /// (it is never picked). Draws one random number unless greedy.
  StatusOr<int32_t> sample(const float *logits, int64_t vocab,
                           const std::vector<int32_t> &context, size_t promptLen);
  /// sample() with an empty context (no penalty applies).
  StatusOr<int32_t> sample(const float *logits, int64_t vocab) {
    return sample(logits, vocab, {}, 0);
  }
  /// sample(), plus the chosen token's logprob, its rank and the
  /// `numTopLogprobs` (>= 0) most likely alternatives (OpenAI `logprobs` /
  /// `top_logprobs`). Costs one or two extra passes over the vocabulary.
  /// `rawLogits` (finite, or -inf), when given, are what LogprobMode::kRaw
  /// reports on: the row before the caller masked tokens into `logits`
  /// (vLLM's raw logprobs come before its logits processors).
  StatusOr<SampleResult>
  sampleWithLogprobs(const float *logits, int64_t vocab,
                     const std::vector<int32_t> &context, size_t promptLen,
                     int64_t numTopLogprobs, const float *rawLogits = nullptr);
  /// The final distribution sample() would draw from (greedy: the argmax
  /// with probability 1), most likely first, ties by lower id; tokens of
  /// probability 0 are left out. Draws no random number.
  StatusOr<std::vector<TokenProb>>
  distribution(const float *logits, int64_t vocab,
               const std::vector<int32_t> &context, size_t promptLen);
  /// distribution() with an empty context.
  StatusOr<std::vector<TokenProb>> distribution(const float *logits, int64_t vocab) {
    return distribution(logits, vocab, {}, 0);
  }
  /// One uniform number in [0, 1) from this sampler's stream (the draws of
  /// speculative decoding's acceptance rule, SpeculativeAcceptance.h).
  double uniform() { return rng_.uniform(); }

private:
  SamplingParams params_;
  Status paramsStatus_;
  Xoshiro256StarStar rng_;
};

} // namespace accel::rt::sampler

#endif // ACCEL_RUNTIME_SERVING_SAMPLER_SAMPLER_H
