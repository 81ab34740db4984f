//===- JinjaEval.cpp - rendering a parsed chat template -------------------===//
#include "runtime/serving/chat/JinjaEval.h"

#include "runtime/serving/chat/JinjaBuiltins.h"

#include <cmath>
#include <unordered_map>

namespace accel::rt::jinja {

namespace {

constexpr size_t kMaxOutputBytes = size_t(64) << 20;
constexpr int kMaxCallDepth = 64;
// Loop iterations in one render (nested loops multiply): real chat
// templates take a few per message; this bounds a template's time.
constexpr int64_t kMaxIterations = 1'000'000;

using Scope = std::unordered_map<std::string, Value>;

enum class Flow { kNormal, kBreak, kContinue };

[[noreturn]] void fail(const std::string &m) { throw EvalError(m); }

/// Python's a // b (it floors).
double floorDiv(double a, double b) { return std::floor(a / b); }
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

/// a <op> b for +, -, *, // and % on two ints or two floats (Python's).
template <typename T> Value arithmetic(const std::string &op, T a, T b) {
  if (op == "+")
    return Value(a + b);
  if (op == "-")
    return Value(a - b);
  if (op == "*")
    return Value(a * b);
  if (b == 0)
    fail("division by zero");
  T q = floorDiv(a, b);
  return op == "//" ? Value(q) : Value(a - q * b);
}

/// Python's slice of a sequence of `n` items: the indices it takes.
std::vector<int64_t> sliceIndices(int64_t n, const Value &start, const Value &stop, const Value &step) {
  auto given = [](const Value &v) { return !v.isUndefined() && !v.isNone(); };
  auto asIndex = [](const Value &v) {
    if (!v.isInt() && !v.isBool())
      fail(std::string("slice indices must be integers or None, not ") + v.typeName());
    return v.asInt();
  };
  int64_t st = given(step) ? asIndex(step) : 1;
  if (st == 0)
    fail("slice step cannot be zero");
  auto adjust = [&](const Value &v, int64_t dflt) {
    if (!given(v))
      return dflt;
    int64_t i = asIndex(v);
    if (i < 0) {
      i += n;
      if (i < 0)
        i = st < 0 ? -1 : 0;
    } else if (i >= n) {
      i = st < 0 ? n - 1 : n;
    }
    return i;
  };
  int64_t b = adjust(start, st < 0 ? n - 1 : 0);
  int64_t e = adjust(stop, st < 0 ? -1 : n);
  std::vector<int64_t> out;
  for (int64_t i = b; st > 0 ? i < e : i > e; i += st)
    out.push_back(i);
  return out;
}

class Evaluator {
public:
  explicit Evaluator(const Dict &variables) {
    scopes_.emplace_back();
    for (auto &g : builtinGlobals())
      scopes_.back()[g.first] = g.second;
    for (const auto &v : variables)
      scopes_.back()[v.first] = v.second;
    scopes_.emplace_back(); // the template's top level
  }

  std::string run(const Body &body) {
    std::string out;
    exec(body, out);
    return out;
  }

private:
  Value lookup(const std::string &name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end())
        return f->second;
    }
    return Value::undefined(name);
  }

  Flow exec(const Body &body, std::string &out) {
    for (const StmtPtr &s : body) {
      Flow f = execOne(*s, out);
      if (f != Flow::kNormal)
        return f;
      if (out.size() > kMaxOutputBytes)
        throw RenderError(s->line, "the rendered prompt exceeds 64 MiB");
    }
    return Flow::kNormal;
  }

  Flow execOne(const Stmt &s, std::string &out) {
    try {
      switch (s.kind) {
      case Stmt::Kind::kText:
        out += s.text;
        return Flow::kNormal;
      case Stmt::Kind::kOutput:
        out += eval(*s.expr).str();
        return Flow::kNormal;
      case Stmt::Kind::kIf:
        for (size_t i = 0; i < s.conds.size(); ++i)
          if (eval(*s.conds[i]).truthy())
            return exec(s.bodies[i], out);
        if (s.bodies.size() > s.conds.size())
          return exec(s.bodies.back(), out);
        return Flow::kNormal;
      case Stmt::Kind::kFor:
        return execFor(s, out);
      case Stmt::Kind::kSet: {
        Value v = eval(*s.expr);
        if (!s.attrOf.empty()) {
          Value ns = lookup(s.attrOf);
          if (!ns.isNamespace())
            fail("cannot assign attribute '" + s.targets[0] + "' on '" + s.attrOf +
                 "', which is not a namespace()");
          Dict &d = ns.mutableDict();
          for (auto &m : d)
            if (m.first == s.targets[0]) {
              m.second = v;
              return Flow::kNormal;
            }
          d.emplace_back(s.targets[0], v);
          return Flow::kNormal;
        }
        assign(s.targets, v);
        return Flow::kNormal;
      }
      case Stmt::Kind::kSetBlock: {
        std::string captured;
        exec(s.bodies[0], captured);
        scopes_.back()[s.targets[0]] = Value(captured);
        return Flow::kNormal;
      }
      case Stmt::Kind::kMacro:
        scopes_.back()[s.name] = makeMacro(s);
        return Flow::kNormal;
      case Stmt::Kind::kBreak:
        if (loopDepth_ == 0)
          fail("'break' outside a loop");
        return Flow::kBreak;
      case Stmt::Kind::kContinue:
        if (loopDepth_ == 0)
          fail("'continue' outside a loop");
        return Flow::kContinue;
      case Stmt::Kind::kBlock:
        return exec(s.bodies[0], out);
      }
    } catch (const EvalError &e) {
      throw RenderError(s.line, e.what());
    }
    return Flow::kNormal;
  }

  void assign(const std::vector<std::string> &targets, const Value &v) {
    if (targets.size() == 1) {
      scopes_.back()[targets[0]] = v;
      return;
    }
    List items = iterate(v);
    if (items.size() != targets.size())
      fail("cannot unpack " + std::to_string(items.size()) + " values into " +
           std::to_string(targets.size()) + " names");
    for (size_t i = 0; i < targets.size(); ++i)
      scopes_.back()[targets[i]] = items[i];
  }

  Flow execFor(const Stmt &s, std::string &out) {
    List all = iterate(eval(*s.expr));
    List items;
    if (s.filter) {
      scopes_.emplace_back();
      for (const Value &x : all) {
        assign(s.targets, x);
        if (eval(*s.filter).truthy())
          items.push_back(x);
      }
      scopes_.pop_back();
    } else {
      items = std::move(all);
    }
    ++loopDepth_;
    const int64_t n = int64_t(items.size());
    for (int64_t i = 0; i < n; ++i) {
      if (++iterations_ > kMaxIterations) {
        --loopDepth_;
        throw RenderError(s.line, "the template's loops run more than " +
                                      std::to_string(kMaxIterations) + " iterations");
      }
      // Each iteration has a fresh scope, as in Jinja2: a `set` in the body
      // lasts until the iteration ends.
      scopes_.emplace_back();
      assign(s.targets, items[size_t(i)]);
      Dict loop;
      loop.emplace_back("index0", Value(i));
      loop.emplace_back("index", Value(i + 1));
      loop.emplace_back("revindex", Value(n - i));
      loop.emplace_back("revindex0", Value(n - i - 1));
      loop.emplace_back("first", Value(i == 0));
      loop.emplace_back("last", Value(i == n - 1));
      loop.emplace_back("length", Value(n));
      loop.emplace_back("previtem", i > 0 ? items[size_t(i - 1)] : Value::undefined("previtem"));
      loop.emplace_back("nextitem", i + 1 < n ? items[size_t(i + 1)] : Value::undefined("nextitem"));
      scopes_.back()["loop"] = Value(std::move(loop));
      Flow f;
      try {
        f = exec(s.bodies[0], out);
      } catch (...) {
        scopes_.pop_back();
        --loopDepth_;
        throw;
      }
      scopes_.pop_back();
      if (f == Flow::kBreak)
        break;
    }
    --loopDepth_;
    if (n == 0 && s.bodies.size() > 1)
      return exec(s.bodies[1], out);
    return Flow::kNormal;
  }

  Value makeMacro(const Stmt &s) {
    const Stmt *m = &s;
    return Value::function(s.name, [this, m](const CallArgs &a) {
      if (++callDepth_ > kMaxCallDepth) {
        --callDepth_;
        fail("macro calls nest deeper than " + std::to_string(kMaxCallDepth));
      }
      std::vector<Scope> saved;
      saved.swap(scopes_);
      scopes_.push_back(saved[0]);
      scopes_.push_back(saved.size() > 1 ? saved[1] : Scope());
      scopes_.emplace_back();
      const int savedLoops = loopDepth_;
      loopDepth_ = 0;
      std::string out;
      try {
        for (size_t i = 0; i < m->targets.size(); ++i) {
          const Value *given = a.get(i, m->targets[i]);
          scopes_.back()[m->targets[i]] =
              given ? *given : m->defaults[i] ? eval(*m->defaults[i]) : Value::undefined(m->targets[i]);
        }
        if (a.args.size() > m->targets.size())
          fail("macro '" + m->name + "' takes " + std::to_string(m->targets.size()) +
               " arguments, " + std::to_string(a.args.size()) + " given");
        exec(m->bodies[0], out);
      } catch (...) {
        scopes_.swap(saved);
        loopDepth_ = savedLoops;
        --callDepth_;
        throw;
      }
      scopes_.swap(saved);
      loopDepth_ = savedLoops;
      --callDepth_;
      return Value(out);
    });
  }

  CallArgs evalArgs(const Expr &e) {
    CallArgs a;
    for (size_t i = 1; i <= e.positional; ++i)
      a.args.push_back(eval(*e.kids[i]));
    for (size_t k = 0; k < e.names.size(); ++k)
      a.kwargs.emplace_back(e.names[k], eval(*e.kids[1 + e.positional + k]));
    return a;
  }

  Value getAttr(const Value &obj, const std::string &name) {
    if (obj.isUndefined())
      fail(obj.name().empty() ? "an undefined value has no attribute '" + name + "'"
                              : "'" + obj.name() + "' is undefined");
    if (obj.isDict()) {
      Value m = method(obj, name);
      if (!m.isUndefined())
        return m;
      const Value *v = obj.find(name);
      return v ? *v : Value::undefined(name);
    }
    return method(obj, name);
  }

  Value getItem(const Value &obj, const Value &key) {
    if (obj.isUndefined())
      fail(obj.name().empty() ? "an undefined value has no item " + key.repr()
                              : "'" + obj.name() + "' is undefined");
    if (obj.isDict()) {
      if (key.isString()) {
        if (const Value *v = obj.find(key.asString()))
          return *v;
        return method(obj, key.asString());
      }
      return Value::undefined();
    }
    if ((obj.isList() || obj.isString()) && (key.isInt() || key.isBool())) {
      int64_t i = key.asInt();
      if (obj.isList()) {
        int64_t n = int64_t(obj.list().size());
        if (i < 0)
          i += n;
        return i >= 0 && i < n ? obj.list()[size_t(i)] : Value::undefined();
      }
      std::u32string cs = toCodePoints(obj.asString());
      int64_t n = int64_t(cs.size());
      if (i < 0)
        i += n;
      return i >= 0 && i < n ? Value(fromCodePoints(cs.substr(size_t(i), 1))) : Value::undefined();
    }
    if (key.isString())
      return method(obj, key.asString());
    return Value::undefined();
  }

  Value arith(const std::string &op, const Value &l, const Value &r) {
    if (op == "~")
      return Value(l.str() + r.str());
    if (l.isUndefined() || r.isUndefined())
      fail("'" + (l.isUndefined() ? l.name() : r.name()) + "' is undefined");
    if (op == "+") {
      if (l.isString() && r.isString())
        return Value(l.asString() + r.asString());
      if (l.isList() && r.isList()) {
        List out = l.list();
        out.insert(out.end(), r.list().begin(), r.list().end());
        return Value(std::move(out));
      }
    }
    if (op == "*" && ((l.isString() || l.isList()) && (r.isInt() || r.isBool()))) {
      int64_t n = r.asInt();
      if (n > 0 && double(n) * double(l.isString() ? l.asString().size() : l.list().size()) > 1e7)
        fail("a repeated sequence over 10 million items");
      if (l.isString()) {
        std::string out;
        for (int64_t i = 0; i < n; ++i)
          out += l.asString();
        return Value(out);
      }
      List out;
      for (int64_t i = 0; i < n; ++i)
        out.insert(out.end(), l.list().begin(), l.list().end());
      return Value(std::move(out));
    }
    if (!l.isNumber() || !r.isNumber())
      fail("unsupported operand type(s) for " + op + ": '" + l.typeName() + "' and '" + r.typeName() + "'");
    const bool flt = l.isFloat() || r.isFloat();
    if (op == "/") {
      if (r.asFloat() == 0)
        fail("division by zero");
      return Value(l.asFloat() / r.asFloat());
    }
    if (op == "**") {
      if (!flt && r.asInt() >= 0) {
        int64_t out = 1;
        for (int64_t i = 0; i < r.asInt() && i < 64; ++i)
          out *= l.asInt();
        return Value(out);
      }
      return Value(std::pow(l.asFloat(), r.asFloat()));
    }
    return flt ? arithmetic(op, l.asFloat(), r.asFloat()) : arithmetic(op, l.asInt(), r.asInt());
  }

  Value eval(const Expr &e) {
    try {
      return evalInner(e);
    } catch (const EvalError &err) {
      throw RenderError(e.line, err.what());
    }
  }

  Value evalInner(const Expr &e) {
    switch (e.kind) {
    case Expr::Kind::kLiteral:
      return e.value;
    case Expr::Kind::kName:
      return lookup(e.name);
    case Expr::Kind::kList:
    case Expr::Kind::kTuple: {
      List l;
      for (const ExprPtr &k : e.kids)
        l.push_back(eval(*k));
      return Value(std::move(l));
    }
    case Expr::Kind::kDict: {
      Dict d;
      for (size_t i = 0; i + 1 < e.kids.size(); i += 2) {
        Value k = eval(*e.kids[i]);
        if (!k.isString())
          fail("dict keys must be strings in a chat template");
        d.emplace_back(k.asString(), eval(*e.kids[i + 1]));
      }
      return Value(std::move(d));
    }
    case Expr::Kind::kAttr:
      return getAttr(eval(*e.kids[0]), e.name);
    case Expr::Kind::kItem:
      return getItem(eval(*e.kids[0]), eval(*e.kids[1]));
    case Expr::Kind::kSlice: {
      Value obj = eval(*e.kids[0]);
      Value parts[3];
      for (int k = 0; k < 3; ++k)
        if (e.kids[size_t(k) + 1])
          parts[k] = eval(*e.kids[size_t(k) + 1]);
      if (obj.isString()) {
        std::u32string cs = toCodePoints(obj.asString()), out;
        for (int64_t i : sliceIndices(int64_t(cs.size()), parts[0], parts[1], parts[2]))
          out += cs[size_t(i)];
        return Value(fromCodePoints(out));
      }
      if (obj.isList()) {
        List out;
        for (int64_t i : sliceIndices(int64_t(obj.list().size()), parts[0], parts[1], parts[2]))
          out.push_back(obj.list()[size_t(i)]);
        return Value(std::move(out));
      }
      if (obj.isUndefined())
        fail("'" + obj.name() + "' is undefined");
      fail(std::string("'") + obj.typeName() + "' object is not subscriptable");
    }
    case Expr::Kind::kCall: {
      Value f = eval(*e.kids[0]);
      if (!f.isFunction()) {
        if (f.isUndefined())
          fail("'" + f.name() + "' is undefined");
        fail(std::string("'") + f.typeName() + "' object is not callable");
      }
      return f.fn()(evalArgs(e));
    }
    case Expr::Kind::kFilter:
      return applyFilter(e.name, eval(*e.kids[0]), evalArgs(e));
    case Expr::Kind::kTest: {
      const Value v = eval(*e.kids[0]);
      return Value(applyTest(e.name, v, evalArgs(e)) != e.negated);
    }
    case Expr::Kind::kNot:
      return Value(!eval(*e.kids[0]).truthy());
    case Expr::Kind::kNeg:
    case Expr::Kind::kPos: {
      Value v = eval(*e.kids[0]);
      if (!v.isNumber())
        fail(std::string("bad operand type for unary ") + (e.kind == Expr::Kind::kNeg ? "-" : "+") +
             ": '" + v.typeName() + "'");
      if (e.kind == Expr::Kind::kPos)
        return v.isBool() ? Value(v.asInt()) : v;
      return v.isFloat() ? Value(-v.asFloat()) : Value(-v.asInt());
    }
    case Expr::Kind::kBinary: {
      if (e.name == "and") {
        Value l = eval(*e.kids[0]);
        return l.truthy() ? eval(*e.kids[1]) : l;
      }
      if (e.name == "or") {
        Value l = eval(*e.kids[0]);
        return l.truthy() ? l : eval(*e.kids[1]);
      }
      Value l = eval(*e.kids[0]);
      Value r = eval(*e.kids[1]);
      return arith(e.name, l, r);
    }
    case Expr::Kind::kCompare: {
      Value l = eval(*e.kids[0]);
      for (size_t i = 0; i < e.names.size(); ++i) {
        Value r = eval(*e.kids[i + 1]);
        const std::string &op = e.names[i];
        bool ok;
        if (op == "==")
          ok = equals(l, r);
        else if (op == "!=")
          ok = !equals(l, r);
        else if (op == "<")
          ok = less(l, r);
        else if (op == ">")
          ok = less(r, l);
        else if (op == "<=")
          ok = !less(r, l);
        else if (op == ">=")
          ok = !less(l, r);
        else
          ok = applyTest("in", l, CallArgs{{r}, {}}) == (op == "in");
        if (!ok)
          return Value(false);
        l = r;
      }
      return Value(true);
    }
    case Expr::Kind::kCond:
      if (eval(*e.kids[0]).truthy())
        return eval(*e.kids[1]);
      return e.kids[2] ? eval(*e.kids[2]) : Value::undefined();
    }
    return Value::undefined();
  }

  std::vector<Scope> scopes_;
  int loopDepth_ = 0;
  int callDepth_ = 0;
  int64_t iterations_ = 0; // every loop's, this render (kMaxIterations)
};

} // namespace

std::string render(const Body &body, const Dict &variables) { return Evaluator(variables).run(body); }

} // namespace accel::rt::jinja
