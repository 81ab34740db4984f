//===- Loader.cpp - reading tokenizer.json fields -------------------------===//
#include "runtime/serving/tokenizer/Loader.h"

#include "runtime/serving/tokenizer/Unicode.h"

#include <limits>

namespace accel::rt::tok::detail {

Status Loader::bad(const std::string &what, const std::string &where) const {
  return invalidArgument(name_ + ": " + what + " at " + where);
}

Status Loader::unsupported(const std::string &what, const std::string &where) const {
  return unimplemented(name_ + ": " + what + " at " + where +
                       " is not supported by accel's tokenizer (see docs/tokenizer.md)");
}

std::string Loader::field(const std::string &path, const char *key) {
  return path.empty() ? std::string(key) : path + "." + key;
}

Status Loader::expectObject(const json::Value &v, const std::string &path) const {
  if (!v.isObject())
    return bad(std::string("expected an object but found ") + json::typeName(v.type()), path);
  return Status::ok();
}

Status Loader::getString(const json::Value &obj, const char *key, const std::string &path,
                         std::optional<std::string> &out, bool required) const {
  const json::Value *v = obj.find(key);
  if (!v || v->isNull()) {
    if (required)
      return bad(std::string("missing field '") + key + "'", path);
    return Status::ok();
  }
  if (!v->isString())
    return bad(std::string("expected a string but found ") + json::typeName(v->type()),
               field(path, key));
  out = v->asString();
  return Status::ok();
}

Status Loader::getBool(const json::Value &obj, const char *key, const std::string &path,
                       bool &out) const {
  const json::Value *v = obj.find(key);
  if (!v || v->isNull())
    return Status::ok();
  if (!v->isBool())
    return bad(std::string("expected true or false but found ") + json::typeName(v->type()),
               field(path, key));
  out = v->asBool();
  return Status::ok();
}

Status Loader::getId(const json::Value &v, const std::string &path, int32_t &out) const {
  if (!v.isInteger() || v.asInt() < 0 || v.asInt() > std::numeric_limits<int32_t>::max())
    return bad("expected a token id (an integer from 0 to 2147483647)", path);
  out = static_cast<int32_t>(v.asInt());
  return Status::ok();
}

Status Loader::getSize(const json::Value &obj, const char *key, const std::string &path,
                       size_t &out) const {
  const json::Value *v = obj.find(key);
  if (!v || v->isNull())
    return Status::ok();
  if (!v->isInteger() || v->asInt() < 0)
    return bad("expected a non-negative integer", field(path, key));
  out = static_cast<size_t>(v->asInt());
  return Status::ok();
}

Status Loader::getType(const json::Value &obj, const std::string &path, std::string &out) const {
  ACCEL_RT_RETURN_IF_ERROR(expectObject(obj, path));
  std::optional<std::string> t;
  ACCEL_RT_RETURN_IF_ERROR(getString(obj, "type", path, t, /*required=*/true));
  out = *t;
  return Status::ok();
}

Status Loader::getPattern(const json::Value &obj, const std::string &path, bool &isRegex,
                          std::string &pattern) const {
  const json::Value *p = obj.find("pattern");
  std::string where = field(path, "pattern");
  if (!p)
    return bad("missing field 'pattern'", path);
  if (!p->isObject() || p->size() != 1 || !(p->find("String") || p->find("Regex")))
    return bad("expected {\"String\": ...} or {\"Regex\": ...}", where);
  const auto &m = p->members().front();
  if (!m.second.isString())
    return bad("expected a string", where + "." + m.first);
  isRegex = m.first == "Regex";
  pattern = m.second.asString();
  return Status::ok();
}

Status Loader::getReplace(const json::Value &obj, const std::string &path, const char *component,
                          std::string &pattern, std::optional<Regex> &regex,
                          std::string &content) const {
  bool isRegex;
  ACCEL_RT_RETURN_IF_ERROR(getPattern(obj, path, isRegex, pattern));
  if (isRegex) {
    ACCEL_RT_ASSIGN_OR_RETURN(Regex r, compileRegex(pattern, path + ".pattern"));
    regex = std::move(r);
  } else if (pattern.empty()) {
    return unsupported(std::string(component) + " Replace with an empty pattern", path);
  }
  std::optional<std::string> c;
  ACCEL_RT_RETURN_IF_ERROR(getString(obj, "content", path, c, /*required=*/true));
  content = *c;
  return Status::ok();
}

Status Loader::getChar(const json::Value &obj, const char *key, const std::string &path,
                       char32_t &out, std::string &utf8) const {
  std::optional<std::string> s;
  ACCEL_RT_RETURN_IF_ERROR(getString(obj, key, path, s, /*required=*/true));
  if (s->empty())
    return bad("expected one character but found an empty string", field(path, key));
  size_t len;
  char32_t c = unicode::decodeAt(*s, 0, len);
  if (len != s->size())
    return bad("expected one character but found " + json::quote(*s), field(path, key));
  out = c;
  utf8 = *s;
  return Status::ok();
}

StatusOr<Regex> Loader::compileRegex(const std::string &pattern, const std::string &where) const {
  StatusOr<Regex> r = Regex::compile(pattern);
  if (r.isOk())
    return r;
  if (r.status().code() == StatusCode::kUnimplemented)
    return unimplemented(name_ + ": the regex " + json::quote(pattern) + " at " + where +
                         " needs Oniguruma, and " + r.status().message());
  return bad("the regex " + json::quote(pattern) + " does not compile (" +
                 r.status().message() + ")",
             where);
}

Status Loader::getBehavior(const json::Value &obj, const std::string &path,
                           SplitBehavior fallback, SplitBehavior &out) const {
  std::optional<std::string> behavior;
  ACCEL_RT_RETURN_IF_ERROR(getString(obj, "behavior", path, behavior));
  out = fallback;
  if (!behavior)
    return Status::ok();
  std::optional<SplitBehavior> b = parseSplitBehavior(*behavior);
  if (!b)
    return bad("unknown split behavior " + json::quote(*behavior), field(path, "behavior"));
  out = *b;
  return Status::ok();
}

} // namespace accel::rt::tok::detail
