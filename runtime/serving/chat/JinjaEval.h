//===- JinjaEval.h - rendering a parsed chat template -----------*- C++ -*-===//
//
// Walks JinjaAst with Jinja2's scoping: each iteration of a for loop has its
// own scope (a `set` in it lasts until the iteration ends: namespace() is how
// templates carry values across iterations and out of loops), `if` has none,
// a macro call sees the template's top-level names and its arguments. `loop`
// has index0, index, revindex, revindex0, first, last, length, previtem and
// nextitem.
//
// Bounded: macro calls nest at most 64 deep and the output is at most 64 MiB.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_CHAT_JINJAEVAL_H
#define ACCEL_RUNTIME_SERVING_CHAT_JINJAEVAL_H

#include "runtime/serving/chat/JinjaAst.h"

#include <stdexcept>
#include <string>

namespace accel::rt::jinja {

/// An evaluation error located at a template line.
struct RenderError : std::runtime_error {
  RenderError(int line, const std::string &message) : std::runtime_error(message), line(line) {}
  int line;
};

/// Renders `body` with `variables` (and the builtin globals beneath them).
/// Throws RenderError, or TemplateException from raise_exception.
std::string render(const Body &body, const Dict &variables);

} // namespace accel::rt::jinja

#endif // ACCEL_RUNTIME_SERVING_CHAT_JINJAEVAL_H
