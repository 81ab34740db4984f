//===- Pattern.h - the language a constrained output must be in -*- C++ -*-===//
//
// Structured output (docs/structured-output.md) turns every constraint a
// request may carry (a regex, a list of choices, a JSON schema, any JSON
// object) into one Pattern: a regular language over Unicode code points,
// built from code-point sets, concatenation, alternation, bounded or
// unbounded repetition and separated lists. Automaton.h compiles it to a
// byte-level (UTF-8) automaton, TokenMask.h to masks over a vocabulary.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_STRUCTURED_PATTERN_H
#define ACCEL_RUNTIME_SERVING_STRUCTURED_PATTERN_H

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace accel::rt::structured {

/// Inclusive code-point ranges, sorted and disjoint after normalise().
struct CharSet {
  std::vector<std::pair<char32_t, char32_t>> ranges;
  void add(char32_t lo, char32_t hi) { ranges.emplace_back(lo, hi); }
  void normalise();
  /// Every code point (surrogates excluded) not in this set.
  CharSet complement() const;
};

struct Pattern;
using PatternPtr = std::shared_ptr<const Pattern>;

struct Pattern {
  enum class Kind {
    kEmpty,   // the empty string
    kNothing, // no string at all
    kChars,   // one code point of `chars`
    kConcat,  // parts in order
    kAlt,     // one of parts
    kRepeat,  // parts[0] between min and max times (max < 0: unbounded)
    kList,    // parts[0], min or more times, separated by parts[1]
  };
  Kind kind = Kind::kEmpty;
  CharSet chars;
  std::vector<PatternPtr> parts;
  int64_t min = 0, max = -1;
};

PatternPtr empty();
PatternPtr nothing();
PatternPtr chars(CharSet set);
PatternPtr literal(std::string_view utf8);
PatternPtr concat(std::vector<PatternPtr> parts);
PatternPtr alt(std::vector<PatternPtr> parts);
PatternPtr repeat(PatternPtr p, int64_t min, int64_t max);
PatternPtr optional(PatternPtr p);
/// `element (separator element)*`, at least `min` elements (0 allows none).
PatternPtr list(PatternPtr element, PatternPtr separator, int64_t min);

} // namespace accel::rt::structured

#endif // ACCEL_RUNTIME_SERVING_STRUCTURED_PATTERN_H
