//===- Speculative.h - speculative decoding: drafts and their check -*- C++ -*-===//
//
// Speculative decoding (issue 23, docs/serving.md "Speculative decoding"):
// a cheap proposer guesses a sequence's next K tokens; the target runs the
// last accepted token and the K guesses in ONE step (K+1 query rows, causal
// over the paged cache: the step kind prefill chunks use), reads the logits
// of all K+1 rows and keeps the longest prefix the target agrees with, plus
// its own next token (runtime/serving/sampler/SpeculativeAcceptance.h): 1 to
// K+1 tokens per target step, the same tokens as plain greedy decoding.
// The rejected guesses' KV slots are given back (SequenceKV::truncate).
//
// Proposers:
//  - ngram (prompt lookup): the tokens that followed the last earlier
//    occurrence of the sequence's last n tokens, n from ngramMax down to
//    ngramMin (vLLM's --speculative-ngram-max/-min).
//  - a draft plan (accel-run --draft): a second, small plan with the
//    target's vocabulary and tokenizer, run K greedy single-token steps on
//    its own paged KV cache, which follows the accepted tokens (cut back on
//    rejection, caught up in its next step).
//
// Used by TextGenerator (accel-run --prompt) and the Scheduler (serving).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_ENGINE_SPECULATIVE_H
#define ACCEL_RUNTIME_ENGINE_SPECULATIVE_H

#include "runtime/engine/Engine.h"
#include "runtime/kv/SequenceKV.h"
#include "runtime/serving/sampler/Sampler.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace accel::rt::engine {

enum class SpeculativeMethod { kNone, kNgram, kDraft };

struct SpeculativeConfig {
  SpeculativeMethod method = SpeculativeMethod::kNone;
  /// K: tokens proposed per step (--num-speculative-tokens), 1..kMaxTokens.
  int64_t numTokens = 0;
  /// n-gram lengths tried, longest first (--speculative-ngram-max/-min).
  int64_t ngramMin = 1, ngramMax = 4;
  /// The draft plan (--draft).
  std::string draftPlan;
  static constexpr int64_t kMaxTokens = 16;

  bool enabled() const { return method != SpeculativeMethod::kNone; }
  /// Ok, or kInvalidArgument in one sentence naming the flag.
  Status validate() const;
};

/// Counters of one generation or of a server's lifetime.
struct SpeculativeStats {
  int64_t steps = 0;    // target decode steps (verification steps and plain ones)
  int64_t drafts = 0;   // draft tokens proposed
  int64_t accepted = 0; // draft tokens the target kept
  int64_t emitted = 0;  // tokens those steps gave (kept drafts + the target's own)
  double acceptanceRate() const { return drafts ? double(accepted) / double(drafts) : 0.0; }
  double tokensPerStep() const { return steps ? double(emitted) / double(steps) : 0.0; }
  /// "draft tokens 120, accepted 87 (72.5%), 2.31 tokens per target step"
  std::string summary() const;
};

/// Prompt lookup: the (up to) k tokens that followed the last earlier
/// occurrence of tokens' last n tokens, for n = ngramMax down to ngramMin;
/// empty when none occurs.
std::vector<int64_t> proposeNgram(const int64_t *tokens, int64_t n, int64_t ngramMin,
                                  int64_t ngramMax, int64_t k);

/// One sequence's request for a proposal.
struct DraftRequest {
  const int64_t *tokens = nullptr; // the sequence so far (prompt + output)
  int64_t numTokens = 0;
  int64_t k = 0;                   // at most this many tokens
  kv::SequenceKV *draftKv = nullptr; // its KV in the draft plan's cache
  std::vector<int64_t> proposal;   // out
};

class Speculator {
public:
  /// `draftOptions`: how to open the draft plan (the target's options: the
  /// same backend, max-model-len; its KV size is set here). Refuses, in one
  /// sentence naming both plans, a draft whose vocabulary or tokenizer is
  /// not the target's.
  static StatusOr<std::unique_ptr<Speculator>> create(Engine &target,
                                                      const SpeculativeConfig &config,
                                                      EngineOptions draftOptions = {});
  ~Speculator();

  const SpeculativeConfig &config() const { return config_; }
  /// The draft plan's engine (method kDraft), else null.
  Engine *draftEngine() { return draft_.get(); }
  /// Gives the draft plan's KV cache room for `tokens` tokens (the target's
  /// pool, when serving), or the most that fits of halves of it down to one
  /// sequence of the context; only while no draft sequence holds blocks.
  Status sizeDraftCache(int64_t tokens);

  /// Fills each request's proposal (at most k tokens; fewer or none when
  /// nothing matches, or the draft's cache is full). The draft plan runs
  /// its steps batched over the requests.
  void propose(std::vector<DraftRequest *> &requests);
  /// After verification: the sequence kept `numTokens` tokens whose KV is
  /// valid (its tokens before the step plus the kept drafts); the draft's
  /// KV is cut back to at most that.
  void rollback(kv::SequenceKV &draftKv, int64_t numTokens);
  /// Frees a sequence's draft KV (finished, preempted).
  void release(kv::SequenceKV &draftKv);

private:
  Speculator() = default;
  SpeculativeConfig config_;
  std::unique_ptr<Engine> draft_;
};

/// The tokens a sampled verification step keeps: rows [draft.size() + 1,
/// vocab] the target's logits, `context` the sequence so far, its first
/// `promptLen` tokens the prompt (for the penalties: each accepted guess
/// counts as generated for the next row). Draws with `sampler`
/// (SpeculativeAcceptance.h's rule, the draft a point mass).
StatusOr<std::vector<int64_t>> acceptSampled(sampler::Sampler &sampler, const float *rows,
                                             int64_t vocab, const std::vector<int64_t> &draft,
                                             std::vector<int32_t> context, size_t promptLen);

/// One sequence generated with speculation, the loop of Engine::generate /
/// generateGreedy: `sampler` null: greedy (the engine's argmax), else the
/// sampler draws (with `context`, the prompt, for its penalties). `accept`
/// gets every token in order and returns -1 to stop; maxNew (> 0) bounds
/// the tokens so the last step does not guess past it.
StatusOr<std::vector<int64_t>>
generateSpeculative(Engine &target, Speculator &spec, const std::vector<int64_t> &prompt,
                    sampler::Sampler *sampler, std::vector<int32_t> context, int64_t maxNew,
                    const std::function<StatusOr<int64_t>(int64_t)> &accept,
                    SpeculativeStats &stats);

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_ENGINE_SPECULATIVE_H
