//===- Scheduler.cpp - continuous batching over one Engine ----------------===//
//
// vLLM v1's iteration-level scheduling on one Engine (docs/serving.md,
// "Scheduling"). Each step():
//
//  1. running sequences, oldest admission first, each get the tokens it has
//     not computed yet (1 for a decode, the rest of the prompt for a
//     sequence in chunked prefill) capped by the step's token budget. When
//     the pool lacks blocks, the most recently admitted running sequence is
//     preempted (recompute: blocks freed, back to the front of the waiting
//     queue, prompt + generated tokens to be prefilled again), until the
//     sequence fits or is itself the one preempted.
//  2. if nothing was preempted, waiting sequences are admitted in order
//     while there is budget, a free running slot (maxNumSeqs) and blocks;
//     a prefix-cache hit gives a sequence its cached full blocks first.
//  3. the engine runs the ragged batch once; each sequence whose tokens are
//     now all computed samples its next token; stop conditions and
//     detokenisation run; events are delivered after the lock is dropped.
//
// Locking: mu_ guards all request state and the KV allocator. It is not
// held while the engine runs (runInProgress_): then cancel() only marks a
// request and the step frees it when the engine returns. stepMu_ keeps two
// step() callers apart.
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/Scheduler.h"

#include "runtime/serving/ParallelFor.h"
#include "runtime/serving/PrefixCache.h"
#include "runtime/serving/sampler/SpeculativeAcceptance.h"
#include "runtime/serving/sampler/StopCriteria.h"
#include "runtime/serving/structured/Grammar.h"
#include "runtime/serving/tokenizer/Tokenizer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cmath>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

namespace accel::rt::serve {

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) {
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
bool masksTokens(const Sequence &s) {
  return s.req.grammar || !s.req.allowedTokenIds.empty() || !s.badWordIds.empty() ||
         !s.req.logitBias.empty() ||
         (s.numGenerated < s.req.minTokens && !s.criteria.stopTokenIds.empty());
}
using SeqPtr = std::shared_ptr<Sequence>;

/// Whether s's next step must bring back the logits of every token it
/// computes (prompt_logprobs, while the prompt is computed).
bool wantsPromptRows(const Sequence &s) {
  return s.req.promptLogprobs >= 0 && s.numComputed < s.promptLen;
}

/// The logprob, rank and top alternatives of `token` in `row`.
PromptLogprob promptLogprob(const float *row, int64_t vocab, int64_t token, int64_t top) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t k = 0; k < vocab; ++k)
    mx = std::max(mx, row[k]);
  double sum = 0;
  for (int64_t k = 0; k < vocab; ++k)
    sum += std::exp(double(row[k]) - double(mx));
  const double lse = double(mx) + std::log(sum);
  PromptLogprob lp;
  lp.token = token;
  lp.logprob = float(double(row[token]) - lse);
  for (int64_t k = 0; k < vocab; ++k)
    lp.rank += row[k] > row[token];
  if (top > 0) {
    std::vector<int64_t> idx(static_cast<size_t>(vocab), 0);
    for (int64_t k = 0; k < vocab; ++k)
      idx[size_t(k)] = k;
    const int64_t m = std::min(top, vocab);
    std::partial_sort(idx.begin(), idx.begin() + m, idx.end(), [&](int64_t a, int64_t b) {
      return row[a] > row[b] || (row[a] == row[b] && a < b);
    });
    for (int64_t k = 0; k < m; ++k)
      lp.top.emplace_back(idx[size_t(k)], float(double(row[idx[size_t(k)]]) - lse));
  }
  return lp;
}

/// The sequence's next token is the plain argmax of its logits: greedy, no
/// repetition, frequency or presence penalty, no logprobs, valid parameters.
/// Such sequences can take Engine::stepBatch's kLastGreedy tokens
/// (greedyToken's rule is the sampler's greedy rule, refusals included).
bool plainGreedy(const Sequence &s) {
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

Status SchedulerImpl::init() {
  if (opts_.maxNumSeqs < 1)
    return invalidArgument("--max-num-seqs must be at least 1, got " +
                           std::to_string(opts_.maxNumSeqs));
  if (opts_.maxNumBatchedTokens < 1)
    return invalidArgument("--max-num-batched-tokens must be at least 1, got " +
                           std::to_string(opts_.maxNumBatchedTokens));
  if (opts_.maxWaiting < 0)
    return invalidArgument("the waiting queue bound must not be negative, got " +
                           std::to_string(opts_.maxWaiting));
  if (opts_.numKvBlocks < 0 || opts_.kvCacheBytes < 0)
    return invalidArgument("the KV cache size (blocks or bytes) must not be negative");
  if (opts_.samplerThreads < -1 || opts_.samplerThreads > 256)
    return invalidArgument("--sampler-threads must be in [0, 256] (or -1: automatic), got " +
                           std::to_string(opts_.samplerThreads));
  {
    int n = opts_.samplerThreads;
    if (n < 0)
      n = std::clamp(int(std::thread::hardware_concurrency()) / 2 - 1, 0, 7);
    if (n > 0)
      samplers_ = std::make_unique<ParallelFor>(n);
  }
  int64_t blocks = opts_.numKvBlocks;
  // A GPU engine sized its cache from --gpu-memory-utilization: only an
  // explicit block count changes it (accel-run passes --kv-cache-memory to
  // the engine itself).
  if (blocks == 0 && opts_.kvCacheBytes > 0 && !engine_.kvCacheSizedByBackend()) {
    blocks = engine_.kvBlocksForBytes(opts_.kvCacheBytes);
    if (blocks < 1)
      return invalidArgument("a KV cache of " + std::to_string(opts_.kvCacheBytes) +
                             " bytes holds not even one block of " +
                             std::to_string(pool().config().bytesPerBlock()) + " bytes");
  }
  if (blocks > 0)
    ACCEL_RT_RETURN_IF_ERROR(engine_.resizeKvCache(blocks));
  for (int32_t id : engine_.plan().metadata().model().eos_token_ids())
    eosIds_.push_back(id);
  if (eosIds_.empty() && tokenizer_)
    if (std::optional<int32_t> eos = tokenizer_->eosId())
      eosIds_.push_back(*eos);
  if (opts_.enablePrefixCaching)
    cache_ = std::make_unique<PrefixCache>(pool().allocator());
  if (opts_.speculative.enabled()) {
    ACCEL_RT_ASSIGN_OR_RETURN(spec_, engine::Speculator::create(engine_, opts_.speculative,
                                                                opts_.draftEngine));
    // The draft's cache holds as many tokens as the target's.
    ACCEL_RT_RETURN_IF_ERROR(spec_->sizeDraftCache(pool().numBlocks() * blockSize()));
  }
  refreshStats();
  return Status::ok();
}

SchedulerImpl::~SchedulerImpl() {
  stop();
  std::vector<Event> events;
  {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<SeqPtr> all;
    for (auto &[id, s] : byId_)
      all.push_back(s);
    for (const SeqPtr &s : all)
      finish(s, FinishReason::kCancelled, "", events);
    for (Event &e : deferred_)
      events.push_back(std::move(e));
    deferred_.clear();
  }
  deliver(events);
}

Status SchedulerImpl::submit(Request r, RequestCallbacks callbacks) {
  const int64_t vocab = engine_.vocabSize();
  const int64_t maxLen = engine_.maxModelLen();
  const int64_t n = int64_t(r.promptIds.size());
  if (r.id.empty())
    return invalidArgument("the request has no id");
  if (n == 0)
    return invalidArgument("the prompt is empty");
  for (int64_t i = 0; i < n; ++i)
    if (r.promptIds[size_t(i)] < 0 || r.promptIds[size_t(i)] >= vocab)
      return invalidArgument("prompt token " + std::to_string(i) + " is " +
                             std::to_string(r.promptIds[size_t(i)]) +
                             ", outside the vocabulary [0, " + std::to_string(vocab) + ")");
  if (r.maxTokens < 1)
    return invalidArgument("max_tokens must be at least 1, got " + std::to_string(r.maxTokens));
  if (n >= maxLen)
    return invalidArgument("the prompt has " + std::to_string(n) +
                           " tokens and the context holds " + std::to_string(maxLen) +
                           " (--max-model-len), which leaves no room to generate");
  if (r.maxTokens > maxLen - n)
    return invalidArgument("the prompt has " + std::to_string(n) + " tokens and max_tokens is " +
                           std::to_string(r.maxTokens) + ": together more than the context of " +
                           std::to_string(maxLen) + " tokens (--max-model-len)");
  ACCEL_RT_RETURN_IF_ERROR(r.sampling.validate());
  if (r.logprobs < -1 || r.logprobs > opts_.maxLogprobs)
    return invalidArgument("logprobs must be between 0 and " + std::to_string(opts_.maxLogprobs) +
                           " (--max-logprobs), got " + std::to_string(r.logprobs));
  if (r.promptLogprobs < -1 || r.promptLogprobs > opts_.maxLogprobs)
    return invalidArgument("prompt_logprobs must be between 0 and " +
                           std::to_string(opts_.maxLogprobs) + " (--max-logprobs), got " +
                           std::to_string(r.promptLogprobs));
  for (const std::string &s : r.stop)
    if (s.empty())
      return invalidArgument("a stop string is empty");
  if (!r.stop.empty() && !tokenizer_)
    return invalidArgument("stop strings need the model's tokenizer, and this model has none");
  for (size_t i = 0; i < r.logitBias.size(); ++i) {
    const auto &[t, bias] = r.logitBias[i];
    if (t < 0 || t >= vocab || !std::isfinite(bias))
      return invalidArgument("logit_bias entry " + std::to_string(i) + " (token " +
                             std::to_string(t) + ") is outside the vocabulary [0, " +
                             std::to_string(vocab) + ") or not finite");
  }
  for (const auto &[field, ids] : {std::pair<const char *, const std::vector<int64_t> *>{
                                       "stop_token_ids", &r.stopTokenIds},
                                   {"allowed_token_ids", &r.allowedTokenIds}})
    for (size_t i = 0; i < ids->size(); ++i)
      if ((*ids)[i] < 0 || (*ids)[i] >= vocab)
        return invalidArgument(std::string(field) + "[" + std::to_string(i) + "] = " +
                               std::to_string((*ids)[i]) + " is outside the vocabulary [0, " +
                               std::to_string(vocab) + ")");
  if (r.minTokens < 0 || r.minTokens > r.maxTokens)
    return invalidArgument("min_tokens must be between 0 and max_tokens (" +
                           std::to_string(r.maxTokens) + "), got " + std::to_string(r.minTokens));
  std::vector<std::vector<int64_t>> badWordIds;
  if (!r.badWords.empty() && !tokenizer_)
    return invalidArgument("bad_words need the model's tokenizer, and this model has none");
  for (size_t i = 0; i < r.badWords.size(); ++i) {
    // vLLM's rule: the word as given (leading spaces dropped) and with one
    // leading space, the latter only when it is another token sequence of
    // the same length (a word that starts a text or follows a space).
    std::string word = r.badWords[i];
    word.erase(0, word.find_first_not_of(' ') == std::string::npos ? word.size()
                                                                   : word.find_first_not_of(' '));
    if (word.empty())
      return invalidArgument("bad_words[" + std::to_string(i) + "] is empty");
    std::vector<int64_t> first;
    for (const std::string &text : {word, " " + word}) {
      StatusOr<std::vector<int32_t>> enc = tokenizer_->encode(text, /*addSpecialTokens=*/false);
      if (!enc)
        return invalidArgument("bad_words[" + std::to_string(i) + "]: " + enc.status().message());
      std::vector<int64_t> ids(enc->begin(), enc->end());
      if (ids.empty())
        continue;
      if (text == word) {
        first = ids;
      } else if (!first.empty() && (ids.size() != first.size() || ids[0] == first[0])) {
        continue;
      }
      badWordIds.push_back(std::move(ids));
    }
  }
  // Some token must always be possible.
  if (!r.allowedTokenIds.empty()) {
    std::vector<int64_t> stops = r.stopTokenIds;
    if (!r.ignoreEos)
      stops.insert(stops.end(), eosIds_.begin(), eosIds_.end());
    bool any = false;
    for (int64_t t : r.allowedTokenIds) {
      bool banned = r.minTokens > 0 && std::find(stops.begin(), stops.end(), t) != stops.end();
      for (const std::vector<int64_t> &w : badWordIds)
        banned = banned || (w.size() == 1 && w[0] == t);
      any = any || !banned;
    }
    if (!any)
      return invalidArgument("allowed_token_ids leaves no token to generate: every one is a bad "
                             "word or, before min_tokens, a stop token");
  }
  // The whole sequence must fit in the pool on its own, or it could never
  // finish (it would preempt itself forever).
  const int64_t needBlocks = blocksFor(n + r.maxTokens);
  const int64_t poolBlocks = engine_.pool().numBlocks();
  if (needBlocks > poolBlocks)
    return invalidArgument("the prompt (" + std::to_string(n) + " tokens) plus max_tokens (" +
                           std::to_string(r.maxTokens) + ") needs " + std::to_string(needBlocks) +
                           " KV cache blocks and the cache has " + std::to_string(poolBlocks));

  auto s = std::make_shared<Sequence>();
  s->promptLen = n;
  s->tokens = r.promptIds;
  s->context.assign(r.promptIds.begin(), r.promptIds.end());
  s->sampler = std::make_unique<sampler::Sampler>(r.sampling, r.samplerStream);
  s->criteria.maxTokens = r.maxTokens;
  s->criteria.minTokens = r.minTokens;
  s->criteria.stopStrings = r.stop;
  s->criteria.includeStopStringInOutput = r.includeStopStrInOutput;
  if (!r.ignoreEos)
    s->criteria.stopTokenIds = eosIds_;
  for (int64_t t : r.stopTokenIds)
    if (std::find(s->criteria.stopTokenIds.begin(), s->criteria.stopTokenIds.end(), t) ==
        s->criteria.stopTokenIds.end())
      s->criteria.stopTokenIds.push_back(int32_t(t));
  ACCEL_RT_RETURN_IF_ERROR(s->criteria.validate());
  s->badWordIds = std::move(badWordIds);
  if (tokenizer_)
    s->decoder = std::make_unique<tok::DecodeStream>(*tokenizer_, r.skipSpecialTokens);
  s->cb = std::move(callbacks);
  s->req = std::move(r);

  {
    std::lock_guard<std::mutex> l(mu_);
    if (byId_.count(s->req.id))
      return invalidArgument("request id '" + s->req.id + "' is already in use");
    if (int64_t(waiting_.size()) >= opts_.maxWaiting)
      return Status(StatusCode::kResourceExhausted,
                    "the server is busy: " + std::to_string(waiting_.size()) +
                        " requests are waiting already");
    byId_[s->req.id] = s;
    waiting_.push_back(s);
    stats_.waiting = int64_t(waiting_.size());
  }
  cv_.notify_all();
  return Status::ok();
}

void SchedulerImpl::cancel(const std::string &id) {
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = byId_.find(id);
    if (it == byId_.end() || it->second->cancelled)
      return;
    SeqPtr s = it->second;
    s->cancelled = true;
    if (runInProgress_) {
      cancelPending_.push_back(s); // the step frees it when the engine returns
    } else {
      finish(s, FinishReason::kCancelled, "", deferred_);
      refreshStats();
    }
  }
  cv_.notify_all();
}

void SchedulerImpl::takeCancels(std::vector<Event> &events) {
  for (const SeqPtr &s : cancelPending_)
    if (s->state != SeqState::kDone)
      finish(s, FinishReason::kCancelled, "", events);
  cancelPending_.clear();
}

void SchedulerImpl::removeFromQueues(const SeqPtr &s) {
  auto w = std::find(waiting_.begin(), waiting_.end(), s);
  if (w != waiting_.end())
    waiting_.erase(w);
  auto r = std::find(running_.begin(), running_.end(), s);
  if (r != running_.end())
    running_.erase(r);
}

void SchedulerImpl::freeSequence(Sequence &s) {
  (void)s.kv.release(pool());
  if (spec_)
    spec_->release(s.draftKv);
  s.numComputed = 0;
  s.numRegistered = 0;
}

void SchedulerImpl::finish(const SeqPtr &s, FinishReason reason, const std::string &error,
                           std::vector<Event> &events) {
  if (s->state == SeqState::kDone)
    return;
  removeFromQueues(s);
  freeSequence(*s);
  s->state = SeqState::kDone;
  byId_.erase(s->req.id);
  Event e;
  e.seq = s;
  e.finish = true;
  e.done.reason = reason;
  e.done.error = error;
  e.done.promptTokens = s->promptLen;
  e.done.completionTokens = s->numGenerated;
  e.done.cachedPromptTokens = s->cachedPromptTokens;
  if (s->text.size() > s->emitted)
    e.done.textDelta = s->text.substr(s->emitted);
  s->emitted = s->text.size();
  switch (reason) {
  case FinishReason::kStop:
  case FinishReason::kLength:
    ++stats_.requestsFinished;
    break;
  case FinishReason::kCancelled:
    ++stats_.requestsCancelled;
    break;
  case FinishReason::kError:
    ++stats_.requestsFailed;
    break;
  }
  events.push_back(std::move(e));
}

void SchedulerImpl::preempt(const SeqPtr &s) {
  freeSequence(*s);
  auto r = std::find(running_.begin(), running_.end(), s);
  if (r != running_.end())
    running_.erase(r);
  s->state = SeqState::kWaiting;
  waiting_.push_front(s);
  ++stats_.preemptionsTotal;
}

void SchedulerImpl::computeHashes(Sequence &s, size_t numBlocks) {
  const int64_t bs = blockSize();
  while (s.hashes.size() < numBlocks) {
    const size_t i = s.hashes.size();
    BlockHash parent = i ? s.hashes[i - 1] : BlockHash{};
    BlockHashFn hash = opts_.prefixCacheHashForTesting ? opts_.prefixCacheHashForTesting : hashBlock;
    s.hashes.push_back(hash(parent, s.tokens.data() + int64_t(i) * bs, bs));
  }
}

void SchedulerImpl::registerBlocks(Sequence &s) {
  if (!cache_)
    return;
  const size_t full = size_t(s.numComputed / blockSize());
  if (full <= s.numRegistered)
    return;
  computeHashes(s, full);
  const int64_t bs = blockSize();
  for (size_t i = s.numRegistered; i < full; ++i)
    cache_->insert(s.hashes[i], s.kv.blocks()[i], i ? s.kv.blocks()[i - 1] : kv::BlockId(-1),
                   s.tokens.data() + int64_t(i) * bs, bs);
  s.numRegistered = full;
}

void SchedulerImpl::schedule(std::vector<Scheduled> &batch, std::vector<Event> &events) {
  (void)events;
  kv::BlockAllocator &alloc = pool().allocator();
  committed_ = 0;
  auto freeBlocks = [&] { return alloc.numFree() - committed_; };
  int64_t budget = opts_.maxNumBatchedTokens;
  bool preempted = false;

  // 1. Running sequences, oldest first.
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    SeqPtr s = running_[i];
    const int64_t n = std::min<int64_t>(int64_t(s->tokens.size()) - s->numComputed,
                                        std::min(budget, rowCap(*s)));
    if (n <= 0) { // cannot happen: a running sequence always has a token to compute
      ++i;
      continue;
    }
    bool fits = false;
    while (true) {
      if (s->kv.blocksNeeded(pool(), n) <= freeBlocks()) {
        fits = true;
        break;
      }
      SeqPtr victim = running_.back();
      preempt(victim);
      preempted = true;
      if (victim == s)
        break;
    }
    if (!fits)
      break; // s, the last one still running, was preempted itself
    // A decode may guess: room for its guesses within the budget, the
    // context, max_tokens and the free blocks (never preempting for them).
    int64_t k = 0;
    if (n == 1 && canSpeculate(*s)) {
      k = std::min({opts_.speculative.numTokens, budget - 1,
                    engine_.maxModelLen() - int64_t(s->tokens.size()),
                    s->req.maxTokens - s->numGenerated - 1});
      if (k > 0 && s->kv.blocksNeeded(pool(), 1 + k) > freeBlocks())
        k = 0;
      k = std::max<int64_t>(k, 0);
    }
    committed_ += s->kv.blocksNeeded(pool(), n + k);
    batch.push_back({s, n, k});
    budget -= n + k;
    ++i;
  }

  // 2. Waiting sequences, in order, unless this step had to preempt.
  while (!preempted && !waiting_.empty() && budget > 0 &&
         int64_t(running_.size()) < opts_.maxNumSeqs) {
    SeqPtr s = waiting_.front();
    const int64_t total = int64_t(s->tokens.size());
    std::vector<kv::BlockId> hit;
    if (cache_ && s->req.promptLogprobs < 0) {
      // Leave at least one token to compute: its logits give the next one.
      const size_t maxBlocks = size_t((total - 1) / blockSize());
      computeHashes(*s, maxBlocks);
      hit = cache_->match(s->hashes, s->tokens.data(), blockSize(), maxBlocks);
    }
    const int64_t cached = int64_t(hit.size()) * blockSize();
    const int64_t n = std::min({total - cached, budget, rowCap(*s)});
    const int64_t hitFree = cache_ ? cache_->countFree(hit) : 0;
    const int64_t fresh = blocksFor(n);
    if (fresh + hitFree > freeBlocks())
      break; // first come, first served: nobody overtakes the head
    if (!hit.empty()) {
      Status st = cache_->acquire(hit);
      if (st.isOk())
        st = s->kv.adoptFullBlocks(pool(), hit);
      if (!st.isOk()) { // should not happen: compute everything instead
        (void)alloc.release(hit);
        hit.clear();
        continue;
      }
      s->numComputed = cached;
      s->numRegistered = hit.size();
    }
    if (!s->admittedOnce) {
      s->admittedOnce = true;
      s->cachedPromptTokens = std::min(cached, s->promptLen);
      stats_.promptTokensTotal += s->promptLen;
      if (cache_) {
        stats_.prefixCacheQueries += s->promptLen;
        stats_.prefixCacheHits += s->cachedPromptTokens;
      }
    }
    waiting_.pop_front();
    running_.push_back(s);
    s->state = SeqState::kRunning;
    committed_ += fresh;
    batch.push_back({s, n});
    budget -= n;
  }
}

const float *SchedulerImpl::maskedRow(const Sequence &s, const float *row,
                                      std::vector<float> &mask_, std::string &err) const {
  if (!masksTokens(s))
    return row;
  const int64_t vocab = engine_.vocabSize();
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  // A NaN or +inf must still fail the request as the sampler would, even
  // where the mask would cover it: copy such a row unmasked.
  for (int64_t i = 0; i < vocab; ++i)
    if (!(row[i] < std::numeric_limits<float>::infinity()))
      return row;
  if (s.req.grammar) {
    // The constraint first; the other masks narrow it further.
    mask_.resize(size_t(vocab));
    const int64_t remaining = std::min(s.req.maxTokens - s.numGenerated,
                                       engine_.maxModelLen() - int64_t(s.tokens.size()));
    Status st = s.req.grammar->maskRow(s.grammarState, remaining, s.criteria.stopTokenIds, row,
                                       mask_.data());
    if (!st.isOk()) {
      err = st.message();
      return nullptr;
    }
    if (!s.req.allowedTokenIds.empty()) {
      std::vector<float> keep(size_t(vocab), kNegInf);
      for (int64_t t : s.req.allowedTokenIds)
        keep[size_t(t)] = mask_[size_t(t)];
      mask_.swap(keep);
    }
  } else if (s.req.allowedTokenIds.empty()) {
    mask_.assign(row, row + vocab);
  } else {
    mask_.assign(size_t(vocab), kNegInf);
    for (int64_t t : s.req.allowedTokenIds)
      mask_[size_t(t)] = row[t];
  }
  for (const auto &[t, bias] : s.req.logitBias)
    mask_[size_t(t)] += bias; // a -inf (not allowed) stays -inf
  if (s.numGenerated < s.req.minTokens)
    for (int32_t t : s.criteria.stopTokenIds)
      mask_[size_t(t)] = kNegInf;
  // bad_words: a one-token word always; a longer one's last token where
  // the output so far ends with the word's other tokens.
  const int64_t *out = s.tokens.data() + s.promptLen;
  for (const std::vector<int64_t> &w : s.badWordIds) {
    const int64_t k = int64_t(w.size());
    if (k - 1 > s.numGenerated)
      continue;
    if (w.back() >= 0 && w.back() < vocab &&
        std::equal(w.begin(), w.end() - 1, out + s.numGenerated - (k - 1)))
      mask_[size_t(w.back())] = kNegInf;
  }
  return mask_.data();
}

SampleOutcome SchedulerImpl::sampleToken(const Sequence &s, const float *row,
                                         std::vector<float> &buf) const {
  const int64_t vocab = engine_.vocabSize();
  SampleOutcome o;
  std::string err;
  const float *masked = maskedRow(s, row, buf, err);
  if (!masked) {
    o.error = "structured output failed: " + err;
    return o;
  }
  if (s.req.logprobs >= 0) {
    // Logprobs of the row before the mask, as vLLM's raw logprobs.
    StatusOr<sampler::SampleResult> r = s.sampler->sampleWithLogprobs(
        masked, vocab, s.context, size_t(s.promptLen), s.req.logprobs, row);
    if (!r) {
      o.error = "sampling failed: " + r.status().message();
      return o;
    }
    o.token = r->token;
    o.logprob = r->logprob;
    for (const sampler::TokenLogprob &t : r->topLogprobs)
      o.topLogprobs.emplace_back(int64_t(t.token), t.logprob);
    return o;
  }
  StatusOr<int32_t> r = s.sampler->sample(masked, vocab, s.context, size_t(s.promptLen));
  if (!r) {
    o.error = "sampling failed: " + r.status().message();
    return o;
  }
  o.token = *r;
  return o;
}

void SchedulerImpl::processToken(const SeqPtr &s, const float *row, std::vector<Event> &events,
                                 std::optional<int64_t> chosen, SampleOutcome *pre) {
  const int64_t vocab = engine_.vocabSize();
  Event ev;
  ev.seq = s;
  int32_t token = -1;
  if (chosen) {
    if (*chosen < 0 || *chosen >= vocab) {
      finish(s, FinishReason::kError,
             "sampling failed: the logits hold a NaN or +inf, or every logit is -inf", events);
      return;
    }
    token = int32_t(*chosen);
  } else {
    SampleOutcome o = pre ? std::move(*pre) : sampleToken(*s, row, mask_);
    if (!o.error.empty()) {
      finish(s, FinishReason::kError, o.error, events);
      return;
    }
    token = o.token;
    ev.token.logprob = o.logprob;
    ev.token.topLogprobs = std::move(o.topLogprobs);
  }
  ev.token.token = token;
  if (s->numGenerated == 0 && s->req.promptLogprobs >= 0)
    ev.token.promptLogprobs = std::move(s->promptLps);
  s->tokens.push_back(token);
  s->context.push_back(token);
  ++s->numGenerated;
  ++stats_.generationTokensTotal;

  const bool isStopToken = s->numGenerated > s->req.minTokens &&
                           std::find(s->criteria.stopTokenIds.begin(),
                                     s->criteria.stopTokenIds.end(),
                                     token) != s->criteria.stopTokenIds.end();
  // Structured output: the token's bytes advance the automaton; a stop
  // token (allowed only on a match) ends the request as usual.
  bool grammarDone = false;
  if (s->req.grammar && !isStopToken) {
    const int next = s->req.grammar->advance(s->grammarState, token);
    if (next < 0) {
      events.push_back(std::move(ev));
      finish(s, FinishReason::kError,
             "structured output failed: token " + std::to_string(token) +
                 " leaves the constraint's language",
             events);
      return;
    }
    s->grammarState = next;
    grammarDone = s->req.grammar->complete(next);
  }
  sampler::StopDecision d;
  if (isStopToken && !s->req.includeStopStrInOutput) {
    d.reason = sampler::FinishReason::kStop;
    d.stopTokenId = token;
    d.outputBytes = s->text.size();
  } else {
    size_t newBytes = 0;
    if (s->decoder) {
      StatusOr<std::string> piece = s->decoder->step(token);
      if (!piece) {
        events.push_back(std::move(ev));
        finish(s, FinishReason::kError, "detokenization failed: " + piece.status().message(),
               events);
        return;
      }
      newBytes = piece->size();
      s->text += *piece;
    }
    d = sampler::checkStop(s->criteria, s->text, newBytes, token, s->numGenerated);
    if (!d.finished() && grammarDone) { // nothing may follow: done, as at a stop token
      d.reason = sampler::FinishReason::kStop;
      d.outputBytes = s->text.size();
    }
    if (!d.finished() && int64_t(s->tokens.size()) >= engine_.maxModelLen()) {
      d.reason = sampler::FinishReason::kLength;
      d.outputBytes = s->text.size();
    }
  }

  if (!d.finished()) {
    const size_t n = tokenizer_ ? sampler::streamableBytes(s->criteria, s->text, false) : 0;
    if (n > s->emitted) {
      ev.token.textDelta = s->text.substr(s->emitted, n - s->emitted);
      s->emitted = n;
    }
    events.push_back(std::move(ev));
    return;
  }
  // Finished: the final text. A stop string cuts it; otherwise it is the
  // full decode of the output (which adds what the decode stream still held
  // back, an incomplete UTF-8 character as U+FFFD, like a one-shot decode).
  if (d.stopStringIndex >= 0) {
    s->text.resize(std::min(s->text.size(), d.outputBytes));
  } else if (tokenizer_) {
    std::vector<int32_t> out(s->tokens.begin() + s->promptLen, s->tokens.end());
    if (isStopToken && !s->req.includeStopStrInOutput)
      out.pop_back();
    std::string full = tokenizer_->decode(out, s->req.skipSpecialTokens);
    if (full.size() >= s->text.size() && full.compare(0, s->text.size(), s->text) == 0)
      s->text = std::move(full);
  }
  if (s->emitted > s->text.size()) // cannot happen: stop prefixes are held back
    s->emitted = s->text.size();
  events.push_back(std::move(ev));
  finish(s, d.reason == sampler::FinishReason::kLength ? FinishReason::kLength
                                                       : FinishReason::kStop,
         "", events);
}

StatusOr<bool> SchedulerImpl::step() {
  std::lock_guard<std::mutex> stepLock(stepMu_);
  const Clock::time_point stepBegan = Clock::now();
  std::vector<Event> events;
  std::vector<Scheduled> batch;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (Event &e : deferred_)
      events.push_back(std::move(e));
    deferred_.clear();
    schedule(batch, events);
    if (!batch.empty()) {
      for (Scheduled &b : batch)
        b.seq->inFlight = true;
      runInProgress_ = true;
    }
    refreshStats();
  }
  if (batch.empty()) {
    const bool did = !events.empty();
    deliver(events);
    return did;
  }

  // The engine runs without the lock. On a failed batch each sequence is
  // run alone, so that one bad sequence fails only itself.
  // Speculating decodes guess first (the draft plan runs its steps here).
  // Without a speculator no step builds draft requests (the per-step
  // path stays as it was).
  std::vector<engine::DraftRequest> requests(spec_ ? batch.size() : 0);
  std::vector<engine::DraftRequest *> asked;
  for (size_t i = 0; spec_ && i < batch.size(); ++i) {
    Sequence &q = *batch[i].seq;
    q.draft.clear();
    if (batch[i].specK < 1)
      continue;
    engine::DraftRequest &r = requests[i];
    r.tokens = q.tokens.data();
    r.numTokens = int64_t(q.tokens.size());
    r.k = batch[i].specK;
    r.draftKv = &q.draftKv;
    asked.push_back(&r);
  }
  if (!asked.empty())
    spec_->propose(asked);
  std::vector<engine::BatchSequence> entries;
  for (size_t i = 0; i < batch.size(); ++i) {
    Scheduled &b = batch[i];
    Sequence &q = *b.seq;
    if (b.specK > 0) {
      q.draft = std::move(requests[i].proposal);
      q.stepIds.assign(1, q.tokens.back());
      q.stepIds.insert(q.stepIds.end(), q.draft.begin(), q.draft.end());
      b.numTokens = int64_t(q.stepIds.size());
      entries.push_back({&q.kv, q.stepIds.data(), b.numTokens, b.numTokens});
    } else {
      entries.push_back({&q.kv, q.tokens.data() + q.numComputed, b.numTokens,
                         wantsPromptRows(q) ? b.numTokens : 1});
    }
  }
  std::vector<Tensor> rows(batch.size());
  std::vector<Status> errors(batch.size());
  std::vector<int64_t> rowIndex(batch.size(), 0);
  // Plain greedy sequences need no logits, only the argmax: when every
  // sequence of the step is one, the engine picks the tokens (on the GPU,
  // where the logits are) and returns one id per sequence.
  bool greedy = true;
  for (const Scheduled &b : batch)
    greedy = greedy && plainGreedy(*b.seq);
  const engine::LogitsRows want =
      greedy ? engine::LogitsRows::kLastGreedy : engine::LogitsRows::kLast;
  const Clock::time_point engineBegan = Clock::now();
  StatusOr<Tensor> all = engine_.stepBatch(entries, want);
  if (all) {
    int64_t row = 0; // a verifying sequence has several rows
    for (size_t i = 0; i < batch.size(); ++i) {
      rows[i] = *all;
      rowIndex[i] = row;
      row += entries[i].logitsRows;
    }
  } else if (batch.size() == 1) {
    errors[0] = all.status();
  } else {
    for (size_t i = 0; i < batch.size(); ++i) {
      StatusOr<Tensor> one = engine_.stepBatch({entries[i]}, want);
      if (one)
        rows[i] = std::move(*one);
      else
        errors[i] = one.status();
    }
  }
  const double engineSeconds = secondsSince(engineBegan);

  {
    std::lock_guard<std::mutex> l(mu_);
    runInProgress_ = false;
    ++stats_.stepsTotal;
    const int64_t vocab = engine_.vocabSize();
    // Sampling first, in parallel: the sequences of the step that draw
    // their next token from their last row (not greedy, not verifying
    // guesses). Each reads only itself; the tokens are applied in order below.
    std::vector<SampleOutcome> outcomes(batch.size());
    std::vector<char> drawn(batch.size(), 0);
    if (!greedy) {
      std::vector<size_t> todo;
      for (size_t i = 0; i < batch.size(); ++i) {
        const Sequence &q = *batch[i].seq;
        if (q.state != SeqState::kDone && errors[i].isOk() && q.draft.empty() && !q.cancelled &&
            q.numComputed + batch[i].numTokens == int64_t(q.tokens.size()))
          todo.push_back(i);
      }
      auto one = [&](size_t k) {
        thread_local std::vector<float> buf;
        const size_t i = todo[k];
        const float *row = rows[i].data<float>() + (rowIndex[i] + entries[i].logitsRows - 1) * vocab;
        outcomes[i] = sampleToken(*batch[i].seq, row, buf);
        drawn[i] = 1;
      };
      if (samplers_)
        samplers_->run(todo.size(), one);
      else
        for (size_t k = 0; k < todo.size(); ++k)
          one(k);
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      const SeqPtr &s = batch[i].seq;
      s->inFlight = false;
      if (s->state == SeqState::kDone)
        continue;
      if (!errors[i].isOk()) {
        finish(s, FinishReason::kError, "the engine step failed: " + errors[i].message(), events);
        continue;
      }
      const int64_t first = s->numComputed;
      s->numComputed += batch[i].numTokens;
      stats_.batchedTokensTotal += batch[i].numTokens;
      const int64_t numRows = entries[i].logitsRows;
      if (s->req.promptLogprobs >= 0 && !greedy && numRows > 1) {
        // Row j predicts the token after position first + j.
        for (int64_t j = 0; j < numRows; ++j) {
          const int64_t pos = first + j;
          if (pos < s->promptLpDone || pos + 1 >= s->promptLen)
            continue;
          s->promptLps.push_back(promptLogprob(rows[i].data<float>() + (rowIndex[i] + j) * vocab,
                                               vocab, s->tokens[size_t(pos + 1)],
                                               s->req.promptLogprobs));
          s->promptLpDone = pos + 1;
        }
      }
      if (!s->draft.empty()) {
        if (s->cancelled) { // takeCancels finishes it
          s->numComputed = int64_t(s->tokens.size());
          continue;
        }
        verifyDraft(s, greedy ? rows[i].data<int64_t>() + rowIndex[i] : nullptr,
                    greedy ? nullptr : rows[i].data<float>() + rowIndex[i] * vocab, events);
        continue;
      }
      registerBlocks(*s);
      if (s->cancelled)
        continue; // takeCancels finishes it
      if (s->numComputed == int64_t(s->tokens.size())) {
        if (greedy)
          processToken(s, nullptr, events, rows[i].data<int64_t>()[rowIndex[i]]);
        else
          processToken(s, rows[i].data<float>() + (rowIndex[i] + numRows - 1) * vocab, events,
                       std::nullopt, drawn[i] ? &outcomes[i] : nullptr);
      }
    }
    takeCancels(events);
    refreshStats();
  }
  deliver(events);
  recordStepTime(secondsSince(stepBegan), engineSeconds);
  return true;
}

bool SchedulerImpl::canSpeculate(const Sequence &s) const {
  return spec_ && s.sampler && s.sampler->paramsStatus().isOk() && s.req.logprobs < 0 &&
         !masksTokens(s);
}

void SchedulerImpl::verifyDraft(const SeqPtr &s, const int64_t *ids, const float *rows,
                                std::vector<Event> &events) {
  const std::vector<int64_t> draft = std::move(s->draft);
  s->draft.clear();
  const int64_t m = int64_t(draft.size()), before = int64_t(s->tokens.size());
  std::vector<int64_t> got;
  if (ids) {
    got = sampler::acceptGreedy(draft, std::vector<int64_t>(ids, ids + m + 1));
  } else {
    StatusOr<std::vector<int64_t>> r =
        engine::acceptSampled(*s->sampler, rows, engine_.vocabSize(), draft, s->context,
                              size_t(s->promptLen));
    if (!r) {
      finish(s, FinishReason::kError, "sampling failed: " + r.status().message(), events);
      return;
    }
    got = std::move(*r);
  }
  const int64_t kept = int64_t(got.size()) - 1;
  ++stats_.specVerifySteps;
  stats_.specDraftTokens += m;
  stats_.specAcceptedTokens += kept;
  // The rejected guesses' slots (and blocks only they used) go back.
  (void)s->kv.truncate(pool(), before + kept);
  s->numComputed = before + kept;
  spec_->rollback(s->draftKv, before + kept);
  // In order, as plain decoding would have given them: a stop token,
  // stop string or max_tokens ends the run where it happens.
  for (int64_t t : got) {
    processToken(s, nullptr, events, t);
    if (s->state == SeqState::kDone)
      return;
  }
  registerBlocks(*s);
}

void SchedulerImpl::recordStepTime(double stepSeconds, double engineSeconds) {
  std::lock_guard<std::mutex> l(mu_);
  stats_.stepSecondsTotal += stepSeconds;
  stats_.engineSecondsTotal += engineSeconds;
  recentSteps_.push_back({stepSeconds, engineSeconds});
  stats_.recentStepSeconds += stepSeconds;
  stats_.recentEngineSeconds += engineSeconds;
  if (recentSteps_.size() > size_t(SchedulerStats::kOverheadWindowSteps)) {
    stats_.recentStepSeconds -= recentSteps_.front().first;
    stats_.recentEngineSeconds -= recentSteps_.front().second;
    recentSteps_.pop_front();
  }
}

void SchedulerImpl::deliver(std::vector<Event> &events) {
  for (Event &e : events) {
    if (e.finish) {
      if (e.seq->cb.onFinish)
        e.seq->cb.onFinish(e.done);
    } else if (e.seq->cb.onToken) {
      e.seq->cb.onToken(e.token);
    }
  }
  events.clear();
}

void SchedulerImpl::refreshStats() {
  stats_.running = int64_t(running_.size());
  stats_.waiting = int64_t(waiting_.size());
  stats_.kvBlocksTotal = pool().numBlocks();
  stats_.kvBlocksUsed = pool().allocator().numUsed();
  stats_.kvBlocksCached = cache_ ? cache_->numCachedBlocks() : 0;
}

Status SchedulerImpl::health() const { return engine_.health(); }

SchedulerStats SchedulerImpl::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

void SchedulerImpl::start() {
  std::lock_guard<std::mutex> l(mu_);
  if (threadRunning_)
    return;
  stopRequested_ = false;
  threadRunning_ = true;
  thread_ = std::thread([this] {
    while (true) {
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [this] { return stopRequested_ || hasWork(); });
        if (stopRequested_)
          return;
      }
      StatusOr<bool> r = step();
      if (r && !*r) {
        // Work queued but none schedulable now (cannot happen with the
        // admission checks; do not spin if it does).
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait_for(l, std::chrono::milliseconds(10));
      }
      if (!r) {
        // A bug, not a request's fault: fail everything and keep serving.
        std::vector<Event> events;
        {
          std::lock_guard<std::mutex> l(mu_);
          std::vector<SeqPtr> all;
          for (auto &[id, s] : byId_)
            all.push_back(s);
          for (const SeqPtr &s : all)
            finish(s, FinishReason::kError, "the scheduler failed: " + r.status().message(),
                   events);
          refreshStats();
        }
        deliver(events);
      }
    }
  });
}

void SchedulerImpl::stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!threadRunning_)
      return;
    stopRequested_ = true;
  }
  cv_.notify_all();
  thread_.join();
  std::lock_guard<std::mutex> l(mu_);
  threadRunning_ = false;
}

} // namespace

StatusOr<std::unique_ptr<Scheduler>>
Scheduler::create(engine::Engine &engine, std::shared_ptr<const tok::Tokenizer> tokenizer,
                  const SchedulerOptions &options) {
  auto s = std::make_unique<SchedulerImpl>(engine, std::move(tokenizer), options);
  ACCEL_RT_RETURN_IF_ERROR(s->init());
  return std::unique_ptr<Scheduler>(std::move(s));
}

} // namespace accel::rt::serve
