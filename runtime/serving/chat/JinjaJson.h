//===- JinjaJson.h - JSON in and out of chat templates ----------*- C++ -*-===//
//
// Requests' JSON (messages, tools) becomes template values, and the tojson
// filter writes values back as transformers' tojson does: Python's
// json.dumps(x, ensure_ascii=False, indent=indent, separators=separators,
// sort_keys=sort_keys), so ", " and ": " between members unless indented
// ("," and ": " then), floats as Python writes them, NaN and Infinity
// spelled so.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_CHAT_JINJAJSON_H
#define ACCEL_RUNTIME_SERVING_CHAT_JINJAJSON_H

#include "core/Json.h"
#include "runtime/serving/chat/JinjaValue.h"

namespace accel::rt::jinja {

Value fromJson(const json::Value &v);

struct DumpOptions {
  bool ensureAscii = false;
  int indent = -1;          // < 0: none
  std::string indentString; // when set, used instead of `indent` spaces
  std::string itemSeparator = ", ";
  std::string keySeparator = ": ";
  bool sortKeys = false;
};
/// json.dumps. Throws EvalError for what JSON cannot hold (undefined, functions).
std::string dumpJson(const Value &v, const DumpOptions &options);

} // namespace accel::rt::jinja

#endif // ACCEL_RUNTIME_SERVING_CHAT_JINJAJSON_H
