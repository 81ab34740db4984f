//===- JinjaValue.h - the values a chat template computes with --*- C++ -*-===//
//
// What the Jinja interpreter (runtime/serving/chat, docs/serving.md "Chat
// templates") computes with: Python's values as Jinja2 sees them. undefined
// (a missing variable, key or attribute: false, prints as "", iterates as
// empty), None, bool, int (int64), float, str (UTF-8; length, indexing and
// slicing count code points), list (tuples too), dict (string keys, in
// insertion order), a namespace() (a dict whose attributes `set ns.x = ...`
// may assign) and callables (macros, globals such as raise_exception, bound
// methods such as "a".startswith).
//
// Lists and dicts are shared by reference, as in Python; templates cannot
// mutate them (transformers renders in Jinja2's immutable sandbox) except a
// namespace's attributes.
//
// Python semantics where templates can see them: truthiness, == (1 == 1.0 ==
// True), ordering, str() (None -> "None", True -> "True", lists and dicts as
// Python's repr, floats as Python's shortest repr).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_CHAT_JINJAVALUE_H
#define ACCEL_RUNTIME_SERVING_CHAT_JINJAVALUE_H

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace accel::rt::jinja {

class Value;
using List = std::vector<Value>;
/// Insertion-ordered string-keyed members; lookups are linear (templates'
/// dicts are small).
using Dict = std::vector<std::pair<std::string, Value>>;

/// The arguments of a call: positional, then keyword.
struct CallArgs {
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> kwargs;
  /// Keyword `name`, else positional `index`, else null.
  const Value *get(size_t index, const std::string &name) const;
};
using Function = std::function<Value(const CallArgs &)>;

/// An error a template's evaluation raises: a type error, an undefined
/// attribute, a bad filter argument. The evaluator adds the source line.
struct EvalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Value {
public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kFunction };

  Value() = default; // undefined
  static Value undefined(std::string name = "") {
    Value v;
    v.str_ = std::move(name);
    return v;
  }
  static Value none() {
    Value v;
    v.kind_ = Kind::kNone;
    return v;
  }
  Value(bool b) : kind_(Kind::kBool), int_(b) {}
  Value(int i) : kind_(Kind::kInt), int_(i) {}
  Value(int64_t i) : kind_(Kind::kInt), int_(i) {}
  Value(double d) : kind_(Kind::kFloat), float_(d) {}
  Value(const char *s) : kind_(Kind::kString), str_(s) {}
  Value(std::string s) : kind_(Kind::kString), str_(std::move(s)) {}
  Value(List l) : kind_(Kind::kList), list_(std::make_shared<List>(std::move(l))) {}
  Value(Dict d, bool isNamespace = false)
      : kind_(Kind::kDict), dict_(std::make_shared<Dict>(std::move(d))), namespace_(isNamespace) {}
  static Value function(std::string name, Function f) {
    Value v;
    v.kind_ = Kind::kFunction;
    v.str_ = std::move(name);
    v.fn_ = std::make_shared<Function>(std::move(f));
    return v;
  }

  Kind kind() const { return kind_; }
  bool isUndefined() const { return kind_ == Kind::kUndefined; }
  bool isNone() const { return kind_ == Kind::kNone; }
  bool isBool() const { return kind_ == Kind::kBool; }
  bool isInt() const { return kind_ == Kind::kInt; }
  bool isFloat() const { return kind_ == Kind::kFloat; }
  /// int, float or bool (Python's bool is an int).
  bool isNumber() const { return isInt() || isFloat() || isBool(); }
  bool isString() const { return kind_ == Kind::kString; }
  bool isList() const { return kind_ == Kind::kList; }
  bool isDict() const { return kind_ == Kind::kDict; }
  bool isNamespace() const { return isDict() && namespace_; }
  bool isFunction() const { return kind_ == Kind::kFunction; }

  bool asBool() const { return int_ != 0; }
  int64_t asInt() const { return isFloat() ? int64_t(float_) : int_; }
  double asFloat() const { return isFloat() ? float_ : double(int_); }
  const std::string &asString() const { return str_; }
  /// An undefined value's name ("" when unknown); a function's name.
  const std::string &name() const { return str_; }
  const List &list() const { return *list_; }
  const Dict &dict() const { return *dict_; }
  Dict &mutableDict() const { return *dict_; }
  const Function &fn() const { return *fn_; }

  /// The member `key` of a dict, or null.
  const Value *find(const std::string &key) const;

  /// Python's bool(v).
  bool truthy() const;
  /// Python's str(v); undefined is "".
  std::string str() const;
  /// Python's repr(v).
  std::string repr() const;
  /// "str", "int", "list", "dict", "NoneType", "undefined", ... (for errors).
  const char *typeName() const;

private:
  Kind kind_ = Kind::kUndefined;
  int64_t int_ = 0;
  double float_ = 0;
  std::string str_;
  std::shared_ptr<List> list_;
  std::shared_ptr<Dict> dict_;
  std::shared_ptr<Function> fn_;
  bool namespace_ = false;
};

/// Python's ==.
bool equals(const Value &a, const Value &b);
/// Python's <, for numbers, strings and lists (EvalError otherwise).
bool less(const Value &a, const Value &b);
/// Python's repr of a float: the shortest digits that read back, as 1.0,
/// 0.1, 1e-05, 1e+16.
std::string formatFloat(double d);

/// UTF-8 <-> code points, for str's length, indexing, slicing and strip.
std::u32string toCodePoints(const std::string &s);
std::string fromCodePoints(const std::u32string &s);
/// Python's str.isspace for one code point.
bool isPySpace(char32_t c);

} // namespace accel::rt::jinja

#endif // ACCEL_RUNTIME_SERVING_CHAT_JINJAVALUE_H
