//===- JsonSchema.cpp - JSON schemas as Patterns --------------------------===//

#include "runtime/serving/structured/JsonSchema.h"

#include "runtime/serving/structured/Regex.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace accel::rt::structured {
namespace {

PatternPtr cs(char32_t lo, char32_t hi) {
  CharSet s;
  s.add(lo, hi);
  return chars(s);
}
PatternPtr lit(std::string_view s) { return literal(s); }

PatternPtr digits(int64_t min, int64_t max) { return repeat(cs('0', '9'), min, max); }

/// One character of a JSON string: anything but '"', '\' and controls, or
/// an escape (\u escapes of surrogates excluded).
PatternPtr stringChar() {
  CharSet plain;
  plain.add('"', '"');
  plain.add('\\', '\\');
  plain.add(0, 0x1F);
  CharSet hex;
  hex.add('0', '9');
  hex.add('a', 'f');
  hex.add('A', 'F');
  CharSet hexNoD = hex;
  hexNoD.ranges.clear();
  hexNoD.add('0', '9');
  hexNoD.add('a', 'c');
  hexNoD.add('A', 'C');
  hexNoD.add('e', 'f');
  hexNoD.add('E', 'F');
  CharSet simple;
  for (char c : std::string("\"\\/bfnrt"))
    simple.add(char32_t(c), char32_t(c));
  PatternPtr h = chars(hex);
  PatternPtr unicode = concat(
      {lit("u"), alt({concat({chars(hexNoD), repeat(h, 3, 3)}),
                      concat({alt({lit("d"), lit("D")}), cs('0', '7'), repeat(h, 2, 2)})})});
  return alt({chars(plain.complement()), concat({lit("\\"), alt({chars(simple), unicode})})});
}

PatternPtr jsonString(int64_t minLen = 0, int64_t maxLen = -1) {
  return concat({lit("\""), repeat(stringChar(), minLen, maxLen), lit("\"")});
}

PatternPtr jsonInteger() {
  return concat({optional(lit("-")), alt({lit("0"), concat({cs('1', '9'), digits(0, -1)})})});
}

PatternPtr fraction() { return concat({lit("."), digits(1, -1)}); }
PatternPtr exponent() {
  return concat({alt({lit("e"), lit("E")}), optional(alt({lit("+"), lit("-")})), digits(1, -1)});
}

PatternPtr jsonNumber() {
  return concat({jsonInteger(), optional(fraction()), optional(exponent())});
}

/// Decimal strings of equal length n, a <= x <= b digit by digit (leading
/// zeros allowed: these are inner digits).
PatternPtr sameLength(const std::string &a, const std::string &b) {
  if (a.empty())
    return empty();
  if (a[0] == b[0])
    return concat({lit(std::string(1, a[0])), sameLength(a.substr(1), b.substr(1))});
  const size_t rest = a.size() - 1;
  std::vector<PatternPtr> options;
  options.push_back(concat(
      {lit(std::string(1, a[0])), sameLength(a.substr(1), std::string(rest, '9'))}));
  if (b[0] - a[0] > 1)
    options.push_back(concat({cs(char32_t(a[0] + 1), char32_t(b[0] - 1)), digits(rest, rest)}));
  options.push_back(concat(
      {lit(std::string(1, b[0])), sameLength(std::string(rest, '0'), b.substr(1))}));
  return alt(std::move(options));
}

/// Non-negative integers lo..hi without leading zeros (hi < 0: unbounded).
PatternPtr unsignedRange(int64_t lo, int64_t hi) {
  if (hi >= 0 && hi < lo)
    return nothing();
  std::string a = std::to_string(lo);
  std::vector<PatternPtr> options;
  while (true) {
    // lo..(the largest number with lo's digit count), capped by hi.
    int64_t top = 9;
    for (size_t i = 1; i < a.size(); ++i)
      top = top * 10 + 9;
    if (hi >= 0 && hi <= top) {
      options.push_back(sameLength(a, std::to_string(hi)));
      break;
    }
    options.push_back(sameLength(a, std::to_string(top)));
    if (hi < 0) {
      // Every number with more digits.
      options.push_back(concat({cs('1', '9'), digits(int64_t(a.size()), -1)}));
      break;
    }
    a = "1" + std::string(a.size(), '0');
  }
  return alt(std::move(options));
}

class Compiler {
public:
  Compiler(const json::Value &root, const JsonPatternOptions &o) : root_(root), o_(o) {
    ws_ = o.whitespace ? o.whitespace : optional(lit(" "));
  }

  Status error() const { return error_; }

  PatternPtr anyValue(int depth) {
    std::vector<PatternPtr> options = {jsonString(), jsonNumber(), lit("true"), lit("false"),
                                       lit("null")};
    if (depth > 0) {
      PatternPtr v = anyValue(depth - 1);
      options.push_back(array(v, 0, -1));
      options.push_back(objectOf(v));
    }
    return alt(std::move(options));
  }

  PatternPtr objectOf(PatternPtr value) {
    PatternPtr member = concat({jsonString(), lit(":"), ws_, std::move(value)});
    return concat({lit("{"), list(member, concat({lit(","), ws_}), 0), lit("}")});
  }

  PatternPtr array(PatternPtr item, int64_t minItems, int64_t maxItems) {
    PatternPtr sep = concat({lit(","), ws_});
    PatternPtr body;
    if (maxItems < 0) {
      body = list(item, sep, minItems);
    } else if (maxItems == 0) {
      body = empty();
    } else {
      PatternPtr more = repeat(concat({sep, item}), std::max<int64_t>(minItems - 1, 0),
                               maxItems - 1);
      body = concat({item, more});
      if (minItems == 0)
        body = optional(body);
    }
    return concat({lit("["), body, lit("]")});
  }

  PatternPtr value(const json::Value &s, const std::string &path) {
    if (!error_.isOk())
      return nothing();
    if (s.isBool()) {
      if (s.asBool())
        return anyValue(o_.anyValueDepth);
      return fail("is false: no value is valid", path);
    }
    if (!s.isObject())
      return fail("must be an object or a boolean, got " + std::string(json::typeName(s.type())),
                  path);
    for (const json::Member &m : s.members())
      if (!known(m.first))
        return unsupported("keyword '" + m.first + "'", path);

    if (const json::Value *ref = s.find("$ref"))
      return reference(*ref, path);
    if (const json::Value *c = s.find("const"))
      return lit(json::write(*c));
    if (const json::Value *e = s.find("enum")) {
      if (!e->isArray() || e->items().empty())
        return fail("has an 'enum' that is not a non-empty array", path);
      std::vector<PatternPtr> options;
      for (const json::Value &v : e->items())
        options.push_back(lit(json::write(v)));
      return alt(std::move(options));
    }
    for (const char *k : {"anyOf", "oneOf"})
      if (const json::Value *list = s.find(k)) {
        if (!list->isArray() || list->items().empty())
          return fail("has a '" + std::string(k) + "' that is not a non-empty array", path);
        std::vector<PatternPtr> options;
        for (size_t i = 0; i < list->items().size(); ++i)
          options.push_back(
              value(list->items()[i], path + "." + k + "[" + std::to_string(i) + "]"));
        return alt(std::move(options));
      }
    if (const json::Value *all = s.find("allOf")) {
      if (!all->isArray() || all->items().size() != 1)
        return unsupported("'allOf' with other than one schema", path);
      return value(all->items()[0], path + ".allOf[0]");
    }

    std::vector<std::string> types;
    if (const json::Value *t = s.find("type")) {
      if (t->isString()) {
        types.push_back(t->asString());
      } else if (t->isArray() && !t->items().empty()) {
        for (const json::Value &x : t->items()) {
          if (!x.isString())
            return fail("has a 'type' list with a non-string", path);
          types.push_back(x.asString());
        }
      } else {
        return fail("has a 'type' that is neither a string nor a non-empty list", path);
      }
    } else if (s.find("properties") || s.find("required") || s.find("additionalProperties")) {
      types.push_back("object");
    } else if (s.find("items") || s.find("prefixItems") || s.find("minItems") ||
               s.find("maxItems")) {
      types.push_back("array");
    } else if (s.find("minLength") || s.find("maxLength") || s.find("pattern") ||
               s.find("format")) {
      types.push_back("string");
    } else if (s.find("minimum") || s.find("maximum") || s.find("exclusiveMinimum") ||
               s.find("exclusiveMaximum")) {
      types.push_back("number");
    } else {
      return anyValue(o_.anyValueDepth);
    }
    std::vector<PatternPtr> options;
    for (const std::string &t : types) {
      if (t == "null")
        options.push_back(lit("null"));
      else if (t == "boolean")
        options.push_back(alt({lit("true"), lit("false")}));
      else if (t == "integer")
        options.push_back(integer(s, path));
      else if (t == "number")
        options.push_back(number(s, path));
      else if (t == "string")
        options.push_back(string(s, path));
      else if (t == "array")
        options.push_back(arrayOf(s, path));
      else if (t == "object")
        options.push_back(object(s, path));
      else
        return fail("has an unknown type '" + t + "'", path);
    }
    return alt(std::move(options));
  }

private:
  static bool known(const std::string &k) {
    static const std::set<std::string> kKnown = {
        // Enforced.
        "type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "properties", "required",
        "additionalProperties", "items", "prefixItems", "minItems", "maxItems", "minLength",
        "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
        "exclusiveMaximum", "uniqueItems",
        // Annotations and containers: no effect on what is valid.
        "$schema", "$id", "$comment", "$defs", "definitions", "title", "description",
        "default", "examples", "deprecated", "readOnly", "writeOnly", "strict", "name"};
    return kKnown.count(k) > 0;
  }

  PatternPtr fail(const std::string &what, const std::string &path) {
    if (error_.isOk())
      error_ = invalidArgument("the JSON schema " + what + " at " + path);
    return nothing();
  }
  PatternPtr unsupported(const std::string &what, const std::string &path) {
    if (error_.isOk())
      error_ = unimplemented("the JSON schema " + what + " at " + path + " is not supported");
    return nothing();
  }

  PatternPtr reference(const json::Value &ref, const std::string &path) {
    if (!ref.isString() || ref.asString().rfind("#", 0) != 0)
      return unsupported("'$ref' other than a local '#/...' reference", path);
    const std::string &r = ref.asString();
    const json::Value *at = &root_;
    std::string where = "schema";
    size_t i = 1;
    while (i < r.size()) {
      if (r[i] != '/')
        return fail("has a '$ref' that is not a JSON pointer: " + json::quote(r), path);
      size_t j = r.find('/', i + 1);
      std::string token = r.substr(i + 1, (j == std::string::npos ? r.size() : j) - i - 1);
      std::string key;
      for (size_t k = 0; k < token.size(); ++k) {
        if (token[k] == '~' && k + 1 < token.size() && (token[k + 1] == '0' || token[k + 1] == '1'))
          key += token[++k] == '0' ? '~' : '/';
        else
          key += token[k];
      }
      at = at->isObject() ? at->find(key) : nullptr;
      if (!at)
        return fail("has a '$ref' to " + json::quote(r) + ", which does not exist", path);
      where += "." + key;
      i = j == std::string::npos ? r.size() : j;
    }
    int &depth = refDepth_[r];
    if (depth >= o_.maxRefDepth)
      return nothing(); // the recursion stops here; other branches remain
    ++depth;
    PatternPtr p = value(*at, where);
    --depth;
    return p;
  }

  /// An integer bound of `s` (inclusive), or nullopt.
  bool integerBounds(const json::Value &s, const std::string &path, std::optional<int64_t> &lo,
                     std::optional<int64_t> &hi) {
    constexpr double kBig = 9.0e15; // exact in a double
    auto get = [&](const char *k, double &v) {
      const json::Value *x = s.find(k);
      if (!x)
        return false;
      if (!x->isNumber()) {
        fail("has a '" + std::string(k) + "' that is not a number", path);
        return false;
      }
      v = x->asDouble();
      if (std::fabs(v) > kBig) {
        unsupported("'" + std::string(k) + "' beyond 9e15", path);
        return false;
      }
      return true;
    };
    double v;
    if (get("minimum", v))
      lo = int64_t(std::ceil(v));
    if (get("exclusiveMinimum", v))
      lo = std::max(lo.value_or(INT64_MIN), int64_t(std::floor(v)) + 1);
    if (get("maximum", v))
      hi = int64_t(std::floor(v));
    if (get("exclusiveMaximum", v))
      hi = std::min(hi.value_or(INT64_MAX), int64_t(std::ceil(v)) - 1);
    return error_.isOk();
  }

  PatternPtr integer(const json::Value &s, const std::string &path) {
    std::optional<int64_t> lo, hi;
    if (!integerBounds(s, path, lo, hi))
      return nothing();
    if (!lo && !hi)
      return jsonInteger();
    std::vector<PatternPtr> options;
    // Negative part: magnitudes max(-hi, 1) .. -lo.
    if (!lo || *lo < 0) {
      int64_t m1 = hi && *hi < 0 ? -*hi : 1;
      options.push_back(concat({lit("-"), unsignedRange(m1, lo ? -*lo : -1)}));
    }
    if (!hi || *hi >= 0)
      options.push_back(unsignedRange(lo ? std::max<int64_t>(*lo, 0) : 0, hi ? *hi : -1));
    PatternPtr p = alt(std::move(options));
    if (p->kind == Pattern::Kind::kNothing)
      return fail("allows no integer (its bounds are empty)", path);
    return p;
  }

  PatternPtr number(const json::Value &s, const std::string &path) {
    const json::Value *mn = s.find("minimum");
    bool otherBound = s.find("maximum") || s.find("exclusiveMinimum") ||
                      s.find("exclusiveMaximum");
    if (!mn && !otherBound)
      return jsonNumber();
    if (mn && !otherBound && mn->isNumber() && mn->asDouble() == 0.0) {
      // >= 0: no minus sign, no exponent that could underflow oddly.
      return concat({alt({lit("0"), concat({cs('1', '9'), digits(0, -1)})}),
                     optional(fraction())});
    }
    return unsupported("bound on a 'number' other than \"minimum\": 0 (use \"integer\", "
                       "or drop the bound)",
                       path);
  }

  PatternPtr string(const json::Value &s, const std::string &path) {
    int64_t minLen = 0, maxLen = -1;
    if (const json::Value *v = s.find("minLength")) {
      if (!v->isInteger() || v->asInt() < 0 || v->asInt() > 10000)
        return fail("has a 'minLength' that is not an integer in [0, 10000]", path);
      minLen = v->asInt();
    }
    if (const json::Value *v = s.find("maxLength")) {
      if (!v->isInteger() || v->asInt() < 0 || v->asInt() > 10000)
        return fail("has a 'maxLength' that is not an integer in [0, 10000]", path);
      maxLen = v->asInt();
    }
    if (maxLen >= 0 && maxLen < minLen)
      return fail("has 'maxLength' below 'minLength'", path);
    if (const json::Value *p = s.find("pattern")) {
      if (!p->isString())
        return fail("has a 'pattern' that is not a string", path);
      if (s.find("minLength") || s.find("maxLength"))
        return unsupported("'pattern' together with 'minLength'/'maxLength'", path);
      StatusOr<PatternPtr> re = parseRegex(p->asString());
      if (!re) {
        if (error_.isOk())
          error_ = Status(re.status().code(),
                          "the JSON schema 'pattern' at " + path + ": " + re.status().message());
        return nothing();
      }
      if (mayNeedEscape(**re))
        return unsupported("'pattern' that can match '\"', '\\' or a control character "
                           "(which a JSON string must escape)",
                           path);
      return concat({lit("\""), *re, lit("\"")});
    }
    if (const json::Value *f = s.find("format")) {
      if (!f->isString())
        return fail("has a 'format' that is not a string", path);
      if (PatternPtr p = format(f->asString()))
        return concat({lit("\""), p, lit("\"")});
      // Other formats are annotations (not asserted by default validators).
    }
    return jsonString(minLen, maxLen);
  }

  static bool mayNeedEscape(const Pattern &p) {
    if (p.kind == Pattern::Kind::kChars)
      for (auto [lo, hi] : p.chars.ranges)
        if (lo <= 0x1F || (lo <= '"' && hi >= '"') || (lo <= '\\' && hi >= '\\'))
          return true;
    for (const PatternPtr &q : p.parts)
      if (mayNeedEscape(*q))
        return true;
    return false;
  }

  static PatternPtr format(const std::string &f) {
    auto d2 = [](char32_t a, char32_t b) { return cs(a, b); };
    PatternPtr date = concat(
        {digits(4, 4), lit("-"),
         alt({concat({lit("0"), d2('1', '9')}), concat({lit("1"), d2('0', '2')})}), lit("-"),
         alt({concat({lit("0"), d2('1', '9')}), concat({d2('1', '2'), d2('0', '9')}),
              concat({lit("3"), d2('0', '1')})})});
    PatternPtr hour = alt({concat({d2('0', '1'), d2('0', '9')}), concat({lit("2"), d2('0', '3')})});
    PatternPtr minute = concat({d2('0', '5'), d2('0', '9')});
    PatternPtr time = concat({hour, lit(":"), minute, lit(":"), minute, optional(fraction()),
                              alt({lit("Z"), concat({alt({lit("+"), lit("-")}), hour, lit(":"),
                                                     minute})})});
    CharSet hex;
    hex.add('0', '9');
    hex.add('a', 'f');
    PatternPtr h = chars(hex);
    if (f == "date")
      return date;
    if (f == "time")
      return time;
    if (f == "date-time")
      return concat({date, lit("T"), time});
    if (f == "uuid")
      return concat({repeat(h, 8, 8), lit("-"), repeat(h, 4, 4), lit("-"), repeat(h, 4, 4),
                     lit("-"), repeat(h, 4, 4), lit("-"), repeat(h, 12, 12)});
    return nullptr;
  }

  PatternPtr arrayOf(const json::Value &s, const std::string &path) {
    int64_t minItems = 0, maxItems = -1;
    if (const json::Value *v = s.find("minItems")) {
      if (!v->isInteger() || v->asInt() < 0 || v->asInt() > 1000)
        return fail("has a 'minItems' that is not an integer in [0, 1000]", path);
      minItems = v->asInt();
    }
    if (const json::Value *v = s.find("maxItems")) {
      if (!v->isInteger() || v->asInt() < 0 || v->asInt() > 1000)
        return fail("has a 'maxItems' that is not an integer in [0, 1000]", path);
      maxItems = v->asInt();
    }
    if (maxItems >= 0 && maxItems < minItems)
      return fail("has 'maxItems' below 'minItems'", path);
    if (const json::Value *u = s.find("uniqueItems"); u && u->asBool())
      return unsupported("'uniqueItems': true", path);
    if (const json::Value *pre = s.find("prefixItems")) {
      if (!pre->isArray())
        return fail("has a 'prefixItems' that is not an array", path);
      if (minItems != 0 || maxItems >= 0)
        return unsupported("'prefixItems' together with 'minItems'/'maxItems'", path);
      std::vector<PatternPtr> parts = {lit("[")};
      for (size_t i = 0; i < pre->items().size(); ++i) {
        if (i)
          parts.push_back(concat({lit(","), ws_}));
        parts.push_back(value(pre->items()[i], path + ".prefixItems[" + std::to_string(i) + "]"));
      }
      const json::Value *items = s.find("items");
      if (items && !(items->isBool() && !items->asBool()))
        return unsupported("'prefixItems' followed by more 'items' (give \"items\": false)",
                           path);
      parts.push_back(lit("]"));
      return concat(std::move(parts));
    }
    PatternPtr item;
    if (const json::Value *items = s.find("items")) {
      if (items->isBool() && !items->asBool())
        return minItems > 0 ? fail("allows no array ('items': false with 'minItems')", path)
                            : lit("[]");
      item = value(*items, path + ".items");
    } else {
      item = anyValue(o_.anyValueDepth - 1);
    }
    return array(item, minItems, maxItems);
  }

  PatternPtr object(const json::Value &s, const std::string &path) {
    for (const char *k : {"patternProperties", "minProperties", "maxProperties",
                          "propertyNames", "dependentRequired", "dependentSchemas"})
      if (s.find(k))
        return unsupported("keyword '" + std::string(k) + "'", path);
    const json::Value *props = s.find("properties");
    if (props && !props->isObject())
      return fail("has 'properties' that is not an object", path);
    std::vector<std::string> required;
    if (const json::Value *r = s.find("required")) {
      if (!r->isArray())
        return fail("has 'required' that is not an array", path);
      for (const json::Value &x : r->items()) {
        if (!x.isString())
          return fail("has a 'required' entry that is not a string", path);
        required.push_back(x.asString());
      }
    }
    const json::Value *additional = s.find("additionalProperties");
    if (!props || props->members().empty()) {
      if (required.empty()) {
        if (additional && additional->isBool() && !additional->asBool())
          return lit("{}");
        PatternPtr v = additional && !additional->isBool()
                           ? value(*additional, path + ".additionalProperties")
                           : anyValue(o_.anyValueDepth - 1);
        return objectOf(v);
      }
    }
    // Members in order: the listed properties, then required names that
    // are not listed (any value, or additionalProperties' schema).
    struct Member {
      std::string name;
      PatternPtr pattern;
      bool required;
    };
    std::vector<Member> members;
    std::set<std::string> names;
    if (props)
      for (const json::Member &m : props->members()) {
        if (!names.insert(m.first).second)
          continue;
        bool req = std::find(required.begin(), required.end(), m.first) != required.end();
        members.push_back({m.first, value(m.second, path + ".properties." + m.first), req});
      }
    for (const std::string &r : required)
      if (names.insert(r).second) {
        if (additional && additional->isBool() && !additional->asBool())
          return fail("requires '" + r + "', which 'properties' does not list while "
                      "'additionalProperties' is false",
                      path);
        PatternPtr v = additional && !additional->isBool()
                           ? value(*additional, path + ".additionalProperties")
                           : anyValue(o_.anyValueDepth - 1);
        members.push_back({r, v, true});
      }
    std::vector<PatternPtr> kv;
    for (const Member &m : members)
      kv.push_back(concat({lit(json::quote(m.name)), lit(":"), ws_, m.pattern}));
    PatternPtr sep = concat({lit(","), ws_});
    size_t firstRequired = members.size();
    for (size_t i = 0; i < members.size(); ++i)
      if (members[i].required) {
        firstRequired = i;
        break;
      }
    PatternPtr body;
    if (firstRequired < members.size()) {
      std::vector<PatternPtr> parts;
      for (size_t i = 0; i < firstRequired; ++i)
        parts.push_back(optional(concat({kv[i], sep})));
      parts.push_back(kv[firstRequired]);
      for (size_t i = firstRequired + 1; i < members.size(); ++i) {
        PatternPtr p = concat({sep, kv[i]});
        parts.push_back(members[i].required ? p : optional(p));
      }
      body = concat(std::move(parts));
    } else {
      // All optional: which one comes first, then each later one or not.
      std::vector<PatternPtr> options;
      for (size_t first = 0; first < members.size(); ++first) {
        std::vector<PatternPtr> parts = {kv[first]};
        for (size_t i = first + 1; i < members.size(); ++i)
          parts.push_back(optional(concat({sep, kv[i]})));
        options.push_back(concat(std::move(parts)));
      }
      body = optional(alt(std::move(options)));
    }
    return concat({lit("{"), body, lit("}")});
  }

  const json::Value &root_;
  JsonPatternOptions o_;
  PatternPtr ws_;
  Status error_ = Status::ok();
  std::map<std::string, int> refDepth_;
};

} // namespace

StatusOr<PatternPtr> jsonSchemaPattern(const json::Value &schema,
                                       const JsonPatternOptions &options) {
  Compiler c(schema, options);
  PatternPtr p = c.value(schema, "schema");
  if (!c.error().isOk())
    return c.error();
  if (p->kind == Pattern::Kind::kNothing)
    return invalidArgument("the JSON schema allows no value at all (a '$ref' that only "
                           "recurses, or empty bounds)");
  return p;
}

PatternPtr anyJsonObject(const JsonPatternOptions &options) {
  json::Value root = json::Value::object();
  Compiler c(root, options);
  return c.objectOf(c.anyValue(options.anyValueDepth - 1));
}

} // namespace accel::rt::structured
