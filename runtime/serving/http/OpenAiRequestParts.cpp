//===- OpenAiRequestParts.cpp - messages and output constraints -----------===//
//
// The request fields that are objects of their own: chat messages (content
// parts, tool calls, tool results) and structured-output constraints
// (response_format, guided_*, structured_outputs). parseCompletionRequest
// (OpenAiProtocol.cpp) calls them.
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/http/RequestParser.h"

#include "runtime/serving/http/ToolRequest.h"

#include <algorithm>

namespace accel::rt::server::detail {

namespace json = accel::rt::json;

namespace {

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
      for (const json::Member &m : part.members())
        if (m.first != "type" && m.first != "text" && !m.second.isNull())
          return p.fail("'" + at + "." + m.first + "' is not supported (a text part takes type "
                        "and text)",
                        at + "." + m.first);
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

bool parseMessages(Parser &p, const RequestLimits &limits, CompletionRequest &out) {
  const json::Value *messages = p.get("messages");
  if (!messages)
    return p.fail("'messages' is required", "messages");
  if (!messages->isArray())
    return p.wrongType("messages", "an array", *messages);
  if (messages->items().empty())
    return p.fail("'messages' is empty", "messages");
  if (messages->items().size() > limits.maxMessages)
    return p.fail("'messages' has more than " + std::to_string(limits.maxMessages) + " messages",
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
    if (msg.role != "system" && msg.role != "user" && msg.role != "assistant" &&
        msg.role != "tool")
      return p.fail("'" + at + ".role' is '" + msg.role +
                        "'; supported roles are system, developer, user, assistant, tool",
                    at + ".role");
    if (!parseMessageToolFields(m, at, msg, p.err)) {
      p.failed = true;
      return false;
    }
    const json::Value *content = m.find("content");
    if (!content && msg.toolCalls.isNull()) // an assistant's tool calls may come alone
      return p.fail("'" + at + ".content' is required", at + ".content");
    if (content && !parseContent(p, *content, at + ".content", msg.content))
      return false;
    // Anything else a message may carry (name, function_call, ...) changes
    // the prompt in OpenAI's models; the templates here render neither, so
    // it is refused unless null or empty (what clients echo back).
    for (const json::Member &f : m.members()) {
      if (f.first == "role" || f.first == "content" || f.first == "tool_calls" ||
          f.first == "tool_call_id" || f.second.isNull() ||
          ((f.second.isArray() || f.second.isObject()) && f.second.size() == 0))
        continue;
      return p.fail("'" + at + "." + f.first + "' is not supported" +
                        (f.first == "function_call"
                             ? ": it is the deprecated form of tool_calls"
                             : " (the chat templates here render a message's role, content "
                               "and tool calls only)"),
                    at + "." + f.first);
    }
    out.messages.push_back(std::move(msg));
  }
  return true;
}

/// Structured output: OpenAI's response_format, vLLM's guided_* and
/// structured_outputs. At most one constraint; its text is compiled (and
/// any error in it reported) by the server (OpenAiApi::prepare).
bool parseConstraint(Parser &p, CompletionRequest &out) {
  std::vector<std::string> given;
  auto set = [&](const std::string &param, std::string kind, std::string text) {
    given.push_back(param);
    out.constraint = OutputConstraint{std::move(kind), std::move(text), "", param};
  };
  auto schemaText = [&](const std::string &param, const json::Value &v, std::string &text) {
    if (v.isObject() || v.isBool()) {
      text = json::write(v);
      return true;
    }
    if (v.isString()) { // vLLM takes a schema as JSON text too
      StatusOr<json::Value> parsed = json::parse(v.asString());
      if (!parsed || !(parsed->isObject() || parsed->isBool()))
        return p.fail("'" + param + "' must be a JSON schema (an object, or its JSON text)",
                      param);
      text = json::write(*parsed);
      return true;
    }
    return p.wrongType(param, "a JSON schema (an object)", v);
  };
  auto choices = [&](const std::string &param, const json::Value &v, std::string &text) {
    if (!v.isArray() || v.items().empty())
      return p.wrongType(param, "a non-empty array of strings", v);
    for (size_t i = 0; i < v.items().size(); ++i)
      if (!v.items()[i].isString())
        return p.wrongType(param + "[" + std::to_string(i) + "]", "a string", v.items()[i]);
    text = json::write(v);
    return true;
  };
  if (const json::Value *v = p.get("response_format")) {
    const json::Value *type = v->isObject() ? v->find("type") : nullptr;
    if (!type || !type->isString())
      return p.fail("'response_format' must be an object with a string 'type'",
                    "response_format");
    const std::string &t = type->asString();
    if (t == "json_object") {
      set("response_format", "json_object", "");
    } else if (t == "json_schema") {
      const json::Value *js = v->find("json_schema");
      if (!js || !js->isObject())
        return p.fail("'response_format' of type 'json_schema' needs a 'json_schema' object "
                      "with a 'schema'",
                      "response_format");
      const json::Value *schema = js->find("schema");
      if (!schema || schema->isNull())
        return p.fail("'response_format.json_schema' has no 'schema'", "response_format");
      std::string text;
      if (!schemaText("response_format.json_schema.schema", *schema, text))
        return false;
      set("response_format", "json_schema", text);
    } else if (t != "text") {
      return p.fail("'response_format' of type '" + t +
                        "' is not supported (text, json_object or json_schema)",
                    "response_format");
    }
  }
  if (const json::Value *v = p.get("guided_json")) {
    std::string text;
    if (!schemaText("guided_json", *v, text))
      return false;
    set("guided_json", "json_schema", text);
  }
  if (const json::Value *v = p.get("guided_regex")) {
    if (!v->isString())
      return p.wrongType("guided_regex", "a string", *v);
    set("guided_regex", "regex", v->asString());
  }
  if (const json::Value *v = p.get("guided_choice")) {
    std::string text;
    if (!choices("guided_choice", *v, text))
      return false;
    set("guided_choice", "choice", text);
  }
  std::string whitespace;
  if (const json::Value *v = p.get("guided_whitespace_pattern")) {
    if (!v->isString())
      return p.wrongType("guided_whitespace_pattern", "a string", *v);
    whitespace = v->asString();
  }
  if (const json::Value *v = p.get("guided_decoding_backend"))
    if (!v->isString())
      return p.wrongType("guided_decoding_backend", "a string", *v);
  if (const json::Value *v = p.get("structured_outputs")) {
    // vLLM's newer form: {"json" | "regex" | "choice" | "json_object" |
    // "grammar", "whitespace_pattern"}.
    if (!v->isObject())
      return p.wrongType("structured_outputs", "an object", *v);
    for (const json::Member &m : v->members()) {
      const std::string param = "structured_outputs." + m.first;
      if (m.second.isNull())
        continue;
      if (m.first == "json") {
        std::string text;
        if (!schemaText(param, m.second, text))
          return false;
        set(param, "json_schema", text);
      } else if (m.first == "regex") {
        if (!m.second.isString())
          return p.wrongType(param, "a string", m.second);
        set(param, "regex", m.second.asString());
      } else if (m.first == "choice") {
        std::string text;
        if (!choices(param, m.second, text))
          return false;
        set(param, "choice", text);
      } else if (m.first == "json_object") {
        if (!m.second.isBool())
          return p.wrongType(param, "a boolean", m.second);
        if (m.second.asBool())
          set(param, "json_object", "");
      } else if (m.first == "whitespace_pattern") {
        if (!m.second.isString())
          return p.wrongType(param, "a string", m.second);
        whitespace = m.second.asString();
      } else if (m.first == "grammar" || m.first == "structural_tag") {
        return p.fail("'" + param + "' is not supported: only json, regex, choice and "
                      "json_object constraints are",
                      "structured_outputs");
      } else if (m.first != "disable_fallback" && m.first != "disable_any_whitespace" &&
                 m.first != "disable_additional_properties") {
        return p.fail("'" + param + "' is not a structured_outputs field", "structured_outputs");
      }
    }
  }
  if (given.size() > 1)
    return p.fail("only one output constraint may be given, got '" + given[0] + "' and '" +
                      given[1] + "'",
                  given[1]);
  if (!whitespace.empty()) {
    if (!out.constraint ||
        (out.constraint->kind != "json_schema" && out.constraint->kind != "json_object"))
      return p.fail("'guided_whitespace_pattern' applies to JSON constraints only",
                    "guided_whitespace_pattern");
    out.constraint->whitespace = whitespace;
  }
  return true;
}

} // namespace accel::rt::server::detail
