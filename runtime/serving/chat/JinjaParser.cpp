//===- JinjaParser.cpp - tokens to a chat template's tree -----------------===//
#include "runtime/serving/chat/JinjaParser.h"

#include <set>

namespace accel::rt::jinja {

namespace {

using K = Token::Kind;

std::string describe(const Token &t) {
  switch (t.kind) {
  case K::kText:
    return "template text";
  case K::kExprBegin:
    return "'{{'";
  case K::kExprEnd:
    return "'}}'";
  case K::kStmtBegin:
    return "'{%'";
  case K::kStmtEnd:
    return "'%}'";
  case K::kString:
    return "a string";
  case K::kInt:
  case K::kFloat:
    return "a number";
  case K::kEnd:
    return "the end of the template";
  default:
    return "'" + t.value + "'";
  }
}

class Parser {
public:
  explicit Parser(const std::vector<Token> &t) : t_(t) {}

  Body parseTemplate() {
    std::string end;
    Body b = parseBody({}, end);
    return b;
  }

private:
  const Token &peek(size_t k = 0) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  const Token &next() { return t_[std::min(p_++, t_.size() - 1)]; }
  bool isOp(const char *op, size_t k = 0) const {
    return peek(k).kind == K::kOp && peek(k).value == op;
  }
  bool isName(const char *n, size_t k = 0) const {
    return peek(k).kind == K::kName && peek(k).value == n;
  }
  [[noreturn]] void fail(const std::string &msg) const { throw SyntaxError(peek().line, msg); }
  void expectOp(const char *op, const char *where) {
    if (!isOp(op))
      fail(std::string("expected '") + op + "' " + where + ", found " + describe(peek()));
    next();
  }
  std::string expectName(const char *what) {
    if (peek().kind != K::kName)
      fail(std::string("expected ") + what + ", found " + describe(peek()));
    return next().value;
  }
  void expectStmtEnd(const std::string &tag) {
    if (peek().kind != K::kStmtEnd)
      fail("expected '%}' to end the '" + tag + "' tag, found " + describe(peek()));
    next();
  }

  /// Statements up to one of `ends` ({% end... %} or {% else %} ...): the
  /// tag's name is left in `end`, its {% and name consumed.
  Body parseBody(const std::set<std::string> &ends, std::string &end) {
    Body body;
    const int startLine = peek().line;
    while (true) {
      const Token &tok = peek();
      if (tok.kind == K::kEnd) {
        if (!ends.empty()) {
          std::string want;
          for (const std::string &e : ends)
            want += (want.empty() ? "'" : " or '") + e + "'";
          throw SyntaxError(startLine, "the block opened here is not closed: expected " + want +
                                           " before the end of the template");
        }
        return body;
      }
      if (tok.kind == K::kText) {
        auto s = std::make_shared<Stmt>();
        s->kind = Stmt::Kind::kText;
        s->line = tok.line;
        s->text = tok.value;
        body.push_back(s);
        next();
        continue;
      }
      if (tok.kind == K::kExprBegin) {
        next();
        auto s = std::make_shared<Stmt>();
        s->kind = Stmt::Kind::kOutput;
        s->line = tok.line;
        s->expr = parseExpression();
        if (peek().kind != K::kExprEnd)
          fail("expected '}}' after the expression, found " + describe(peek()));
        next();
        body.push_back(s);
        continue;
      }
      if (tok.kind != K::kStmtBegin)
        fail("unexpected " + describe(tok));
      next();
      const Token &nameTok = peek();
      std::string name = expectName("a tag name after '{%'");
      if (ends.count(name)) {
        end = name;
        return body;
      }
      StmtPtr s = parseStatement(name, nameTok.line);
      if (!s) {
        if (name.rfind("end", 0) == 0 || name == "else" || name == "elif")
          throw SyntaxError(nameTok.line, "unexpected '" + name + "' (no open block it closes)");
        throw SyntaxError(nameTok.line, "unknown tag '" + name + "'");
      }
      body.push_back(s);
    }
  }

  StmtPtr parseStatement(const std::string &name, int line) {
    Depth guard(*this);
    auto s = std::make_shared<Stmt>();
    s->line = line;
    if (name == "if") {
      s->kind = Stmt::Kind::kIf;
      s->conds.push_back(parseExpression());
      expectStmtEnd("if");
      while (true) {
        std::string end;
        s->bodies.push_back(parseBody({"elif", "else", "endif"}, end));
        if (end == "elif") {
          s->conds.push_back(parseExpression());
          expectStmtEnd("elif");
          continue;
        }
        if (end == "else") {
          expectStmtEnd("else");
          s->bodies.push_back(parseBody({"endif"}, end));
        }
        expectStmtEnd("endif");
        return s;
      }
    }
    if (name == "for") {
      s->kind = Stmt::Kind::kFor;
      if (isName("in"))
        fail("expected a loop variable after 'for', found 'in'");
      s->targets.push_back(expectName("a loop variable after 'for'"));
      while (isOp(",")) {
        next();
        s->targets.push_back(expectName("a loop variable after ','"));
      }
      if (!isName("in"))
        fail("expected 'in' after the loop variables, found " + describe(peek()));
      next();
      s->expr = parseExpression(/*withCond=*/false);
      if (isName("if")) {
        next();
        s->filter = parseExpression(/*withCond=*/false);
      }
      if (isName("recursive"))
        fail("recursive loops are not supported");
      expectStmtEnd("for");
      std::string end;
      s->bodies.push_back(parseBody({"else", "endfor"}, end));
      if (end == "else") {
        expectStmtEnd("else");
        s->bodies.push_back(parseBody({"endfor"}, end));
      }
      expectStmtEnd("endfor");
      return s;
    }
    if (name == "set") {
      std::string first = expectName("a variable name after 'set'");
      if (isOp(".")) {
        next();
        s->attrOf = first;
        s->targets.push_back(expectName("an attribute name after '.'"));
      } else {
        s->targets.push_back(first);
        while (isOp(",")) {
          next();
          s->targets.push_back(expectName("a variable name after ','"));
        }
      }
      if (peek().kind == K::kStmtEnd && s->attrOf.empty() && s->targets.size() == 1) {
        next();
        s->kind = Stmt::Kind::kSetBlock;
        std::string end;
        s->bodies.push_back(parseBody({"endset"}, end));
        expectStmtEnd("endset");
        return s;
      }
      s->kind = Stmt::Kind::kSet;
      expectOp("=", "after the name in 'set'");
      s->expr = parseTupleOrExpression();
      expectStmtEnd("set");
      return s;
    }
    if (name == "macro") {
      s->kind = Stmt::Kind::kMacro;
      s->name = expectName("a macro name");
      expectOp("(", "after the macro name");
      while (!isOp(")")) {
        s->targets.push_back(expectName("a parameter name"));
        if (isOp("=")) {
          next();
          s->defaults.push_back(parseExpression());
        } else {
          s->defaults.push_back(nullptr);
        }
        if (!isOp(","))
          break;
        next();
      }
      expectOp(")", "to end the macro's parameters");
      expectStmtEnd("macro");
      std::string end;
      s->bodies.push_back(parseBody({"endmacro"}, end));
      if (peek().kind == K::kName && peek().value == s->name)
        next();
      expectStmtEnd("endmacro");
      return s;
    }
    if (name == "break" || name == "continue") {
      s->kind = name == "break" ? Stmt::Kind::kBreak : Stmt::Kind::kContinue;
      expectStmtEnd(name);
      return s;
    }
    if (name == "generation") {
      s->kind = Stmt::Kind::kBlock;
      expectStmtEnd(name);
      std::string end;
      s->bodies.push_back(parseBody({"endgeneration"}, end));
      expectStmtEnd("endgeneration");
      return s;
    }
    return nullptr;
  }

  ExprPtr make(Expr::Kind k, int line) {
    auto e = std::make_shared<Expr>();
    e->kind = k;
    e->line = line;
    return e;
  }

  /// `a, b` (a tuple) or one expression.
  ExprPtr parseTupleOrExpression() {
    int line = peek().line;
    ExprPtr first = parseExpression();
    if (!isOp(","))
      return first;
    ExprPtr t = make(Expr::Kind::kTuple, line);
    t->kids.push_back(first);
    while (isOp(",")) {
      next();
      t->kids.push_back(parseExpression());
    }
    return t;
  }

  ExprPtr parseExpression(bool withCond = true) {
    ExprPtr e = parseOr();
    if (!withCond)
      return e;
    while (isName("if")) {
      int line = next().line;
      ExprPtr c = make(Expr::Kind::kCond, line);
      c->kids.push_back(parseOr());
      c->kids.push_back(e);
      if (isName("else")) {
        next();
        c->kids.push_back(parseExpression());
      } else {
        c->kids.push_back(nullptr);
      }
      e = c;
    }
    return e;
  }

  ExprPtr binary(const char *op, ExprPtr l, ExprPtr r, int line) {
    ExprPtr b = make(Expr::Kind::kBinary, line);
    b->name = op;
    b->kids = {std::move(l), std::move(r)};
    return b;
  }

  ExprPtr parseOr() {
    ExprPtr l = parseAnd();
    while (isName("or")) {
      int line = next().line;
      l = binary("or", l, parseAnd(), line);
    }
    return l;
  }
  ExprPtr parseAnd() {
    ExprPtr l = parseNot();
    while (isName("and")) {
      int line = next().line;
      l = binary("and", l, parseNot(), line);
    }
    return l;
  }
  ExprPtr parseNot() {
    if (isName("not")) {
      int line = next().line;
      ExprPtr n = make(Expr::Kind::kNot, line);
      n->kids.push_back(parseNot());
      return n;
    }
    return parseCompare();
  }
  ExprPtr parseCompare() {
    int line = peek().line;
    ExprPtr l = parseMath1();
    ExprPtr c;
    while (true) {
      std::string op;
      if (peek().kind == K::kOp && (peek().value == "==" || peek().value == "!=" ||
                                   peek().value == "<" || peek().value == "<=" ||
                                   peek().value == ">" || peek().value == ">=")) {
        op = next().value;
      } else if (isName("in")) {
        next();
        op = "in";
      } else if (isName("not") && isName("in", 1)) {
        next();
        next();
        op = "notin";
      } else {
        break;
      }
      if (!c) {
        c = make(Expr::Kind::kCompare, line);
        c->kids.push_back(l);
      }
      c->names.push_back(op);
      c->kids.push_back(parseMath1());
    }
    return c ? c : l;
  }
  ExprPtr parseMath1() {
    ExprPtr l = parseConcat();
    while (isOp("+") || isOp("-")) {
      const Token &t = next();
      l = binary(t.value == "+" ? "+" : "-", l, parseConcat(), t.line);
    }
    return l;
  }
  ExprPtr parseConcat() {
    ExprPtr l = parseMath2();
    while (isOp("~")) {
      int line = next().line;
      l = binary("~", l, parseMath2(), line);
    }
    return l;
  }
  ExprPtr parseMath2() {
    ExprPtr l = parsePow();
    while (isOp("*") || isOp("/") || isOp("//") || isOp("%")) {
      const Token &t = next();
      std::string op = t.value;
      l = binary(op == "*" ? "*" : op == "/" ? "/" : op == "//" ? "//" : "%", l, parsePow(), t.line);
    }
    return l;
  }
  ExprPtr parsePow() {
    ExprPtr l = parseUnary(true);
    while (isOp("**")) {
      int line = next().line;
      l = binary("**", l, parseUnary(true), line);
    }
    return l;
  }
  /// Nesting bound: a template nested deeper is refused, not a stack overflow.
  struct Depth {
    Parser &p;
    explicit Depth(Parser &parser) : p(parser) {
      if (++p.depth_ > kMaxDepth)
        p.fail("the template nests deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    ~Depth() { --p.depth_; }
  };
  static constexpr int kMaxDepth = 200;

  ExprPtr parseUnary(bool withFilter) {
    Depth guard(*this);
    ExprPtr e;
    if (isOp("-") || isOp("+")) {
      const Token &t = next();
      e = make(t.value == "-" ? Expr::Kind::kNeg : Expr::Kind::kPos, t.line);
      e->kids.push_back(parseUnary(false));
    } else {
      e = parsePrimary();
    }
    e = parsePostfix(e);
    if (withFilter)
      e = parseFilterExpr(e);
    return e;
  }

  ExprPtr parsePrimary() {
    const Token &t = peek();
    switch (t.kind) {
    case K::kName: {
      next();
      ExprPtr e;
      if (t.value == "true" || t.value == "True" || t.value == "false" || t.value == "False") {
        e = make(Expr::Kind::kLiteral, t.line);
        e->value = Value(t.value == "true" || t.value == "True");
      } else if (t.value == "none" || t.value == "None") {
        e = make(Expr::Kind::kLiteral, t.line);
        e->value = Value::none();
      } else {
        e = make(Expr::Kind::kName, t.line);
        e->name = t.value;
      }
      return e;
    }
    case K::kString: {
      std::string s;
      int line = t.line;
      while (peek().kind == K::kString) // adjacent literals concatenate
        s += next().value;
      ExprPtr e = make(Expr::Kind::kLiteral, line);
      e->value = Value(std::move(s));
      return e;
    }
    case K::kInt: {
      next();
      ExprPtr e = make(Expr::Kind::kLiteral, t.line);
      try {
        e->value = Value(int64_t(std::stoll(t.value)));
      } catch (...) {
        throw SyntaxError(t.line, "the integer " + t.value + " does not fit 64 bits");
      }
      return e;
    }
    case K::kFloat: {
      next();
      ExprPtr e = make(Expr::Kind::kLiteral, t.line);
      e->value = Value(std::stod(t.value));
      return e;
    }
    case K::kOp:
      if (t.value == "(") {
        next();
        if (isOp(")")) {
          next();
          return make(Expr::Kind::kTuple, t.line);
        }
        ExprPtr e = parseExpression();
        if (isOp(",")) {
          ExprPtr tup = make(Expr::Kind::kTuple, t.line);
          tup->kids.push_back(e);
          while (isOp(",")) {
            next();
            if (isOp(")"))
              break;
            tup->kids.push_back(parseExpression());
          }
          e = tup;
        }
        expectOp(")", "to close '('");
        return e;
      }
      if (t.value == "[") {
        next();
        ExprPtr l = make(Expr::Kind::kList, t.line);
        while (!isOp("]")) {
          l->kids.push_back(parseExpression());
          if (!isOp(","))
            break;
          next();
        }
        expectOp("]", "to close '['");
        return l;
      }
      if (t.value == "{") {
        next();
        ExprPtr d = make(Expr::Kind::kDict, t.line);
        while (!isOp("}")) {
          d->kids.push_back(parseExpression());
          expectOp(":", "after a dict key");
          d->kids.push_back(parseExpression());
          if (!isOp(","))
            break;
          next();
        }
        expectOp("}", "to close '{'");
        return d;
      }
      break;
    default:
      break;
    }
    fail("expected an expression, found " + describe(t));
  }

  /// Call arguments after '(' up to ')': positional then keyword.
  void parseArgs(Expr &e) {
    expectOp("(", "");
    bool keywords = false;
    while (!isOp(")")) {
      if (peek().kind == K::kName && isOp("=", 1)) {
        e.names.push_back(next().value);
        next();
        e.kids.push_back(parseExpression());
        keywords = true;
      } else {
        if (keywords)
          fail("a positional argument follows a keyword argument");
        e.kids.push_back(parseExpression());
        ++e.positional;
      }
      if (!isOp(","))
        break;
      next();
    }
    expectOp(")", "to close the argument list");
  }

  ExprPtr parsePostfix(ExprPtr e) {
    while (true) {
      if (isOp(".")) {
        int line = next().line;
        ExprPtr a = make(Expr::Kind::kAttr, line);
        if (peek().kind == K::kInt) { // x.0: an item
          ExprPtr idx = make(Expr::Kind::kLiteral, line);
          const Token &n = next();
          try {
            idx->value = Value(int64_t(std::stoll(n.value)));
          } catch (...) {
            throw SyntaxError(n.line, "the integer " + n.value + " does not fit 64 bits");
          }
          a->kind = Expr::Kind::kItem;
          a->kids = {e, idx};
        } else {
          a->name = expectName("an attribute name after '.'");
          a->kids.push_back(e);
        }
        e = a;
      } else if (isOp("[")) {
        int line = next().line;
        ExprPtr parts[3];
        bool slice = false;
        for (int k = 0; k < 3; ++k) {
          if (!isOp(":") && !isOp("]"))
            parts[k] = parseExpression();
          if (k < 2 && isOp(":")) {
            next();
            slice = true;
          } else {
            break;
          }
        }
        expectOp("]", "to close the subscript");
        ExprPtr s = make(slice ? Expr::Kind::kSlice : Expr::Kind::kItem, line);
        s->kids.push_back(e);
        if (slice) {
          s->kids.push_back(parts[0]);
          s->kids.push_back(parts[1]);
          s->kids.push_back(parts[2]);
        } else {
          if (!parts[0])
            fail("an empty subscript '[]'");
          s->kids.push_back(parts[0]);
        }
        e = s;
      } else if (isOp("(")) {
        ExprPtr c = make(Expr::Kind::kCall, peek().line);
        c->kids.push_back(e);
        parseArgs(*c);
        e = c;
      } else {
        return e;
      }
    }
  }

  ExprPtr parseFilterExpr(ExprPtr e) {
    while (true) {
      if (isOp("|")) {
        int line = next().line;
        ExprPtr f = make(Expr::Kind::kFilter, line);
        f->name = expectName("a filter name after '|'");
        while (isOp(".")) { // dotted filter names
          next();
          f->name += "." + expectName("a filter name");
        }
        f->kids.push_back(e);
        if (isOp("("))
          parseArgs(*f);
        e = f;
      } else if (isName("is")) {
        int line = next().line;
        ExprPtr t = make(Expr::Kind::kTest, line);
        if (isName("not")) {
          next();
          t->negated = true;
        }
        t->name = expectName("a test name after 'is'");
        t->kids.push_back(e);
        if (isOp("(")) {
          parseArgs(*t);
        } else if (peek().kind == K::kString || peek().kind == K::kInt ||
                   peek().kind == K::kFloat ||
                   (peek().kind == K::kName && !isName("and") && !isName("or") &&
                    !isName("else") && !isName("if") && !isName("in") && !isName("is") &&
                    !isName("not")) ||
                   isOp("[") || isOp("{")) {
          // `is equalto 'x'`, `is sameas false`: one argument without parentheses.
          t->kids.push_back(parsePostfix(parsePrimary()));
          t->positional = 1;
        }
        e = t;
      } else {
        return e;
      }
    }
  }

  const std::vector<Token> &t_;
  size_t p_ = 0;
  int depth_ = 0;
};

} // namespace

Body parse(const std::vector<Token> &tokens) { return Parser(tokens).parseTemplate(); }

} // namespace accel::rt::jinja
