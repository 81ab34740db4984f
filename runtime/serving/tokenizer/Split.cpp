//===- Split.cpp - pre-tokenizer splitting --------------------------------===//
//
// The regex scanners follow Oniguruma's leftmost-first semantics for the
// exact patterns: at each position the alternatives are tried in order and
// the first that matches wins; greedy quantifiers give back characters only
// where a later part of the same alternative needs them (the \s+(?!\S) and
// \s*[\r\n]+ cases below). Every position of a non-empty text is matched by
// some alternative of these patterns, so no character is ever skipped.
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/tokenizer/Split.h"

#include "runtime/serving/tokenizer/Unicode.h"

#include <algorithm>

namespace accel::rt::tok::detail {

namespace {

constexpr const char *kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr const char *kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char *kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

using unicode::isLetter;
using unicode::isNumber;
using unicode::isWhitespace;

bool isOther(char32_t c) { return !isWhitespace(c) && !isLetter(c) && !isNumber(c); }
bool isNewline(char32_t c) { return c == '\r' || c == '\n'; }

/// ASCII case folding plus U+017F LATIN SMALL LETTER LONG S, which folds to
/// 's' (the only non-ASCII character that Oniguruma's (?i) lets match one of
/// the contraction letters).
char32_t foldContraction(char32_t c) {
  if (c >= 'A' && c <= 'Z')
    return c + 32;
  if (c == 0x17F)
    return 's';
  return c;
}

/// The length (in code points) of a contraction at cps[i], or 0.
size_t contraction(const std::vector<char32_t> &cps, size_t i, bool caseInsensitive) {
  size_t n = cps.size();
  if (cps[i] != '\'' || i + 1 >= n)
    return 0;
  auto at = [&](size_t k) { return caseInsensitive ? foldContraction(cps[k]) : cps[k]; };
  char32_t a = at(i + 1);
  if (a == 's' || a == 't' || a == 'm' || a == 'd')
    return 2;
  if (i + 2 < n) {
    char32_t b = at(i + 2);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
      return 3;
  }
  return 0;
}

template <typename Pred> size_t runEnd(const std::vector<char32_t> &cps, size_t i, Pred p) {
  while (i < cps.size() && p(cps[i]))
    ++i;
  return i;
}

/// The end (code point index) of the match at i, or i when none matches.
size_t matchGpt2(const std::vector<char32_t> &cps, size_t i) {
  const size_t n = cps.size();
  const char32_t c = cps[i];
  if (size_t k = contraction(cps, i, /*caseInsensitive=*/false))
    return i + k;
  // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`
  size_t s = (c == ' ' && i + 1 < n) ? i + 1 : i;
  if (isLetter(cps[s]))
    return runEnd(cps, s, isLetter);
  if (isNumber(cps[s]))
    return runEnd(cps, s, isNumber);
  if (isOther(cps[s]))
    return runEnd(cps, s, isOther);
  // `\s+(?!\S)|\s+`
  if (isWhitespace(c)) {
    size_t k = runEnd(cps, i, isWhitespace);
    if (k == n)
      return k;
    if (k - i >= 2)
      return k - 1;
    return k;
  }
  return i;
}

size_t matchLlama3(const std::vector<char32_t> &cps, size_t i, size_t maxDigits) {
  const size_t n = cps.size();
  const char32_t c = cps[i];
  // (?i:'s|'t|'re|'ve|'m|'ll|'d)
  if (size_t k = contraction(cps, i, /*caseInsensitive=*/true))
    return i + k;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (isLetter(c))
    return runEnd(cps, i, isLetter);
  if (!isNewline(c) && !isNumber(c) && i + 1 < n && isLetter(cps[i + 1]))
    return runEnd(cps, i + 1, isLetter);
  // \p{N}{1,3}  (or \p{N})
  if (isNumber(c)) {
    size_t k = i;
    while (k < n && k - i < maxDigits && isNumber(cps[k]))
      ++k;
    return k;
  }
  // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
  {
    size_t s = (c == ' ' && i + 1 < n) ? i + 1 : i;
    if (isOther(cps[s])) {
      size_t k = runEnd(cps, s, isOther);
      return runEnd(cps, k, isNewline);
    }
  }
  if (isWhitespace(c)) {
    size_t k = runEnd(cps, i, isWhitespace);
    // \s*[\r\n]+ : up to the last newline of the whitespace run.
    for (size_t p = k; p > i; --p)
      if (isNewline(cps[p - 1]))
        return p;
    // \s+(?!\S)
    if (k == n)
      return k;
    if (k - i >= 2)
      return k - 1;
    // \s+
    return k;
  }
  return i;
}

std::vector<Segment> segmentsFromMatches(const std::vector<std::pair<size_t, size_t>> &matches,
                                         size_t total) {
  std::vector<Segment> out;
  if (total == 0) {
    out.push_back({0, 0, false});
    return out;
  }
  size_t prev = 0;
  for (auto [s, e] : matches) {
    if (prev != s)
      out.push_back({prev, s, false});
    out.push_back({s, e, true});
    prev = e;
  }
  if (prev != total)
    out.push_back({prev, total, false});
  return out;
}

} // namespace

const char *knownRegexPattern(KnownRegex r) {
  switch (r) {
  case KnownRegex::kGpt2:
    return kGpt2Pattern;
  case KnownRegex::kLlama3:
    return kLlama3Pattern;
  case KnownRegex::kQwen2:
    return kQwen2Pattern;
  }
  return "";
}

std::optional<KnownRegex> recognizeRegex(std::string_view pattern) {
  for (KnownRegex r : {KnownRegex::kGpt2, KnownRegex::kLlama3, KnownRegex::kQwen2})
    if (pattern == knownRegexPattern(r))
      return r;
  return std::nullopt;
}

std::vector<Segment> findRegexSegments(KnownRegex r, std::string_view text) {
  unicode::CodePoints cp = unicode::decode(text);
  const std::vector<char32_t> &cps = cp.cps;
  std::vector<std::pair<size_t, size_t>> matches;
  size_t i = 0;
  while (i < cps.size()) {
    size_t e;
    switch (r) {
    case KnownRegex::kGpt2:
      e = matchGpt2(cps, i);
      break;
    case KnownRegex::kLlama3:
      e = matchLlama3(cps, i, 3);
      break;
    case KnownRegex::kQwen2:
    default:
      e = matchLlama3(cps, i, 1);
      break;
    }
    if (e == i) { // no alternative matched here: move on
      ++i;
      continue;
    }
    matches.emplace_back(cp.offsets[i], cp.offsets[e]);
    i = e;
  }
  return segmentsFromMatches(matches, text.size());
}

std::vector<Segment> findLiteralSegments(std::string_view pattern, std::string_view text) {
  std::vector<std::pair<size_t, size_t>> matches;
  if (!pattern.empty()) {
    size_t pos = 0;
    while ((pos = text.find(pattern, pos)) != std::string_view::npos) {
      matches.emplace_back(pos, pos + pattern.size());
      pos += pattern.size();
    }
  }
  return segmentsFromMatches(matches, text.size());
}

std::vector<Segment> findCharSegments(const std::function<bool(char32_t)> &pred,
                                      std::string_view text) {
  std::vector<std::pair<size_t, size_t>> matches;
  size_t i = 0;
  while (i < text.size()) {
    size_t len;
    char32_t c = unicode::decodeAt(text, i, len);
    if (pred(c))
      matches.emplace_back(i, i + len);
    i += len;
  }
  return segmentsFromMatches(matches, text.size());
}

std::optional<SplitBehavior> parseSplitBehavior(std::string_view name) {
  if (name == "Removed")
    return SplitBehavior::kRemoved;
  if (name == "Isolated")
    return SplitBehavior::kIsolated;
  if (name == "MergedWithPrevious")
    return SplitBehavior::kMergedWithPrevious;
  if (name == "MergedWithNext")
    return SplitBehavior::kMergedWithNext;
  if (name == "Contiguous")
    return SplitBehavior::kContiguous;
  return std::nullopt;
}

std::vector<std::pair<size_t, size_t>> applyBehavior(std::vector<Segment> segs,
                                                     SplitBehavior behavior, bool invert) {
  if (invert)
    for (Segment &s : segs)
      s.isMatch = !s.isMatch;
  // (range, remove) pairs, exactly as NormalizedString::split builds them.
  struct Out {
    size_t start, end;
    bool remove;
  };
  std::vector<Out> outs;
  switch (behavior) {
  case SplitBehavior::kIsolated:
    for (const Segment &s : segs)
      outs.push_back({s.start, s.end, false});
    break;
  case SplitBehavior::kRemoved:
    for (const Segment &s : segs)
      outs.push_back({s.start, s.end, s.isMatch});
    break;
  case SplitBehavior::kContiguous: {
    bool previous = false;
    for (const Segment &s : segs) {
      if (s.isMatch == previous && !outs.empty())
        outs.back().end = s.end;
      else
        outs.push_back({s.start, s.end, false});
      previous = s.isMatch;
    }
    break;
  }
  case SplitBehavior::kMergedWithPrevious: {
    bool previous = false;
    for (const Segment &s : segs) {
      if (s.isMatch && !previous && !outs.empty())
        outs.back().end = s.end;
      else
        outs.push_back({s.start, s.end, false});
      previous = s.isMatch;
    }
    break;
  }
  case SplitBehavior::kMergedWithNext: {
    bool previous = false;
    for (auto it = segs.rbegin(); it != segs.rend(); ++it) {
      if (it->isMatch && !previous && !outs.empty())
        outs.back().start = it->start;
      else
        outs.push_back({it->start, it->end, false});
      previous = it->isMatch;
    }
    std::reverse(outs.begin(), outs.end());
    break;
  }
  }
  std::vector<std::pair<size_t, size_t>> result;
  for (const Out &o : outs)
    if (!o.remove)
      result.emplace_back(o.start, o.end);
  return result;
}

} // namespace accel::rt::tok::detail
