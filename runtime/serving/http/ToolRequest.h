//===- ToolRequest.h - the tool members of a chat request -------*- C++ -*-===//
//
// OpenAI's tool calling on /v1/chat/completions (docs/serving.md "Tool
// calls"): `tools`, `tool_choice`, `parallel_tool_calls`, an assistant
// message's `tool_calls` and a tool message's `tool_call_id`, validated
// with one sentence naming the bad element, and what the chat template and
// the reply's parser need of them.
//
// A message's tool calls reach the template as transformers' chat templates
// expect them and as vLLM passes them: `function.arguments`, a JSON string
// in OpenAI's API, becomes the object it holds (null or "" become {}).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_HTTP_TOOLREQUEST_H
#define ACCEL_RUNTIME_SERVING_HTTP_TOOLREQUEST_H

#include "core/Json.h"
#include "runtime/serving/http/ChatTemplate.h"
#include "runtime/serving/http/OpenAiProtocol.h"
#include "runtime/serving/http/ToolParsers.h"

#include <optional>
#include <string>
#include <vector>

namespace accel::rt::server {

/// At most this many tools in a request (OpenAI's limit).
constexpr size_t kMaxTools = 128;

/// `tools`, `tool_choice` and `parallel_tool_calls` of a chat request body
/// (`root`) into `out`; false with `err` (400 naming the field).
bool parseToolFields(const json::Value &root, CompletionRequest &out, ApiError &err);

/// Message `m`'s tool members (`at`: "messages[i]") into `msg`: an
/// assistant's `tool_calls`, a tool message's `tool_call_id` (required
/// there); false with `err` naming the field, also for either on another
/// role.
bool parseMessageToolFields(const json::Value &m, const std::string &at, ChatMessage &msg,
                            ApiError &err);

/// The request's function names, in order.
std::vector<std::string> toolFunctionNames(const CompletionRequest &req);

/// A request with tools, tool calls or tool messages for a built-in chat
/// format (which renders role and content only): the 400 that says so.
std::optional<ApiError> toolsNeedJinja(const CompletionRequest &req, const ChatTemplate &tpl);

/// A generation request whose tool_choice asks for calls (auto, required,
/// a named function) when the server has no tool-call parser: the 400 that
/// says so. Also required or a named function with add_generation_prompt
/// false or continue_final_message (the call is begun in a new assistant
/// turn).
std::optional<ApiError> toolChoiceError(const CompletionRequest &req, ToolParser parser);

} // namespace accel::rt::server

#endif // ACCEL_RUNTIME_SERVING_HTTP_TOOLREQUEST_H
