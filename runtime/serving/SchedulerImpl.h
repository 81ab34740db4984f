//===- SchedulerImpl.h - the scheduler's state (internal) -------*- C++ -*-===//
//
// What Scheduler.cpp (admission, scheduling, the step) and
// SchedulerSampling.cpp (masks, sampling, tokens, stops) share: a
// sequence's state and the SchedulerImpl class. Not part of the API
// (Scheduler.h is).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_SCHEDULERIMPL_H
#define ACCEL_RUNTIME_SERVING_SCHEDULERIMPL_H

#include "runtime/serving/Scheduler.h"

#include "runtime/serving/ParallelFor.h"
#include "runtime/serving/PrefixCache.h"
#include "runtime/serving/sampler/StopCriteria.h"
#include "runtime/serving/tokenizer/Tokenizer.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace accel::rt::serve::detail {


using Clock = std::chrono::steady_clock;
inline double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

enum class SeqState { kWaiting, kRunning, kDone };

struct Sequence {
  Request req;
  RequestCallbacks cb;
  std::vector<int64_t> tokens; // prompt, then generated
  int64_t promptLen = 0;
  int64_t numGenerated = 0;
  int64_t numComputed = 0; // tokens whose K/V are in the cache
  kv::SequenceKV kv;
  SeqState state = SeqState::kWaiting;
  bool cancelled = false;
  bool inFlight = false; // in the batch the engine is running
  bool admittedOnce = false;
  int64_t cachedPromptTokens = 0;

  std::unique_ptr<sampler::Sampler> sampler;
  std::vector<int32_t> context; // prompt + output, for the penalties
  sampler::StopCriteria criteria;
  std::unique_ptr<tok::DecodeStream> decoder;
  std::string text;   // decoded output so far (complete characters)
  size_t emitted = 0; // bytes of `text` sent

  std::vector<BlockHash> hashes; // of the full blocks of `tokens`
  size_t numRegistered = 0;      // leading blocks inserted in the prefix cache

  std::vector<std::vector<int64_t>> badWordIds; // Request::badWords, tokenized
  int grammarState = 0;                         // Request::grammar's automaton state
  std::vector<PromptLogprob> promptLps; // Request::promptLogprobs, until the first token
  int64_t promptLpDone = 0;             // prompt positions whose rows were read

  // Speculative decoding: the sequence's KV in the draft plan's cache, and
  // this step's tokens (the last accepted one, then the guesses).
  kv::SequenceKV draftKv;
  std::vector<int64_t> draft, stepIds;
};

/// Whether s's next token is drawn from a masked row: structured output,
/// allowed_token_ids, bad_words, logit_bias, or stop tokens held back by
/// min_tokens.
inline bool masksTokens(const Sequence &s) {
  return s.req.grammar || !s.req.allowedTokenIds.empty() || !s.badWordIds.empty() ||
         !s.req.logitBias.empty() ||
         (s.numGenerated < s.req.minTokens && !s.criteria.stopTokenIds.empty());
}
using SeqPtr = std::shared_ptr<Sequence>;

/// Whether s's next step must bring back the logits of every token it
/// computes (prompt_logprobs, while the prompt is computed).
inline bool wantsPromptRows(const Sequence &s) {
  return s.req.promptLogprobs >= 0 && s.numComputed < s.promptLen;
}

/// The logprob, rank and top alternatives of `token` in `row`
/// (SchedulerSampling.cpp).
PromptLogprob promptLogprob(const float *row, int64_t vocab, int64_t token, int64_t top);

/// The sequence's next token is the plain argmax of its logits: greedy, no
/// repetition, frequency or presence penalty, no logprobs, valid parameters.
/// Such sequences can take Engine::stepBatch's kLastGreedy tokens
/// (greedyToken's rule is the sampler's greedy rule, refusals included).
inline bool plainGreedy(const Sequence &s) {
  if (!s.sampler)
    return false;
  const sampler::SamplingParams &p = s.sampler->params();
  return s.sampler->paramsStatus().isOk() && p.isGreedy() && !p.hasPenalties() &&
         s.req.logprobs < 0 && !masksTokens(s) && !wantsPromptRows(s);
}

/// A sequence's next token as sampleToken drew it (error: one sentence,
/// the request fails with it).
struct SampleOutcome {
  int32_t token = -1;
  float logprob = 0.0f;
  std::vector<std::pair<int64_t, float>> topLogprobs;
  std::string error;
};

/// A callback to run once the lock is dropped.
struct Event {
  SeqPtr seq;
  bool finish = false;
  TokenEvent token;
  FinishEvent done;
};

class SchedulerImpl final : public Scheduler {
public:
  SchedulerImpl(engine::Engine &engine, std::shared_ptr<const tok::Tokenizer> tokenizer,
                const SchedulerOptions &options)
      : engine_(engine), tokenizer_(std::move(tokenizer)), opts_(options) {}
  ~SchedulerImpl() override;

  Status init();
  Status submit(Request r, RequestCallbacks callbacks) override;
  void cancel(const std::string &id) override;
  StatusOr<bool> step() override;
  void start() override;
  void stop() override;
  SchedulerStats stats() const override;
  Status health() const override;

private:
  struct Scheduled {
    SeqPtr seq;
    int64_t numTokens = 0;
    int64_t specK = 0; // a decode that may guess up to this many tokens
  };

  kv::BlockPool &pool() { return engine_.pool(); }
  int64_t blockSize() const { return engine_.pool().blockSize(); }
  int64_t blocksFor(int64_t tokens) const { return (tokens + blockSize() - 1) / blockSize(); }
  /// The most tokens s may compute in one step: while its prompt logprobs
  /// are read, as many as kPromptLogprobsRowBytes of logits hold.
  int64_t rowCap(const Sequence &s) const {
    if (!wantsPromptRows(s))
      return std::numeric_limits<int64_t>::max();
    return std::max<int64_t>(1, kPromptLogprobsRowBytes / (4 * engine_.vocabSize()));
  }

  // All below run with mu_ held.
  void schedule(std::vector<Scheduled> &batch, std::vector<Event> &events);
  void preempt(const SeqPtr &s);
  void computeHashes(Sequence &s, size_t numBlocks);
  void registerBlocks(Sequence &s);
  void finish(const SeqPtr &s, FinishReason reason, const std::string &error,
              std::vector<Event> &events);
  /// Samples s's next token from its logits `row` (or takes `pre`, sampled
  /// already), or takes `chosen` (a greedy step's token from
  /// Engine::stepBatch(kLastGreedy); -1: the row was refused), then
  /// streams, stops or finishes it.
  void processToken(const SeqPtr &s, const float *row, std::vector<Event> &events,
                    std::optional<int64_t> chosen = std::nullopt, SampleOutcome *pre = nullptr);
  /// The row with s's masks applied (into buf), or row itself when s has
  /// none; nullptr with err set when structured output fails. Reads only s:
  /// safe on the sampling threads.
  const float *maskedRow(const Sequence &s, const float *row, std::vector<float> &buf,
                         std::string &err) const;
  /// s's next token drawn from its row (masks, penalties, sampling,
  /// logprobs): reads only s (its sampler is its own), so the sequences of
  /// a step are sampled in parallel (ParallelFor).
  SampleOutcome sampleToken(const Sequence &s, const float *row, std::vector<float> &buf) const;
  void freeSequence(Sequence &s);
  /// Whether s may guess tokens this step (a speculator, a decode whose
  /// next token is unmasked and needs no logprobs).
  bool canSpeculate(const Sequence &s) const;
  /// Verifies s's guesses against its step's rows (greedy: `ids`, the
  /// target's tokens, else `rows` of logits): keeps the agreed prefix and
  /// the target's own token, gives back the rest's KV, then processes the
  /// kept tokens in order.
  void verifyDraft(const SeqPtr &s, const int64_t *ids, const float *rows,
                   std::vector<Event> &events);
  void removeFromQueues(const SeqPtr &s);
  void takeCancels(std::vector<Event> &events);
  void refreshStats();
  /// Adds one engine step's wall time and engine time to the stats.
  void recordStepTime(double stepSeconds, double engineSeconds);
  bool hasWork() const { return !waiting_.empty() || !running_.empty() || !deferred_.empty(); }

  void deliver(std::vector<Event> &events);

  engine::Engine &engine_;
  std::shared_ptr<const tok::Tokenizer> tokenizer_;
  SchedulerOptions opts_;
  std::vector<int32_t> eosIds_;
  std::unique_ptr<PrefixCache> cache_;
  std::unique_ptr<engine::Speculator> spec_;

  mutable std::mutex mu_;
  std::mutex stepMu_;
  std::condition_variable cv_;
  std::deque<SeqPtr> waiting_;
  std::vector<SeqPtr> running_; // in admission order
  std::unordered_map<std::string, SeqPtr> byId_;
  std::vector<SeqPtr> cancelPending_; // cancelled while the engine ran
  std::vector<Event> deferred_;       // finish events of cancel()
  std::vector<float> mask_;           // maskedRow's copy (the step thread's)
  std::unique_ptr<ParallelFor> samplers_; // the sampling threads (samplerThreads)
  bool runInProgress_ = false;
  int64_t committed_ = 0; // blocks promised to this step's batch
  SchedulerStats stats_;
  std::deque<std::pair<double, double>> recentSteps_; // (step, engine) seconds

  std::thread thread_;
  bool stopRequested_ = false;
  bool threadRunning_ = false;
};

} // namespace accel::rt::serve::detail

#endif // ACCEL_RUNTIME_SERVING_SCHEDULERIMPL_H
