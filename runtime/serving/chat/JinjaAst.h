//===- JinjaAst.h - a parsed chat template ----------------------*- C++ -*-===//
//
// The tree JinjaParser builds and JinjaEval walks: expressions and statements,
// each with its source line for error messages.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_CHAT_JINJAAST_H
#define ACCEL_RUNTIME_SERVING_CHAT_JINJAAST_H

#include "runtime/serving/chat/JinjaValue.h"

#include <memory>
#include <string>
#include <vector>

namespace accel::rt::jinja {

struct Expr;
using ExprPtr = std::shared_ptr<Expr>;

struct Expr {
  enum class Kind {
    kLiteral,  // value
    kName,     // name
    kList,     // kids: items
    kTuple,    // kids: items
    kDict,     // kids: key, value, key, value, ...
    kAttr,     // kids[0].name
    kItem,     // kids[0][kids[1]]
    kSlice,    // kids[0][kids[1]:kids[2]:kids[3]] (null kids: omitted)
    kCall,     // kids[0](kids[1..] positional, then keywords named by `names`)
    kFilter,   // kids[0] | name(kids[1..], keywords as for kCall)
    kTest,     // kids[0] is [not] name(kids[1..]); negated
    kNot,      // not kids[0]
    kNeg,      // -kids[0]
    kPos,      // +kids[0]
    kBinary,   // kids[0] name kids[1]: + - * / // % ** ~ and or
    kCompare,  // kids[0] names[0] kids[1] names[1] kids[2] ...: == != < <= > >= in notin
    kCond,     // kids[1] if kids[0] else kids[2] (kids[2] null: undefined)
  };
  Kind kind;
  int line = 0;
  Value value;
  std::string name;
  std::vector<ExprPtr> kids;
  /// kCall / kFilter / kTest: the keyword names of the last kids; kCompare:
  /// the operators.
  std::vector<std::string> names;
  size_t positional = 0; // kCall / kFilter / kTest: how many kids after the first are positional
  bool negated = false;  // kTest
};

struct Stmt;
using StmtPtr = std::shared_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Stmt {
  enum class Kind {
    kText,     // text
    kOutput,   // {{ expr }}
    kIf,       // conds[i] -> bodies[i]; bodies[conds.size()], if any: else
    kFor,      // for targets in expr [if filter]: bodies[0]; bodies[1], if any: else
    kSet,      // set targets = expr (targets: a name, names, or "ns.attr" as attrOf/attr)
    kSetBlock, // set targets[0] %} bodies[0] {% endset
    kMacro,    // macro name(targets with defaults) bodies[0]
    kBreak,
    kContinue,
    kBlock,    // bodies[0] rendered as is (generation)
  };
  Kind kind;
  int line = 0;
  std::string text;
  ExprPtr expr;
  ExprPtr filter;
  std::vector<ExprPtr> conds;
  std::vector<Body> bodies;
  std::vector<std::string> targets;
  std::string attrOf;             // kSet of ns.attr: the namespace's name
  std::vector<ExprPtr> defaults;  // kMacro: one per target (null: none)
  std::string name;               // kMacro
};

} // namespace accel::rt::jinja

#endif // ACCEL_RUNTIME_SERVING_CHAT_JINJAAST_H
