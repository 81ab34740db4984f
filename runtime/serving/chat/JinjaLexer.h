//===- JinjaLexer.h - a chat template's source to tokens --------*- C++ -*-===//
//
// Splits a template into text and the tokens inside {{ }} and {% %}, with the
// whitespace rules transformers renders with: Jinja2's trim_blocks (the first
// newline after a %} or #} goes), lstrip_blocks (spaces and tabs before a {%
// or {# at the start of a line go, unless it is {%+), the `-` markers ({%-,
// -%}, {{-, -}}, {#-, -#}: all whitespace on that side goes) and
// keep_trailing_newline off (one newline ending the source goes). Comments
// ({# #}) are dropped.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_CHAT_JINJALEXER_H
#define ACCEL_RUNTIME_SERVING_CHAT_JINJALEXER_H

#include <stdexcept>
#include <string>
#include <vector>

namespace accel::rt::jinja {

struct Token {
  enum class Kind {
    kText,      // template text (value)
    kExprBegin, // {{
    kExprEnd,   // }}
    kStmtBegin, // {%
    kStmtEnd,   // %}
    kName,      // identifiers and keywords
    kString,    // a string literal, unescaped
    kInt,
    kFloat,
    kOp, // + - * / // % ** ~ == != < <= > >= ( ) [ ] { } , . : | =
    kEnd,
  };
  Kind kind;
  std::string value;
  int line;
};

/// A syntax error at a source line.
struct SyntaxError : std::runtime_error {
  SyntaxError(int line, const std::string &message) : std::runtime_error(message), line(line) {}
  int line;
};

/// The tokens of `source`, ending with kEnd. Throws SyntaxError.
std::vector<Token> lex(const std::string &source);

} // namespace accel::rt::jinja

#endif // ACCEL_RUNTIME_SERVING_CHAT_JINJALEXER_H
