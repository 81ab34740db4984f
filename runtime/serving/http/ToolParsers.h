//===- ToolParsers.h - tool calls out of a model's reply --------*- C++ -*-===//
//
// A chat model asked with `tools` answers a call in its family's own text
// format; these parsers, named as vLLM's --tool-call-parser, turn the final
// text of a reply into OpenAI's `tool_calls` (docs/serving.md "Tool calls"):
//
//   hermes       Qwen2.5, Qwen3, Hermes: one or more
//                  <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>
//                (the last one may be cut before its </tool_call>)
//   llama3_json  Llama 3.1 / 3.2: {"name": ..., "parameters": {...}} (or
//                "arguments"), several separated by ';', the reply starting
//                with the JSON or with <|python_tag|> before it
//   mistral      Mistral: [TOOL_CALLS] [{"name": ..., "arguments": {...}}, ...]
//
// A reply is a call when, from its family's marker on (hermes <tool_call>,
// mistral [TOOL_CALLS], llama3_json <|python_tag|> or a '{' as its first
// non-blank character), it holds nothing but calls (and white space), each
// naming one of the request's functions with an object of arguments (or
// none: {}). Then `content` is the text before the marker, trailing white
// space removed, or null when that is empty; otherwise there is no call and
// the whole text is the content: malformed JSON, an unknown function name or
// text after the calls leave the reply as it is.
//
// Arguments are re-serialized as vLLM does (Python's json.dumps with
// ensure_ascii=False: ", " and ": " separators, non-ASCII kept).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_HTTP_TOOLPARSERS_H
#define ACCEL_RUNTIME_SERVING_HTTP_TOOLPARSERS_H

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel::rt::tok {
class Tokenizer;
}

namespace accel::rt::server {

enum class ToolParser { kNone, kHermes, kLlama3Json, kMistral };

/// hermes, llama3_json, mistral; "none" for kNone.
const char *toolParserName(ToolParser p);
/// --tool-call-parser's names (hermes, llama3_json, mistral, none).
std::optional<ToolParser> toolParserFromName(std::string_view name);

/// The parser of a chat template's family: from its text (<tool_call>:
/// hermes, [TOOL_CALLS]: mistral, <|python_tag|>: llama3_json), else from
/// the tokenizer's tokens of the same names (`tokenizer` may be null);
/// kNone when neither tells.
ToolParser detectToolParser(std::string_view templateSource, const tok::Tokenizer *tokenizer);

struct ToolCall {
  std::string id;        // set by the caller (newToolCallId)
  std::string name;      // the function
  std::string arguments; // a JSON object's text
};

struct ToolCallReply {
  std::vector<ToolCall> calls;        // empty: no call, `content` is the whole text
  std::optional<std::string> content; // null: no text besides the calls
};

/// Parses a reply's final text; `functions` are the names the request's
/// tools offer.
ToolCallReply parseToolCalls(ToolParser p, std::string_view text,
                             const std::vector<std::string> &functions);

/// Streaming: how many leading bytes of `text` (the reply so far) are
/// content whatever follows: nothing from a marker (or a proper prefix of
/// one at the end) on, nor white space just before it. It never decreases
/// as text is appended, and it never exceeds the content parseToolCalls
/// gives the final text when that has calls.
size_t settledContent(ToolParser p, std::string_view text);

/// What the assistant's turn is begun with when tool_choice forces a call:
/// the family's call up to the function's name (`function` null:
/// "required", the model names it) or up to its arguments (a named
/// function). The model continues from there; the reply parsed is this
/// prefix and the model's text.
std::string forcedCallPrefix(ToolParser p, const std::string *function);

/// What closes a call after its arguments' JSON object: hermes
/// "}\n</tool_call>", llama3_json "}", mistral "}]".
std::string forcedCallSuffix(ToolParser p);

/// The key of a call's arguments: "parameters" for llama3_json, else
/// "arguments".
const char *argumentsKey(ToolParser p);

/// A new call id: "call_" and 24 random letters and digits; for mistral 9
/// of them (Mistral's template refuses any other id when the call comes
/// back in a later request, as vLLM's MistralToolCall makes them).
std::string newToolCallId(ToolParser p);

} // namespace accel::rt::server

#endif // ACCEL_RUNTIME_SERVING_HTTP_TOOLPARSERS_H
