//===- Loader.h - reading tokenizer.json fields (internal) ------*- C++ -*-===//
//
// The field readers every component loader shares, and the two kinds of
// error: "<name>: <what> at <where>" (kInvalidArgument, a malformed file)
// and "<name>: <what> at <where> is not supported by accel's tokenizer (see
// docs/tokenizer.md)" (kUnimplemented). <name> is the file's path (or
// "tokenizer.json"), <where> a JSON path such as pre_tokenizer.pattern.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_TOKENIZER_LOADER_H
#define ACCEL_RUNTIME_SERVING_TOKENIZER_LOADER_H

#include "core/Json.h"
#include "core/Status.h"
#include "runtime/serving/tokenizer/Regex.h"

#include <cstdint>
#include <optional>
#include <string>

namespace accel::rt::tok::detail {

class Loader {
public:
  explicit Loader(std::string name) : name_(std::move(name)) {}
  const std::string &name() const { return name_; }

  Status bad(const std::string &what, const std::string &where) const;
  Status unsupported(const std::string &what, const std::string &where) const;

  /// path + "." + key (or key at the top level).
  static std::string field(const std::string &path, const char *key);

  Status expectObject(const json::Value &v, const std::string &path) const;
  /// A string field; missing or null leaves `out` alone unless required.
  Status getString(const json::Value &obj, const char *key, const std::string &path,
                   std::optional<std::string> &out, bool required = false) const;
  Status getBool(const json::Value &obj, const char *key, const std::string &path,
                 bool &out) const;
  Status getId(const json::Value &v, const std::string &path, int32_t &out) const;
  Status getSize(const json::Value &obj, const char *key, const std::string &path,
                 size_t &out) const;
  /// The "type" of a component (an object with a string "type").
  Status getType(const json::Value &obj, const std::string &path, std::string &out) const;
  /// A {"String": s} or {"Regex": r} pattern.
  Status getPattern(const json::Value &obj, const std::string &path, bool &isRegex,
                    std::string &pattern) const;
  /// A Replace normalizer's or decoder's "pattern" (`regex` set, compiled,
  /// for a Regex; a String must not be empty) and "content". `component`
  /// ("normalizer", "decoder") names it in the error.
  Status getReplace(const json::Value &obj, const std::string &path, const char *component,
                    std::string &pattern, std::optional<Regex> &regex,
                    std::string &content) const;
  /// A one-character string.
  Status getChar(const json::Value &obj, const char *key, const std::string &path,
                 char32_t &out, std::string &utf8) const;
  /// Oniguruma's compile of `pattern`: a bad pattern is kInvalidArgument
  /// naming the regex and `where`; no Oniguruma is kUnimplemented.
  StatusOr<Regex> compileRegex(const std::string &pattern, const std::string &where) const;
  /// A SplitDelimiterBehavior field ("behavior"); `fallback` when missing.
  Status getBehavior(const json::Value &obj, const std::string &path, SplitBehavior fallback,
                     SplitBehavior &out) const;

private:
  std::string name_;
};

} // namespace accel::rt::tok::detail

#endif // ACCEL_RUNTIME_SERVING_TOKENIZER_LOADER_H
