//===- OpenAiApi.h - the OpenAI-compatible routes ---------------*- C++ -*-===//
//
// The HTTP handler of the server: routes, validation, tokenization,
// admission, and the glue between a request's HttpExchange and the
// scheduler's events.
//
//   POST /v1/completions        text or token-id prompt, stream or not
//   POST /v1/chat/completions   messages through the ChatTemplate
//   GET  /v1/models, /v1/models/{id}
//   POST /tokenize, /detokenize  vLLM's tokenizer routes (Tokenize.h)
//   GET  /version
//   GET  /health                200 once serving
//   GET  /metrics               Prometheus text (Metrics.h)
//
// Every request first passes Access (Host, Origin, API key); POST bodies
// must be application/json. A generation request's body is parsed and its
// prompt tokenized on the IO thread when the body is small
// (ApiOptions::inlineBodyBytes), else on a small WorkerPool, so that large
// prompts do not hold up other clients; a prompt over maxPromptBytes is
// refused (413) before tokenization.
//
// Each generation request gets a per-request state that lives on its
// exchange's strand: the scheduler's callbacks (on the scheduler's thread)
// only post to it. A client that goes away cancels its request at once
// (scheduler.cancel), which frees its KV blocks.
//
// `n` / `best_of` (docs/serving.md, "Several choices"): one scheduler
// sequence per choice (ids ID, ID-1, ...; with a seed, choice i samples from
// stream i of it); choices 1.. are submitted after choice 0's first token so
// that their prefill takes the prompt's full KV blocks from the prefix cache.
//
// Draining (SIGTERM, Serve.cpp): beginDrain() answers every new request 503
// (/health too; /metrics stays up) while those in flight go on; cancelAll()
// ends what is left, each with an error (a stream: an error event, then
// `data: [DONE]`; a whole response: a 503 JSON error).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_HTTP_OPENAIAPI_H
#define ACCEL_RUNTIME_SERVING_HTTP_OPENAIAPI_H

#include "runtime/serving/Scheduler.h"
#include "runtime/serving/http/Access.h"
#include "runtime/serving/http/Admission.h"
#include "runtime/serving/http/ChatTemplate.h"
#include "runtime/serving/http/HttpServer.h"
#include "runtime/serving/http/Metrics.h"
#include "runtime/serving/http/OpenAiProtocol.h"
#include "runtime/serving/http/WorkerPool.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace accel::rt::tok {
class Tokenizer;
}

namespace accel::rt::structured {
class Grammar;
class GrammarCache;
} // namespace accel::rt::structured

namespace accel::rt::server {

struct ApiOptions {
  /// --served-model-name (one or more); the first is the id responses
  /// carry. Requests may name any of them, or none.
  std::vector<std::string> modelNames{"model"};
  int64_t maxModelLen = 2048; // prompt + completion
  int64_t vocabSize = 0;      // token ids of a prompt must be below it
  ChatTemplate chatTemplate;
  RequestLimits limits;
  /// The parser of tool calls in replies (--tool-call-parser, else the one
  /// the chat template's family calls for); kNone: requests whose
  /// tool_choice asks for calls are refused.
  ToolParser toolParser = ToolParser::kNone;
  /// /v1/completions without max_tokens: OpenAI's 16. Chat without it: the
  /// rest of the context.
  int64_t defaultCompletionMaxTokens = 16;
  bool reportCachedTokens = false; // usage.prompt_tokens_details (prefix caching)
  AccessOptions access;            // --api-key, --allowed-hosts, --allowed-origins
  /// --max-prompt-bytes: the longest prompt text (completions' prompt, or
  /// the chat messages' contents together) taken for tokenization; 413
  /// beyond it.
  size_t maxPromptBytes = 1 << 20;
  /// Bodies up to this size are parsed and tokenized on the IO thread
  /// (microseconds); larger ones on the worker pool.
  size_t inlineBodyBytes = 64 << 10;
  int tokenizerThreads = 2;
};

/// The ids of the requests submitted and not finished, for cancelAll.
struct InFlightRequests {
  std::mutex mu;
  std::set<std::string> ids;
  bool cancelling = false; // cancelAll ran: nothing more is submitted
};

class OpenAiApi {
public:
  OpenAiApi(serve::Scheduler &scheduler, std::shared_ptr<const tok::Tokenizer> tokenizer,
            Metrics &metrics, Admission &admission, ApiOptions options,
            std::function<int64_t()> openConnections = {});
  ~OpenAiApi();

  /// The HttpServer handler.
  void handle(HttpRequest request, std::shared_ptr<HttpExchange> exchange);

  /// Requests in flight (submitted, not finished): for tests and shutdown.
  int64_t activeRequests() const { return active_.load(); }
  /// Generation requests taken and not answered yet: active ones and those
  /// still being parsed or tokenized.
  int64_t inFlight() const { return active_.load() + preparing_.load(); }

  /// New requests get 503 (and /health 503) from now on.
  void beginDrain() { draining_.store(true); }
  bool draining() const { return draining_.load(); }
  /// Cancels every request in flight (each ends with an error event or a
  /// 503) and refuses those still being prepared. Their answers follow
  /// from the scheduler's thread; inFlight() reaches 0 when all are out.
  void cancelAll();

  const ApiOptions &options() const { return opts_; }

private:
  /// A request parsed, checked and tokenized, ready for admission.
  struct Prepared {
    Endpoint endpoint = Endpoint::kCompletions;
    CompletionRequest cr;
    std::vector<int64_t> ids;
    int64_t maxTokens = 0;
    std::string echo; // echo: the prompt text the answer starts with
    std::shared_ptr<structured::Grammar> grammar; // structured output, compiled
    std::string toolPrefix; // tool_choice required or named: the call's beginning
    std::chrono::steady_clock::time_point arrival;
    Headers extra;
  };
  /// Parses, validates and tokenizes (any thread); on a refusal answers it
  /// and returns nullopt.
  std::optional<Prepared> prepare(Endpoint endpoint, HttpRequest &request, HttpExchange &ex,
                                  const Headers &extra);
  /// The prompt's token ids (completions: the text or the ids; chat: the
  /// messages through the chat template); false with `err` set.
  bool encodePrompt(CompletionRequest &cr, std::vector<int64_t> &ids, ApiError &err) const;
  /// tool_choice required or named: the call's beginning the prompt ends
  /// with (ToolParsers.h forcedCallPrefix); "" otherwise.
  std::string toolCallPrefix(const CompletionRequest &cr) const;
  /// tool_choice required or named: the constraint that makes the reply
  /// the call (null when none applies; docs/serving.md "Tool calls").
  std::shared_ptr<structured::Grammar> forcedCallGrammar(const CompletionRequest &cr) const;
  /// The request's constraint compiled (`out` null when it has none and no
  /// forced call); false with `err` (a 400 naming the parameter) when it does
  /// not compile (OpenAiConstraints.cpp).
  bool outputGrammar(const CompletionRequest &cr, std::shared_ptr<structured::Grammar> &out,
                     ApiError &err) const;
  /// The compiled constraints over the tokenizer's vocabulary, made at the
  /// first constrained request.
  structured::GrammarCache &grammarCache() const;
  /// POST /tokenize and /detokenize (vLLM's), answered at once.
  void tokenize(HttpRequest &request, HttpExchange &ex, const Headers &extra);
  void detokenize(HttpRequest &request, HttpExchange &ex, const Headers &extra);
  bool knownModel(const std::string &model) const;
  ApiError unknownModel(const std::string &model) const;
  /// Admission, submit, the stream's start: on the exchange's strand.
  void start(Prepared &p, std::shared_ptr<HttpExchange> ex);
  void fail(HttpExchange &ex, const ApiError &e, Headers extra = {});
  void reply(HttpExchange &ex, int status, std::string contentType, std::string body,
             Headers extra = {});
  std::string newId(Endpoint endpoint);

  serve::Scheduler &scheduler_;
  std::shared_ptr<const tok::Tokenizer> tokenizer_;
  Metrics &metrics_;
  Admission &admission_;
  ApiOptions opts_;
  std::function<int64_t()> openConnections_;
  int64_t created_;
  std::atomic<uint64_t> counter_{0};
  uint64_t idSalt_;
  std::atomic<int64_t> active_{0};
  std::atomic<int64_t> preparing_{0};
  std::atomic<bool> draining_{false};
  InFlightRequests inFlight_;
  Access access_;
  std::unique_ptr<WorkerPool> pool_; // made at the first large body
  std::once_flag poolOnce_;
  /// Compiled structured-output constraints over the tokenizer's
  /// vocabulary, made at the first constrained request.
  mutable std::unique_ptr<structured::GrammarCache> grammars_;
  mutable std::once_flag grammarsOnce_;
};

} // namespace accel::rt::server

#endif // ACCEL_RUNTIME_SERVING_HTTP_OPENAIAPI_H
