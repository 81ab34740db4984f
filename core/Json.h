//===- Json.h - a small JSON DOM, parser and writer -------------*- C++ -*-===//
//
// RFC 8259 JSON: null, booleans, numbers, strings, arrays and objects.
//
// Parsing
//   - strings: every escape, \uXXXX included; a surrogate pair becomes one
//     code point; a lone surrogate, a raw control character (< 0x20) or
//     invalid UTF-8 is an error (the text is UTF-8, and strings stay UTF-8);
//   - numbers: the JSON grammar exactly (no leading '+', no leading zeros,
//     no NaN/Infinity, no hex); a number without fraction or exponent that
//     fits int64 is also kept exactly as an integer;
//   - objects keep their members in document order; a repeated key is kept
//     twice and find() returns the last one (what Python's json and
//     serde_json give);
//   - nesting deeper than ParseOptions::maxDepth is an error (no stack
//     overflow on hostile input); so is anything but whitespace after the
//     value.
// Every error is one sentence: "<what> at byte N (line L, column C)", the
// byte offset 0-based, line and column 1-based (column counts bytes).
//
// Writing: compact (no spaces) or indented; strings are escaped minimally
// ('"', '\\', control characters; non-ASCII stays UTF-8); integers exactly;
// other numbers in the shortest form that reads back to the same double;
// NaN and infinities are written as null (JSON has no spelling for them).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CORE_JSON_H
#define ACCEL_RUNTIME_CORE_JSON_H

#include "core/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace accel::rt::json {

enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

/// "null", "bool", "number", "string", "array", "object".
const char *typeName(Type t);

class Value;
using Array = std::vector<Value>;
using Member = std::pair<std::string, Value>;
using Object = std::vector<Member>;

/// One JSON value. Copyable (a deep copy) and movable.
class Value {
public:
  Value() = default; // null
  Value(std::nullptr_t) {}
  Value(bool b) : type_(Type::kBool), bool_(b) {}
  /// Any integer type; an unsigned value above INT64_MAX is kept as a
  /// double only.
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>,
                             int> = 0>
  Value(T v) : type_(Type::kNumber), num_(static_cast<double>(v)) {
    if (std::is_signed_v<T> ||
        static_cast<uint64_t>(v) <= static_cast<uint64_t>(INT64_MAX)) {
      isInt_ = true;
      int_ = static_cast<int64_t>(v);
    }
  }
  Value(double v) : type_(Type::kNumber), num_(v) {}
  Value(const char *s) : type_(Type::kString), str_(s) {}
  Value(std::string s) : type_(Type::kString), str_(std::move(s)) {}
  Value(std::string_view s) : type_(Type::kString), str_(s) {}
  Value(Array a);
  Value(Object o);

  static Value array() { return Value(Array{}); }
  static Value object() { return Value(Object{}); }

  Value(const Value &other);
  Value &operator=(const Value &other);
  Value(Value &&) noexcept = default;
  Value &operator=(Value &&) noexcept = default;
  ~Value() = default;

  Type type() const { return type_; }
  bool isNull() const { return type_ == Type::kNull; }
  bool isBool() const { return type_ == Type::kBool; }
  bool isNumber() const { return type_ == Type::kNumber; }
  /// A number written without fraction or exponent that fits int64 (or
  /// built from an integer).
  bool isInteger() const { return type_ == Type::kNumber && isInt_; }
  bool isString() const { return type_ == Type::kString; }
  bool isArray() const { return type_ == Type::kArray; }
  bool isObject() const { return type_ == Type::kObject; }

  // Accessors: calling one on a value of another type returns the default
  // (false, 0, "", an empty array or object); check the type first where
  // it matters.
  bool asBool() const { return type_ == Type::kBool && bool_; }
  double asDouble() const { return type_ == Type::kNumber ? num_ : 0.0; }
  /// The exact integer when isInteger(); otherwise the double truncated
  /// toward zero (saturated), 0 for non-numbers.
  int64_t asInt() const;
  const std::string &asString() const;
  const Array &items() const;
  Array &items();
  const Object &members() const;
  Object &members();

  /// Elements of an array or members of an object; 0 for anything else.
  size_t size() const;
  /// The last member named `key`, or nullptr (also for non-objects).
  const Value *find(std::string_view key) const;
  Value *find(std::string_view key);
  /// Sets `key` on an object (replacing the last member of that name, or
  /// appending one); turns a null into an object first.
  Value &set(std::string key, Value v);
  /// Appends to an array; turns a null into an array first.
  Value &push(Value v);

  /// Structural equality; numbers compare by value (1 == 1.0), objects by
  /// their members in order.
  friend bool operator==(const Value &a, const Value &b);
  friend bool operator!=(const Value &a, const Value &b) { return !(a == b); }

private:
  Type type_ = Type::kNull;
  bool bool_ = false;
  bool isInt_ = false;
  int64_t int_ = 0;
  double num_ = 0.0;
  std::string str_;
  // Arrays and objects live behind a pointer so that Value stays small
  // and can hold vectors of itself.
  std::unique_ptr<Array> arr_;
  std::unique_ptr<Object> obj_;
};

struct ParseOptions {
  /// Arrays and objects nested deeper than this are an error.
  size_t maxDepth = 512;
};

/// Parses one JSON text. Errors (kInvalidArgument): "invalid JSON: <what>
/// at byte N (line L, column C)".
StatusOr<Value> parse(std::string_view text, const ParseOptions &options = {});

/// Serializes `v`; indent > 0 writes one member or element a line.
std::string write(const Value &v, int indent = 0);

/// `s` as a JSON string literal, quotes included. Invalid UTF-8 in `s` is
/// written as U+FFFD.
std::string quote(std::string_view s);

} // namespace accel::rt::json

#endif // ACCEL_RUNTIME_CORE_JSON_H
