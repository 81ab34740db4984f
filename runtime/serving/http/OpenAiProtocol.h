//===- OpenAiProtocol.h - OpenAI request parsing, response JSON -*- C++ -*-===//
//
// The wire format of /v1/completions and /v1/chat/completions, without any
// IO: parse + validate a request body (every error names its field, as
// OpenAI's `param`), and write the response objects, whole or as stream
// chunks. What is accepted is in docs/serving.md ("API").
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_HTTP_OPENAIPROTOCOL_H
#define ACCEL_RUNTIME_SERVING_HTTP_OPENAIPROTOCOL_H

#include "core/Json.h"
#include "runtime/serving/http/ChatTemplate.h"
#include "runtime/serving/sampler/Sampler.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel::rt::server {

enum class Endpoint { kCompletions, kChat };

/// An OpenAI-style error: {"error": {"message", "type", "param", "code"}}.
struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param; // "" -> null
  std::string code;  // "" -> null
};
std::string errorBody(const ApiError &e);
ApiError badRequest(std::string message, std::string param = "", std::string code = "");

struct RequestLimits {
  int64_t maxLogprobs = 20; // top alternatives per token
  size_t maxStop = 16;      // stop strings
  size_t maxMessages = 4096;
};

/// A validated request, before tokenization.
struct CompletionRequest {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string model; // "" when not given
  bool stream = false;
  bool includeUsage = false; // stream_options.include_usage

  // /v1/completions: the prompt as text or as token ids.
  std::string prompt;
  std::vector<int64_t> promptIds;
  bool promptIsIds = false;

  // /v1/chat/completions.
  std::vector<ChatMessage> messages;
  bool addGenerationPrompt = true;

  std::optional<int64_t> maxTokens; // max_tokens / max_completion_tokens
  sampler::SamplingParams sampling; // temperature defaults to 1, as OpenAI
  std::vector<std::string> stop;
  bool ignoreEos = false;
  /// -1: no logprobs; N >= 0: the sampled token's logprob and N top
  /// alternatives (completions: `logprobs: N`; chat: `logprobs: true`,
  /// `top_logprobs: N`).
  int64_t logprobs = -1;
};

/// Parses `body` for `endpoint`; false with `err` set (400, naming the
/// field) when it is not a valid request.
bool parseCompletionRequest(std::string_view body, Endpoint endpoint, const RequestLimits &limits,
                            CompletionRequest &out, ApiError &err);

/// One generated token's logprobs, resolved to text.
struct TokenLogprob {
  std::string token;
  float logprob = 0.0f;
  std::vector<std::pair<std::string, float>> top;
};

struct Usage {
  int64_t promptTokens = 0, completionTokens = 0;
  int64_t cachedTokens = -1; // -1: not reported
};

/// What every response object of one request shares.
struct ResponseHeader {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string id;
  int64_t created = 0;
  std::string model;
};

/// The whole (non-streaming) response. `logprobs` is null JSON when the
/// request did not ask for them; textOffset0 is the offset of the first
/// token's text (completions' text_offset; the prompt is not echoed: 0).
std::string completeResponse(const ResponseHeader &h, const std::string &text,
                             const std::string &finishReason, const Usage &usage,
                             const std::vector<TokenLogprob> *logprobs);

/// One stream chunk: `text` new text (may be empty), the logprobs of the
/// tokens it covers (or null), and finishReason ("" -> null). For chat, a
/// `role` chunk starts the stream (role set, text empty).
std::string streamChunk(const ResponseHeader &h, const std::string &text,
                        const std::string &finishReason,
                        const std::vector<TokenLogprob> *logprobs, size_t textOffset,
                        bool roleChunk = false);
/// The final usage chunk (stream_options.include_usage): choices [].
std::string usageChunk(const ResponseHeader &h, const Usage &usage);

} // namespace accel::rt::server

#endif // ACCEL_RUNTIME_SERVING_HTTP_OPENAIPROTOCOL_H
