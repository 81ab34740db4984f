//===- JinjaJson.cpp - JSON in and out of chat templates ------------------===//
#include "runtime/serving/chat/JinjaJson.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace accel::rt::jinja {

Value fromJson(const json::Value &v) {
  switch (v.type()) {
  case json::Type::kNull:
    return Value::none();
  case json::Type::kBool:
    return Value(v.asBool());
  case json::Type::kNumber:
    if (v.isInteger())
      return Value(int64_t(v.asInt()));
    return Value(v.asDouble());
  case json::Type::kString:
    return Value(v.asString());
  case json::Type::kArray: {
    List l;
    for (const json::Value &e : v.items())
      l.push_back(fromJson(e));
    return Value(std::move(l));
  }
  case json::Type::kObject: {
    Dict d;
    for (const json::Member &m : v.members()) {
      // A repeated key: the last one wins, as in Python's json.
      auto it = std::find_if(d.begin(), d.end(), [&](const auto &p) { return p.first == m.first; });
      if (it != d.end())
        it->second = fromJson(m.second);
      else
        d.emplace_back(m.first, fromJson(m.second));
    }
    return Value(std::move(d));
  }
  }
  return Value::none();
}

namespace {

void dumpString(const std::string &s, bool ensureAscii, std::string &out) {
  out += '"';
  for (char32_t c : toCodePoints(s)) {
    switch (c) {
    case U'"': out += "\\\""; break;
    case U'\\': out += "\\\\"; break;
    case U'\n': out += "\\n"; break;
    case U'\r': out += "\\r"; break;
    case U'\t': out += "\\t"; break;
    case U'\b': out += "\\b"; break;
    case U'\f': out += "\\f"; break;
    default:
      if (c < 0x20 || (ensureAscii && c >= 0x7f)) {
        char b[16];
        if (c >= 0x10000) { // a surrogate pair, as Python writes it
          char32_t v = c - 0x10000;
          std::snprintf(b, sizeof b, "\\u%04x\\u%04x", unsigned(0xd800 + (v >> 10)),
                        unsigned(0xdc00 + (v & 0x3ff)));
        } else {
          std::snprintf(b, sizeof b, "\\u%04x", unsigned(c));
        }
        out += b;
      } else {
        out += fromCodePoints(std::u32string(1, c));
      }
    }
  }
  out += '"';
}

void dump(const Value &v, const DumpOptions &o, int level, std::string &out) {
  const bool pretty = o.indent >= 0 || !o.indentString.empty();
  auto newline = [&](int lv) {
    out += '\n';
    for (int i = 0; i < lv; ++i)
      out += o.indentString.empty() ? std::string(size_t(o.indent), ' ') : o.indentString;
  };
  switch (v.kind()) {
  case Value::Kind::kNone:
    out += "null";
    return;
  case Value::Kind::kBool:
    out += v.asBool() ? "true" : "false";
    return;
  case Value::Kind::kInt:
    out += std::to_string(v.asInt());
    return;
  case Value::Kind::kFloat: {
    double d = v.asFloat();
    out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d < 0 ? "-Infinity" : "Infinity") : formatFloat(d);
    return;
  }
  case Value::Kind::kString:
    dumpString(v.asString(), o.ensureAscii, out);
    return;
  case Value::Kind::kList: {
    if (v.list().empty()) {
      out += "[]";
      return;
    }
    out += '[';
    for (size_t i = 0; i < v.list().size(); ++i) {
      if (i)
        out += o.itemSeparator;
      if (pretty)
        newline(level + 1);
      dump(v.list()[i], o, level + 1, out);
    }
    if (pretty)
      newline(level);
    out += ']';
    return;
  }
  case Value::Kind::kDict: {
    if (v.dict().empty()) {
      out += "{}";
      return;
    }
    std::vector<const std::pair<std::string, Value> *> members;
    for (const auto &m : v.dict())
      members.push_back(&m);
    if (o.sortKeys)
      std::stable_sort(members.begin(), members.end(),
                       [](auto *a, auto *b) { return toCodePoints(a->first) < toCodePoints(b->first); });
    out += '{';
    for (size_t i = 0; i < members.size(); ++i) {
      if (i)
        out += o.itemSeparator;
      if (pretty)
        newline(level + 1);
      dumpString(members[i]->first, o.ensureAscii, out);
      out += o.keySeparator;
      dump(members[i]->second, o, level + 1, out);
    }
    if (pretty)
      newline(level);
    out += '}';
    return;
  }
  case Value::Kind::kUndefined:
    throw EvalError("tojson: an undefined value is not JSON serializable");
  case Value::Kind::kFunction:
    throw EvalError("tojson: a function is not JSON serializable");
  }
}

} // namespace

std::string dumpJson(const Value &v, const DumpOptions &options) {
  std::string out;
  dump(v, options, 0, out);
  return out;
}

} // namespace accel::rt::jinja
