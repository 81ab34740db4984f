//===- Json.cpp - a small JSON DOM, parser and writer ---------------------===//
#include "core/Json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace accel::rt::json {

const char *typeName(Type t) {
  switch (t) {
  case Type::kNull:
    return "null";
  case Type::kBool:
    return "bool";
  case Type::kNumber:
    return "number";
  case Type::kString:
    return "string";
  case Type::kArray:
    return "array";
  case Type::kObject:
    return "object";
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// Value
//===----------------------------------------------------------------------===//

Value::Value(Array a) : type_(Type::kArray), arr_(std::make_unique<Array>(std::move(a))) {}
Value::Value(Object o)
    : type_(Type::kObject), obj_(std::make_unique<Object>(std::move(o))) {}

Value::Value(const Value &other)
    : type_(other.type_), bool_(other.bool_), isInt_(other.isInt_),
      int_(other.int_), num_(other.num_), str_(other.str_) {
  if (other.arr_)
    arr_ = std::make_unique<Array>(*other.arr_);
  if (other.obj_)
    obj_ = std::make_unique<Object>(*other.obj_);
}

Value &Value::operator=(const Value &other) {
  if (this != &other) {
    Value copy(other);
    *this = std::move(copy);
  }
  return *this;
}

int64_t Value::asInt() const {
  if (type_ != Type::kNumber)
    return 0;
  if (isInt_)
    return int_;
  if (std::isnan(num_))
    return 0;
  if (num_ >= 9223372036854775807.0)
    return std::numeric_limits<int64_t>::max();
  if (num_ <= -9223372036854775808.0)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(num_);
}

const std::string &Value::asString() const {
  static const std::string kEmpty;
  return type_ == Type::kString ? str_ : kEmpty;
}

const Array &Value::items() const {
  static const Array kEmpty;
  return arr_ ? *arr_ : kEmpty;
}

Array &Value::items() {
  if (type_ == Type::kNull) {
    type_ = Type::kArray;
  }
  if (!arr_)
    arr_ = std::make_unique<Array>();
  return *arr_;
}

const Object &Value::members() const {
  static const Object kEmpty;
  return obj_ ? *obj_ : kEmpty;
}

Object &Value::members() {
  if (type_ == Type::kNull)
    type_ = Type::kObject;
  if (!obj_)
    obj_ = std::make_unique<Object>();
  return *obj_;
}

size_t Value::size() const {
  if (type_ == Type::kArray)
    return items().size();
  if (type_ == Type::kObject)
    return members().size();
  return 0;
}

const Value *Value::find(std::string_view key) const {
  if (type_ != Type::kObject || !obj_)
    return nullptr;
  for (auto it = obj_->rbegin(); it != obj_->rend(); ++it)
    if (it->first == key)
      return &it->second;
  return nullptr;
}

Value *Value::find(std::string_view key) {
  return const_cast<Value *>(static_cast<const Value *>(this)->find(key));
}

Value &Value::set(std::string key, Value v) {
  if (type_ != Type::kObject)
    *this = Value::object();
  if (Value *old = find(key)) {
    *old = std::move(v);
    return *old;
  }
  members().emplace_back(std::move(key), std::move(v));
  return members().back().second;
}

Value &Value::push(Value v) {
  if (type_ != Type::kArray)
    *this = Value::array();
  items().push_back(std::move(v));
  return items().back();
}

bool operator==(const Value &a, const Value &b) {
  if (a.type_ != b.type_)
    return false;
  switch (a.type_) {
  case Type::kNull:
    return true;
  case Type::kBool:
    return a.bool_ == b.bool_;
  case Type::kNumber:
    if (a.isInt_ && b.isInt_)
      return a.int_ == b.int_;
    return a.num_ == b.num_;
  case Type::kString:
    return a.str_ == b.str_;
  case Type::kArray:
    return a.items() == b.items();
  case Type::kObject:
    return a.members() == b.members();
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

namespace {

/// The length of the well-formed UTF-8 sequence at s[i..], or 0 when the
/// bytes there are not one (Unicode table 3-7).
size_t utf8SequenceLength(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80)
    return 1;
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
    return 0;
  }
  if (i + n > s.size())
    return 0;
  if (b(i + 1) < lo || b(i + 1) > hi)
    return 0;
  for (size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF)
      return 0;
  return n;
}

void appendUtf8(std::string &out, uint32_t cp) {
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

/// Whether the well-formed JSON number [first, last) is below 1 in
/// magnitude: the decimal exponent of its first significant digit is
/// negative. (A number out of double's range is then an underflow, else an
/// overflow.)
bool tinyMagnitude(const char *first, const char *last) {
  const char *p = first;
  if (p < last && *p == '-')
    ++p;
  int64_t leadingExp = 0; // decimal exponent of the first non-zero digit
  bool found = false;
  int64_t intDigits = 0;
  for (; p < last && *p >= '0' && *p <= '9'; ++p) {
    if (!found && *p != '0')
      found = true;
    if (found)
      ++intDigits;
  }
  if (found) {
    leadingExp = intDigits - 1;
  } else if (p < last && *p == '.') {
    int64_t zeros = 0;
    for (++p; p < last && *p == '0'; ++p)
      ++zeros;
    leadingExp = -(zeros + 1);
  }
  while (p < last && *p != 'e' && *p != 'E')
    ++p;
  int64_t exp = 0;
  bool negative = false;
  if (p < last) {
    ++p;
    if (p < last && (*p == '+' || *p == '-'))
      negative = *p++ == '-';
    for (; p < last; ++p)
      exp = std::min<int64_t>(exp * 10 + (*p - '0'), int64_t(1) << 40); // saturates
  }
  return leadingExp + (negative ? -exp : exp) < 0;
}

class Parser {
public:
  Parser(std::string_view text, const ParseOptions &options)
      : s_(text), opts_(options) {}

  StatusOr<Value> run() {
    skipWhitespace();
    Value v;
    if (!parseValue(v, 0))
      return error_;
    skipWhitespace();
    if (pos_ != s_.size()) {
      fail("unexpected " + describe(pos_) + " after the value", pos_);
      return error_;
    }
    return v;
  }

private:
  std::string_view s_;
  const ParseOptions &opts_;
  size_t pos_ = 0;
  Status error_;

  std::string describe(size_t at) const {
    if (at >= s_.size())
      return "end of input";
    unsigned char c = static_cast<unsigned char>(s_[at]);
    if (c >= 0x20 && c < 0x7F) {
      std::string r = "character '";
      r += static_cast<char>(c);
      r += "'";
      return r;
    }
    char buf[16];
    std::snprintf(buf, sizeof buf, "byte 0x%02X", c);
    return buf;
  }

  void fail(const std::string &what, size_t at) {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    error_ = invalidArgument("invalid JSON: " + what + " at byte " + std::to_string(at) +
                             " (line " + std::to_string(line) + ", column " +
                             std::to_string(col) + ")");
  }

  void skipWhitespace() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        ++pos_;
      else
        break;
    }
  }

  bool literal(const char *word, Value v, Value &out) {
    size_t n = std::strlen(word);
    if (s_.compare(pos_, n, word) != 0) {
      // Report the first byte that differs.
      size_t k = 0;
      while (k < n && pos_ + k < s_.size() && s_[pos_ + k] == word[k])
        ++k;
      fail("invalid literal (expected '" + std::string(word) + "')", pos_ + k);
      return false;
    }
    pos_ += n;
    out = std::move(v);
    return true;
  }

  bool parseValue(Value &out, size_t depth) {
    if (pos_ >= s_.size()) {
      fail("expected a value but found end of input", pos_);
      return false;
    }
    switch (s_[pos_]) {
    case '{':
      return parseObject(out, depth + 1);
    case '[':
      return parseArray(out, depth + 1);
    case '"': {
      std::string str;
      if (!parseString(str))
        return false;
      out = Value(std::move(str));
      return true;
    }
    case 't':
      return literal("true", Value(true), out);
    case 'f':
      return literal("false", Value(false), out);
    case 'n':
      return literal("null", Value(), out);
    default:
      if (s_[pos_] == '-' || (s_[pos_] >= '0' && s_[pos_] <= '9'))
        return parseNumber(out);
      fail("expected a value but found " + describe(pos_), pos_);
      return false;
    }
  }

  bool checkDepth(size_t depth) {
    if (depth > opts_.maxDepth) {
      fail("nesting deeper than " + std::to_string(opts_.maxDepth) + " levels", pos_);
      return false;
    }
    return true;
  }

  bool parseArray(Value &out, size_t depth) {
    if (!checkDepth(depth))
      return false;
    ++pos_; // '['
    Array arr;
    skipWhitespace();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      out = Value(std::move(arr));
      return true;
    }
    while (true) {
      skipWhitespace();
      Value v;
      if (!parseValue(v, depth))
        return false;
      arr.push_back(std::move(v));
      skipWhitespace();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        skipWhitespace();
        if (pos_ < s_.size() && s_[pos_] == ']') {
          fail("trailing comma in array", pos_);
          return false;
        }
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        break;
      }
      fail("expected ',' or ']' in array but found " + describe(pos_), pos_);
      return false;
    }
    out = Value(std::move(arr));
    return true;
  }

  bool parseObject(Value &out, size_t depth) {
    if (!checkDepth(depth))
      return false;
    ++pos_; // '{'
    Object obj;
    skipWhitespace();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      out = Value(std::move(obj));
      return true;
    }
    while (true) {
      skipWhitespace();
      if (pos_ >= s_.size() || s_[pos_] != '"') {
        fail("expected a string key in object but found " + describe(pos_), pos_);
        return false;
      }
      std::string key;
      if (!parseString(key))
        return false;
      skipWhitespace();
      if (pos_ >= s_.size() || s_[pos_] != ':') {
        fail("expected ':' after object key but found " + describe(pos_), pos_);
        return false;
      }
      ++pos_;
      skipWhitespace();
      Value v;
      if (!parseValue(v, depth))
        return false;
      obj.emplace_back(std::move(key), std::move(v));
      skipWhitespace();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        skipWhitespace();
        if (pos_ < s_.size() && s_[pos_] == '}') {
          fail("trailing comma in object", pos_);
          return false;
        }
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        break;
      }
      fail("expected ',' or '}' in object but found " + describe(pos_), pos_);
      return false;
    }
    out = Value(std::move(obj));
    return true;
  }

  bool hex4(size_t at, uint32_t &v) {
    if (at + 4 > s_.size()) {
      fail("truncated \\u escape", at > s_.size() ? s_.size() : at);
      return false;
    }
    v = 0;
    for (size_t k = 0; k < 4; ++k) {
      char c = s_[at + k];
      uint32_t d;
      if (c >= '0' && c <= '9')
        d = c - '0';
      else if (c >= 'a' && c <= 'f')
        d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        d = c - 'A' + 10;
      else {
        fail("invalid hex digit in \\u escape", at + k);
        return false;
      }
      v = v * 16 + d;
    }
    return true;
  }

  bool parseString(std::string &out) {
    size_t start = pos_;
    ++pos_; // '"'
    while (true) {
      if (pos_ >= s_.size()) {
        fail("unterminated string (it starts at byte " + std::to_string(start) + ")", pos_);
        return false;
      }
      unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) {
        fail("raw control character 0x" + std::string(1, "0123456789ABCDEF"[c >> 4]) +
                 std::string(1, "0123456789ABCDEF"[c & 15]) +
                 " in string (write it as an escape)",
             pos_);
        return false;
      }
      if (c == '\\') {
        if (pos_ + 1 >= s_.size()) {
          fail("unterminated escape in string", pos_ + 1);
          return false;
        }
        char e = s_[pos_ + 1];
        switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp;
          if (!hex4(pos_ + 2, cp))
            return false;
          size_t escStart = pos_;
          pos_ += 6;
          if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("lone low surrogate in \\u escape", escStart);
            return false;
          }
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (pos_ + 1 >= s_.size() || s_[pos_] != '\\' || s_[pos_ + 1] != 'u') {
              fail("high surrogate in \\u escape not followed by a low surrogate", escStart);
              return false;
            }
            uint32_t lo;
            if (!hex4(pos_ + 2, lo))
              return false;
            if (lo < 0xDC00 || lo > 0xDFFF) {
              fail("high surrogate in \\u escape not followed by a low surrogate", escStart);
              return false;
            }
            pos_ += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          appendUtf8(out, cp);
          continue;
        }
        default:
          fail("invalid escape '\\" + std::string(1, e) + "' in string", pos_);
          return false;
        }
        pos_ += 2;
        continue;
      }
      if (c < 0x80) {
        out += static_cast<char>(c);
        ++pos_;
        continue;
      }
      size_t n = utf8SequenceLength(s_, pos_);
      if (n == 0) {
        fail("invalid UTF-8 in string", pos_);
        return false;
      }
      out.append(s_.data() + pos_, n);
      pos_ += n;
    }
  }

  bool parseNumber(Value &out) {
    size_t start = pos_;
    size_t p = pos_;
    bool isInt = true;
    if (s_[p] == '-')
      ++p;
    if (p >= s_.size() || !(s_[p] >= '0' && s_[p] <= '9')) {
      fail("expected a digit in number", p);
      return false;
    }
    if (s_[p] == '0') {
      ++p;
      if (p < s_.size() && s_[p] >= '0' && s_[p] <= '9') {
        fail("leading zero in number", start);
        return false;
      }
    } else {
      while (p < s_.size() && s_[p] >= '0' && s_[p] <= '9')
        ++p;
    }
    if (p < s_.size() && s_[p] == '.') {
      isInt = false;
      ++p;
      if (p >= s_.size() || !(s_[p] >= '0' && s_[p] <= '9')) {
        fail("expected a digit after '.' in number", p);
        return false;
      }
      while (p < s_.size() && s_[p] >= '0' && s_[p] <= '9')
        ++p;
    }
    if (p < s_.size() && (s_[p] == 'e' || s_[p] == 'E')) {
      isInt = false;
      ++p;
      if (p < s_.size() && (s_[p] == '+' || s_[p] == '-'))
        ++p;
      if (p >= s_.size() || !(s_[p] >= '0' && s_[p] <= '9')) {
        fail("expected a digit in the exponent of number", p);
        return false;
      }
      while (p < s_.size() && s_[p] >= '0' && s_[p] <= '9')
        ++p;
    }
    const char *first = s_.data() + start;
    const char *last = s_.data() + p;
    double d = 0;
    auto [dp, dec] = std::from_chars(first, last, d);
    if (dec == std::errc::result_out_of_range) {
      // Underflow to zero is fine (1e-400 is 0); overflow is not. Which one
      // it is goes by the decimal magnitude, not the exponent's sign alone
      // ("1" and 400 zeros "e-1" overflows).
      if (!tinyMagnitude(first, last)) {
        fail("number out of range", start);
        return false;
      }
      d = (s_[start] == '-') ? -0.0 : 0.0;
    } else if (dec != std::errc() || dp != last) {
      fail("malformed number", start);
      return false;
    }
    pos_ = p;
    if (isInt) {
      int64_t i = 0;
      auto [ip, iec] = std::from_chars(first, last, i);
      if (iec == std::errc() && ip == last) {
        out = Value(i);
        return true;
      }
    }
    out = Value(d);
    return true;
  }
};

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

void quoteInto(std::string &out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      size_t n = utf8SequenceLength(s, i);
      if (n == 0) {
        out += "\xEF\xBF\xBD";
        ++i;
      } else {
        out.append(s.data() + i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default:
      if (c < 0x20) {
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 15];
      } else {
        out += static_cast<char>(c);
      }
    }
    ++i;
  }
  out += '"';
}

void writeNumber(std::string &out, const Value &v) {
  if (v.isInteger()) {
    out += std::to_string(v.asInt());
    return;
  }
  double d = v.asDouble();
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  if (d == 0.0 && std::signbit(d)) {
    // "-0" would read back as the integer 0: keep the sign (found by
    // accel-json-fuzzer).
    out += "-0.0";
    return;
  }
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, d);
  if (ec != std::errc()) {
    out += "null";
    return;
  }
  out.append(buf, p);
}

void newline(std::string &out, int indent, int level) {
  out += '\n';
  out.append(static_cast<size_t>(indent) * level, ' ');
}

void writeInto(std::string &out, const Value &v, int indent, int level) {
  switch (v.type()) {
  case Type::kNull:
    out += "null";
    return;
  case Type::kBool:
    out += v.asBool() ? "true" : "false";
    return;
  case Type::kNumber:
    writeNumber(out, v);
    return;
  case Type::kString:
    quoteInto(out, v.asString());
    return;
  case Type::kArray: {
    const Array &a = v.items();
    out += '[';
    for (size_t i = 0; i < a.size(); ++i) {
      if (i)
        out += ',';
      if (indent > 0)
        newline(out, indent, level + 1);
      writeInto(out, a[i], indent, level + 1);
    }
    if (indent > 0 && !a.empty())
      newline(out, indent, level);
    out += ']';
    return;
  }
  case Type::kObject: {
    const Object &o = v.members();
    out += '{';
    for (size_t i = 0; i < o.size(); ++i) {
      if (i)
        out += ',';
      if (indent > 0)
        newline(out, indent, level + 1);
      quoteInto(out, o[i].first);
      out += indent > 0 ? ": " : ":";
      writeInto(out, o[i].second, indent, level + 1);
    }
    if (indent > 0 && !o.empty())
      newline(out, indent, level);
    out += '}';
    return;
  }
  }
}

} // namespace

StatusOr<Value> parse(std::string_view text, const ParseOptions &options) {
  Parser p(text, options);
  return p.run();
}

std::string write(const Value &v, int indent) {
  std::string out;
  writeInto(out, v, indent, 0);
  return out;
}

std::string quote(std::string_view s) {
  std::string out;
  quoteInto(out, s);
  return out;
}

} // namespace accel::rt::json
