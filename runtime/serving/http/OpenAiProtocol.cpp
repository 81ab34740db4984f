//===- OpenAiProtocol.cpp - OpenAI request parsing and validation --------===//
//
// The responses' JSON is in OpenAiResponses.cpp.
#include "runtime/serving/http/OpenAiProtocol.h"

#include "runtime/serving/http/RequestParser.h"

#include "runtime/serving/http/ToolRequest.h"
#include "runtime/serving/tokenizer/Tokenizer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace accel::rt::server {

using detail::Parser;
using detail::fmtNumber;
using detail::parseConstraint;
using detail::parseMessages;

namespace json = accel::rt::json;

ApiError badRequest(std::string message, std::string param, std::string code) {
  ApiError e;
  e.status = 400;
  e.message = std::move(message);
  e.param = std::move(param);
  e.code = std::move(code);
  return e;
}

ApiError rateLimited(std::string message) {
  ApiError e;
  e.status = 429;
  e.type = e.code = "rate_limit_exceeded";
  e.message = std::move(message);
  return e;
}

/// "a string", "an integer", ... for messages.
std::string describeJson(const json::Value &v) {
  switch (v.type()) {
  case json::Type::kNull:
    return "null";
  case json::Type::kBool:
    return "a boolean";
  case json::Type::kNumber:
    return v.isInteger() ? "an integer" : "a number";
  case json::Type::kString:
    return "a string";
  case json::Type::kArray:
    return "an array";
  case json::Type::kObject:
    return "an object";
  }
  return "a value";
}

namespace {

// ---------------------------------------------------------------------------
// The parameters (docs/serving.md, "Request parameters", has the same rows).
// ---------------------------------------------------------------------------
constexpr unsigned kOnCompletions = 1, kOnChat = 2, kOnBoth = 3;
struct Param {
  const char *name;
  unsigned on;
};
const Param kParams[] = {
    // OpenAI, both endpoints.
    {"model", kOnBoth},
    {"prompt", kOnCompletions},
    {"messages", kOnChat},
    {"max_tokens", kOnBoth},
    {"max_completion_tokens", kOnChat},
    {"temperature", kOnBoth},
    {"top_p", kOnBoth},
    {"n", kOnBoth},
    {"best_of", kOnBoth},
    {"stream", kOnBoth},
    {"stream_options", kOnBoth},
    {"stop", kOnBoth},
    {"seed", kOnBoth},
    {"presence_penalty", kOnBoth},
    {"frequency_penalty", kOnBoth},
    {"logit_bias", kOnBoth},
    {"logprobs", kOnBoth},
    {"top_logprobs", kOnChat},
    {"echo", kOnBoth},
    {"suffix", kOnCompletions},
    {"response_format", kOnBoth},
    {"user", kOnBoth},
    // OpenAI, chat only.
    {"tools", kOnChat},
    {"tool_choice", kOnChat},
    {"parallel_tool_calls", kOnChat},
    {"functions", kOnChat},
    {"function_call", kOnChat},
    {"audio", kOnChat},
    {"modalities", kOnChat},
    {"prediction", kOnChat},
    {"reasoning_effort", kOnChat},
    {"verbosity", kOnChat},
    {"web_search_options", kOnChat},
    {"store", kOnChat},
    {"metadata", kOnChat},
    {"service_tier", kOnChat},
    {"prompt_cache_key", kOnChat},
    {"safety_identifier", kOnChat},
    // vLLM's sampling parameters.
    {"top_k", kOnBoth},
    {"min_p", kOnBoth},
    {"repetition_penalty", kOnBoth},
    {"use_beam_search", kOnBoth},
    {"length_penalty", kOnBoth},
    {"stop_token_ids", kOnBoth},
    {"include_stop_str_in_output", kOnBoth},
    {"ignore_eos", kOnBoth},
    {"min_tokens", kOnBoth},
    {"skip_special_tokens", kOnBoth},
    {"spaces_between_special_tokens", kOnBoth},
    {"truncate_prompt_tokens", kOnBoth},
    {"allowed_token_ids", kOnBoth},
    {"bad_words", kOnBoth},
    {"prompt_logprobs", kOnBoth},
    // vLLM's other extensions.
    {"add_special_tokens", kOnBoth},
    {"add_generation_prompt", kOnChat},
    {"continue_final_message", kOnChat},
    {"documents", kOnChat},
    {"chat_template", kOnChat},
    {"chat_template_kwargs", kOnChat},
    {"mm_processor_kwargs", kOnBoth},
    {"media_io_kwargs", kOnChat},
    {"include_reasoning", kOnChat},
    {"prompt_embeds", kOnCompletions},
    {"guided_json", kOnBoth},
    {"guided_regex", kOnBoth},
    {"guided_choice", kOnBoth},
    {"guided_grammar", kOnBoth},
    {"guided_decoding_backend", kOnBoth},
    {"guided_whitespace_pattern", kOnBoth},
    {"structural_tag", kOnBoth},
    {"structured_outputs", kOnBoth},
    {"priority", kOnBoth},
    {"request_id", kOnBoth},
    {"logits_processors", kOnBoth},
    {"return_tokens_as_token_ids", kOnBoth},
    {"return_token_ids", kOnBoth},
    {"cache_salt", kOnBoth},
    {"kv_transfer_params", kOnBoth},
    {"vllm_xargs", kOnBoth},
};

bool takes(Endpoint ep, std::string_view name) {
  const unsigned bit = ep == Endpoint::kChat ? kOnChat : kOnCompletions;
  for (const Param &p : kParams)
    if ((p.on & bit) && name == p.name)
      return true;
  return false;
}

constexpr const char *kGrammar =
    "is not supported: context-free grammars are not (use guided_json, guided_regex or "
    "guided_choice)";

/// Refused whenever given (not null), with why.
struct Refused {
  const char *name;
  const char *why;
};
const Refused kRefused[] = {
    {"suffix", "is not supported (no fill-in-the-middle)"},
    {"guided_grammar", kGrammar},
    {"structural_tag", "is not supported (structured output takes a JSON schema, a regex or "
                       "choices)"},
    {"request_id", "is not supported: this server chooses the response ids"},
    {"logits_processors", "is not supported: a request cannot load code"},
    {"cache_salt", "is not supported"},
    {"kv_transfer_params", "is not supported (no disaggregated prefill)"},
    {"vllm_xargs", "is not supported (no custom extensions)"},
    {"prompt_embeds", "is not supported: send text or token ids"},
    {"mm_processor_kwargs", "is not supported (text-only models)"},
    {"media_io_kwargs", "is not supported (text-only models)"},
    {"chat_template",
     "is not supported: the server's chat template is chosen when it starts (--chat-template)"},
    {"audio", "is not supported (text output only)"},
    {"prediction", "is not supported (no predicted outputs)"},
    {"reasoning_effort", "is not supported (no reasoning controls)"},
    {"verbosity", "is not supported"},
    {"web_search_options", "is not supported (no web search)"},
};

/// Accepted only with one of a few values (JSON, compared by value), the
/// ones that ask for nothing this server does not do.
struct OnlyValues {
  const char *name;
  std::vector<const char *> values;
  const char *why;
};
const OnlyValues kOnlyValues[] = {
    {"use_beam_search", {"false"}, "beam search is not supported"},
    {"length_penalty", {"1"}, "it applies to beam search, which is not supported"},
    {"priority", {"0"}, "priority scheduling is not supported"},
    {"return_tokens_as_token_ids", {"false"}, "it is not supported"},
    {"return_token_ids", {"false"}, "it is not supported"},
    {"functions", {"[]"}, "the deprecated functions are not supported: use tools"},
    {"function_call",
     {"\"none\""},
     "the deprecated function_call is not supported: use tool_choice"},
    {"modalities", {"[\"text\"]"}, "only text output is supported"},
    {"store", {"false"}, "this server stores no completions"},
    {"service_tier", {"\"auto\"", "\"default\""}, "this server has one service tier"},
    {"include_reasoning",
     {"true"},
     "this server has no reasoning parser: reasoning text stays in the content"},
};

/// Accepted, with no effect (docs/serving.md says why), and their type.
struct NoOp {
  const char *name;
  json::Type type;
};
const NoOp kNoOps[] = {
    {"user", json::Type::kString},
    {"safety_identifier", json::Type::kString},
    {"prompt_cache_key", json::Type::kString},
    {"metadata", json::Type::kObject},
    {"spaces_between_special_tokens", json::Type::kBool},
};

} // namespace

const std::vector<std::string> &requestParameters(Endpoint endpoint) {
  static const std::vector<std::string> completions = [] {
    std::vector<std::string> v;
    for (const Param &p : kParams)
      if (p.on & kOnCompletions)
        v.push_back(p.name);
    return v;
  }();
  static const std::vector<std::string> chat = [] {
    std::vector<std::string> v;
    for (const Param &p : kParams)
      if (p.on & kOnChat)
        v.push_back(p.name);
    return v;
  }();
  return endpoint == Endpoint::kChat ? chat : completions;
}

bool parseCompletionRequest(std::string_view body, Endpoint endpoint, const RequestLimits &limits,
                            CompletionRequest &out, ApiError &err) {
  out = CompletionRequest();
  out.endpoint = endpoint;
  out.sampling.temperature = 1.0f;
  StatusOr<json::Value> doc = json::parse(body);
  if (!doc) {
    err = badRequest("the request body is not valid JSON: " + doc.status().message());
    return false;
  }
  if (!doc->isObject()) {
    err = badRequest("the request body must be a JSON object, got " + describeJson(*doc));
    return false;
  }
  Parser p{*doc, err};
  const bool chat = endpoint == Endpoint::kChat;
  const char *where = chat ? "/v1/chat/completions" : "/v1/completions";

  // Nothing is silently ignored: an unknown member is refused by name (at
  // most 64 bytes of it, cut at a UTF-8 character boundary).
  for (const json::Member &m : doc->members())
    if (!takes(endpoint, m.first)) {
      std::string name = m.first;
      if (name.size() > 64) {
        size_t cut = 64;
        while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80)
          --cut;
        name = name.substr(0, cut) + "...";
      }
      return p.fail("unknown parameter '" + name + "' for " + where +
                        " (docs/serving.md lists the parameters this server takes)",
                    name);
    }
  for (const Refused &r : kRefused)
    if (p.get(r.name))
      return p.fail("'" + std::string(r.name) + "' " + r.why, r.name);
  for (const OnlyValues &o : kOnlyValues) {
    const json::Value *v = p.get(o.name);
    if (!v)
      continue;
    bool ok = false;
    std::string allowed;
    for (const char *text : o.values) {
      ok = ok || *json::parse(text) == *v;
      allowed += std::string(allowed.empty() ? "" : " or ") + text;
    }
    if (!ok)
      return p.fail("'" + std::string(o.name) + "' must be " + allowed + " (or absent): " +
                        o.why,
                    o.name);
  }
  for (const NoOp &n : kNoOps)
    if (const json::Value *v = p.get(n.name); v && v->type() != n.type)
      return p.wrongType(n.name,
                         n.type == json::Type::kString   ? "a string"
                         : n.type == json::Type::kObject ? "an object"
                                                         : "a boolean",
                         *v);

  if (const json::Value *v = p.get("model")) {
    if (!v->isString())
      return p.wrongType("model", "a string", *v);
    out.model = v->asString();
  }
  if (!p.boolean("stream", out.stream))
    return false;
  if (const json::Value *v = p.get("stream_options")) {
    if (!v->isObject())
      return p.wrongType("stream_options", "an object", *v);
    bool any = false;
    for (const json::Member &m : v->members())
      any = any || !m.second.isNull();
    if (any && !out.stream)
      return p.fail("'stream_options' needs 'stream': true", "stream_options");
    for (const json::Member &m : v->members()) {
      const std::string at = "stream_options." + m.first;
      if (m.first != "include_usage" && m.first != "continuous_usage_stats")
        return p.fail("'" + at + "' is not a known stream option (include_usage, "
                      "continuous_usage_stats)",
                      at);
      if (m.second.isNull())
        continue;
      if (!m.second.isBool())
        return p.wrongType(at, "a boolean", m.second);
      if (m.first == "include_usage")
        out.includeUsage = m.second.asBool();
      else if (m.second.asBool())
        return p.fail("'" + at + "' is not supported (usage comes in the last chunk)", at);
    }
  }

  // The prompt.
  if (!chat) {
    const json::Value *prompt = p.get("prompt");
    if (!prompt)
      return p.fail("'prompt' is required", "prompt");
    const json::Value *one = prompt;
    if (prompt->isArray() && !prompt->items().empty() &&
        (prompt->items()[0].isString() || prompt->items()[0].isArray())) {
      // A list of prompts: one is fine.
      if (prompt->items().size() != 1)
        return p.fail("'prompt' holds " + std::to_string(prompt->items().size()) +
                          " prompts; this server takes one prompt per request",
                      "prompt");
      one = &prompt->items()[0];
    }
    if (one->isString()) {
      out.prompt = one->asString();
    } else if (one->isArray()) {
      for (size_t i = 0; i < one->items().size(); ++i) {
        const json::Value &t = one->items()[i];
        if (!t.isInteger())
          return p.wrongType("prompt[" + std::to_string(i) + "]", "an integer token id", t);
        out.promptIds.push_back(t.asInt());
      }
      out.promptIsIds = true;
    } else {
      return p.wrongType("prompt", "a string or an array of token ids", *one);
    }
    if (out.prompt.empty() && out.promptIds.empty())
      return p.fail("'prompt' is empty", "prompt");
  } else {
    if (!parseMessages(p, limits, out))
      return false;
    std::optional<bool> addGen;
    if (const json::Value *v = p.get("add_generation_prompt")) {
      if (!v->isBool())
        return p.wrongType("add_generation_prompt", "a boolean", *v);
      addGen = v->asBool();
    }
    if (!p.boolean("continue_final_message", out.continueFinalMessage))
      return false;
    if (out.continueFinalMessage && addGen.value_or(false))
      return p.fail("'continue_final_message' and 'add_generation_prompt' cannot both be true",
                    "continue_final_message");
    out.addGenerationPrompt = addGen.value_or(!out.continueFinalMessage);
    if (const json::Value *v = p.get("chat_template_kwargs")) {
      if (!v->isObject())
        return p.wrongType("chat_template_kwargs", "an object", *v);
      for (const json::Member &m : v->members())
        if (m.first == "messages" || m.first == "tools" || m.first == "documents" ||
            m.first == "add_generation_prompt")
          return p.fail("'chat_template_kwargs." + m.first + "' is not allowed: the request's own '" +
                            m.first + "' sets it",
                        "chat_template_kwargs");
      out.chatTemplateKwargs = *v;
    }
    if (!parseToolFields(*doc, out, err)) {
      p.failed = true;
      return false;
    }
    if (const json::Value *v = p.get("documents")) {
      if (!v->isArray())
        return p.wrongType("documents", "an array of objects", *v);
      for (size_t i = 0; i < v->items().size(); ++i)
        if (!v->items()[i].isObject())
          return p.wrongType("documents[" + std::to_string(i) + "]", "an object", v->items()[i]);
      out.documents = *v;
    }
  }
  if (!parseConstraint(p, out))
    return false;
  std::optional<int64_t> promptLogprobs;
  if (!p.integerIn("prompt_logprobs", promptLogprobs, 0, limits.maxLogprobs,
                   "in [0, " + std::to_string(limits.maxLogprobs) + "] (--max-logprobs)"))
    return false;
  if (promptLogprobs)
    out.promptLogprobs = *promptLogprobs;

  // Length.
  std::optional<int64_t> maxTokens;
  const char *maxField = "max_tokens";
  if (!p.integer("max_tokens", maxTokens))
    return false;
  if (chat) {
    std::optional<int64_t> mct;
    if (!p.integer("max_completion_tokens", mct))
      return false;
    if (mct)
      maxTokens = mct, maxField = "max_completion_tokens";
  }
  if (maxTokens && *maxTokens < 1)
    return p.fail("'" + std::string(maxField) + "' must be at least 1, got " +
                      std::to_string(*maxTokens),
                  maxField);
  out.maxTokens = maxTokens;
  std::optional<int64_t> minTokens, truncate;
  if (!p.integerIn("min_tokens", minTokens, 0, maxTokens.value_or(INT64_MAX),
                   maxTokens ? "in [0, " + std::string(maxField) + " = " +
                                   std::to_string(*maxTokens) + "]"
                             : std::string("at least 0")) ||
      !p.integerIn("truncate_prompt_tokens", truncate, 1, INT64_MAX, "at least 1"))
    return false;
  out.minTokens = minTokens.value_or(0);
  out.truncatePromptTokens = truncate;

  std::optional<int64_t> n, bestOf;
  if (!p.integer("n", n) || !p.integer("best_of", bestOf))
    return false;
  if (n && (*n < 1 || *n > limits.maxChoices))
    return p.fail("'n' must be in [1, " + std::to_string(limits.maxChoices) + "], got " +
                      std::to_string(*n),
                  "n");
  out.n = n.value_or(1);
  if (bestOf) {
    if (chat && *bestOf != 1)
      return p.fail("'best_of' is taken by /v1/completions only; it must be 1 here, got " +
                        std::to_string(*bestOf),
                    "best_of");
    if (*bestOf < out.n || *bestOf > limits.maxChoices)
      return p.fail("'best_of' must be in [n = " + std::to_string(out.n) + ", " +
                        std::to_string(limits.maxChoices) + "], got " + std::to_string(*bestOf),
                    "best_of");
    if (*bestOf > out.n && out.stream)
      return p.fail("'best_of' greater than 'n' cannot be streamed: the best choices are known "
                    "only at the end",
                    "best_of");
  }
  out.bestOf = bestOf.value_or(out.n);

  // Sampling, in vLLM's ranges; float32 parameters must fit a float32.
  constexpr double kMaxF = std::numeric_limits<float>::max();
  std::optional<double> temperature, topP, minP, repetition, presence, frequency;
  std::optional<int64_t> topK, seed;
  if (!p.numberIn("temperature", temperature, [&](double v) { return v >= 0 && v <= kMaxF; },
                  "a number >= 0 (0 means greedy) that a float32 holds") ||
      !p.numberIn("top_p", topP, [](double v) { return v > 0 && v <= 1; },
                  "in (0, 1] (1 means off)") ||
      !p.numberIn("min_p", minP, [](double v) { return v >= 0 && v <= 1; },
                  "in [0, 1] (0 means off)") ||
      !p.numberIn("repetition_penalty", repetition,
                  [&](double v) { return v > 0 && v <= kMaxF && float(v) > 0.0f; },
                  "a number > 0 (1 means off) that a float32 holds: in [1.4e-45, 3.4e38]") ||
      !p.numberIn("presence_penalty", presence, [](double v) { return v >= -2 && v <= 2; },
                  "in [-2, 2]") ||
      !p.numberIn("frequency_penalty", frequency, [](double v) { return v >= -2 && v <= 2; },
                  "in [-2, 2]") ||
      !p.integer("top_k", topK) || !p.integer("seed", seed))
    return false;
  if (topK && *topK < -1)
    return p.fail("'top_k' must be -1 or 0 (off) or at least 1, got " + std::to_string(*topK),
                  "top_k");
  if (temperature)
    out.sampling.temperature = float(*temperature);
  if (topP)
    out.sampling.topP = float(*topP);
  if (minP)
    out.sampling.minP = float(*minP);
  if (repetition)
    out.sampling.repetitionPenalty = float(*repetition);
  if (topK)
    out.sampling.topK = *topK;
  if (seed)
    out.sampling.seed = uint64_t(*seed);
  if (presence)
    out.sampling.presencePenalty = float(*presence);
  if (frequency)
    out.sampling.frequencyPenalty = float(*frequency);
  if (Status s = out.sampling.validate(); !s.isOk()) {
    std::string param = s.message().substr(0, s.message().find(' '));
    return p.fail(s.message(), param);
  }

  // Stopping and what is generated.
  if (!p.strings("stop", out.stop, limits.maxStop, /*single=*/true, /*blankIsEmpty=*/false) ||
      !p.tokenIds("stop_token_ids", out.stopTokenIds, limits.vocabSize, limits.maxStopTokenIds) ||
      !p.boolean("ignore_eos", out.ignoreEos) ||
      !p.boolean("include_stop_str_in_output", out.includeStopStrInOutput) ||
      !p.boolean("skip_special_tokens", out.skipSpecialTokens) ||
      !p.strings("bad_words", out.badWords, limits.maxBadWords, /*single=*/false,
                 /*blankIsEmpty=*/true))
    return false;
  if (p.get("allowed_token_ids")) {
    if (!p.tokenIds("allowed_token_ids", out.allowedTokenIds, limits.vocabSize,
                    std::numeric_limits<size_t>::max()))
      return false;
    if (out.allowedTokenIds.empty())
      return p.fail("'allowed_token_ids' is empty: no token could be generated",
                    "allowed_token_ids");
    std::sort(out.allowedTokenIds.begin(), out.allowedTokenIds.end());
    out.allowedTokenIds.erase(std::unique(out.allowedTokenIds.begin(), out.allowedTokenIds.end()),
                              out.allowedTokenIds.end());
  }
  if (const json::Value *v = p.get("add_special_tokens")) {
    if (!v->isBool())
      return p.wrongType("add_special_tokens", "a boolean", *v);
    out.addSpecialTokens = v->asBool();
  }
  if (!p.boolean("echo", out.echo))
    return false;
  if (const json::Value *v = p.get("logit_bias")) {
    // OpenAI's form: {"token id": bias}, the bias in [-100, 100].
    if (!v->isObject())
      return p.wrongType("logit_bias", "an object mapping token ids to biases", *v);
    for (const json::Member &m : v->members()) {
      const std::string at = "logit_bias." + m.first;
      int64_t id = -1;
      auto [end, ec] = std::from_chars(m.first.data(), m.first.data() + m.first.size(), id);
      if (ec != std::errc() || end != m.first.data() + m.first.size() || id < 0 ||
          (limits.vocabSize > 0 && id >= limits.vocabSize))
        return p.fail("'logit_bias' key '" + m.first + "' is not a token id of this model" +
                          (limits.vocabSize > 0
                               ? " (vocabulary of " + std::to_string(limits.vocabSize) + ")"
                               : ""),
                      at);
      if (!m.second.isNumber())
        return p.wrongType(at, "a number", m.second);
      const double b = m.second.asDouble();
      if (!(b >= -100 && b <= 100))
        return p.fail("'" + at + "' must be in [-100, 100], got " + fmtNumber(b), at);
      out.logitBias.emplace_back(id, float(b));
    }
  }

  // Logprobs.
  if (!chat) {
    std::optional<int64_t> lp;
    if (const json::Value *v = p.get("logprobs"); v && v->isBool())
      return p.wrongType("logprobs", "an integer (the number of top alternatives)", *v);
    if (!p.integerIn("logprobs", lp, 0, limits.maxLogprobs,
                     "in [0, " + std::to_string(limits.maxLogprobs) + "]"))
      return false;
    if (lp) {
      out.logprobs = *lp;
      if (out.echo)
        return p.fail("'echo' with 'logprobs' would need the prompt's logprobs, which this "
                      "server does not compute",
                      "echo");
    }
  } else {
    bool want = false;
    if (!p.boolean("logprobs", want))
      return false;
    std::optional<int64_t> top;
    if (!p.integerIn("top_logprobs", top, 0, limits.maxLogprobs,
                     "in [0, " + std::to_string(limits.maxLogprobs) + "]"))
      return false;
    if (top && *top > 0 && !want)
      return p.fail("'top_logprobs' needs 'logprobs': true", "top_logprobs");
    if (want)
      out.logprobs = top.value_or(0);
  }
  return true;
}

bool fitContext(const CompletionRequest &req, int64_t maxModelLen,
                int64_t defaultCompletionMaxTokens, std::vector<int64_t> &ids,
                int64_t &maxTokens, ApiError &err) {
  const bool chat = req.endpoint == Endpoint::kChat;
  const char *promptField = chat ? "messages" : "prompt";
  if (req.truncatePromptTokens && int64_t(ids.size()) > *req.truncatePromptTokens)
    ids.erase(ids.begin(), ids.end() - *req.truncatePromptTokens);
  const int64_t P = int64_t(ids.size()), L = maxModelLen;
  if (P == 0) {
    err = badRequest("the prompt is empty (no tokens)", promptField);
    return false;
  }
  if (P >= L) {
    err = badRequest("This model's maximum context length is " + std::to_string(L) +
                         " tokens, and your prompt has " + std::to_string(P) +
                         " tokens, which leaves no room for a completion. Please shorten the "
                         "prompt.",
                     promptField, "context_length_exceeded");
    return false;
  }
  maxTokens = req.maxTokens ? *req.maxTokens
              : chat        ? L - P
                            : std::min(defaultCompletionMaxTokens, L - P);
  const char *maxField = chat && req.maxTokens ? "max_completion_tokens" : "max_tokens";
  if (maxTokens > L - P) { // not P + maxTokens > L: that can overflow
    const std::string total = maxTokens <= INT64_MAX - P ? std::to_string(P + maxTokens)
                                                         : "more than 9223372036854775807";
    err = badRequest("This model's maximum context length is " + std::to_string(L) +
                         " tokens. However, you requested " + total + " tokens (" +
                         std::to_string(P) + " in the prompt, " + std::to_string(maxTokens) +
                         " for the completion). Please reduce the prompt or max_tokens.",
                     maxField, "context_length_exceeded");
    return false;
  }
  if (req.minTokens > maxTokens) {
    err = badRequest("'min_tokens' must be at most max_tokens (" + std::to_string(maxTokens) +
                         " here), got " + std::to_string(req.minTokens),
                     "min_tokens");
    return false;
  }
  return true;
}

bool echoText(const CompletionRequest &req, const std::vector<int64_t> &ids,
              const tok::Tokenizer *tokenizer, std::string &out, ApiError &err) {
  out.clear();
  if (!req.echo)
    return true;
  if (req.endpoint == Endpoint::kChat) {
    if (!req.messages.empty() && req.messages.back().role == "assistant")
      out = req.messages.back().content;
    return true;
  }
  if (!req.promptIsIds && !req.truncatePromptTokens) {
    out = req.prompt;
    return true;
  }
  if (!tokenizer || !tokenizer->isLoaded()) {
    err = badRequest("'echo' of a token-id or truncated prompt needs the model's tokenizer, and "
                     "this plan carries none",
                     "echo");
    return false;
  }
  out = tokenizer->decode(std::vector<int32_t>(ids.begin(), ids.end()), req.skipSpecialTokens);
  return true;
}

} // namespace accel::rt::server
