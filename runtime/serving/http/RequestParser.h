//===- RequestParser.h - OpenAI request fields, checked (internal) -*- C++ -*-===//
//
// What OpenAiProtocol.cpp (the parameter table, parseCompletionRequest) and
// OpenAiRequestParts.cpp (messages, output constraints) share: Parser, which
// reads a request body's fields and records the first 400. Not part of the
// API (OpenAiProtocol.h is).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_HTTP_REQUESTPARSER_H
#define ACCEL_RUNTIME_SERVING_HTTP_REQUESTPARSER_H

#include "runtime/serving/http/OpenAiProtocol.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace accel::rt::server::detail {

inline std::string fmtNumber(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
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
    return fail("'" + field + "' must be " + want + ", got " + describeJson(got), field);
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
  /// An int64: 2.0 and 2e3 are accepted (Python clients), 2.5 and numbers
  /// beyond int64 are not.
  bool intValue(const std::string &field, const json::Value &v, int64_t &out) {
    if (v.isInteger()) {
      out = v.asInt();
      return true;
    }
    if (!v.isNumber())
      return wrongType(field, "an integer", v);
    const double d = v.asDouble();
    if (std::floor(d) != d)
      return fail("'" + field + "' must be an integer, got " + fmtNumber(d), field);
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
      return fail("'" + field + "' must be an integer in [-9223372036854775808, "
                  "9223372036854775807], got " + fmtNumber(d),
                  field);
    out = int64_t(d);
    return true;
  }
  bool integer(const char *field, std::optional<int64_t> &out) {
    if (const json::Value *v = get(field)) {
      int64_t i = 0;
      if (!intValue(field, *v, i))
        return false;
      out = i;
    }
    return true;
  }
  /// An integer in [lo, hi]; `what` describes the range in the message.
  bool integerIn(const char *field, std::optional<int64_t> &out, int64_t lo, int64_t hi,
                 const std::string &what) {
    if (!integer(field, out))
      return false;
    if (out && (*out < lo || *out > hi))
      return fail("'" + std::string(field) + "' must be " + what + ", got " +
                      std::to_string(*out),
                  field);
    return true;
  }
  /// A number that must lie in the range `ok` accepts (`what` says it).
  template <typename Ok>
  bool numberIn(const char *field, std::optional<double> &out, Ok ok, const std::string &what) {
    if (const json::Value *v = get(field)) {
      if (!v->isNumber())
        return wrongType(field, "a number", *v);
      const double d = v->asDouble();
      if (!std::isfinite(d) || !ok(d))
        return fail("'" + std::string(field) + "' must be " + what + ", got " + fmtNumber(d),
                    field);
      out = d;
    }
    return true;
  }
  /// An array of integers in [0, vocab) (vocab 0: unbounded), at most
  /// `maxItems`.
  bool tokenIds(const char *field, std::vector<int64_t> &out, int64_t vocab, size_t maxItems) {
    const json::Value *v = get(field);
    if (!v)
      return true;
    if (!v->isArray())
      return wrongType(field, "an array of token ids", *v);
    if (v->items().size() > maxItems)
      return fail("'" + std::string(field) + "' has " + std::to_string(v->items().size()) +
                      " token ids; at most " + std::to_string(maxItems),
                  field);
    for (size_t i = 0; i < v->items().size(); ++i) {
      const std::string at = std::string(field) + "[" + std::to_string(i) + "]";
      int64_t t = 0;
      if (!intValue(at, v->items()[i], t))
        return false;
      if (t < 0 || (vocab > 0 && t >= vocab))
        return fail("'" + at + "' = " + std::to_string(t) + " is not a token id of this model" +
                        (vocab > 0 ? " (vocabulary of " + std::to_string(vocab) + ")" : ""),
                    at);
      out.push_back(t);
    }
    return true;
  }
  /// An array of strings (a single string too when `single`), at most
  /// `maxItems`, none empty (ignoring spaces when `blankIsEmpty`).
  bool strings(const char *field, std::vector<std::string> &out, size_t maxItems, bool single,
               bool blankIsEmpty) {
    const json::Value *v = get(field);
    if (!v)
      return true;
    if (single && v->isString()) {
      out.push_back(v->asString());
    } else if (v->isArray()) {
      for (size_t i = 0; i < v->items().size(); ++i) {
        const json::Value &s = v->items()[i];
        if (!s.isString())
          return wrongType(std::string(field) + "[" + std::to_string(i) + "]", "a string", s);
        out.push_back(s.asString());
      }
    } else {
      return wrongType(field, single ? "a string or an array of strings" : "an array of strings",
                       *v);
    }
    if (out.size() > maxItems)
      return fail("'" + std::string(field) + "' has " + std::to_string(out.size()) +
                      " strings; at most " + std::to_string(maxItems),
                  field);
    for (const std::string &s : out)
      if (s.empty() ||
          (blankIsEmpty && s.find_first_not_of(' ') == std::string::npos))
        return fail("'" + std::string(field) + "' strings must not be empty", field);
    return true;
  }
};

/// The request's messages (chat): roles, content (a string or text parts),
/// tool calls and tool results.
bool parseMessages(Parser &p, const RequestLimits &limits, CompletionRequest &out);

/// Structured output: OpenAI's response_format, vLLM's guided_* and
/// structured_outputs (at most one constraint).
bool parseConstraint(Parser &p, CompletionRequest &out);

} // namespace accel::rt::server::detail

#endif // ACCEL_RUNTIME_SERVING_HTTP_REQUESTPARSER_H
