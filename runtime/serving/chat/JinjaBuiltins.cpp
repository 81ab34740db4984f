//===- JinjaBuiltins.cpp - filters, tests, methods and globals ------------===//
#include "runtime/serving/chat/JinjaBuiltins.h"

#include "runtime/serving/chat/JinjaJson.h"

#include <algorithm>
#include <cmath>
#include <ctime>

namespace accel::rt::jinja {

namespace {

[[noreturn]] void typeError(const std::string &what) { throw EvalError(what); }


int64_t toInt(const Value &v, const char *what) {
  if (v.isInt() || v.isBool())
    return v.asInt();
  if (v.isFloat())
    return int64_t(v.asFloat());
  typeError(std::string(what) + " must be an integer, not " + v.typeName());
}

/// The members of the dicts among the positional arguments, then the
/// keyword arguments (namespace() and dict()).
Dict mergedDictArgs(const CallArgs &a) {
  Dict d;
  for (const Value &x : a.args)
    if (x.isDict())
      for (const auto &m : x.dict())
        d.push_back(m);
  for (const auto &kw : a.kwargs)
    d.push_back(kw);
  return d;
}

/// Python's str.strip / lstrip / rstrip with an optional set of characters.
std::string strip(const std::string &s, const Value *chars, bool left, bool right) {
  std::u32string cs = toCodePoints(s);
  std::u32string set;
  const bool bySet = chars && !chars->isNone() && !chars->isUndefined();
  if (bySet)
    set = toCodePoints(chars->str());
  auto drop = [&](char32_t c) { return bySet ? set.find(c) != std::u32string::npos : isPySpace(c); };
  size_t b = 0, e = cs.size();
  if (left)
    while (b < e && drop(cs[b]))
      ++b;
  if (right)
    while (e > b && drop(cs[e - 1]))
      --e;
  return fromCodePoints(cs.substr(b, e - b));
}

List split(const std::string &s, const Value *sep, int64_t maxsplit) {
  List out;
  if (!sep || sep->isNone()) { // runs of whitespace
    std::u32string cs = toCodePoints(s);
    size_t i = 0;
    while (i < cs.size()) {
      while (i < cs.size() && isPySpace(cs[i]))
        ++i;
      if (i >= cs.size())
        break;
      if (maxsplit >= 0 && int64_t(out.size()) == maxsplit) {
        size_t e = cs.size();
        while (e > i && isPySpace(cs[e - 1]))
          --e;
        out.push_back(Value(fromCodePoints(cs.substr(i, e - i))));
        return out;
      }
      size_t j = i;
      while (j < cs.size() && !isPySpace(cs[j]))
        ++j;
      out.push_back(Value(fromCodePoints(cs.substr(i, j - i))));
      i = j;
    }
    return out;
  }
  std::string d = sep->str();
  if (d.empty())
    typeError("split: empty separator");
  size_t pos = 0;
  while (true) {
    size_t f = s.find(d, pos);
    if (f == std::string::npos || (maxsplit >= 0 && int64_t(out.size()) == maxsplit)) {
      out.push_back(Value(s.substr(pos)));
      return out;
    }
    out.push_back(Value(s.substr(pos, f - pos)));
    pos = f + d.size();
  }
}

std::string replaceAll(const std::string &s, const std::string &from, const std::string &to,
                       int64_t count) {
  std::string out;
  if (from.empty()) { // Python inserts `to` between characters
    std::u32string cs = toCodePoints(s);
    int64_t n = 0;
    for (char32_t c : cs) {
      if (count < 0 || n < count) {
        out += to;
        ++n;
      }
      out += fromCodePoints(std::u32string(1, c));
    }
    if (count < 0 || n < count)
      out += to;
    return out;
  }
  size_t pos = 0;
  int64_t n = 0;
  while (true) {
    size_t f = s.find(from, pos);
    if (f == std::string::npos || (count >= 0 && n >= count)) {
      out += s.substr(pos);
      return out;
    }
    out += s.substr(pos, f - pos) + to;
    pos = f + from.size();
    ++n;
  }
}

std::string asciiMap(const std::string &s, int (*f)(int)) {
  std::string out = s;
  for (char &c : out)
    if (static_cast<unsigned char>(c) < 0x80)
      c = char(f(static_cast<unsigned char>(c)));
  return out;
}
std::string upper(const std::string &s) { return asciiMap(s, [](int c) { return c >= 'a' && c <= 'z' ? c - 32 : c; }); }
std::string lower(const std::string &s) { return asciiMap(s, [](int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }); }
std::string capitalize(const std::string &s) {
  std::string l = lower(s);
  if (!l.empty() && l[0] >= 'a' && l[0] <= 'z')
    l[0] = char(l[0] - 32);
  return l;
}
std::string title(const std::string &s) {
  std::string out = s;
  bool prevCased = false;
  for (char &c : out) {
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (alpha)
      c = prevCased ? char(c | 0x20) : char(c & ~0x20);
    prevCased = alpha;
  }
  return out;
}

/// Python's str.splitlines (line boundaries \n, \r, \r\n and the others).
std::vector<std::string> splitlines(const std::string &s) {
  std::vector<std::string> out;
  std::u32string cs = toCodePoints(s);
  std::u32string cur;
  for (size_t i = 0; i < cs.size(); ++i) {
    char32_t c = cs[i];
    if (c == U'\n' || c == U'\r' || c == 0x0b || c == 0x0c || c == 0x1c || c == 0x1d ||
        c == 0x1e || c == 0x85 || c == 0x2028 || c == 0x2029) {
      if (c == U'\r' && i + 1 < cs.size() && cs[i + 1] == U'\n')
        ++i;
      out.push_back(fromCodePoints(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty())
    out.push_back(fromCodePoints(cur));
  return out;
}

int64_t length(const Value &v) {
  switch (v.kind()) {
  case Value::Kind::kString:
    return int64_t(toCodePoints(v.asString()).size());
  case Value::Kind::kList:
    return int64_t(v.list().size());
  case Value::Kind::kDict:
    return int64_t(v.dict().size());
  case Value::Kind::kUndefined:
    return 0;
  default:
    typeError(std::string("object of type '") + v.typeName() + "' has no len()");
  }
}

/// Python's `needle in haystack`.
bool contains(const Value &haystack, const Value &needle) {
  switch (haystack.kind()) {
  case Value::Kind::kString:
    if (!needle.isString())
      typeError(std::string("'in <string>' requires string as left operand, not ") +
                needle.typeName());
    return haystack.asString().find(needle.asString()) != std::string::npos;
  case Value::Kind::kList:
    for (const Value &e : haystack.list())
      if (equals(e, needle))
        return true;
    return false;
  case Value::Kind::kDict:
    return needle.isString() && haystack.find(needle.asString()) != nullptr;
  case Value::Kind::kUndefined:
    return false;
  default:
    typeError(std::string("argument of type '") + haystack.typeName() + "' is not iterable");
  }
}

/// Args after the first `skip` positional ones (for select's test arguments).
CallArgs rest(const CallArgs &a, size_t skip) {
  CallArgs r;
  for (size_t i = skip; i < a.args.size(); ++i)
    r.args.push_back(a.args[i]);
  r.kwargs = a.kwargs;
  return r;
}

Value selectOrReject(const Value &seq, const CallArgs &args, bool byAttr, bool keep) {
  List out;
  for (const Value &item : iterate(seq)) {
    Value v = item;
    size_t next = 0;
    if (byAttr) {
      if (args.args.empty())
        typeError("selectattr/rejectattr need an attribute name");
      v = attribute(item, args.args[0].str());
      next = 1;
    }
    bool ok;
    if (args.args.size() > next)
      ok = applyTest(args.args[next].str(), v, rest(args, next + 1));
    else
      ok = v.truthy();
    if (ok == keep)
      out.push_back(item);
  }
  return Value(std::move(out));
}

Value htmlEscape(const std::string &s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&#34;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
    }
  }
  return Value(out);
}

Value indent(const std::string &in, const Value *width, bool first, bool blank) {
  std::string ind = width && width->isString() ? width->asString()
                                               : std::string(size_t(width ? toInt(*width, "indent width") : 4), ' ');
  std::vector<std::string> lines = splitlines(in + "\n");
  std::string rv;
  if (blank) {
    for (size_t i = 0; i < lines.size(); ++i)
      rv += (i ? "\n" + ind : "") + lines[i];
  } else {
    rv = lines.empty() ? "" : lines[0];
    for (size_t i = 1; i < lines.size(); ++i)
      rv += "\n" + (lines[i].empty() ? "" : ind + lines[i]);
  }
  if (first)
    rv = ind + rv;
  return Value(rv);
}

Value toJson(const Value &v, const CallArgs &a) {
  DumpOptions o;
  if (const Value *x = a.get(0, "ensure_ascii"))
    o.ensureAscii = x->truthy();
  if (const Value *x = a.get(1, "indent"); x && !x->isNone()) {
    if (x->isString())
      o.indentString = x->asString(), o.indent = 0;
    else
      o.indent = int(std::max<int64_t>(0, toInt(*x, "tojson's indent")));
    o.itemSeparator = ",";
  }
  if (const Value *x = a.get(2, "separators"); x && !x->isNone()) {
    if (!x->isList() || x->list().size() != 2)
      typeError("tojson's separators must be a pair (item separator, key separator)");
    o.itemSeparator = x->list()[0].str();
    o.keySeparator = x->list()[1].str();
  }
  if (const Value *x = a.get(3, "sort_keys"))
    o.sortKeys = x->truthy();
  return Value(dumpJson(v, o));
}

std::string strftimeNow(const std::string &fmt) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[512];
  size_t n = std::strftime(buf, sizeof buf, fmt.c_str(), &tm);
  return std::string(buf, n);
}

} // namespace

List iterate(const Value &v) {
  switch (v.kind()) {
  case Value::Kind::kList:
    return v.list();
  case Value::Kind::kDict: {
    List keys;
    for (const auto &m : v.dict())
      keys.push_back(Value(m.first));
    return keys;
  }
  case Value::Kind::kString: {
    List chars;
    for (char32_t c : toCodePoints(v.asString()))
      chars.push_back(Value(fromCodePoints(std::u32string(1, c))));
    return chars;
  }
  case Value::Kind::kUndefined:
    return {};
  default:
    typeError(std::string("'") + v.typeName() + "' object is not iterable");
  }
}

Value attribute(const Value &v, const std::string &attr) {
  Value cur = v;
  size_t pos = 0;
  while (true) {
    size_t dot = attr.find('.', pos);
    std::string part = attr.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    if (cur.isDict()) {
      const Value *m = cur.find(part);
      cur = m ? *m : Value::undefined(part);
    } else if (cur.isList() && !part.empty() && part.size() < 19 &&
               std::all_of(part.begin(), part.end(), ::isdigit)) {
      size_t i = std::stoul(part);
      cur = i < cur.list().size() ? cur.list()[i] : Value::undefined(part);
    } else {
      cur = Value::undefined(part);
    }
    if (dot == std::string::npos)
      return cur;
    pos = dot + 1;
  }
}

Value applyFilter(const std::string &name, const Value &v, const CallArgs &a) {
  if (name == "trim")
    return Value(strip(v.str(), a.get(0, "chars"), true, true));
  if (name == "tojson")
    return toJson(v, a);
  if (name == "length" || name == "count")
    return Value(length(v));
  if (name == "upper")
    return Value(upper(v.str()));
  if (name == "lower")
    return Value(lower(v.str()));
  if (name == "capitalize")
    return Value(capitalize(v.str()));
  if (name == "title")
    return Value(title(v.str()));
  if (name == "default" || name == "d") {
    const Value *dflt = a.get(0, "default_value");
    const Value *boolean = a.get(1, "boolean");
    bool useDefault = v.isUndefined() || (boolean && boolean->truthy() && !v.truthy());
    return useDefault ? (dflt ? *dflt : Value("")) : v;
  }
  if (name == "join") {
    const Value *sep = a.get(0, "d");
    const Value *attr = a.get(1, "attribute");
    std::string out;
    bool firstItem = true;
    for (const Value &e : iterate(v)) {
      if (!firstItem)
        out += sep ? sep->str() : "";
      firstItem = false;
      out += (attr ? attribute(e, attr->str()) : e).str();
    }
    return Value(out);
  }
  if (name == "first" || name == "last") {
    List items = iterate(v);
    if (items.empty())
      return Value::undefined();
    return name == "first" ? items.front() : items.back();
  }
  if (name == "items") {
    if (v.isUndefined())
      return Value(List{});
    if (!v.isDict())
      typeError(std::string("the items filter needs a mapping, not ") + v.typeName());
    List out;
    for (const auto &m : v.dict())
      out.push_back(Value(List{Value(m.first), m.second}));
    return Value(std::move(out));
  }
  if (name == "list")
    return Value(iterate(v));
  if (name == "string")
    return Value(v.str());
  if (name == "int") {
    const Value *dflt = a.get(0, "default");
    if (v.isInt() || v.isBool() || v.isFloat())
      return Value(v.asInt());
    if (v.isString()) {
      std::string s = strip(v.asString(), nullptr, true, true);
      try {
        size_t used = 0;
        int64_t i = std::stoll(s, &used, 10);
        if (used == s.size())
          return Value(i);
        double d = std::stod(s, &used);
        if (used == s.size())
          return Value(int64_t(d));
      } catch (...) {
      }
    }
    return dflt ? *dflt : Value(0);
  }
  if (name == "float") {
    const Value *dflt = a.get(0, "default");
    if (v.isNumber())
      return Value(v.asFloat());
    if (v.isString()) {
      try {
        size_t used = 0;
        std::string s = strip(v.asString(), nullptr, true, true);
        double d = std::stod(s, &used);
        if (used == s.size())
          return Value(d);
      } catch (...) {
      }
    }
    return dflt ? *dflt : Value(0.0);
  }
  if (name == "abs") {
    if (v.isFloat())
      return Value(std::fabs(v.asFloat()));
    if (v.isInt() || v.isBool())
      return Value(int64_t(std::llabs(v.asInt())));
    typeError(std::string("bad operand type for abs(): '") + v.typeName() + "'");
  }
  if (name == "round") {
    const Value *p = a.get(0, "precision");
    double scale = std::pow(10.0, double(p ? toInt(*p, "round's precision") : 0));
    return Value(std::round(v.asFloat() * scale) / scale);
  }
  if (name == "selectattr" || name == "rejectattr")
    return selectOrReject(v, a, true, name == "selectattr");
  if (name == "select" || name == "reject")
    return selectOrReject(v, a, false, name == "select");
  if (name == "map") {
    List out;
    const Value *attr = nullptr;
    for (const auto &kw : a.kwargs)
      if (kw.first == "attribute")
        attr = &kw.second;
    for (const Value &e : iterate(v)) {
      if (attr) {
        Value r = attribute(e, attr->str());
        if (r.isUndefined())
          for (const auto &kw : a.kwargs)
            if (kw.first == "default")
              r = kw.second;
        out.push_back(r);
      } else {
        if (a.args.empty())
          typeError("map needs a filter name or attribute=");
        out.push_back(applyFilter(a.args[0].str(), e, rest(a, 1)));
      }
    }
    return Value(std::move(out));
  }
  if (name == "safe")
    return v.isString() ? v : Value(v.str());
  if (name == "escape" || name == "e")
    return htmlEscape(v.str());
  if (name == "indent") {
    const Value *first = a.get(1, "first");
    const Value *blank = a.get(2, "blank");
    return indent(v.str(), a.get(0, "width"), first && first->truthy(), blank && blank->truthy());
  }
  if (name == "replace") {
    const Value *from = a.get(0, "old");
    const Value *to = a.get(1, "new");
    const Value *count = a.get(2, "count");
    if (!from || !to)
      typeError("replace needs the old and the new string");
    return Value(replaceAll(v.str(), from->str(), to->str(),
                            count && !count->isNone() ? toInt(*count, "replace's count") : -1));
  }
  if (name == "reverse") {
    if (v.isString()) {
      std::u32string cs = toCodePoints(v.asString());
      std::reverse(cs.begin(), cs.end());
      return Value(fromCodePoints(cs));
    }
    List items = iterate(v);
    std::reverse(items.begin(), items.end());
    return Value(std::move(items));
  }
  if (name == "sort") {
    List items = iterate(v);
    const Value *rev = a.get(0, "reverse");
    const Value *attr = a.get(2, "attribute");
    std::stable_sort(items.begin(), items.end(), [&](const Value &x, const Value &y) {
      return attr ? less(attribute(x, attr->str()), attribute(y, attr->str())) : less(x, y);
    });
    if (rev && rev->truthy())
      std::reverse(items.begin(), items.end());
    return Value(std::move(items));
  }
  if (name == "unique") {
    List out;
    for (const Value &e : iterate(v))
      if (std::none_of(out.begin(), out.end(), [&](const Value &o) { return equals(o, e); }))
        out.push_back(e);
    return Value(std::move(out));
  }
  if (name == "sum") {
    const Value *attr = a.get(0, "attribute");
    const Value *start = a.get(1, "start");
    Value total = start ? *start : Value(0);
    for (const Value &e0 : iterate(v)) {
      Value e = attr ? attribute(e0, attr->str()) : e0;
      if (!e.isNumber() || !total.isNumber())
        typeError(std::string("sum: unsupported operand type ") + e.typeName());
      total = (e.isFloat() || total.isFloat()) ? Value(total.asFloat() + e.asFloat())
                                               : Value(total.asInt() + e.asInt());
    }
    return total;
  }
  if (name == "min" || name == "max") {
    List items = iterate(v);
    if (items.empty())
      return Value::undefined();
    Value best = items[0];
    for (const Value &e : items)
      if (name == "min" ? less(e, best) : less(best, e))
        best = e;
    return best;
  }
  typeError("no filter named '" + name + "'");
}

bool applyTest(const std::string &name, const Value &v, const CallArgs &a) {
  auto arg = [&]() -> const Value & {
    if (a.args.empty())
      typeError("the test '" + name + "' needs an argument");
    return a.args[0];
  };
  // The tests of the value's kind.
  struct KindTest {
    const char *name;
    bool (*test)(const Value &);
  };
  static const KindTest kKindTests[] = {
      {"defined", [](const Value &x) { return !x.isUndefined(); }},
      {"undefined", [](const Value &x) { return x.isUndefined(); }},
      {"none", [](const Value &x) { return x.isNone(); }},
      {"string", [](const Value &x) { return x.isString(); }},
      {"mapping", [](const Value &x) { return x.isDict(); }},
      {"iterable",
       [](const Value &x) { return x.isString() || x.isList() || x.isDict() || x.isUndefined(); }},
      {"sequence", [](const Value &x) { return x.isString() || x.isList() || x.isDict(); }},
      {"number", [](const Value &x) { return x.isNumber(); }},
      {"integer", [](const Value &x) { return x.isInt(); }},
      {"float", [](const Value &x) { return x.isFloat(); }},
      {"boolean", [](const Value &x) { return x.isBool(); }},
      {"true", [](const Value &x) { return x.isBool() && x.asBool(); }},
      {"false", [](const Value &x) { return x.isBool() && !x.asBool(); }},
      {"callable", [](const Value &x) { return x.isFunction(); }},
  };
  for (const KindTest &t : kKindTests)
    if (name == t.name)
      return t.test(v);
  if (name == "equalto" || name == "eq" || name == "==")
    return equals(v, arg());
  if (name == "ne" || name == "!=")
    return !equals(v, arg());
  if (name == "lt" || name == "lessthan" || name == "<")
    return less(v, arg());
  if (name == "gt" || name == "greaterthan" || name == ">")
    return less(arg(), v);
  if (name == "le" || name == "<=")
    return !less(arg(), v);
  if (name == "ge" || name == ">=")
    return !less(v, arg());
  if (name == "in")
    return contains(arg(), v);
  if (name == "sameas")
    return v.kind() == arg().kind() && equals(v, arg());
  if (name == "divisibleby") {
    int64_t d = toInt(arg(), "divisibleby's argument");
    return d != 0 && toInt(v, "divisibleby's value") % d == 0;
  }
  if (name == "odd")
    return toInt(v, "odd's value") % 2 != 0;
  if (name == "even")
    return toInt(v, "even's value") % 2 == 0;
  if (name == "lower")
    return v.isString() && lower(v.asString()) == v.asString();
  if (name == "upper")
    return v.isString() && upper(v.asString()) == v.asString();
  if (name == "escaped")
    return false;
  typeError("no test named '" + name + "'");
}

Value method(const Value &v, const std::string &name) {
  if (v.isString()) {
    const std::string s = v.asString();
    auto fn = [&](Function f) { return Value::function("str." + name, std::move(f)); };
    if (name == "startswith" || name == "endswith") {
      bool start = name == "startswith";
      return fn([s, start](const CallArgs &a) {
        const Value *p = a.get(0, "prefix");
        if (!p)
          typeError("startswith/endswith need an argument");
        List options = p->isList() ? p->list() : List{*p};
        for (const Value &o : options) {
          std::string x = o.str();
          if (x.size() <= s.size() &&
              (start ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0))
            return Value(true);
        }
        return Value(false);
      });
    }
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
      bool l = name != "rstrip", r = name != "lstrip";
      return fn([s, l, r](const CallArgs &a) { return Value(strip(s, a.get(0, "chars"), l, r)); });
    }
    if (name == "split")
      return fn([s](const CallArgs &a) {
        const Value *n = a.get(1, "maxsplit");
        return Value(split(s, a.get(0, "sep"), n ? toInt(*n, "maxsplit") : -1));
      });
    if (name == "upper")
      return fn([s](const CallArgs &) { return Value(upper(s)); });
    if (name == "lower")
      return fn([s](const CallArgs &) { return Value(lower(s)); });
    if (name == "capitalize")
      return fn([s](const CallArgs &) { return Value(capitalize(s)); });
    if (name == "title")
      return fn([s](const CallArgs &) { return Value(title(s)); });
    if (name == "replace")
      return fn([s](const CallArgs &a) {
        const Value *from = a.get(0, "old"), *to = a.get(1, "new"), *count = a.get(2, "count");
        if (!from || !to)
          typeError("replace needs the old and the new string");
        return Value(replaceAll(s, from->str(), to->str(), count ? toInt(*count, "count") : -1));
      });
    if (name == "find")
      return fn([s](const CallArgs &a) {
        const Value *x = a.get(0, "sub");
        if (!x)
          typeError("find needs an argument");
        size_t f = s.find(x->str());
        return Value(f == std::string::npos ? int64_t(-1)
                                            : int64_t(toCodePoints(s.substr(0, f)).size()));
      });
    if (name == "count")
      return fn([s](const CallArgs &a) {
        const Value *x = a.get(0, "sub");
        if (!x || x->str().empty())
          typeError("count needs a non-empty argument");
        int64_t n = 0;
        for (size_t p = s.find(x->str()); p != std::string::npos; p = s.find(x->str(), p + x->str().size()))
          ++n;
        return Value(n);
      });
    if (name == "splitlines")
      return fn([s](const CallArgs &) {
        List out;
        for (std::string &l : splitlines(s))
          out.push_back(Value(std::move(l)));
        return Value(std::move(out));
      });
    if (name == "join")
      return fn([s](const CallArgs &a) {
        const Value *x = a.get(0, "iterable");
        std::string out;
        if (x) {
          List items = iterate(*x);
          for (size_t i = 0; i < items.size(); ++i)
            out += (i ? s : "") + items[i].str();
        }
        return Value(out);
      });
    if (name == "isdigit" || name == "isalpha" || name == "isspace")
      return fn([s, name](const CallArgs &) {
        if (s.empty())
          return Value(false);
        for (char32_t c : toCodePoints(s)) {
          bool ok = name == "isdigit"   ? (c >= '0' && c <= '9')
                    : name == "isalpha" ? ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')
                                        : isPySpace(c);
          if (!ok)
            return Value(false);
        }
        return Value(true);
      });
    return Value::undefined(name);
  }
  if (v.isDict() && !v.isNamespace()) {
    Value self = v;
    auto fn = [&](Function f) { return Value::function("dict." + name, std::move(f)); };
    if (name == "items")
      return fn([self](const CallArgs &) { return applyFilter("items", self, {}); });
    if (name == "keys")
      return fn([self](const CallArgs &) { return Value(iterate(self)); });
    if (name == "values")
      return fn([self](const CallArgs &) {
        List out;
        for (const auto &m : self.dict())
          out.push_back(m.second);
        return Value(std::move(out));
      });
    if (name == "get")
      return fn([self](const CallArgs &a) {
        const Value *k = a.get(0, "key");
        const Value *d = a.get(1, "default");
        const Value *m = k && k->isString() ? self.find(k->asString()) : nullptr;
        return m ? *m : d ? *d : Value::none();
      });
  }
  return Value::undefined(name);
}

Dict builtinGlobals() {
  Dict g;
  g.emplace_back("raise_exception", Value::function("raise_exception", [](const CallArgs &a) -> Value {
                   const Value *m = a.get(0, "message");
                   throw TemplateException(m ? m->str() : "");
                 }));
  g.emplace_back("strftime_now", Value::function("strftime_now", [](const CallArgs &a) {
                   const Value *f = a.get(0, "format");
                   if (!f)
                     typeError("strftime_now needs a format");
                   return Value(strftimeNow(f->str()));
                 }));
  g.emplace_back("namespace", Value::function("namespace", [](const CallArgs &a) {
                   return Value(mergedDictArgs(a), /*isNamespace=*/true);
                 }));
  g.emplace_back("dict", Value::function("dict", [](const CallArgs &a) {
                   return Value(mergedDictArgs(a));
                 }));
  g.emplace_back("range", Value::function("range", [](const CallArgs &a) {
                   int64_t start = 0, stop = 0, step = 1;
                   if (a.args.size() == 1) {
                     stop = toInt(a.args[0], "range's stop");
                   } else if (a.args.size() >= 2) {
                     start = toInt(a.args[0], "range's start");
                     stop = toInt(a.args[1], "range's stop");
                     if (a.args.size() > 2)
                       step = toInt(a.args[2], "range's step");
                   }
                   if (step == 0)
                     typeError("range() arg 3 must not be zero");
                   List out;
                   for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
                     if (out.size() >= 100000)
                       typeError("range() is limited to 100000 items in a chat template");
                     out.push_back(Value(i));
                   }
                   return Value(std::move(out));
                 }));
  return g;
}

} // namespace accel::rt::jinja
