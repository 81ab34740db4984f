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
// Sampling, masks, stop conditions and speculative verification are in
// SchedulerSampling.cpp; the state both share in SchedulerImpl.h.
//
// Locking: mu_ guards all request state and the KV allocator. It is not
// held while the engine runs (runInProgress_): then cancel() only marks a
// request and the step frees it when the engine returns. stepMu_ keeps two
// step() callers apart.
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/Scheduler.h"

#include "runtime/serving/SchedulerImpl.h"
#include "runtime/serving/structured/Grammar.h"

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
using namespace detail;

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
  SchedulerStats s;
  {
    std::lock_guard<std::mutex> l(mu_);
    s = stats_;
  }
  // The backend's own snapshot (thread-safe, read outside the step lock).
  s.pipeline = engine_.pipelineStats();
  return s;
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

StatusOr<std::unique_ptr<Scheduler>>
Scheduler::create(engine::Engine &engine, std::shared_ptr<const tok::Tokenizer> tokenizer,
                  const SchedulerOptions &options) {
  auto s = std::make_unique<SchedulerImpl>(engine, std::move(tokenizer), options);
  ACCEL_RT_RETURN_IF_ERROR(s->init());
  return std::unique_ptr<Scheduler>(std::move(s));
}

} // namespace accel::rt::serve
