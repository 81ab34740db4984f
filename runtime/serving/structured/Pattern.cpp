//===- Pattern.cpp - the language a constrained output must be in ---------===//

#include "runtime/serving/structured/Pattern.h"

#include <algorithm>

namespace accel::rt::structured {

void CharSet::normalise() {
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<char32_t, char32_t>> out;
  for (auto [lo, hi] : ranges) {
    if (lo > hi)
      continue;
    if (!out.empty() && lo <= out.back().second + 1)
      out.back().second = std::max(out.back().second, hi);
    else
      out.emplace_back(lo, hi);
  }
  ranges.swap(out);
}

CharSet CharSet::complement() const {
  CharSet s = *this;
  s.normalise();
  CharSet out;
  char32_t next = 0;
  for (auto [lo, hi] : s.ranges) {
    if (lo > next)
      out.add(next, lo - 1);
    next = hi + 1;
  }
  if (next <= 0x10FFFF)
    out.add(next, 0x10FFFF);
  return out;
}

PatternPtr empty() { return std::make_shared<Pattern>(); }

PatternPtr nothing() {
  auto p = std::make_shared<Pattern>();
  p->kind = Pattern::Kind::kNothing;
  return p;
}

PatternPtr chars(CharSet set) {
  set.normalise();
  if (set.ranges.empty())
    return nothing();
  auto p = std::make_shared<Pattern>();
  p->kind = Pattern::Kind::kChars;
  p->chars = std::move(set);
  return p;
}

PatternPtr literal(std::string_view s) {
  std::vector<PatternPtr> parts;
  for (size_t i = 0; i < s.size();) {
    // The bytes are valid UTF-8 (JSON text, a parsed pattern): decode.
    unsigned char c = static_cast<unsigned char>(s[i]);
    char32_t cp = c;
    size_t len = 1;
    if (c >= 0xF0)
      cp = c & 0x07, len = 4;
    else if (c >= 0xE0)
      cp = c & 0x0F, len = 3;
    else if (c >= 0xC0)
      cp = c & 0x1F, len = 2;
    for (size_t k = 1; k < len && i + k < s.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    i += len;
    CharSet one;
    one.add(cp, cp);
    parts.push_back(chars(std::move(one)));
  }
  return concat(std::move(parts));
}

PatternPtr concat(std::vector<PatternPtr> parts) {
  std::vector<PatternPtr> kept;
  for (PatternPtr &p : parts) {
    if (p->kind == Pattern::Kind::kNothing)
      return nothing();
    if (p->kind != Pattern::Kind::kEmpty)
      kept.push_back(std::move(p));
  }
  if (kept.empty())
    return empty();
  if (kept.size() == 1)
    return kept[0];
  auto p = std::make_shared<Pattern>();
  p->kind = Pattern::Kind::kConcat;
  p->parts = std::move(kept);
  return p;
}

PatternPtr alt(std::vector<PatternPtr> parts) {
  std::vector<PatternPtr> kept;
  for (PatternPtr &p : parts)
    if (p->kind != Pattern::Kind::kNothing)
      kept.push_back(std::move(p));
  if (kept.empty())
    return nothing();
  if (kept.size() == 1)
    return kept[0];
  auto p = std::make_shared<Pattern>();
  p->kind = Pattern::Kind::kAlt;
  p->parts = std::move(kept);
  return p;
}

PatternPtr repeat(PatternPtr inner, int64_t min, int64_t max) {
  if (max == 0)
    return empty();
  if (inner->kind == Pattern::Kind::kNothing)
    return min == 0 ? empty() : nothing();
  if (min == 1 && max == 1)
    return inner;
  auto p = std::make_shared<Pattern>();
  p->kind = Pattern::Kind::kRepeat;
  p->parts = {std::move(inner)};
  p->min = min;
  p->max = max;
  return p;
}

PatternPtr optional(PatternPtr p) { return repeat(std::move(p), 0, 1); }

PatternPtr list(PatternPtr element, PatternPtr separator, int64_t min) {
  if (element->kind == Pattern::Kind::kNothing)
    return min == 0 ? empty() : nothing();
  auto p = std::make_shared<Pattern>();
  p->kind = Pattern::Kind::kList;
  p->parts = {std::move(element), std::move(separator)};
  p->min = min;
  return p;
}

} // namespace accel::rt::structured
