//===- OpenAiApi.h - the OpenAI-compatible routes ---------------*- C++ -*-===//
//
// The HTTP handler of the server: routes, validation, tokenization,
// admission, and the glue between a request's HttpExchange and the
// scheduler's events.
//
//   POST /v1/completions        text or token-id prompt, stream or not
//   POST /v1/chat/completions   messages through the ChatTemplate
//   GET  /v1/models, /v1/models/{id}
//   GET  /health                200 once serving
//   GET  /metrics               Prometheus text (Metrics.h)
//
// Each generation request gets a per-request state that lives on its
// exchange's strand: the scheduler's callbacks (on the scheduler's thread)
// only post to it. A client that goes away cancels its request at once
// (scheduler.cancel), which frees its KV blocks.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_HTTP_OPENAIAPI_H
#define ACCEL_RUNTIME_SERVING_HTTP_OPENAIAPI_H

#include "runtime/serving/Scheduler.h"
#include "runtime/serving/http/Admission.h"
#include "runtime/serving/http/ChatTemplate.h"
#include "runtime/serving/http/HttpServer.h"
#include "runtime/serving/http/Metrics.h"
#include "runtime/serving/http/OpenAiProtocol.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace accel::rt::tok {
class Tokenizer;
}

namespace accel::rt::server {

struct ApiOptions {
  /// --served-model-name (one or more); the first is the id responses
  /// carry. Requests may name any of them, or none.
  std::vector<std::string> modelNames{"model"};
  std::string modelRoot;      // what /v1/models calls "root" (the plan path)
  int64_t maxModelLen = 2048; // prompt + completion
  int64_t vocabSize = 0;      // token ids of a prompt must be below it
  ChatTemplate chatTemplate;
  RequestLimits limits;
  /// /v1/completions without max_tokens: OpenAI's 16. Chat without it: the
  /// rest of the context.
  int64_t defaultCompletionMaxTokens = 16;
  bool reportCachedTokens = false; // usage.prompt_tokens_details (prefix caching)
};

class OpenAiApi {
public:
  OpenAiApi(serve::Scheduler &scheduler, std::shared_ptr<const tok::Tokenizer> tokenizer,
            Metrics &metrics, Admission &admission, ApiOptions options,
            std::function<int64_t()> openConnections = {});

  /// The HttpServer handler.
  void handle(HttpRequest request, std::shared_ptr<HttpExchange> exchange);

  /// Requests in flight (submitted, not finished): for tests and shutdown.
  int64_t activeRequests() const { return active_.load(); }

  const ApiOptions &options() const { return opts_; }

private:
  void generate(Endpoint endpoint, HttpRequest &request, std::shared_ptr<HttpExchange> ex);
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
};

} // namespace accel::rt::server

#endif // ACCEL_RUNTIME_SERVING_HTTP_OPENAIAPI_H
