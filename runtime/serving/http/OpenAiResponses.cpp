//===- OpenAiResponses.cpp - OpenAI response and error JSON ---------------===//
//
// The bodies OpenAiProtocol.h declares for answers: whole responses, SSE
// stream chunks, the usage chunk, and the error object. Request parsing and
// validation are in OpenAiProtocol.cpp.
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/http/OpenAiProtocol.h"

#include <string>

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

/// OpenAI's tool_calls: [{id, type, function: {name, arguments}}] (with
/// each call's index in stream chunks).
json::Value toolCallsJson(const std::vector<ToolCall> &calls, bool indexed) {
  json::Value list = json::Value::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    json::Value fn = json::Value::object();
    fn.set("name", calls[i].name);
    fn.set("arguments", calls[i].arguments);
    json::Value c = json::Value::object();
    if (indexed)
      c.set("index", int64_t(i));
    c.set("id", calls[i].id);
    c.set("type", "function");
    c.set("function", std::move(fn));
    list.push(std::move(c));
  }
  return list;
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

std::string completeResponse(const ResponseHeader &h, const std::vector<ChoiceResult> &choices,
                             const Usage &usage) {
  const bool chat = h.endpoint == Endpoint::kChat;
  json::Value o = header(h, chat ? "chat.completion" : "text_completion");
  json::Value list = json::Value::array();
  for (size_t i = 0; i < choices.size(); ++i) {
    const ChoiceResult &c = choices[i];
    json::Value choice = json::Value::object();
    choice.set("index", int64_t(i));
    if (chat) {
      json::Value msg = json::Value::object();
      msg.set("role", "assistant");
      msg.set("content", c.nullContent ? json::Value() : json::Value(c.text));
      if (!c.toolCalls.empty())
        msg.set("tool_calls", toolCallsJson(c.toolCalls, /*indexed=*/false));
      choice.set("message", std::move(msg));
    } else {
      choice.set("text", c.text);
    }
    choice.set("logprobs", c.logprobs ? logprobsJson(h.endpoint, *c.logprobs, 0) : json::Value());
    if (c.promptLogprobs && !chat)
      choice.set("prompt_logprobs", *c.promptLogprobs);
    choice.set("finish_reason",
               c.finishReason.empty() ? json::Value() : json::Value(c.finishReason));
    list.push(std::move(choice));
  }
  o.set("choices", std::move(list));
  o.set("usage", usageJson(usage));
  if (chat && !choices.empty() && choices[0].promptLogprobs)
    o.set("prompt_logprobs", *choices[0].promptLogprobs);
  return json::write(o);
}

std::string completeResponse(const ResponseHeader &h, const std::string &text,
                             const std::string &finishReason, const Usage &usage,
                             const std::vector<TokenLogprob> *logprobs) {
  return completeResponse(h, {ChoiceResult{text, finishReason, logprobs}}, usage);
}

std::string streamChunk(const ResponseHeader &h, const std::string &text,
                        const std::string &finishReason,
                        const std::vector<TokenLogprob> *logprobs, size_t textOffset,
                        bool roleChunk, int64_t index, const json::Value *promptLogprobs) {
  const bool chat = h.endpoint == Endpoint::kChat;
  json::Value o = header(h, chat ? "chat.completion.chunk" : "text_completion");
  json::Value choice = json::Value::object();
  choice.set("index", index);
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
  if (promptLogprobs && !chat)
    choice.set("prompt_logprobs", *promptLogprobs);
  json::Value choices = json::Value::array();
  choices.push(std::move(choice));
  o.set("choices", std::move(choices));
  if (promptLogprobs && chat)
    o.set("prompt_logprobs", *promptLogprobs);
  return json::write(o);
}

std::string toolCallsChunk(const ResponseHeader &h, const std::vector<ToolCall> &calls,
                           const std::vector<TokenLogprob> *logprobs, int64_t index) {
  json::Value o = header(h, "chat.completion.chunk");
  json::Value choice = json::Value::object();
  choice.set("index", index);
  json::Value delta = json::Value::object();
  delta.set("tool_calls", toolCallsJson(calls, /*indexed=*/true));
  choice.set("delta", std::move(delta));
  choice.set("logprobs", logprobs ? logprobsJson(h.endpoint, *logprobs, 0) : json::Value());
  choice.set("finish_reason", json::Value());
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
