//===- OpenAiRequestFuzzer.cpp - libFuzzer target for request validation -===//
//
// Feeds arbitrary bytes, as the body of both /v1/completions and
// /v1/chat/completions, to parseCompletionRequest
// (runtime/serving/http/OpenAiProtocol.cpp): the JSON body to a validated
// CompletionRequest, with a vocabulary of kVocab tokens. Bad input must be
// a 400 whose error body is valid JSON naming the problem, never a crash.
// What validates must hold what the scheduler relies on: sampling
// parameters that SamplingParams::validate() accepts, max_tokens >= 1, a
// non-empty prompt or message list, logprobs, stop strings, stop_token_ids
// and bad_words within the limits, token ids (stop, allowed, logit_bias)
// within the vocabulary, allowed_token_ids sorted and distinct, min_tokens
// in [0, max_tokens], truncate_prompt_tokens >= 1, not both
// continue_final_message and add_generation_prompt. Then the rest of the
// request path that needs no model: the chat templates render it, and
// fitContext resolves it against a context of kContext tokens (the prompt
// as token ids, or one id per byte of its text): a refusal is a 400; what
// fits has 1 <= prompt < context, prompt + max_tokens <= context,
// min_tokens <= max_tokens and the prompt cut to truncate_prompt_tokens;
// echoText without a tokenizer answers or refuses with a 400. Tools: a
// named tool_choice names one of the tools, required and named have tools,
// tool calls sit on assistant messages with object arguments. And the body
// as a model's reply to each tool-call parser (ToolParsers.h): no call
// leaves the whole text as content; calls name an offered function, their
// arguments parse to a JSON object, the content is a prefix of the text and
// the streamed part (settledContent) never passes it.
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/http/ChatTemplate.h"
#include "runtime/serving/http/OpenAiProtocol.h"
#include "runtime/serving/http/ToolParsers.h"
#include "runtime/serving/http/ToolRequest.h"

#include "core/Json.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

using namespace accel::rt;
using namespace accel::rt::server;

namespace {
[[noreturn]] void die(const char *what, const std::string &detail) {
  std::fprintf(stderr, "openai request fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}

constexpr int64_t kVocab = 1000, kContext = 2048, kDefaultMaxTokens = 16;

void expectRefusal(const ApiError &err, const char *where) {
  if (err.status != 400 || err.message.empty())
    die(where, "a refusal that is not a 400 with a message: " + std::to_string(err.status) +
                   " " + err.message);
}

bool inVocab(const std::vector<int64_t> &ids) {
  for (int64_t id : ids)
    if (id < 0 || id >= kVocab)
      return false;
  return true;
}

void check(std::string_view body, Endpoint endpoint) {
  RequestLimits limits;
  limits.vocabSize = kVocab;
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
  if (req.stopTokenIds.size() > limits.maxStopTokenIds || !inVocab(req.stopTokenIds))
    die("stop_token_ids out of range validated", std::string(body));
  if (req.badWords.size() > limits.maxBadWords)
    die("too many bad_words validated", std::to_string(req.badWords.size()));
  if (!inVocab(req.allowedTokenIds))
    die("allowed_token_ids out of the vocabulary validated", std::string(body));
  for (size_t i = 1; i < req.allowedTokenIds.size(); ++i)
    if (req.allowedTokenIds[i - 1] >= req.allowedTokenIds[i])
      die("allowed_token_ids not sorted and distinct", std::string(body));
  for (const auto &[id, bias] : req.logitBias)
    if (id < 0 || id >= kVocab || !(bias >= -100 && bias <= 100))
      die("a logit_bias out of range validated", std::string(body));
  if (req.minTokens < 0 || (req.maxTokens && req.minTokens > *req.maxTokens))
    die("min_tokens out of [0, max_tokens] validated", std::to_string(req.minTokens));
  if (req.truncatePromptTokens && *req.truncatePromptTokens < 1)
    die("truncate_prompt_tokens below 1 validated", std::to_string(*req.truncatePromptTokens));

  if (endpoint == Endpoint::kChat) {
    const std::vector<std::string> names = toolFunctionNames(req);
    if (names.size() > kMaxTools || names.size() != req.tools.size())
      die("tools out of range validated", std::string(body));
    if (req.toolChoice.kind == ToolChoice::kNamed &&
        std::find(names.begin(), names.end(), req.toolChoice.name) == names.end())
      die("a named tool_choice not among the tools validated", std::string(body));
    if (req.toolChoice.kind != ToolChoice::kNone && names.empty())
      die("a tool_choice that asks for calls without tools validated", std::string(body));
    for (const ChatMessage &m : req.messages) {
      if (m.toolCalls.isNull())
        continue;
      if (m.role != "assistant" || !m.toolCalls.isArray() || m.toolCalls.size() == 0)
        die("tool calls off an assistant message validated", std::string(body));
      for (const json::Value &c : m.toolCalls.items()) {
        const json::Value *fn = c.find("function");
        if (!fn || !fn->find("arguments") || !fn->find("arguments")->isObject())
          die("a tool call without object arguments validated", std::string(body));
      }
    }
  }

  // The prompt as the model would see it: its ids, or one per byte (the
  // rendered chat prompt's or the text's; what fitContext checks is only
  // the count).
  std::vector<int64_t> ids;
  if (endpoint == Endpoint::kChat) {
    if (req.messages.empty() || req.messages.size() > limits.maxMessages)
      die("a message count out of range validated", std::to_string(req.messages.size()));
    if (req.continueFinalMessage && req.addGenerationPrompt)
      die("continue_final_message with add_generation_prompt validated", std::string(body));
    std::string prompt;
    for (ChatTemplate::Format f : {ChatTemplate::Format::kChatML, ChatTemplate::Format::kLlama3,
                                   ChatTemplate::Format::kPlain}) {
      prompt = ChatTemplate(f).render(req.messages, req.addGenerationPrompt,
                                      req.continueFinalMessage);
      const std::string &last = req.messages.back().content;
      if (req.continueFinalMessage &&
          (prompt.size() < last.size() || prompt.compare(prompt.size() - last.size(),
                                                         last.size(), last) != 0))
        die("continue_final_message: the prompt does not end with the last message",
            std::string(body));
    }
    ids.assign(prompt.size(), 1);
  } else if (req.prompt.empty() && req.promptIds.empty()) {
    die("an empty prompt validated", std::string(body));
  } else {
    ids = req.promptIsIds ? req.promptIds : std::vector<int64_t>(req.prompt.size(), 1);
  }

  const size_t given = ids.size();
  int64_t maxTokens = -1;
  ApiError ferr;
  if (!fitContext(req, kContext, kDefaultMaxTokens, ids, maxTokens, ferr)) {
    expectRefusal(ferr, "fitContext");
  } else {
    const int64_t P = int64_t(ids.size());
    if (P < 1 || P >= kContext || maxTokens < 1 || maxTokens > kContext - P)
      die("fitContext let through a request that does not fit",
          std::to_string(P) + " prompt + " + std::to_string(maxTokens) + " tokens");
    if (req.minTokens > maxTokens)
      die("fitContext let through min_tokens above max_tokens", std::to_string(req.minTokens));
    if (req.truncatePromptTokens &&
        P != int64_t(std::min<uint64_t>(given, uint64_t(*req.truncatePromptTokens))))
      die("truncate_prompt_tokens did not cut the prompt to its size", std::to_string(P));
    if (!req.truncatePromptTokens && size_t(P) != given)
      die("fitContext changed an untruncated prompt", std::to_string(P));
  }
  std::string echo;
  ApiError eerr;
  if (!echoText(req, ids, nullptr, echo, eerr))
    expectRefusal(eerr, "echoText");
  else if (!req.echo && !echo.empty())
    die("echo text without echo", echo);
}
/// `text` as a model's reply to every tool-call parser.
void checkToolReply(std::string_view text) {
  const std::vector<std::string> functions = {"f", "get_weather", "noop"};
  for (ToolParser p : {ToolParser::kHermes, ToolParser::kLlama3Json, ToolParser::kMistral}) {
    const ToolCallReply r = parseToolCalls(p, text, functions);
    const size_t settled = settledContent(p, text);
    if (settled > text.size() || settledContent(p, text.substr(0, text.size() / 2)) > settled)
      die("settledContent shrank or passed the text", toolParserName(p));
    if (r.calls.empty()) {
      if (!r.content || *r.content != text)
        die("a reply without calls that is not all content", toolParserName(p));
      continue;
    }
    const std::string content = r.content.value_or("");
    if (text.substr(0, content.size()) != content || settled > content.size())
      die("the content of a reply with calls is not what precedes them", toolParserName(p));
    for (const ToolCall &c : r.calls) {
      StatusOr<json::Value> args = json::parse(c.arguments);
      if (!args || !args->isObject() ||
          std::find(functions.begin(), functions.end(), c.name) == functions.end())
        die("a call of an unknown function or without object arguments", c.arguments);
    }
  }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view body(reinterpret_cast<const char *>(data), size);
  check(body, Endpoint::kCompletions);
  check(body, Endpoint::kChat);
  checkToolReply(body);
  return 0;
}
