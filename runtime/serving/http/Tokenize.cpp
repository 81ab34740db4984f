//===- Tokenize.cpp - vLLM's /tokenize and /detokenize bodies -------------===//
#include "runtime/serving/http/Tokenize.h"

#include "core/Json.h"
#include "runtime/Version.h"

namespace accel::rt::server {

namespace json = accel::rt::json;

namespace {

bool parseObject(std::string_view body, json::Value &root, ApiError &err) {
  StatusOr<json::Value> v = json::parse(body);
  if (!v) {
    err = badRequest(v.status().message());
    return false;
  }
  if (!v->isObject()) {
    err = badRequest("the body must be a JSON object");
    return false;
  }
  root = std::move(*v);
  return true;
}

} // namespace

bool parseTokenizeRequest(std::string_view body, const RequestLimits &limits,
                          TokenizeRequest &out, ApiError &err) {
  json::Value root;
  if (!parseObject(body, root, err))
    return false;
  const json::Value *prompt = root.find("prompt");
  const json::Value *messages = root.find("messages");
  const bool hasPrompt = prompt && !prompt->isNull(), hasMessages = messages && !messages->isNull();
  if (hasPrompt == hasMessages) {
    err = badRequest(hasPrompt ? "give either 'prompt' or 'messages' to /tokenize, not both"
                               : "/tokenize needs 'prompt' (a string) or 'messages'",
                     hasPrompt ? "messages" : "prompt");
    return false;
  }
  static const char *const kPromptFields[] = {"model", "prompt", "add_special_tokens",
                                              "return_token_strs"};
  static const char *const kChatFields[] = {
      "model", "messages", "add_special_tokens", "add_generation_prompt",
      "continue_final_message", "chat_template_kwargs", "documents", "tools",
      "return_token_strs"};
  // What parseCompletionRequest validates: the body without return_token_strs.
  json::Value forward = json::Value::object();
  for (const json::Member &m : root.members()) {
    bool known = false;
    if (hasPrompt) {
      for (const char *f : kPromptFields)
        known = known || m.first == f;
    } else {
      for (const char *f : kChatFields)
        known = known || m.first == f;
    }
    if (!known) {
      err = badRequest("unknown parameter '" + m.first + "' for /tokenize with " +
                           (hasPrompt ? "a prompt" : "messages"),
                       m.first);
      return false;
    }
    if (m.first == "return_token_strs") {
      if (!m.second.isNull() && !m.second.isBool()) {
        err = badRequest("'return_token_strs' must be a boolean", "return_token_strs");
        return false;
      }
      out.returnTokenStrs = m.second.isBool() && m.second.asBool();
      continue;
    }
    forward.set(m.first, m.second);
  }
  if (hasPrompt && !prompt->isString()) {
    err = badRequest("'prompt' must be a string for /tokenize", "prompt");
    return false;
  }
  return parseCompletionRequest(json::write(forward),
                                hasPrompt ? Endpoint::kCompletions : Endpoint::kChat, limits,
                                out.req, err);
}

bool parseDetokenizeRequest(std::string_view body, int64_t vocabSize, std::string &model,
                            std::vector<int32_t> &ids, ApiError &err) {
  json::Value root;
  if (!parseObject(body, root, err))
    return false;
  const json::Value *tokens = nullptr;
  for (const json::Member &m : root.members()) {
    if (m.first == "tokens") {
      tokens = &m.second;
    } else if (m.first == "model") {
      if (!m.second.isNull() && !m.second.isString()) {
        err = badRequest("'model' must be a string", "model");
        return false;
      }
      if (m.second.isString())
        model = m.second.asString();
    } else {
      err = badRequest("unknown parameter '" + m.first + "' for /detokenize", m.first);
      return false;
    }
  }
  if (!tokens || !tokens->isArray()) {
    err = badRequest("/detokenize needs 'tokens', an array of token ids", "tokens");
    return false;
  }
  for (size_t i = 0; i < tokens->items().size(); ++i) {
    const json::Value &t = tokens->items()[i];
    if (!t.isInteger() || t.asInt() < 0 || (vocabSize > 0 && t.asInt() >= vocabSize) ||
        t.asInt() > INT32_MAX) {
      err = badRequest("tokens[" + std::to_string(i) + "] is " + json::write(t) +
                           ", not a token id of this model (vocabulary of " +
                           std::to_string(vocabSize) + ")",
                       "tokens");
      return false;
    }
    ids.push_back(int32_t(t.asInt()));
  }
  return true;
}

std::string tokenizeResponse(const std::vector<int64_t> &ids, int64_t maxModelLen,
                             const std::vector<std::string> *tokenStrs) {
  json::Value r = json::Value::object();
  r.set("count", int64_t(ids.size()));
  r.set("max_model_len", maxModelLen);
  json::Value t = json::Value::array();
  for (int64_t id : ids)
    t.push(id);
  r.set("tokens", std::move(t));
  if (tokenStrs) {
    json::Value s = json::Value::array();
    for (const std::string &x : *tokenStrs)
      s.push(x);
    r.set("token_strs", std::move(s));
  } else {
    r.set("token_strs", json::Value());
  }
  return json::write(r);
}

std::string detokenizeResponse(const std::string &text) {
  json::Value r = json::Value::object();
  r.set("prompt", text);
  return json::write(r);
}

std::string versionResponse() {
  json::Value r = json::Value::object();
  r.set("version", kAccelVersion);
  return json::write(r);
}

} // namespace accel::rt::server
