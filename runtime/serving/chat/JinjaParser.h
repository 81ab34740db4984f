//===- JinjaParser.h - tokens to a chat template's tree ---------*- C++ -*-===//
//
// Jinja2's grammar for what chat templates use: {% if/elif/else %}, {% for
// ... in ... [if ...] %} with {% else %}, {% set %} (names, tuples,
// `ns.attr`, and {% set x %}...{% endset %}), {% macro %}, {% break %},
// {% continue %}, {% generation %} (transformers' tag; rendered as is), and
// Jinja2's expressions with its precedence: `a if c else b`, or, and, not,
// comparisons (chained, `in`, `not in`), + -, ~, * / // %, **, unary - +,
// then postfix .attr, [item], [a:b:c], (call), | filter and `is` test.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_CHAT_JINJAPARSER_H
#define ACCEL_RUNTIME_SERVING_CHAT_JINJAPARSER_H

#include "runtime/serving/chat/JinjaAst.h"
#include "runtime/serving/chat/JinjaLexer.h"

namespace accel::rt::jinja {

/// The template's statements. Throws SyntaxError (with its line).
Body parse(const std::vector<Token> &tokens);

} // namespace accel::rt::jinja

#endif // ACCEL_RUNTIME_SERVING_CHAT_JINJAPARSER_H
