//===- JinjaTemplate.cpp - a chat template, parsed once, rendered per request ===//
#include "runtime/serving/chat/JinjaTemplate.h"

#include "runtime/serving/chat/JinjaBuiltins.h"
#include "runtime/serving/chat/JinjaEval.h"
#include "runtime/serving/chat/JinjaLexer.h"
#include "runtime/serving/chat/JinjaParser.h"

#include <new>

namespace accel::rt::jinja {

namespace {

std::string where(const std::string &name, int line) {
  return "the chat template " + name + ", line " + std::to_string(line) + ": ";
}

} // namespace

StatusOr<Template> Template::parse(const std::string &source, const std::string &sourceName) {
  Template t;
  t.name_ = sourceName;
  t.source_ = std::make_shared<const std::string>(source);
  try {
    t.body_ = std::make_shared<const Body>(jinja::parse(lex(source)));
  } catch (const SyntaxError &e) {
    return invalidArgument(where(sourceName, e.line) + e.what());
  } catch (const std::exception &e) { // e.g. a number literal too large
    return invalidArgument("the chat template " + sourceName + " does not parse: " + e.what());
  }
  return t;
}

StatusOr<std::string> Template::render(const Dict &variables, bool *raisedByTemplate) const {
  if (raisedByTemplate)
    *raisedByTemplate = false;
  try {
    return jinja::render(*body_, variables);
  } catch (const TemplateException &e) {
    if (raisedByTemplate)
      *raisedByTemplate = true;
    return invalidArgument(e.what());
  } catch (const RenderError &e) {
    return invalidArgument(where(name_, e.line) + e.what());
  } catch (const EvalError &e) {
    return invalidArgument("the chat template " + name_ + ": " + e.what());
  } catch (const std::bad_alloc &) {
    return Status(StatusCode::kResourceExhausted,
                  "the chat template " + name_ + " ran out of memory while rendering");
  } catch (const std::exception &e) {
    return invalidArgument("the chat template " + name_ + " failed while rendering: " + e.what());
  }
}

} // namespace accel::rt::jinja
