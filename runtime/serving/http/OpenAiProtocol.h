//===- OpenAiProtocol.h - OpenAI request parsing, response JSON -*- C++ -*-===//
//
// The wire format of /v1/completions and /v1/chat/completions, without any
// IO: parse + validate a request body (every error names its field, as
// OpenAI's `param`), and write the response objects, whole or as stream
// chunks. Every parameter a request may carry is honoured, accepted as a
// listed no-op, or refused with 400 naming it; unknown ones are refused
// too. docs/serving.md ("Request parameters") is the table, and
// ServerTest's RequestParameterTable walks it against this code.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_HTTP_OPENAIPROTOCOL_H
#define ACCEL_RUNTIME_SERVING_HTTP_OPENAIPROTOCOL_H

#include "core/Json.h"
#include "runtime/serving/http/ChatTemplate.h"
#include "runtime/serving/http/ToolParsers.h"
#include "runtime/serving/sampler/Sampler.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel::rt::tok {
class Tokenizer;
}

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
/// A 429 (rate_limit_exceeded): the server's limit or a full queue.
ApiError rateLimited(std::string message);
/// "a string", "an integer", "an array", ... for messages about a JSON value.
std::string describeJson(const json::Value &v);

struct RequestLimits {
  int64_t maxLogprobs = 20; // top alternatives per token
  size_t maxStop = 16;      // stop strings
  size_t maxMessages = 4096;
  size_t maxStopTokenIds = 256; // stop_token_ids
  size_t maxBadWords = 256;     // bad_words
  int64_t maxChoices = 16;      // n and best_of
  /// Token ids (stop_token_ids, allowed_token_ids) must be below it; 0:
  /// not checked here (the scheduler still does).
  int64_t vocabSize = 0;
};

/// tool_choice (chat): none, auto (the model decides), required (a call
/// of any of the tools), or a call of the function `name`.
struct ToolChoice {
  enum Kind { kNone, kAuto, kRequired, kNamed } kind = kNone;
  std::string name; // kNamed
};

/// A structured-output constraint as the request gave it (compiled by the
/// server: runtime/serving/structured/Grammar.h, GrammarCache::get).
struct OutputConstraint {
  std::string kind;       // "json_schema", "json_object", "regex" or "choice"
  std::string text;       // the schema (JSON), the regex, the choices (a JSON array)
  std::string whitespace; // guided_whitespace_pattern: "" for the default
  std::string param;      // the request parameter that gave it (for errors)
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
  /// n choices returned; bestOf (>= n) generated, the n with the highest
  /// cumulative logprob returned (completions only; bestOf == n: all).
  int64_t n = 1, bestOf = 1;
  /// -1: no logprobs; N >= 0: the sampled token's logprob and N top
  /// alternatives (completions: `logprobs: N`; chat: `logprobs: true`,
  /// `top_logprobs: N`).
  int64_t logprobs = -1;

  // vLLM's extensions (serve::Request has their semantics).
  std::vector<int64_t> stopTokenIds;
  int64_t minTokens = 0;
  bool includeStopStrInOutput = false;
  std::vector<int64_t> allowedTokenIds; // sorted, distinct; empty: all
  std::vector<std::pair<int64_t, float>> logitBias; // OpenAI's logit_bias
  std::vector<std::string> badWords;
  std::optional<int64_t> truncatePromptTokens; // keep the prompt's last N tokens
  bool skipSpecialTokens = true;
  std::optional<bool> addSpecialTokens; // unset: completions yes, chat the template's
  bool echo = false;                    // the prompt / final message before the text
  bool continueFinalMessage = false;    // chat: the last message left open
  json::Value chatTemplateKwargs;       // chat: null or an object of template variables
  json::Value documents;                // chat: null or an array of objects
  std::optional<OutputConstraint> constraint; // structured output
  int64_t promptLogprobs = -1; // vLLM's prompt_logprobs: -1 none, else top N
  // chat: tools (ToolRequest.h; docs/serving.md "Tool calls").
  json::Value tools;             // null or the array of tools, as given
  ToolChoice toolChoice;         // default: auto with tools, else none
  bool parallelToolCalls = true; // false: at most one call returned
};

/// The request parameters `endpoint` takes (honoured, limited or no-op),
/// in docs/serving.md's order; a body with any other member is refused.
const std::vector<std::string> &requestParameters(Endpoint endpoint);

/// Parses `body` for `endpoint`; false with `err` set (400, naming the
/// field) when it is not a valid request.
bool parseCompletionRequest(std::string_view body, Endpoint endpoint, const RequestLimits &limits,
                            CompletionRequest &out, ApiError &err);

/// After tokenization (`ids`: the prompt the model would see): applies
/// truncate_prompt_tokens (keeps the last N ids) and resolves max_tokens
/// against a context of maxModelLen tokens: the request's, else
/// defaultCompletionMaxTokens (completions) or the rest of the context
/// (chat). False with `err` (400, context_length_exceeded, naming the
/// field) when the prompt leaves no room or prompt + max_tokens exceed the
/// context, or when min_tokens exceeds the resolved max_tokens. Every check
/// is overflow-safe for any int64 the request holds.
bool fitContext(const CompletionRequest &req, int64_t maxModelLen,
                int64_t defaultCompletionMaxTokens, std::vector<int64_t> &ids,
                int64_t &maxTokens, ApiError &err);

/// The text `echo` puts before the generated text: completions, the prompt
/// (as given, or decoded from `ids` when it came as token ids or was
/// truncated); chat, the last message's content when it is the assistant's
/// (vLLM's rule; nothing otherwise). "" without echo. False with `err` when
/// ids must be decoded and there is no tokenizer.
bool echoText(const CompletionRequest &req, const std::vector<int64_t> &ids,
              const tok::Tokenizer *tokenizer, std::string &out, ApiError &err);

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

/// One choice of a whole response.
struct ChoiceResult {
  std::string text;
  std::string finishReason;
  const std::vector<TokenLogprob> *logprobs = nullptr; // null: not asked
  /// vLLM's prompt_logprobs (null: not asked): completions put it in each
  /// choice, chat on the response (choice 0's).
  const json::Value *promptLogprobs = nullptr;
  std::vector<ToolCall> toolCalls; // chat: message.tool_calls when not empty
  bool nullContent = false;        // chat: message.content null (a reply of calls only)
};
/// The whole (non-streaming) response with several choices, indexed 0..n-1
/// in this order.
std::string completeResponse(const ResponseHeader &h, const std::vector<ChoiceResult> &choices,
                             const Usage &usage);

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
                        bool roleChunk = false, int64_t index = 0,
                        const json::Value *promptLogprobs = nullptr);
/// A chat stream's chunk of tool calls: delta.tool_calls, each with its
/// index in the reply, id, type and the whole function (name, arguments).
std::string toolCallsChunk(const ResponseHeader &h, const std::vector<ToolCall> &calls,
                           const std::vector<TokenLogprob> *logprobs, int64_t index = 0);
/// The final usage chunk (stream_options.include_usage): choices [].
std::string usageChunk(const ResponseHeader &h, const Usage &usage);

} // namespace accel::rt::server

#endif // ACCEL_RUNTIME_SERVING_HTTP_OPENAIPROTOCOL_H
