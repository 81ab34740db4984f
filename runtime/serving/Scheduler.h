//===- Scheduler.h - continuous batching over one Engine --------*- C++ -*-===//
//
// The serving engine loop (DESIGN §4, issue 6): requests are admitted into a
// bounded waiting queue; every iteration the scheduler picks running
// sequences (decode, one token each) and waiting ones (prefill, chunked
// under the per-step token budget), runs ONE engine step over the ragged
// batch, samples each sequence that finished its prompt, detokenizes,
// applies stop conditions and reports events. KV blocks are allocated per
// sequence as it grows and freed when it finishes or is cancelled; when
// blocks run out the newest running sequence is preempted (its blocks
// freed, recomputed later). With prefix caching, full blocks are shared by
// content hash with reference counts and evicted LRU.
//
// Threading: submit() / cancel() / stats() may be called from any thread;
// events are delivered on the scheduler's thread (the one calling step(),
// or the one start() made). A RequestCallbacks must not block.
//
// THIS HEADER IS THE CONTRACT between the scheduler (runtime/serving/
// Scheduler.cpp) and the HTTP server (runtime/serving/http/). Extend it; do not
// break what the other side uses.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_SCHEDULER_H
#define ACCEL_RUNTIME_SERVING_SCHEDULER_H

#include "runtime/engine/Engine.h"
#include "runtime/engine/Speculative.h"
#include "runtime/serving/PrefixCache.h"
#include "runtime/serving/sampler/Sampler.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace accel::rt::structured {
class Grammar;
}

namespace accel::rt::tok {
class Tokenizer;
}

namespace accel::rt::serve {

struct SchedulerOptions {
  int64_t maxNumSeqs = 64;            // --max-num-seqs: running sequences
  int64_t maxNumBatchedTokens = 2048; // --max-num-batched-tokens: tokens per step
  int64_t maxWaiting = 1024;          // bounded waiting queue; beyond it submit() refuses
  int64_t numKvBlocks = 0;            // 0: from kvCacheBytes
  int64_t kvCacheBytes = 256 << 20;   // --kv-cache-memory (CPU; ignored when the engine's
                                      // backend sized the cache: GPU plans)
  bool enablePrefixCaching = false;   // --enable-prefix-caching
  int64_t maxLogprobs = 20;           // vLLM's --max-logprobs: largest Request::logprobs
  /// --sampler-threads: threads besides the step's own that sample the
  /// sequences of a step in parallel (masks, penalties, top-k/p over the
  /// vocabulary); -1: min(7, hardware threads / 2 - 1); 0: the step thread
  /// alone. The tokens do not depend on it.
  int samplerThreads = -1;
  /// Tests only: the prefix cache's block hash instead of hashBlock, to
  /// force collisions (a hit must still be verified by its token ids).
  BlockHashFn prefixCacheHashForTesting = nullptr;
  /// Speculative decoding (--speculative-method, --num-speculative-tokens,
  /// --draft; runtime/engine/Speculative.h): decoding sequences whose next
  /// token is not masked and asks no logprobs propose K tokens and verify
  /// them in their step (K+1 rows). A draft plan opens with draftEngine.
  engine::SpeculativeConfig speculative;
  engine::EngineOptions draftEngine;
};

/// One completion request, already tokenized by the caller.
struct Request {
  std::string id;                     // unique, chosen by the caller ("cmpl-...")
  std::vector<int64_t> promptIds;
  int64_t maxTokens = 16;             // >= 1
  sampler::SamplingParams sampling;   // seed optional
  uint64_t samplerStream = 0;         // with a seed: which of its streams (choice i of a
                                      // request with n > 1 uses stream i; Sampler.h)
  std::vector<std::string> stop;      // stop strings (not included in the text)
  bool ignoreEos = false;
  int64_t logprobs = -1;              // -1: none; N >= 0: top-N alternatives per token
  // vLLM's request extensions (docs/serving.md, "Request parameters").
  std::vector<int64_t> stopTokenIds;  // end the request like EOS (even with ignoreEos)
  int64_t minTokens = 0;              // no stop token or string ends the first minTokens
                                      // tokens; stop tokens are not sampled before
  bool includeStopStrInOutput = false; // keep the stop string / stop token's text
  std::vector<int64_t> allowedTokenIds; // non-empty: only these are ever sampled
  std::vector<std::pair<int64_t, float>> logitBias; // added to these ids' logits (OpenAI's
                                                    // logit_bias, before the penalty)
  std::vector<std::string> badWords;  // never generated: tokenized at submit() (with and
                                      // without a leading space); a word's last token
                                      // is banned where the output ends with the rest
  bool skipSpecialTokens = true;      // special tokens add no text
  /// Structured output: every token keeps the output a prefix of a text in
  /// the grammar's language; stop tokens come only where the output is in
  /// it, and the request ends (kStop) once no byte can continue it
  /// (runtime/serving/structured/Grammar.h). Shared between requests.
  std::shared_ptr<structured::Grammar> grammar;
  /// vLLM's prompt_logprobs: -1 none; N >= 0: the logprob (raw
  /// log_softmax), rank and N top alternatives of every prompt token after
  /// the first, from the logits of the position before it. Such a request
  /// does not use the prefix cache and prefills in chunks of
  /// kPromptLogprobsRowBytes of logits.
  int64_t promptLogprobs = -1;
};

/// The logits a prompt_logprobs request may bring back per step.
constexpr int64_t kPromptLogprobsRowBytes = int64_t(64) << 20;

/// One prompt token's logprob (Request::promptLogprobs).
struct PromptLogprob {
  int64_t token = -1;
  float logprob = 0.0f;
  int64_t rank = 1; // 1 + the number of tokens with a higher logit
  std::vector<std::pair<int64_t, float>> top;
};

enum class FinishReason { kStop, kLength, kCancelled, kError };

struct TokenEvent {
  int64_t token = -1;
  std::string textDelta;              // new, final text (UTF-8 complete, stop-safe)
  float logprob = 0.0f;               // when requested
  std::vector<std::pair<int64_t, float>> topLogprobs;
  /// The request's first token event only, when it asked for
  /// prompt_logprobs: prompt tokens 1..n-1 in order.
  std::vector<PromptLogprob> promptLogprobs;
};

struct FinishEvent {
  FinishReason reason = FinishReason::kStop;
  std::string textDelta;              // any text held back until the end
  std::string error;                  // for kError: one sentence
  int64_t promptTokens = 0;
  int64_t completionTokens = 0;
  int64_t cachedPromptTokens = 0;     // served from the prefix cache
};

// Event semantics (runtime/serving/Scheduler.cpp):
//  - onToken fires once per sampled token, a stop token (EOS) included: its
//    textDelta is empty (its text is never output) and it counts in
//    completionTokens, as in vLLM.
//  - The textDeltas of all events (onFinish's last) concatenate to the
//    request's output text: decoded with special tokens skipped, cut before
//    a stop string; a token event's delta never ends inside a UTF-8
//    character nor with a proper prefix of a stop string (held back, then
//    sent by a later event or by onFinish).
//  - kCancelled and kError end the request wherever it is; its onFinish
//    still carries the text held back so far.
struct RequestCallbacks {
  std::function<void(const TokenEvent &)> onToken;  // once per generated token
  std::function<void(const FinishEvent &)> onFinish; // exactly once, last
};

/// A consistent snapshot for /metrics and admission control.
struct SchedulerStats {
  int64_t running = 0, waiting = 0;
  int64_t kvBlocksTotal = 0, kvBlocksUsed = 0;
  int64_t prefixCacheQueries = 0, prefixCacheHits = 0;  // in tokens
  int64_t promptTokensTotal = 0, generationTokensTotal = 0;
  int64_t preemptionsTotal = 0;
  int64_t requestsFinished = 0, requestsCancelled = 0, requestsFailed = 0;
  int64_t stepsTotal = 0;
  int64_t kvBlocksCached = 0;          // blocks the prefix cache can still serve (used or free)
  int64_t batchedTokensTotal = 0;      // tokens run through the engine (prefill + decode)
  // Speculative decoding: draft tokens proposed and kept (/metrics'
  // accel:spec_decode_*), and the decode steps that verified drafts.
  int64_t specDraftTokens = 0, specAcceptedTokens = 0, specVerifySteps = 0;
  // Where a step's wall time goes: stepSecondsTotal is step() from taking
  // the step lock to delivering the events (scheduling, the engine run,
  // sampling, stop checks, detokenisation, callbacks); engineSecondsTotal
  // the part inside Engine::stepBatch. The recent* sums cover the last
  // kOverheadWindowSteps steps that ran the engine.
  double stepSecondsTotal = 0, engineSecondsTotal = 0;
  double recentStepSeconds = 0, recentEngineSeconds = 0;
  static constexpr int kOverheadWindowSteps = 256;
  /// Host time per engine time over the recent steps, minus one: 0.1 means
  /// the scheduler adds 10% to what the engine takes (0 before any step).
  double hostOverhead() const {
    return recentEngineSeconds > 0 ? recentStepSeconds / recentEngineSeconds - 1.0 : 0.0;
  }
  /// A pipelined plan (accelc -pp): each stage's busy and idle seconds,
  /// steps and micro-batches so far (Engine::pipelineStats; /metrics'
  /// accel:pp_stage_*); nullopt for other plans.
  std::optional<engine::PipelineStats> pipeline;
};

class Scheduler {
public:
  /// `tokenizer` may be null (then stop strings are refused and textDelta
  /// stays empty).
  static StatusOr<std::unique_ptr<Scheduler>> create(engine::Engine &engine,
                                                     std::shared_ptr<const tok::Tokenizer> tokenizer,
                                                     const SchedulerOptions &options);
  virtual ~Scheduler() = default;

  /// Queues `r`. kResourceExhausted when the waiting queue is full (the
  /// server answers 429); kInvalidArgument for a request that can never run
  /// (prompt + max_tokens beyond the context, ids outside the vocabulary,
  /// bad sampling parameters: one sentence naming it; a parameter's
  /// message starts with its OpenAI/vLLM name).
  virtual Status submit(Request r, RequestCallbacks callbacks) = 0;
  /// Stops request `id` wherever it is and frees its KV blocks at once (when
  /// an engine step is running at that moment: as soon as it returns); its
  /// onFinish gets kCancelled, delivered on the scheduler's thread by the
  /// next step(). Unknown or finished ids are ignored.
  virtual void cancel(const std::string &id) = 0;

  /// One iteration (tests drive the loop with this). Returns false when
  /// there was nothing to do.
  virtual StatusOr<bool> step() = 0;
  /// Runs step() on a background thread until stop() (which waits for the
  /// current step). The destructor stops the thread and finishes every
  /// request still queued or running with kCancelled.
  virtual void start() = 0;
  virtual void stop() = 0;

  virtual SchedulerStats stats() const = 0;
  /// ok while steps can run; else why not (Engine::health: a rank of the
  /// tensor-parallel group of processes left).
  virtual Status health() const { return Status::ok(); }
};

} // namespace accel::rt::serve

#endif // ACCEL_RUNTIME_SERVING_SCHEDULER_H
