//===- JinjaTemplate.h - a chat template, parsed once -----------*- C++ -*-===//
//
// The interpreter's entry point (docs/serving.md "Chat templates"): parse()
// reads a Jinja template once (a syntax error is one sentence naming the
// template's source and line), render() runs it with a request's variables.
// A render error is kInvalidArgument: raise_exception(msg) gives msg itself
// (the template refused the request); any other error names the source and
// line.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_CHAT_JINJATEMPLATE_H
#define ACCEL_RUNTIME_SERVING_CHAT_JINJATEMPLATE_H

#include "core/Status.h"
#include "runtime/serving/chat/JinjaValue.h"

#include <memory>
#include <string>

namespace accel::rt::jinja {

struct Stmt;

class Template {
public:
  /// `sourceName` names the template in messages ("qwen3.jinja",
  /// "tokenizer_config.json chat_template").
  static StatusOr<Template> parse(const std::string &source, const std::string &sourceName);

  /// The rendered text. Errors are kInvalidArgument; `raisedByTemplate`
  /// (when given) tells whether the template called raise_exception.
  StatusOr<std::string> render(const Dict &variables, bool *raisedByTemplate = nullptr) const;

  const std::string &sourceName() const { return name_; }
  const std::string &source() const { return *source_; }

private:
  std::string name_;
  std::shared_ptr<const std::string> source_;
  std::shared_ptr<const std::vector<std::shared_ptr<Stmt>>> body_;
};

} // namespace accel::rt::jinja

#endif // ACCEL_RUNTIME_SERVING_CHAT_JINJATEMPLATE_H
