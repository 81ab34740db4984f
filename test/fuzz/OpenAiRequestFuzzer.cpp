//===- OpenAiRequestFuzzer.cpp - libFuzzer target for request validation -===//
//
// Feeds arbitrary bytes, as the body of both /v1/completions and
// /v1/chat/completions, to parseCompletionRequest
// (runtime/serving/http/OpenAiProtocol.cpp): the JSON body to a validated
// CompletionRequest. Bad input must be a 400 whose error body is valid JSON
// naming the problem, never a crash. What validates must hold what the
// scheduler relies on: sampling parameters that SamplingParams::validate()
// accepts, max_tokens >= 1, a non-empty prompt or message list, logprobs
// within the limit; and it goes through the rest of the request path that
// needs no model: the chat templates render it.
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/http/ChatTemplate.h"
#include "runtime/serving/http/OpenAiProtocol.h"

#include "core/Json.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace accel::rt;
using namespace accel::rt::server;

namespace {
[[noreturn]] void die(const char *what, const std::string &detail) {
  std::fprintf(stderr, "openai request fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}

void check(std::string_view body, Endpoint endpoint) {
  RequestLimits limits;
  CompletionRequest req;
  ApiError err;
  if (!parseCompletionRequest(body, endpoint, limits, req, err)) {
    if (err.status < 400 || err.status > 499 || err.message.empty())
      die("a refusal that is not a 4xx with a message", err.message);
    StatusOr<json::Value> doc = json::parse(errorBody(err));
    if (!doc || !doc->find("error"))
      die("the error body is not JSON with an 'error'", errorBody(err));
    return;
  }
  if (Status s = req.sampling.validate(); !s.isOk())
    die("validated sampling parameters that the sampler refuses", s.message());
  if (req.maxTokens && *req.maxTokens < 1)
    die("max_tokens below 1 validated", std::to_string(*req.maxTokens));
  if (req.logprobs > limits.maxLogprobs || req.logprobs < -1)
    die("logprobs out of range validated", std::to_string(req.logprobs));
  if (req.stop.size() > limits.maxStop)
    die("too many stop strings validated", std::to_string(req.stop.size()));
  if (endpoint == Endpoint::kChat) {
    if (req.messages.empty() || req.messages.size() > limits.maxMessages)
      die("a message count out of range validated", std::to_string(req.messages.size()));
    for (ChatTemplate::Format f : {ChatTemplate::Format::kChatML, ChatTemplate::Format::kLlama3,
                                   ChatTemplate::Format::kPlain})
      (void)ChatTemplate(f).render(req.messages, req.addGenerationPrompt);
  } else if (req.prompt.empty() && req.promptIds.empty()) {
    die("an empty prompt validated", std::string(body));
  }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view body(reinterpret_cast<const char *>(data), size);
  check(body, Endpoint::kCompletions);
  check(body, Endpoint::kChat);
  return 0;
}
