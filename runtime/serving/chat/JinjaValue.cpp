//===- JinjaValue.cpp - the values a chat template computes with ----------===//
#include "runtime/serving/chat/JinjaValue.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace accel::rt::jinja {

const Value *CallArgs::get(size_t index, const std::string &name) const {
  for (const auto &kw : kwargs)
    if (kw.first == name)
      return &kw.second;
  return index < args.size() ? &args[index] : nullptr;
}

const Value *Value::find(const std::string &key) const {
  if (!isDict())
    return nullptr;
  for (const auto &m : *dict_)
    if (m.first == key)
      return &m.second;
  return nullptr;
}

bool Value::truthy() const {
  switch (kind_) {
  case Kind::kUndefined:
  case Kind::kNone:
    return false;
  case Kind::kBool:
  case Kind::kInt:
    return int_ != 0;
  case Kind::kFloat:
    return float_ != 0.0;
  case Kind::kString:
    return !str_.empty();
  case Kind::kList:
    return !list_->empty();
  case Kind::kDict:
    return !dict_->empty();
  case Kind::kFunction:
    return true;
  }
  return false;
}

const char *Value::typeName() const {
  switch (kind_) {
  case Kind::kUndefined:
    return "undefined";
  case Kind::kNone:
    return "NoneType";
  case Kind::kBool:
    return "bool";
  case Kind::kInt:
    return "int";
  case Kind::kFloat:
    return "float";
  case Kind::kString:
    return "str";
  case Kind::kList:
    return "list";
  case Kind::kDict:
    return namespace_ ? "Namespace" : "dict";
  case Kind::kFunction:
    return "function";
  }
  return "object";
}

std::string formatFloat(double d) {
  if (std::isnan(d))
    return "nan";
  if (std::isinf(d))
    return d < 0 ? "-inf" : "inf";
  if (d == 0)
    return std::signbit(d) ? "-0.0" : "0.0";
  // The shortest %.Ne that reads back, then Python's layout of it.
  char buf[64];
  for (int prec = 0; prec < 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*e", prec, d);
    if (std::strtod(buf, nullptr) == d)
      break;
  }
  std::string s = buf;
  const bool neg = s[0] == '-';
  if (neg)
    s.erase(0, 1);
  size_t e = s.find('e');
  int exp = std::atoi(s.c_str() + e + 1);
  std::string digits;
  for (size_t i = 0; i < e; ++i)
    if (s[i] != '.')
      digits += s[i];
  while (digits.size() > 1 && digits.back() == '0')
    digits.pop_back();
  std::string out;
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out = "0." + std::string(size_t(-exp - 1), '0') + digits;
    } else if (size_t(exp) + 1 >= digits.size()) {
      out = digits + std::string(size_t(exp) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, size_t(exp) + 1) + "." + digits.substr(size_t(exp) + 1);
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1)
      out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += eb;
  }
  return neg ? "-" + out : out;
}

namespace {

std::string reprString(const std::string &s) {
  const bool hasSingle = s.find('\'') != std::string::npos;
  const char quote = hasSingle && s.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, quote);
  for (char32_t c : toCodePoints(s)) {
    if (c == char32_t(quote) || c == U'\\') {
      out += '\\';
      out += char(c);
    } else if (c == U'\n') {
      out += "\\n";
    } else if (c == U'\r') {
      out += "\\r";
    } else if (c == U'\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0)) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", unsigned(c));
      out += b;
    } else {
      out += fromCodePoints(std::u32string(1, c));
    }
  }
  out += quote;
  return out;
}

} // namespace

std::string Value::str() const {
  switch (kind_) {
  case Kind::kUndefined:
    return "";
  case Kind::kString:
    return str_;
  default:
    return repr();
  }
}

std::string Value::repr() const {
  switch (kind_) {
  case Kind::kUndefined:
    return "";
  case Kind::kNone:
    return "None";
  case Kind::kBool:
    return int_ ? "True" : "False";
  case Kind::kInt:
    return std::to_string(int_);
  case Kind::kFloat:
    return formatFloat(float_);
  case Kind::kString:
    return reprString(str_);
  case Kind::kList: {
    std::string out = "[";
    for (size_t i = 0; i < list_->size(); ++i)
      out += (i ? ", " : "") + (*list_)[i].repr();
    return out + "]";
  }
  case Kind::kDict: {
    std::string out = namespace_ ? "<Namespace {" : "{";
    for (size_t i = 0; i < dict_->size(); ++i)
      out += (i ? ", " : "") + reprString((*dict_)[i].first) + ": " + (*dict_)[i].second.repr();
    return out + (namespace_ ? "}>" : "}");
  }
  case Kind::kFunction:
    return "<function " + str_ + ">";
  }
  return "";
}

bool equals(const Value &a, const Value &b) {
  if (a.isNumber() && b.isNumber()) {
    if (a.isFloat() || b.isFloat())
      return a.asFloat() == b.asFloat();
    return a.asInt() == b.asInt();
  }
  if (a.kind() != b.kind())
    return false;
  switch (a.kind()) {
  case Value::Kind::kUndefined:
  case Value::Kind::kNone:
    return true;
  case Value::Kind::kString:
    return a.asString() == b.asString();
  case Value::Kind::kList: {
    if (a.list().size() != b.list().size())
      return false;
    for (size_t i = 0; i < a.list().size(); ++i)
      if (!equals(a.list()[i], b.list()[i]))
        return false;
    return true;
  }
  case Value::Kind::kDict: {
    if (a.dict().size() != b.dict().size())
      return false;
    for (const auto &m : a.dict()) {
      const Value *o = b.find(m.first);
      if (!o || !equals(m.second, *o))
        return false;
    }
    return true;
  }
  case Value::Kind::kFunction:
    return &a.fn() == &b.fn();
  default:
    return false;
  }
}

bool less(const Value &a, const Value &b) {
  if (a.isNumber() && b.isNumber()) {
    if (a.isFloat() || b.isFloat())
      return a.asFloat() < b.asFloat();
    return a.asInt() < b.asInt();
  }
  if (a.isString() && b.isString())
    return toCodePoints(a.asString()) < toCodePoints(b.asString());
  if (a.isList() && b.isList()) {
    const List &x = a.list(), &y = b.list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (less(x[i], y[i]))
        return true;
      if (less(y[i], x[i]))
        return false;
    }
    return x.size() < y.size();
  }
  throw EvalError(std::string("'<' is not supported between instances of '") + a.typeName() +
                  "' and '" + b.typeName() + "'");
}

std::u32string toCodePoints(const std::string &s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    char32_t cp = c;
    size_t n = 1;
    if (c >= 0xf0) {
      n = 4;
      cp = c & 0x07;
    } else if (c >= 0xe0) {
      n = 3;
      cp = c & 0x0f;
    } else if (c >= 0xc0) {
      n = 2;
      cp = c & 0x1f;
    }
    if (i + n > s.size()) { // a truncated sequence: keep the bytes as they are
      n = 1;
      cp = c;
    } else {
      for (size_t k = 1; k < n; ++k)
        cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
    }
    out += cp;
    i += n;
  }
  return out;
}

std::string fromCodePoints(const std::u32string &s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) {
    if (c < 0x80) {
      out += char(c);
    } else if (c < 0x800) {
      out += char(0xc0 | (c >> 6));
      out += char(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      out += char(0xe0 | (c >> 12));
      out += char(0x80 | ((c >> 6) & 0x3f));
      out += char(0x80 | (c & 0x3f));
    } else {
      out += char(0xf0 | (c >> 18));
      out += char(0x80 | ((c >> 12) & 0x3f));
      out += char(0x80 | ((c >> 6) & 0x3f));
      out += char(0x80 | (c & 0x3f));
    }
  }
  return out;
}

bool isPySpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
         c == 0x202f || c == 0x205f || c == 0x3000;
}

} // namespace accel::rt::jinja
