//===- OpenAiProtocol.cpp - OpenAI request parsing, response JSON ---------===//
#include "runtime/serving/http/OpenAiProtocol.h"

#include <cmath>

namespace accel::rt::server {

namespace json = accel::rt::json;

std::string errorBody(const ApiError &e) {
  json::Value err = json::Value::object();
  err.set("message", e.message);
  err.set("type", e.type);
  err.set("param", e.param.empty() ? json::Value() : json::Value(e.param));
  err.set("code", e.code.empty() ? json::Value() : json::Value(e.code));
  json::Value root = json::Value::object();
  root.set("error", std::move(err));
  return json::write(root);
}

ApiError badRequest(std::string message, std::string param, std::string code) {
  ApiError e;
  e.status = 400;
  e.message = std::move(message);
  e.param = std::move(param);
  e.code = std::move(code);
  return e;
}

namespace {

/// "a string", "an integer", ... for messages.
std::string describe(const json::Value &v) {
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

struct Parser {
  const json::Value &root;
  ApiError &err;
  bool failed = false;

  bool fail(std::string message, const std::string &param) {
    if (!failed)
      err = badRequest(std::move(message), param);
    failed = true;
    return false;
  }
  bool wrongType(const std::string &field, const char *want, const json::Value &got) {
    return fail("'" + field + "' must be " + want + ", got " + describe(got), field);
  }
  /// The member or nullptr when absent or null (null = not given, as the
  /// OpenAI client sends for unset optional parameters).
  const json::Value *get(const char *field) const {
    const json::Value *v = root.find(field);
    return v && !v->isNull() ? v : nullptr;
  }
  bool boolean(const char *field, bool &out) {
    if (const json::Value *v = get(field)) {
      if (!v->isBool())
        return wrongType(field, "a boolean", *v);
      out = v->asBool();
    }
    return true;
  }
  bool integer(const char *field, std::optional<int64_t> &out) {
    if (const json::Value *v = get(field)) {
      // 2.0 is accepted as 2 (Python clients), 2.5 is not.
      if (!v->isNumber() || (!v->isInteger() && (std::floor(v->asDouble()) != v->asDouble() ||
                                                 std::fabs(v->asDouble()) > 9e15)))
        return wrongType(field, "an integer", *v);
      out = v->asInt();
    }
    return true;
  }
  bool number(const char *field, std::optional<double> &out) {
    if (const json::Value *v = get(field)) {
      if (!v->isNumber())
        return wrongType(field, "a number", *v);
      out = v->asDouble();
    }
    return true;
  }
};

bool parseContent(Parser &p, const json::Value &content, const std::string &where,
                  std::string &out) {
  if (content.isString()) {
    out = content.asString();
    return true;
  }
  if (content.isArray()) {
    // [{"type": "text", "text": "..."}, ...]: the text parts, joined.
    for (size_t i = 0; i < content.items().size(); ++i) {
      const json::Value &part = content.items()[i];
      std::string at = where + "[" + std::to_string(i) + "]";
      if (!part.isObject())
        return p.wrongType(at, "an object", part);
      const json::Value *type = part.find("type");
      if (!type || !type->isString())
        return p.fail("'" + at + ".type' must be a string", at + ".type");
      if (type->asString() != "text")
        return p.fail("content parts of type '" + type->asString() +
                          "' are not supported (only 'text')",
                      at + ".type");
      const json::Value *text = part.find("text");
      if (!text || !text->isString())
        return p.fail("'" + at + ".text' must be a string", at + ".text");
      out += text->asString();
    }
    return true;
  }
  if (content.isNull()) {
    out.clear();
    return true;
  }
  return p.wrongType(where, "a string or an array of content parts", content);
}

} // namespace

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
    err = badRequest("the request body must be a JSON object, got " + describe(*doc));
    return false;
  }
  Parser p{*doc, err};
  const bool chat = endpoint == Endpoint::kChat;

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
    if (const json::Value *u = v->find("include_usage"); u && !u->isNull()) {
      if (!u->isBool())
        return p.wrongType("stream_options.include_usage", "a boolean", *u);
      out.includeUsage = u->asBool();
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
    const json::Value *messages = p.get("messages");
    if (!messages)
      return p.fail("'messages' is required", "messages");
    if (!messages->isArray())
      return p.wrongType("messages", "an array", *messages);
    if (messages->items().empty())
      return p.fail("'messages' is empty", "messages");
    if (messages->items().size() > limits.maxMessages)
      return p.fail("'messages' has more than " + std::to_string(limits.maxMessages) +
                        " messages",
                    "messages");
    for (size_t i = 0; i < messages->items().size(); ++i) {
      const json::Value &m = messages->items()[i];
      std::string at = "messages[" + std::to_string(i) + "]";
      if (!m.isObject())
        return p.wrongType(at, "an object", m);
      const json::Value *role = m.find("role");
      if (!role || !role->isString())
        return p.fail("'" + at + ".role' must be a string", at + ".role");
      ChatMessage msg;
      msg.role = role->asString();
      if (msg.role == "developer")
        msg.role = "system"; // OpenAI's newer name for it
      if (msg.role != "system" && msg.role != "user" && msg.role != "assistant")
        return p.fail("'" + at + ".role' is '" + msg.role +
                          "'; supported roles are system, developer, user, assistant",
                      at + ".role");
      const json::Value *content = m.find("content");
      if (!content)
        return p.fail("'" + at + ".content' is required", at + ".content");
      if (!parseContent(p, *content, at + ".content", msg.content))
        return false;
      out.messages.push_back(std::move(msg));
    }
    if (!p.boolean("add_generation_prompt", out.addGenerationPrompt))
      return false;
    for (const char *f : {"tools", "functions"})
      if (const json::Value *v = p.get(f); v && !(v->isArray() && v->items().empty()))
        return p.fail("'" + std::string(f) + "' (tool calling) is not supported", f);
    if (const json::Value *v = p.get("response_format")) {
      const json::Value *type = v->isObject() ? v->find("type") : nullptr;
      if (!type || !type->isString() || type->asString() != "text")
        return p.fail("'response_format' other than {\"type\": \"text\"} is not supported",
                      "response_format");
    }
  }

  // Length and sampling.
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

  std::optional<int64_t> n;
  if (!p.integer("n", n))
    return false;
  if (n && *n != 1)
    return p.fail("'n' must be 1: this server returns one choice per request, got " +
                      std::to_string(*n),
                  "n");
  if (!chat) {
    std::optional<int64_t> bestOf;
    if (!p.integer("best_of", bestOf))
      return false;
    if (bestOf && *bestOf != 1)
      return p.fail("'best_of' must be 1, got " + std::to_string(*bestOf), "best_of");
    bool echo = false;
    if (!p.boolean("echo", echo))
      return false;
    if (echo)
      return p.fail("'echo' is not supported", "echo");
    if (p.get("suffix"))
      return p.fail("'suffix' is not supported", "suffix");
  }

  std::optional<double> temperature, topP, minP, repetition, presence, frequency;
  std::optional<int64_t> topK, seed;
  if (!p.number("temperature", temperature) || !p.number("top_p", topP) ||
      !p.number("min_p", minP) || !p.number("repetition_penalty", repetition) ||
      !p.number("presence_penalty", presence) || !p.number("frequency_penalty", frequency) ||
      !p.integer("top_k", topK) || !p.integer("seed", seed))
    return false;
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
  for (auto [field, value] : {std::pair{"presence_penalty", presence},
                              std::pair{"frequency_penalty", frequency}})
    if (value && *value != 0.0)
      return p.fail("'" + std::string(field) +
                        "' is not supported (use repetition_penalty); it must be 0",
                    field);
  if (const json::Value *v = p.get("logit_bias"); v && !(v->isObject() && v->size() == 0))
    return p.fail("'logit_bias' is not supported", "logit_bias");
  if (Status s = out.sampling.validate(); !s.isOk()) {
    std::string param = s.message().substr(0, s.message().find(' '));
    return p.fail(s.message(), param);
  }

  if (const json::Value *v = p.get("stop")) {
    if (v->isString()) {
      out.stop.push_back(v->asString());
    } else if (v->isArray()) {
      for (size_t i = 0; i < v->items().size(); ++i) {
        const json::Value &s = v->items()[i];
        if (!s.isString())
          return p.wrongType("stop[" + std::to_string(i) + "]", "a string", s);
        out.stop.push_back(s.asString());
      }
    } else {
      return p.wrongType("stop", "a string or an array of strings", *v);
    }
    if (out.stop.size() > limits.maxStop)
      return p.fail("'stop' has " + std::to_string(out.stop.size()) +
                        " strings; at most " + std::to_string(limits.maxStop),
                    "stop");
    for (const std::string &s : out.stop)
      if (s.empty())
        return p.fail("'stop' strings must not be empty", "stop");
  }
  if (!p.boolean("ignore_eos", out.ignoreEos))
    return false;

  // Logprobs.
  if (!chat) {
    std::optional<int64_t> lp;
    if (const json::Value *v = p.get("logprobs"); v && v->isBool())
      return p.wrongType("logprobs", "an integer (the number of top alternatives)", *v);
    if (!p.integer("logprobs", lp))
      return false;
    if (lp) {
      if (*lp < 0 || *lp > limits.maxLogprobs)
        return p.fail("'logprobs' must be in [0, " + std::to_string(limits.maxLogprobs) +
                          "], got " + std::to_string(*lp),
                      "logprobs");
      out.logprobs = *lp;
    }
  } else {
    bool want = false;
    if (!p.boolean("logprobs", want))
      return false;
    std::optional<int64_t> top;
    if (!p.integer("top_logprobs", top))
      return false;
    if (top && (*top < 0 || *top > limits.maxLogprobs))
      return p.fail("'top_logprobs' must be in [0, " + std::to_string(limits.maxLogprobs) +
                        "], got " + std::to_string(*top),
                    "top_logprobs");
    if (top && *top > 0 && !want)
      return p.fail("'top_logprobs' needs 'logprobs': true", "top_logprobs");
    if (want)
      out.logprobs = top.value_or(0);
  }
  return true;
}

namespace {

json::Value header(const ResponseHeader &h, const char *object) {
  json::Value o = json::Value::object();
  o.set("id", h.id);
  o.set("object", object);
  o.set("created", h.created);
  o.set("model", h.model);
  return o;
}

json::Value bytesOf(const std::string &s) {
  json::Value a = json::Value::array();
  for (unsigned char c : s)
    a.push(int64_t(c));
  return a;
}

json::Value logprobsJson(Endpoint ep, const std::vector<TokenLogprob> &lps, size_t textOffset) {
  if (ep == Endpoint::kChat) {
    json::Value content = json::Value::array();
    for (const TokenLogprob &t : lps) {
      json::Value e = json::Value::object();
      e.set("token", t.token);
      e.set("logprob", double(t.logprob));
      e.set("bytes", bytesOf(t.token));
      json::Value top = json::Value::array();
      for (const auto &[tok, lp] : t.top) {
        json::Value a = json::Value::object();
        a.set("token", tok);
        a.set("logprob", double(lp));
        a.set("bytes", bytesOf(tok));
        top.push(std::move(a));
      }
      e.set("top_logprobs", std::move(top));
      content.push(std::move(e));
    }
    json::Value o = json::Value::object();
    o.set("content", std::move(content));
    return o;
  }
  json::Value tokens = json::Value::array(), tokenLogprobs = json::Value::array(),
              top = json::Value::array(), offsets = json::Value::array();
  size_t offset = textOffset;
  for (const TokenLogprob &t : lps) {
    tokens.push(t.token);
    tokenLogprobs.push(double(t.logprob));
    json::Value alt = json::Value::object();
    for (const auto &[tok, lp] : t.top)
      alt.set(tok, double(lp));
    top.push(std::move(alt));
    offsets.push(int64_t(offset));
    offset += t.token.size();
  }
  json::Value o = json::Value::object();
  o.set("tokens", std::move(tokens));
  o.set("token_logprobs", std::move(tokenLogprobs));
  o.set("top_logprobs", std::move(top));
  o.set("text_offset", std::move(offsets));
  return o;
}

json::Value usageJson(const Usage &u) {
  json::Value o = json::Value::object();
  o.set("prompt_tokens", u.promptTokens);
  o.set("completion_tokens", u.completionTokens);
  o.set("total_tokens", u.promptTokens + u.completionTokens);
  if (u.cachedTokens >= 0) {
    json::Value d = json::Value::object();
    d.set("cached_tokens", u.cachedTokens);
    o.set("prompt_tokens_details", std::move(d));
  }
  return o;
}

} // namespace

std::string completeResponse(const ResponseHeader &h, const std::string &text,
                             const std::string &finishReason, const Usage &usage,
                             const std::vector<TokenLogprob> *logprobs) {
  const bool chat = h.endpoint == Endpoint::kChat;
  json::Value o = header(h, chat ? "chat.completion" : "text_completion");
  json::Value choice = json::Value::object();
  choice.set("index", 0);
  if (chat) {
    json::Value msg = json::Value::object();
    msg.set("role", "assistant");
    msg.set("content", text);
    choice.set("message", std::move(msg));
  } else {
    choice.set("text", text);
  }
  choice.set("logprobs", logprobs ? logprobsJson(h.endpoint, *logprobs, 0) : json::Value());
  choice.set("finish_reason", finishReason.empty() ? json::Value() : json::Value(finishReason));
  json::Value choices = json::Value::array();
  choices.push(std::move(choice));
  o.set("choices", std::move(choices));
  o.set("usage", usageJson(usage));
  return json::write(o);
}

std::string streamChunk(const ResponseHeader &h, const std::string &text,
                        const std::string &finishReason,
                        const std::vector<TokenLogprob> *logprobs, size_t textOffset,
                        bool roleChunk) {
  const bool chat = h.endpoint == Endpoint::kChat;
  json::Value o = header(h, chat ? "chat.completion.chunk" : "text_completion");
  json::Value choice = json::Value::object();
  choice.set("index", 0);
  if (chat) {
    json::Value delta = json::Value::object();
    if (roleChunk) {
      delta.set("role", "assistant");
      delta.set("content", "");
    } else if (!text.empty() || finishReason.empty()) {
      delta.set("content", text);
    }
    choice.set("delta", std::move(delta));
  } else {
    choice.set("text", text);
  }
  choice.set("logprobs",
             logprobs ? logprobsJson(h.endpoint, *logprobs, textOffset) : json::Value());
  choice.set("finish_reason", finishReason.empty() ? json::Value() : json::Value(finishReason));
  json::Value choices = json::Value::array();
  choices.push(std::move(choice));
  o.set("choices", std::move(choices));
  return json::write(o);
}

std::string usageChunk(const ResponseHeader &h, const Usage &usage) {
  const bool chat = h.endpoint == Endpoint::kChat;
  json::Value o = header(h, chat ? "chat.completion.chunk" : "text_completion");
  o.set("choices", json::Value::array());
  o.set("usage", usageJson(usage));
  return json::write(o);
}

} // namespace accel::rt::server
