//===- ToolParsers.cpp - tool calls out of a model's reply ----------------===//
#include "runtime/serving/http/ToolParsers.h"

#include "core/Json.h"
#include "runtime/serving/chat/JinjaJson.h"
#include "runtime/serving/tokenizer/Tokenizer.h"

#include <algorithm>
#include <random>

namespace accel::rt::server {

namespace json = accel::rt::json;

namespace {

constexpr std::string_view kHermesOpen = "<tool_call>", kHermesClose = "</tool_call>";
constexpr std::string_view kPythonTag = "<|python_tag|>";
constexpr std::string_view kMistralTag = "[TOOL_CALLS]";

bool isBlank(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

size_t skipBlank(std::string_view s, size_t i) {
  while (i < s.size() && isBlank(s[i]))
    ++i;
  return i;
}

std::string_view trimEnd(std::string_view s) {
  while (!s.empty() && isBlank(s.back()))
    s.remove_suffix(1);
  return s;
}

/// The end of the JSON object or array that starts at s[i] (one past its
/// closing bracket), or npos when it is not closed in `s`. Only brackets
/// and strings are followed; json::parse checks the rest.
size_t jsonEnd(std::string_view s, size_t i) {
  if (i >= s.size() || (s[i] != '{' && s[i] != '['))
    return std::string_view::npos;
  std::vector<char> open;
  bool inString = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '{' || c == '[') {
      open.push_back(c == '{' ? '}' : ']');
    } else if (c == '}' || c == ']') {
      if (open.empty() || open.back() != c)
        return std::string_view::npos;
      open.pop_back();
      if (open.empty())
        return i + 1;
    }
  }
  return std::string_view::npos;
}

/// One call object; nullopt when it is not a call of one of `functions`.
std::optional<ToolCall> callOf(ToolParser p, const json::Value &v,
                               const std::vector<std::string> &functions) {
  if (!v.isObject())
    return std::nullopt;
  const json::Value *name = v.find("name");
  if (!name || !name->isString() ||
      std::find(functions.begin(), functions.end(), name->asString()) == functions.end())
    return std::nullopt;
  const json::Value *args = v.find("arguments");
  if (p == ToolParser::kLlama3Json) {
    const json::Value *params = v.find("parameters");
    if (args && params)
      return std::nullopt; // which one?
    if (params)
      args = params;
  }
  ToolCall call;
  call.name = name->asString();
  if (!args || args->isNull())
    call.arguments = "{}";
  else if (args->isObject())
    call.arguments = jinja::dumpJson(jinja::fromJson(*args), jinja::DumpOptions());
  else
    return std::nullopt;
  return call;
}

/// The JSON value in s[i, end), parsed (blanks around it allowed).
std::optional<json::Value> jsonIn(std::string_view s) {
  StatusOr<json::Value> v = json::parse(s);
  if (!v)
    return std::nullopt;
  return std::move(*v);
}

/// The calls from `marker` (at s[start]) to the end of s; false when that
/// part is not calls only.
bool hermesCalls(std::string_view s, size_t at, const std::vector<std::string> &functions,
                 std::vector<ToolCall> &calls) {
  while (true) {
    const size_t body = at + kHermesOpen.size();
    const size_t close = s.find(kHermesClose, body);
    std::optional<json::Value> v =
        jsonIn(s.substr(body, close == std::string_view::npos ? std::string_view::npos
                                                              : close - body));
    if (!v)
      return false;
    std::optional<ToolCall> call = callOf(ToolParser::kHermes, *v, functions);
    if (!call)
      return false;
    calls.push_back(std::move(*call));
    if (close == std::string_view::npos)
      return true; // cut before its </tool_call>
    at = skipBlank(s, close + kHermesClose.size());
    if (at == s.size())
      return true;
    if (s.compare(at, kHermesOpen.size(), kHermesOpen) != 0)
      return false; // text after the calls
  }
}

bool llamaCalls(std::string_view s, size_t at, const std::vector<std::string> &functions,
                std::vector<ToolCall> &calls) {
  while (true) {
    at = skipBlank(s, at);
    const size_t end = jsonEnd(s, at);
    if (end == std::string_view::npos)
      return false;
    std::optional<json::Value> v = jsonIn(s.substr(at, end - at));
    if (!v)
      return false;
    std::optional<ToolCall> call = callOf(ToolParser::kLlama3Json, *v, functions);
    if (!call)
      return false;
    calls.push_back(std::move(*call));
    at = skipBlank(s, end);
    if (at == s.size())
      return true;
    if (s[at] != ';')
      return false;
    ++at;
  }
}

bool mistralCalls(std::string_view s, size_t at, const std::vector<std::string> &functions,
                  std::vector<ToolCall> &calls) {
  while (true) {
    at = skipBlank(s, at + kMistralTag.size());
    const size_t end = jsonEnd(s, at);
    if (end == std::string_view::npos)
      return false;
    std::optional<json::Value> v = jsonIn(s.substr(at, end - at));
    if (!v)
      return false;
    if (v->isArray()) {
      if (v->items().empty())
        return false;
      for (const json::Value &e : v->items()) {
        std::optional<ToolCall> call = callOf(ToolParser::kMistral, e, functions);
        if (!call)
          return false;
        calls.push_back(std::move(*call));
      }
    } else {
      std::optional<ToolCall> call = callOf(ToolParser::kMistral, *v, functions);
      if (!call)
        return false;
      calls.push_back(std::move(*call));
    }
    at = skipBlank(s, end);
    if (at == s.size())
      return true;
    if (s.compare(at, kMistralTag.size(), kMistralTag) != 0)
      return false;
  }
}

/// Where the calls would start in `s` (npos: nowhere yet).
size_t markerAt(ToolParser p, std::string_view s) {
  switch (p) {
  case ToolParser::kHermes:
    return s.find(kHermesOpen);
  case ToolParser::kMistral:
    return s.find(kMistralTag);
  case ToolParser::kLlama3Json: {
    const size_t first = skipBlank(s, 0);
    if (first < s.size() && s[first] == '{')
      return first;
    return s.find(kPythonTag);
  }
  case ToolParser::kNone:
    break;
  }
  return std::string_view::npos;
}

std::string_view markerOf(ToolParser p) {
  switch (p) {
  case ToolParser::kHermes:
    return kHermesOpen;
  case ToolParser::kMistral:
    return kMistralTag;
  case ToolParser::kLlama3Json:
    return kPythonTag;
  case ToolParser::kNone:
    break;
  }
  return {};
}

} // namespace

const char *toolParserName(ToolParser p) {
  switch (p) {
  case ToolParser::kHermes:
    return "hermes";
  case ToolParser::kLlama3Json:
    return "llama3_json";
  case ToolParser::kMistral:
    return "mistral";
  case ToolParser::kNone:
    break;
  }
  return "none";
}

std::optional<ToolParser> toolParserFromName(std::string_view name) {
  for (ToolParser p :
       {ToolParser::kNone, ToolParser::kHermes, ToolParser::kLlama3Json, ToolParser::kMistral})
    if (name == toolParserName(p))
      return p;
  return std::nullopt;
}

ToolParser detectToolParser(std::string_view source, const tok::Tokenizer *tokenizer) {
  const std::pair<std::string_view, ToolParser> markers[] = {
      {kHermesOpen, ToolParser::kHermes},
      {kMistralTag, ToolParser::kMistral},
      {kPythonTag, ToolParser::kLlama3Json}};
  for (const auto &[marker, p] : markers)
    if (source.find(marker) != std::string_view::npos)
      return p;
  if (tokenizer && tokenizer->isLoaded())
    for (const auto &[marker, p] : markers)
      if (tokenizer->tokenToId(marker))
        return p;
  return ToolParser::kNone;
}

ToolCallReply parseToolCalls(ToolParser p, std::string_view text,
                             const std::vector<std::string> &functions) {
  ToolCallReply whole;
  whole.content = std::string(text);
  const size_t at = markerAt(p, text);
  if (at == std::string_view::npos)
    return whole;
  ToolCallReply r;
  bool ok = false;
  switch (p) {
  case ToolParser::kHermes:
    ok = hermesCalls(text, at, functions, r.calls);
    break;
  case ToolParser::kMistral:
    ok = mistralCalls(text, at, functions, r.calls);
    break;
  case ToolParser::kLlama3Json:
    ok = llamaCalls(text,
                    text.compare(at, kPythonTag.size(), kPythonTag) == 0 ? at + kPythonTag.size()
                                                                         : at,
                    functions, r.calls);
    break;
  case ToolParser::kNone:
    break;
  }
  if (!ok || r.calls.empty())
    return whole;
  std::string_view before = trimEnd(text.substr(0, at));
  if (!before.empty())
    r.content = std::string(before);
  return r;
}

size_t settledContent(ToolParser p, std::string_view text) {
  if (p == ToolParser::kNone)
    return text.size();
  size_t limit = markerAt(p, text);
  if (limit == std::string_view::npos) {
    if (p == ToolParser::kLlama3Json && skipBlank(text, 0) == text.size())
      return 0; // nothing but blanks yet: a '{' may come
    // A proper prefix of the marker at the end may still become it.
    const std::string_view marker = markerOf(p);
    limit = text.size();
    for (size_t k = std::min(marker.size() - 1, text.size()); k > 0; --k)
      if (text.substr(text.size() - k) == marker.substr(0, k)) {
        limit = text.size() - k;
        break;
      }
  }
  while (limit > 0 && isBlank(text[limit - 1]))
    --limit;
  return limit;
}

std::string forcedCallPrefix(ToolParser p, const std::string *function) {
  // The name as a JSON string's inside (names are [A-Za-z0-9_-], but quote
  // anyway).
  std::string name;
  if (function) {
    name = json::quote(*function);
    name = name.substr(1, name.size() - 2);
  }
  switch (p) {
  case ToolParser::kHermes:
    return "<tool_call>\n{\"name\": \"" + (function ? name + "\", \"arguments\": " : "");
  case ToolParser::kLlama3Json:
    return "{\"name\": \"" + (function ? name + "\", \"parameters\": " : "");
  case ToolParser::kMistral:
    return "[TOOL_CALLS] [{\"name\": \"" + (function ? name + "\", \"arguments\": " : "");
  case ToolParser::kNone:
    break;
  }
  return "";
}

std::string forcedCallSuffix(ToolParser p) {
  switch (p) {
  case ToolParser::kHermes:
    return "}\n</tool_call>";
  case ToolParser::kLlama3Json:
    return "}";
  case ToolParser::kMistral:
    return "}]";
  case ToolParser::kNone:
    break;
  }
  return "";
}

const char *argumentsKey(ToolParser p) {
  return p == ToolParser::kLlama3Json ? "parameters" : "arguments";
}

std::string newToolCallId(ToolParser p) {
  static constexpr char kAlnum[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  thread_local std::mt19937_64 rng = [] {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd()};
    return std::mt19937_64(seq);
  }();
  std::uniform_int_distribution<int> pick(0, int(sizeof kAlnum) - 2);
  const bool mistral = p == ToolParser::kMistral;
  std::string id = mistral ? "" : "call_";
  for (int i = 0; i < (mistral ? 9 : 24); ++i)
    id += kAlnum[pick(rng)];
  return id;
}

} // namespace accel::rt::server
