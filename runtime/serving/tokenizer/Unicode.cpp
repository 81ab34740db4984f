//===- Unicode.cpp - UTF-8 and the Unicode data the tokenizer needs -------===//
#include "runtime/serving/tokenizer/Unicode.h"

#include <algorithm>

namespace accel::rt::tok::unicode {

namespace {

struct CodeRange {
  uint32_t lo, hi;
};
struct CombiningClassRange {
  uint32_t lo, hi;
  uint8_t ccc;
};
struct Decomposition {
  uint32_t cp;
  uint16_t offset;
  uint8_t length;
};
struct Composition {
  uint32_t first, second, composite;
};

#include "runtime/serving/tokenizer/UnicodeTables.inc"

template <size_t N> bool inRanges(const CodeRange (&table)[N], char32_t c) {
  const CodeRange *end = table + N;
  const CodeRange *it = std::upper_bound(
      table, end, static_cast<uint32_t>(c),
      [](uint32_t v, const CodeRange &r) { return v < r.lo; });
  if (it == table)
    return false;
  --it;
  return c <= it->hi;
}

// Hangul syllables (Unicode 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28;
constexpr char32_t kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

/// The row of `c` in a cp -> pool mapping, or nullptr.
template <size_t N>
const Decomposition *findMapping(const Decomposition (&table)[N], char32_t c) {
  const Decomposition *end = table + N;
  const Decomposition *it =
      std::lower_bound(table, end, static_cast<uint32_t>(c),
                       [](const Decomposition &d, uint32_t v) { return d.cp < v; });
  return it == end || it->cp != c ? nullptr : it;
}

void decomposeInto(std::vector<char32_t> &out, char32_t c, bool compat) {
  if (compat && c >= 0xA0) {
    if (const Decomposition *d = findMapping(kCompatDecompositions, c)) {
      for (size_t k = 0; k < d->length; ++k)
        out.push_back(kCompatDecompositionsPool[d->offset + k]);
      return;
    }
  }
  if (c >= kSBase && c < kSBase + kSCount) {
    char32_t s = c - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount)
      out.push_back(kTBase + s % kTCount);
    return;
  }
  if (c < 0xC0) { // nothing below U+00C0 decomposes
    out.push_back(c);
    return;
  }
  const Decomposition *it = findMapping(kDecompositions, c);
  if (!it) {
    out.push_back(c);
    return;
  }
  for (size_t k = 0; k < it->length; ++k)
    out.push_back(kDecompositionPool[it->offset + k]);
}

bool compose(char32_t a, char32_t b, char32_t &out) {
  // Hangul LV and LVT.
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount) {
    out = kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
    return true;
  }
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase &&
      b < kTBase + kTCount) {
    out = a + (b - kTBase);
    return true;
  }
  const Composition *end = kCompositions + std::size(kCompositions);
  const Composition *it = std::lower_bound(
      kCompositions, end, std::make_pair(static_cast<uint32_t>(a), static_cast<uint32_t>(b)),
      [](const Composition &c, const std::pair<uint32_t, uint32_t> &v) {
        return c.first < v.first || (c.first == v.first && c.second < v.second);
      });
  if (it == end || it->first != a || it->second != b)
    return false;
  out = it->composite;
  return true;
}

/// Decomposes (canonically, or for NFK* with the compatibility mappings)
/// and puts runs of non-starters in canonical order.
std::vector<char32_t> canonicalDecomposition(std::string_view s, bool compat) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    size_t len;
    char32_t c = decodeAt(s, i, len);
    i += len;
    decomposeInto(out, c, compat);
  }
  // Canonical ordering: a stable sort of each run of non-zero classes.
  size_t k = 0;
  while (k < out.size()) {
    if (combiningClass(out[k]) == 0) {
      ++k;
      continue;
    }
    size_t e = k;
    while (e < out.size() && combiningClass(out[e]) != 0)
      ++e;
    if (e - k > 1)
      std::stable_sort(out.begin() + k, out.begin() + e, [](char32_t x, char32_t y) {
        return combiningClass(x) < combiningClass(y);
      });
    k = e;
  }
  return out;
}

bool isAscii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80)
      return false;
  return true;
}

/// The length of the maximal subpart of a well-formed sequence at s[i..]:
/// `valid` is set when it is a whole code point.
size_t maximalSubpart(std::string_view s, size_t i, bool &valid) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  valid = false;
  if (c < 0x80) {
    valid = true;
    return 1;
  }
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0)
      lo = 0xA0;
    else if (c == 0xED)
      hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0)
      lo = 0x90;
    else if (c == 0xF4)
      hi = 0x8F;
  } else {
    return 1;
  }
  if (i + 1 >= s.size() || b(i + 1) < lo || b(i + 1) > hi)
    return 1;
  size_t k = 2;
  for (; k < n; ++k)
    if (i + k >= s.size() || b(i + k) < 0x80 || b(i + k) > 0xBF)
      return k;
  valid = true;
  return n;
}

} // namespace

const char *unicodeVersion() { return ACCEL_TOK_UNICODE_VERSION; }

size_t findInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    bool valid;
    size_t n = maximalSubpart(s, i, valid);
    if (!valid)
      return i;
    i += n;
  }
  return std::string_view::npos;
}

char32_t decodeAt(std::string_view s, size_t i, size_t &len) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    len = 1;
    return c;
  }
  if (c < 0xE0) {
    len = 2;
    return ((c & 0x1F) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3F);
  }
  if (c < 0xF0) {
    len = 3;
    return ((c & 0x0F) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3F) << 6) |
           (static_cast<unsigned char>(s[i + 2]) & 0x3F);
  }
  len = 4;
  return ((c & 0x07) << 18) | ((static_cast<unsigned char>(s[i + 1]) & 0x3F) << 12) |
         ((static_cast<unsigned char>(s[i + 2]) & 0x3F) << 6) |
         (static_cast<unsigned char>(s[i + 3]) & 0x3F);
}

void appendUtf8(std::string &out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string utf8Lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    bool valid;
    size_t n = maximalSubpart(bytes, i, valid);
    if (valid)
      out.append(bytes.data() + i, n);
    else
      out += "\xEF\xBF\xBD";
    i += n;
  }
  return out;
}

CodePoints decode(std::string_view s) {
  CodePoints r;
  r.cps.reserve(s.size());
  r.offsets.reserve(s.size() + 1);
  size_t i = 0;
  while (i < s.size()) {
    size_t len;
    r.offsets.push_back(i);
    r.cps.push_back(decodeAt(s, i, len));
    i += len;
  }
  r.offsets.push_back(s.size());
  return r;
}

bool isLetter(char32_t c) {
  if (c < 0x80)
    return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  return inRanges(kLetterRanges, c);
}

bool isNumber(char32_t c) {
  if (c < 0x80)
    return c >= '0' && c <= '9';
  return inRanges(kNumberRanges, c);
}

bool isWhitespace(char32_t c) {
  switch (c) {
  case 0x09:
  case 0x0A:
  case 0x0B:
  case 0x0C:
  case 0x0D:
  case 0x20:
  case 0x85:
  case 0xA0:
  case 0x1680:
  case 0x2028:
  case 0x2029:
  case 0x202F:
  case 0x205F:
  case 0x3000:
    return true;
  default:
    return c >= 0x2000 && c <= 0x200A;
  }
}

bool isWordChar(char32_t c) {
  if (c < 0x80)
    return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9') || c == '_';
  return inRanges(kWordRanges, c);
}

uint8_t combiningClass(char32_t c) {
  if (c < 0x300)
    return 0;
  const CombiningClassRange *end = kCombiningClasses + std::size(kCombiningClasses);
  const CombiningClassRange *it = std::upper_bound(
      kCombiningClasses, end, static_cast<uint32_t>(c),
      [](uint32_t v, const CombiningClassRange &r) { return v < r.lo; });
  if (it == kCombiningClasses)
    return 0;
  --it;
  return c <= it->hi ? it->ccc : 0;
}

namespace {

std::string decomposed(std::string_view s, bool compat) {
  if (isAscii(s))
    return std::string(s);
  std::string out;
  out.reserve(s.size());
  for (char32_t c : canonicalDecomposition(s, compat))
    appendUtf8(out, c);
  return out;
}

std::string composed(std::string_view s, bool compat) {
  if (isAscii(s))
    return std::string(s);
  std::vector<char32_t> d = canonicalDecomposition(s, compat);
  std::vector<char32_t> out;
  out.reserve(d.size());
  // Canonical composition (UAX #15): `starter` indexes the last starter in
  // `out` that can still compose; `lastClass` is the class of the last
  // character after it (-1: none yet, so the next one is adjacent).
  long starter = -1;
  int lastClass = -1;
  for (char32_t c : d) {
    int cls = combiningClass(c);
    if (starter >= 0) {
      bool blocked = lastClass != -1 && (lastClass == 0 || lastClass >= cls);
      char32_t composed;
      if (!blocked && compose(out[starter], c, composed)) {
        out[starter] = composed;
        continue;
      }
    }
    if (cls == 0) {
      starter = static_cast<long>(out.size());
      lastClass = -1;
    } else {
      lastClass = cls;
    }
    out.push_back(c);
  }
  std::string r;
  r.reserve(s.size());
  for (char32_t c : out)
    appendUtf8(r, c);
  return r;
}

} // namespace

std::string nfd(std::string_view s) { return decomposed(s, false); }
std::string nfkd(std::string_view s) { return decomposed(s, true); }
std::string nfc(std::string_view s) { return composed(s, false); }
std::string nfkc(std::string_view s) { return composed(s, true); }

std::string lowercase(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    unsigned char b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      out += static_cast<char>(b >= 'A' && b <= 'Z' ? b + 32 : b);
      ++i;
      continue;
    }
    size_t len;
    char32_t c = decodeAt(s, i, len);
    if (const Decomposition *m = findMapping(kLowercase, c)) {
      for (size_t k = 0; k < m->length; ++k)
        appendUtf8(out, kLowercasePool[m->offset + k]);
    } else {
      out.append(s.data() + i, len);
    }
    i += len;
  }
  return out;
}

bool isMark(char32_t c) { return c >= 0x300 && inRanges(kMarkRanges, c); }
bool isNonspacingMark(char32_t c) { return c >= 0x300 && inRanges(kNonspacingMarkRanges, c); }
bool isBertCleaned(char32_t c) { return inRanges(kBertCleanRanges, c); }
bool isPunctuation(char32_t c) { return inRanges(kPunctuationRanges, c); }
bool isRustWordChar(char32_t c) {
  if (c < 0x80)
    return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9') || c == '_';
  return inRanges(kRustWordRanges, c);
}

} // namespace accel::rt::tok::unicode
