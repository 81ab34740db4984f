//===- Regex.cpp - regular expressions for constrained output -------------===//

#include "runtime/serving/structured/Regex.h"

#include <string>

namespace accel::rt::structured {
namespace {

constexpr int64_t kMaxCount = 1000; // {n,m} bounds

CharSet digit() {
  CharSet s;
  s.add('0', '9');
  return s;
}
CharSet word() {
  CharSet s;
  s.add('0', '9');
  s.add('A', 'Z');
  s.add('a', 'z');
  s.add('_', '_');
  return s;
}
CharSet space() {
  CharSet s;
  s.add(' ', ' ');
  s.add('\t', '\r'); // \t \n \v \f \r
  return s;
}

class Parser {
public:
  explicit Parser(std::string_view p) : p_(p) {}

  StatusOr<PatternPtr> parse() {
    if (at('^'))
      ++i_;
    StatusOr<PatternPtr> r = alternation();
    if (!r)
      return r;
    if (i_ < p_.size()) {
      if (p_[i_] == ')')
        return fail("has an unmatched ')'");
      return fail("has an unexpected '" + std::string(1, p_[i_]) + "'");
    }
    return r;
  }

private:
  bool at(char c) const { return i_ < p_.size() && p_[i_] == c; }

  Status fail(const std::string &what, size_t where = SIZE_MAX) const {
    return invalidArgument("regex " + what + " at offset " +
                           std::to_string(where == SIZE_MAX ? i_ : where));
  }
  Status unsupported(const std::string &what, size_t where) const {
    return unimplemented("regex " + what + " at offset " + std::to_string(where) +
                         " is not supported");
  }

  // One UTF-8 code point of the pattern.
  StatusOr<char32_t> codePoint() {
    unsigned char c = static_cast<unsigned char>(p_[i_]);
    size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    if (len == 0 || i_ + len > p_.size())
      return fail("is not valid UTF-8");
    char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < len; ++k) {
      unsigned char d = static_cast<unsigned char>(p_[i_ + k]);
      if ((d & 0xC0) != 0x80)
        return fail("is not valid UTF-8");
      cp = (cp << 6) | (d & 0x3F);
    }
    i_ += len;
    return cp;
  }

  StatusOr<PatternPtr> alternation() {
    std::vector<PatternPtr> options;
    while (true) {
      StatusOr<PatternPtr> c = sequence();
      if (!c)
        return c;
      options.push_back(*c);
      if (!at('|'))
        break;
      ++i_;
    }
    return alt(std::move(options));
  }

  StatusOr<PatternPtr> sequence() {
    std::vector<PatternPtr> parts;
    while (i_ < p_.size() && !at('|') && !at(')')) {
      if (at('$') && i_ + 1 == p_.size()) {
        ++i_;
        break;
      }
      size_t start = i_;
      StatusOr<PatternPtr> a = atom();
      if (!a)
        return a;
      StatusOr<PatternPtr> q = quantified(*a, start);
      if (!q)
        return q;
      parts.push_back(*q);
    }
    return concat(std::move(parts));
  }

  StatusOr<PatternPtr> quantified(PatternPtr a, size_t start) {
    while (i_ < p_.size()) {
      int64_t lo, hi;
      size_t q = i_;
      if (at('*')) {
        lo = 0, hi = -1, ++i_;
      } else if (at('+')) {
        lo = 1, hi = -1, ++i_;
      } else if (at('?')) {
        lo = 0, hi = 1, ++i_;
      } else if (at('{')) {
        // {n}, {n,}, {n,m}; anything else is a literal '{' (as in Python).
        size_t j = i_ + 1;
        auto number = [&](int64_t &v) {
          size_t s = j;
          v = 0;
          while (j < p_.size() && p_[j] >= '0' && p_[j] <= '9' && v <= kMaxCount)
            v = v * 10 + (p_[j++] - '0');
          return j > s;
        };
        if (!number(lo))
          return a;
        hi = lo;
        if (j < p_.size() && p_[j] == ',') {
          ++j;
          if (!number(hi))
            hi = -1;
        }
        if (j >= p_.size() || p_[j] != '}')
          return a;
        i_ = j + 1;
        if (lo > kMaxCount || hi > kMaxCount)
          return fail("repeats more than " + std::to_string(kMaxCount) + " times", q);
        if (hi >= 0 && hi < lo)
          return fail("has a repetition {" + std::to_string(lo) + "," + std::to_string(hi) +
                          "} whose maximum is below its minimum",
                      q);
      } else {
        return a;
      }
      if (at('?'))
        ++i_; // lazy: same language
      else if (at('+'))
        return unsupported("possessive quantifier", i_);
      (void)start;
      a = repeat(a, lo, hi);
    }
    return a;
  }

  StatusOr<PatternPtr> atom() {
    size_t start = i_;
    char c = p_[i_];
    switch (c) {
    case '(': {
      ++i_;
      if (at('?')) {
        ++i_;
        if (at(':')) {
          ++i_;
        } else if (at('P') || at('<')) {
          if (at('P'))
            ++i_;
          if (at('<') && i_ + 1 < p_.size() && (p_[i_ + 1] == '=' || p_[i_ + 1] == '!'))
            return unsupported("look-behind", start);
          if (!at('<'))
            return unsupported("group syntax '(?P" + std::string(at('=') ? "=" : "") + "'",
                               start);
          size_t close = p_.find('>', i_);
          if (close == std::string_view::npos)
            return fail("has an unterminated group name", start);
          i_ = close + 1;
        } else if (at('=') || at('!')) {
          return unsupported("look-ahead", start);
        } else {
          return unsupported("inline flag or group '(?" +
                                 std::string(i_ < p_.size() ? 1 : 0, i_ < p_.size() ? p_[i_] : ' ') +
                                 "'",
                             start);
        }
      }
      StatusOr<PatternPtr> inner = alternation();
      if (!inner)
        return inner;
      if (!at(')'))
        return fail("has an unclosed '('", start);
      ++i_;
      return inner;
    }
    case '[':
      return charClass();
    case '.': {
      ++i_;
      CharSet nl;
      nl.add('\n', '\n');
      return chars(nl.complement());
    }
    case '*':
    case '+':
    case '?':
      return fail("has nothing to repeat");
    case '^':
      return unsupported("'^' after the start", start);
    case '$':
      return unsupported("'$' before the end", start);
    case '\\': {
      StatusOr<CharSet> s = escape(/*inClass=*/false);
      if (!s)
        return s.status();
      return chars(*s);
    }
    default: {
      StatusOr<char32_t> cp = codePoint();
      if (!cp)
        return cp.status();
      CharSet s;
      s.add(*cp, *cp);
      return chars(s);
    }
    }
  }

  StatusOr<CharSet> escape(bool inClass) {
    size_t start = i_;
    ++i_; // backslash
    if (i_ >= p_.size())
      return fail("ends with a lone backslash", start);
    char c = p_[i_++];
    CharSet s;
    auto one = [&](char32_t v) {
      s.add(v, v);
      return s;
    };
    auto hex = [&](size_t n) -> StatusOr<char32_t> {
      if (i_ + n > p_.size())
        return fail("has a truncated \\" + std::string(1, c) + " escape", start);
      char32_t v = 0;
      for (size_t k = 0; k < n; ++k) {
        char h = p_[i_ + k];
        int d = h >= '0' && h <= '9'   ? h - '0'
                : h >= 'a' && h <= 'f' ? h - 'a' + 10
                : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                       : -1;
        if (d < 0)
          return fail("has a bad hex digit in a \\" + std::string(1, c) + " escape", start);
        v = v * 16 + char32_t(d);
      }
      i_ += n;
      if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return fail("escapes a code point that is not a Unicode scalar value", start);
      return v;
    };
    switch (c) {
    case 'd':
      return digit();
    case 'D':
      return digit().complement();
    case 'w':
      return word();
    case 'W':
      return word().complement();
    case 's':
      return space();
    case 'S':
      return space().complement();
    case 'n':
      return one('\n');
    case 't':
      return one('\t');
    case 'r':
      return one('\r');
    case 'f':
      return one('\f');
    case 'v':
      return one('\v');
    case '0':
      return one(0);
    case 'x':
    case 'u': {
      StatusOr<char32_t> v = hex(c == 'x' ? 2 : 4);
      if (!v)
        return v.status();
      return one(*v);
    }
    case 'b':
      if (inClass)
        return one('\b');
      return unsupported("word boundary \\b", start);
    case 'B':
    case 'A':
    case 'Z':
    case 'z':
    case 'G':
      return unsupported("anchor \\" + std::string(1, c), start);
    default:
      break;
    }
    if (c >= '1' && c <= '9')
      return unsupported("back-reference \\" + std::string(1, c), start);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
      return fail("has an unknown escape \\" + std::string(1, c), start);
    if (static_cast<unsigned char>(c) >= 0x80) {
      --i_;
      StatusOr<char32_t> cp = codePoint();
      if (!cp)
        return cp.status();
      return one(*cp);
    }
    return one(static_cast<unsigned char>(c));
  }

  StatusOr<PatternPtr> charClass() {
    size_t start = i_;
    ++i_; // [
    bool negate = false;
    if (at('^'))
      negate = true, ++i_;
    CharSet set;
    bool first = true;
    while (true) {
      if (i_ >= p_.size())
        return fail("has an unclosed '['", start);
      if (at(']') && !first)
        break;
      first = false;
      // One item: a single code point (possibly a range start) or an escape class.
      auto item = [&]() -> StatusOr<CharSet> {
        if (at('\\'))
          return escape(/*inClass=*/true);
        StatusOr<char32_t> cp = codePoint();
        if (!cp)
          return cp.status();
        CharSet s;
        s.add(*cp, *cp);
        return s;
      };
      size_t itemStart = i_;
      StatusOr<CharSet> lo = item();
      if (!lo)
        return lo.status();
      bool single = lo->ranges.size() == 1 && lo->ranges[0].first == lo->ranges[0].second;
      if (single && at('-') && i_ + 1 < p_.size() && p_[i_ + 1] != ']') {
        ++i_;
        StatusOr<CharSet> hi = item();
        if (!hi)
          return hi.status();
        if (hi->ranges.size() != 1 || hi->ranges[0].first != hi->ranges[0].second)
          return fail("has a range whose end is a class", itemStart);
        if (hi->ranges[0].first < lo->ranges[0].first)
          return fail("has a range whose end is below its start", itemStart);
        set.add(lo->ranges[0].first, hi->ranges[0].first);
      } else {
        for (auto r : lo->ranges)
          set.add(r.first, r.second);
      }
    }
    ++i_; // ]
    set.normalise();
    return chars(negate ? set.complement() : set);
  }

  std::string_view p_;
  size_t i_ = 0;
};

} // namespace

StatusOr<PatternPtr> parseRegex(std::string_view pattern) { return Parser(pattern).parse(); }

} // namespace accel::rt::structured
