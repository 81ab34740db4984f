//===- JinjaBuiltins.h - filters, tests, methods and globals ----*- C++ -*-===//
//
// What chat templates call: Jinja2's filters (trim, tojson, length, upper,
// lower, capitalize, title, default, join, first, last, items, list, string,
// int, float, abs, round, selectattr, rejectattr, select, reject, map, safe,
// escape, indent, replace, reverse, sort, unique, sum, min, max), its tests
// (defined, none, string, mapping, iterable, sequence, number, integer,
// float, boolean, true, false, callable, equalto, in, divisibleby, ...),
// Python's str and dict methods a template may call ("a".startswith(...),
// d.items(), ...), and transformers' globals (raise_exception, strftime_now,
// namespace, dict) with Jinja2's range.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_CHAT_JINJABUILTINS_H
#define ACCEL_RUNTIME_SERVING_CHAT_JINJABUILTINS_H

#include "runtime/serving/chat/JinjaValue.h"

#include <string>

namespace accel::rt::jinja {

/// raise_exception(msg) throws it: the template's own message.
struct TemplateException : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// `value | name(args)`. Throws EvalError (an unknown filter too).
Value applyFilter(const std::string &name, const Value &value, const CallArgs &args);
/// `value is name(args)`. Throws EvalError (an unknown test too).
bool applyTest(const std::string &name, const Value &value, const CallArgs &args);
/// `value.name`: a bound method of a str or dict, else null value (undefined).
Value method(const Value &value, const std::string &name);
/// raise_exception, strftime_now, namespace, dict, range.
Dict builtinGlobals();

/// Items to iterate over: a list's items, a dict's keys, a str's characters,
/// nothing for undefined. Throws EvalError for others.
List iterate(const Value &v);
/// `attr` of `v` as `v.attr` reads it (dotted paths: "function.name").
Value attribute(const Value &v, const std::string &attr);

} // namespace accel::rt::jinja

#endif // ACCEL_RUNTIME_SERVING_CHAT_JINJABUILTINS_H
