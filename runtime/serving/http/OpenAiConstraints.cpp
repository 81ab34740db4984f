//===- OpenAiConstraints.cpp - a request's output constraint --------------===//
//
// OpenAiApi's structured output: the constraint a request gave
// (response_format, guided_*, structured_outputs) or the one a forced tool
// call implies, compiled over the tokenizer's vocabulary
// (runtime/serving/structured; docs/structured-output.md).
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/http/OpenAiApi.h"

#include "core/Json.h"
#include "runtime/serving/http/ToolParsers.h"
#include "runtime/serving/structured/Grammar.h"
#include "runtime/serving/tokenizer/Tokenizer.h"

namespace accel::rt::server {

namespace json = accel::rt::json;

structured::GrammarCache &OpenAiApi::grammarCache() const {
  // Built at the first constrained request: the vocabulary's bytes, sorted.
  std::call_once(grammarsOnce_, [this]() {
    grammars_ = std::make_unique<structured::GrammarCache>(
        structured::Vocabulary::build(*tokenizer_, opts_.vocabSize));
  });
  return *grammars_;
}

bool OpenAiApi::outputGrammar(const CompletionRequest &cr,
                              std::shared_ptr<structured::Grammar> &out, ApiError &err) const {
  if (!cr.constraint) {
    out = forcedCallGrammar(cr);
    return true;
  }
  const OutputConstraint &c = *cr.constraint;
  if (!tokenizer_ || !tokenizer_->isLoaded()) {
    err = badRequest("'" + c.param + "' needs the model's tokenizer, and this model has none",
                     c.param);
    return false;
  }
  StatusOr<std::shared_ptr<structured::Grammar>> g =
      grammarCache().get(c.kind, c.text, c.whitespace);
  if (!g) {
    err = badRequest("'" + c.param + "': " + g.status().message(), c.param);
    return false;
  }
  out = std::move(*g);
  return true;
}

std::shared_ptr<structured::Grammar>
OpenAiApi::forcedCallGrammar(const CompletionRequest &cr) const {
  // tool_choice required or named: the rest of the call (the name when
  // required, the arguments valid under the function's parameters, what
  // closes the call) is constrained, so the reply is always the call. Not
  // when the request narrows the tokens itself (allowed_token_ids) or a
  // schema uses a keyword structured output refuses: then the model writes
  // the rest freely and a reply that is no call comes back as text.
  const bool named = cr.toolChoice.kind == ToolChoice::kNamed;
  if ((!named && cr.toolChoice.kind != ToolChoice::kRequired) ||
      opts_.toolParser == ToolParser::kNone || !cr.allowedTokenIds.empty() || !cr.tools.isArray() ||
      !tokenizer_ || !tokenizer_->isLoaded())
    return nullptr;
  const std::string suffix = forcedCallSuffix(opts_.toolParser);
  json::Value alternatives = json::Value::array();
  for (const json::Value &tool : cr.tools.items()) {
    const json::Value *fn = tool.find("function");
    const json::Value *name = fn ? fn->find("name") : nullptr;
    if (!name || !name->isString() || (named && name->asString() != cr.toolChoice.name))
      continue;
    const json::Value *params = fn->find("parameters");
    json::Value schema = params && params->isObject() ? *params : json::Value::object();
    if (!params || !params->isObject()) { // no parameters: {}
      schema.set("type", "object");
      schema.set("properties", json::Value::object());
      schema.set("additionalProperties", false);
    }
    json::Value seq = json::Value::array();
    if (!named) { // the prefix ends with the name's opening quote
      const std::string q = json::quote(name->asString());
      json::Value lit = json::Value::object();
      lit.set("literal", q.substr(1, q.size() - 2) + "\", \"" +
                             argumentsKey(opts_.toolParser) + "\": ");
      seq.push(std::move(lit));
    }
    json::Value args = json::Value::object();
    args.set("json_schema", std::move(schema));
    seq.push(std::move(args));
    json::Value close = json::Value::object();
    close.set("literal", suffix);
    seq.push(std::move(close));
    alternatives.push(std::move(seq));
  }
  if (alternatives.items().empty())
    return nullptr;
  StatusOr<std::shared_ptr<structured::Grammar>> g =
      grammarCache().get("sequences", json::write(alternatives));
  return g ? *g : nullptr;
}

std::string OpenAiApi::toolCallPrefix(const CompletionRequest &cr) const {
  if (cr.toolChoice.kind == ToolChoice::kRequired)
    return forcedCallPrefix(opts_.toolParser, nullptr);
  if (cr.toolChoice.kind == ToolChoice::kNamed)
    return forcedCallPrefix(opts_.toolParser, &cr.toolChoice.name);
  return "";
}

} // namespace accel::rt::server
