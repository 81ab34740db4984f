//===- ToolRequest.cpp - the tool members of a chat request ---------------===//
#include "runtime/serving/http/ToolRequest.h"

#include <algorithm>

namespace accel::rt::server {

namespace json = accel::rt::json;

namespace {

bool fail(ApiError &err, std::string message, std::string param) {
  err = badRequest(std::move(message), std::move(param));
  return false;
}

bool wrongType(ApiError &err, const std::string &field, const char *want, const json::Value &got) {
  return fail(err, "'" + field + "' must be " + want + ", got " + describeJson(got), field);
}

/// The members of object `o` (at `at`) must be among `known` (null ones
/// are not given).
bool onlyMembers(ApiError &err, const json::Value &o, const std::string &at,
                 std::initializer_list<const char *> known, const char *what) {
  for (const json::Member &m : o.members()) {
    if (m.second.isNull())
      continue;
    if (std::none_of(known.begin(), known.end(), [&](const char *k) { return m.first == k; })) {
      std::string list;
      for (const char *k : known)
        list += std::string(list.empty() ? "" : ", ") + k;
      return fail(err,
                  "'" + at + "." + m.first + "' is not a member of " + what + " (" + list + ")",
                  at + "." + m.first);
    }
  }
  return true;
}

/// OpenAI's rule for function names: 1 to 64 of [a-zA-Z0-9_-].
bool validName(const std::string &n) {
  if (n.empty() || n.size() > 64)
    return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-';
  });
}

bool parseTools(const json::Value &tools, std::vector<std::string> &names, ApiError &err) {
  if (!tools.isArray())
    return wrongType(err, "tools", "an array of tools", tools);
  if (tools.size() > kMaxTools)
    return fail(err, "'tools' has " + std::to_string(tools.size()) + " tools; at most " +
                         std::to_string(kMaxTools),
                "tools");
  for (size_t i = 0; i < tools.size(); ++i) {
    const json::Value &t = tools.items()[i];
    const std::string at = "tools[" + std::to_string(i) + "]";
    if (!t.isObject())
      return wrongType(err, at, "an object ({\"type\": \"function\", \"function\": {...}})", t);
    if (!onlyMembers(err, t, at, {"type", "function"}, "a tool"))
      return false;
    const json::Value *type = t.find("type");
    if (!type || !type->isString() || type->asString() != "function")
      return fail(err, "'" + at + ".type' must be \"function\"", at + ".type");
    const json::Value *fn = t.find("function");
    if (!fn || !fn->isObject())
      return fail(err, "'" + at + ".function' must be an object with the function's name",
                  at + ".function");
    const std::string f = at + ".function";
    if (!onlyMembers(err, *fn, f, {"name", "description", "parameters", "strict"}, "a function"))
      return false;
    const json::Value *name = fn->find("name");
    if (!name || !name->isString())
      return fail(err, "'" + f + ".name' must be a string", f + ".name");
    if (!validName(name->asString()))
      return fail(err, "'" + f + ".name' must be 1 to 64 letters, digits, '_' or '-', got " +
                           json::quote(name->asString()),
                  f + ".name");
    auto seen = std::find(names.begin(), names.end(), name->asString());
    if (seen != names.end())
      return fail(err, "'" + f + ".name' " + json::quote(name->asString()) + " is tools[" +
                           std::to_string(seen - names.begin()) + "]'s name already",
                  f + ".name");
    names.push_back(name->asString());
    for (auto [member, type, want] :
         {std::tuple{"description", json::Type::kString, "a string"},
          std::tuple{"parameters", json::Type::kObject, "an object (a JSON schema)"},
          std::tuple{"strict", json::Type::kBool, "a boolean"}})
      if (const json::Value *v = fn->find(member); v && !v->isNull() && v->type() != type)
        return wrongType(err, f + "." + member, want, *v);
  }
  return true;
}

bool parseToolChoice(const json::Value &v, const std::vector<std::string> &names,
                     ToolChoice &out, ApiError &err) {
  const char *forms = "\"none\", \"auto\", \"required\" or {\"type\": \"function\", "
                      "\"function\": {\"name\": ...}}";
  if (v.isString()) {
    const std::string &s = v.asString();
    if (s == "none")
      out.kind = ToolChoice::kNone;
    else if (s == "auto")
      out.kind = ToolChoice::kAuto;
    else if (s == "required")
      out.kind = ToolChoice::kRequired;
    else
      return fail(err, std::string("'tool_choice' must be ") + forms + ", got " + json::quote(s),
                  "tool_choice");
  } else if (v.isObject()) {
    if (!onlyMembers(err, v, "tool_choice", {"type", "function"}, "a named tool choice"))
      return false;
    const json::Value *type = v.find("type");
    if (!type || !type->isString() || type->asString() != "function")
      return fail(err, "'tool_choice.type' must be \"function\"", "tool_choice.type");
    const json::Value *fn = v.find("function");
    const json::Value *name = fn && fn->isObject() ? fn->find("name") : nullptr;
    if (!name || !name->isString())
      return fail(err, "'tool_choice.function' must be an object with the function's name",
                  "tool_choice.function");
    if (!onlyMembers(err, *fn, "tool_choice.function", {"name"}, "a named tool choice's function"))
      return false;
    out.kind = ToolChoice::kNamed;
    out.name = name->asString();
    if (std::find(names.begin(), names.end(), out.name) == names.end()) {
      std::string list;
      for (const std::string &n : names)
        list += (list.empty() ? "" : ", ") + n;
      return fail(err, "'tool_choice.function.name' is " + json::quote(out.name) +
                           ", which is not one of the request's tools" +
                           (list.empty() ? std::string(" (it has none)") : " (" + list + ")"),
                  "tool_choice.function.name");
    }
  } else {
    return wrongType(err, "tool_choice", forms, v);
  }
  if (names.empty() && out.kind == ToolChoice::kRequired)
    return fail(err, "'tool_choice' \"required\" needs 'tools'", "tool_choice");
  return true;
}

/// An assistant message's tool call; arguments become the object they hold.
bool parseCall(const json::Value &c, const std::string &at, json::Value &out, ApiError &err) {
  if (!c.isObject())
    return wrongType(err, at, "an object ({\"id\", \"type\": \"function\", \"function\"})", c);
  if (!onlyMembers(err, c, at, {"id", "type", "function"}, "a tool call"))
    return false;
  if (const json::Value *id = c.find("id"); id && !id->isNull() && !id->isString())
    return wrongType(err, at + ".id", "a string", *id);
  if (const json::Value *type = c.find("type");
      type && !type->isNull() && !(type->isString() && type->asString() == "function"))
    return fail(err, "'" + at + ".type' must be \"function\"", at + ".type");
  const json::Value *fn = c.find("function");
  if (!fn || !fn->isObject())
    return fail(err, "'" + at + ".function' must be an object with the function's name and "
                     "arguments",
                at + ".function");
  const std::string f = at + ".function";
  if (!onlyMembers(err, *fn, f, {"name", "arguments"}, "a tool call's function"))
    return false;
  const json::Value *name = fn->find("name");
  if (!name || !name->isString() || name->asString().empty())
    return fail(err, "'" + f + ".name' must be a function's name", f + ".name");
  json::Value args = json::Value::object();
  if (const json::Value *a = fn->find("arguments"); a && !a->isNull()) {
    if (a->isObject()) {
      args = *a;
    } else if (a->isString()) {
      if (!a->asString().empty()) {
        StatusOr<json::Value> parsed = json::parse(a->asString());
        if (!parsed)
          return fail(err, "'" + f + ".arguments' must hold a JSON object: " +
                               parsed.status().message(),
                      f + ".arguments");
        if (!parsed->isObject())
          return fail(err, "'" + f + ".arguments' must hold a JSON object, got " +
                               describeJson(*parsed),
                      f + ".arguments");
        args = std::move(*parsed);
      }
    } else {
      return wrongType(err, f + ".arguments", "a string holding a JSON object", *a);
    }
  }
  // The call as given, its arguments an object.
  out = json::Value::object();
  for (const json::Member &m : c.members()) {
    if (m.second.isNull())
      continue;
    if (m.first != "function") {
      out.set(m.first, m.second);
      continue;
    }
    json::Value function = json::Value::object();
    function.set("name", name->asString());
    function.set("arguments", args);
    out.set("function", std::move(function));
  }
  return true;
}

} // namespace

bool parseToolFields(const json::Value &root, CompletionRequest &out, ApiError &err) {
  std::vector<std::string> names;
  if (const json::Value *tools = root.find("tools"); tools && !tools->isNull()) {
    if (!parseTools(*tools, names, err))
      return false;
    out.tools = *tools;
  }
  out.toolChoice.kind = names.empty() ? ToolChoice::kNone : ToolChoice::kAuto;
  if (const json::Value *choice = root.find("tool_choice"); choice && !choice->isNull()) {
    if (!parseToolChoice(*choice, names, out.toolChoice, err))
      return false;
    if (names.empty()) // "auto" without tools: nothing to call
      out.toolChoice.kind = ToolChoice::kNone;
  }
  if (const json::Value *v = root.find("parallel_tool_calls"); v && !v->isNull()) {
    if (!v->isBool())
      return wrongType(err, "parallel_tool_calls", "a boolean", *v);
    out.parallelToolCalls = v->asBool();
  }
  return true;
}

bool parseMessageToolFields(const json::Value &m, const std::string &at, ChatMessage &msg,
                            ApiError &err) {
  if (const json::Value *calls = m.find("tool_calls"); calls && !calls->isNull()) {
    const std::string f = at + ".tool_calls";
    if (!calls->isArray())
      return wrongType(err, f, "an array of tool calls", *calls);
    if (calls->size() > 0 && msg.role != "assistant")
      return fail(err, "'" + f + "' is taken on an assistant message only, not on a " + msg.role +
                           " message",
                  f);
    if (calls->size() > 0) {
      msg.toolCalls = json::Value::array();
      for (size_t i = 0; i < calls->size(); ++i) {
        json::Value call;
        if (!parseCall(calls->items()[i], f + "[" + std::to_string(i) + "]", call, err))
          return false;
        msg.toolCalls.push(std::move(call));
      }
    }
  }
  const json::Value *id = m.find("tool_call_id");
  const std::string f = at + ".tool_call_id";
  if (msg.role == "tool") {
    if (!id || !id->isString())
      return fail(err, "'" + f + "' must be the id of the tool call this message answers (a "
                       "string)",
                  f);
    msg.toolCallId = id->asString();
  } else if (id && !id->isNull()) {
    return fail(err, "'" + f + "' is taken on a tool message only, not on a " + msg.role +
                         " message",
                f);
  }
  return true;
}

std::vector<std::string> toolFunctionNames(const CompletionRequest &req) {
  std::vector<std::string> names;
  for (const json::Value &t : req.tools.items())
    if (const json::Value *fn = t.find("function"))
      if (const json::Value *n = fn->find("name"); n && n->isString())
        names.push_back(n->asString());
  return names;
}

std::optional<ApiError> toolsNeedJinja(const CompletionRequest &req, const ChatTemplate &tpl) {
  if (tpl.format() == ChatTemplate::Format::kJinja)
    return std::nullopt;
  std::string what, param;
  if (req.tools.size() > 0) {
    what = "'tools'", param = "tools";
  } else {
    for (size_t i = 0; i < req.messages.size() && param.empty(); ++i) {
      const std::string at = "messages[" + std::to_string(i) + "]";
      if (!req.messages[i].toolCalls.isNull())
        what = "tool calls ('" + at + ".tool_calls')", param = at + ".tool_calls";
      else if (req.messages[i].role == "tool")
        what = "tool messages ('" + at + "')", param = at + ".role";
    }
  }
  if (param.empty())
    return std::nullopt;
  return badRequest(what + " need the model's Jinja chat template: the built-in format '" +
                        tpl.name() + "' renders a message's role and content only "
                        "(--chat-template)",
                    param);
}

std::optional<ApiError> toolChoiceError(const CompletionRequest &req, ToolParser parser) {
  const ToolChoice &c = req.toolChoice;
  if (c.kind == ToolChoice::kNone)
    return std::nullopt;
  const char *kind = c.kind == ToolChoice::kAuto ? "\"auto\" (the default when 'tools' are given)"
                     : c.kind == ToolChoice::kRequired ? "\"required\""
                                                       : "a named function";
  if (parser == ToolParser::kNone)
    return badRequest(std::string("'tool_choice' ") + kind +
                          " needs a tool-call parser, and this server has none for its chat "
                          "template: start accel-run with --tool-call-parser hermes, llama3_json "
                          "or mistral, or send 'tool_choice': \"none\"",
                      "tool_choice");
  if (c.kind != ToolChoice::kAuto && (!req.addGenerationPrompt || req.continueFinalMessage))
    return badRequest(std::string("'tool_choice' ") + kind +
                          " begins the call in a new assistant turn, so it needs "
                          "'add_generation_prompt' true and no 'continue_final_message'",
                      "tool_choice");
  return std::nullopt;
}

} // namespace accel::rt::server
