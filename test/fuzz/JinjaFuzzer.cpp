//===- JinjaFuzzer.cpp - libFuzzer target for the Jinja interpreter -------===//
//
// A chat template from a model's files or --chat-template
// (runtime/serving/chat): the input is the template's source, rendered with
// a fixed conversation (system, user and assistant messages, a tool, a tool
// call), add_generation_prompt, bos_token and eos_token, as the server
// renders one.
//
// What must hold: parsing and rendering never crash and end (their limits:
// nesting, macro depth, range() and loop iterations, repetition, output
// size) with a text or a Status; rendering the same template twice gives
// the same result.
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/chat/JinjaJson.h"
#include "runtime/serving/chat/JinjaTemplate.h"

#include "core/Json.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace accel::rt;
using namespace accel::rt::jinja;

namespace {
[[noreturn]] void die(const char *what) {
  std::fprintf(stderr, "jinja fuzzer: %s\n", what);
  std::abort();
}

const Dict &variables() {
  static const Dict vars = [] {
    StatusOr<json::Value> v = json::parse(R"({
      "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi \u00e9"},
        {"role": "assistant", "content": "", "tool_calls": [
          {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "2"},
        {"role": "user", "content": "And?"}],
      "tools": [{"type": "function", "function": {"name": "f", "description": "d",
                 "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}}],
      "add_generation_prompt": true,
      "bos_token": "<s>",
      "eos_token": "</s>"})");
    if (!v)
      die("the fixed variables do not parse");
    Dict d;
    for (const json::Member &m : v->members())
      d.emplace_back(m.first, fromJson(m.second));
    return d;
  }();
  return vars;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string source(reinterpret_cast<const char *>(data), size);
  StatusOr<Template> t = Template::parse(source, "fuzz.jinja");
  if (!t)
    return 0;
  StatusOr<std::string> a = t->render(variables());
  StatusOr<std::string> b = t->render(variables());
  if (a.isOk() != b.isOk() || (a.isOk() && *a != *b) ||
      (!a.isOk() && a.status().message() != b.status().message()))
    die("two renders of one template differ");
  return 0;
}
