//===- Regex.h - regular expressions for constrained output -----*- C++ -*-===//
//
// Parses the regular expressions of `guided_regex` and of JSON schemas'
// `pattern` into a Pattern. The syntax is the common subset of Python's re
// and ECMAScript: literals, `.`, classes `[...]` / `[^...]` with ranges,
// `\d \w \s \D \W \S` (ASCII), `\n \t \r \f \v \0 \xHH \uHHHH`, escaped
// punctuation, groups `(...)`, `(?:...)`, `(?P<name>...)`, `(?<name>...)`,
// `|`, and `* + ? {n} {n,} {n,m}` (a lazy `?` after them is accepted: it
// does not change the language). `^` at the start and `$` at the end are
// accepted (the whole output must match). Back-references, look-around,
// word boundaries, possessive quantifiers and inline flags are refused.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_STRUCTURED_REGEX_H
#define ACCEL_RUNTIME_SERVING_STRUCTURED_REGEX_H

#include "core/Status.h"
#include "runtime/serving/structured/Pattern.h"

#include <string_view>

namespace accel::rt::structured {

/// The pattern, or kInvalidArgument/kUnimplemented: "regex <what> at
/// offset N" (N counts bytes of the pattern).
StatusOr<PatternPtr> parseRegex(std::string_view pattern);

} // namespace accel::rt::structured

#endif // ACCEL_RUNTIME_SERVING_STRUCTURED_REGEX_H
