//===- Evaluator.cpp - evaluate accel IR on the CPU reference kernels -----===//
#include "accel/Eval/Evaluator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

using namespace mlir;
using namespace accel;
using namespace accel::eval;

namespace {
llvm::StringMap<Evaluator::OpFn> &registry() {
  static llvm::StringMap<Evaluator::OpFn> r;
  return r;
}
std::mutex registryMutex;
} // namespace

void registerOnnxEvaluators();        // OnnxEval.cpp: every onnx op
void registerTransformerEvaluators(); // TransformerEval.cpp: every transformer op

Evaluator::Evaluator() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerOnnxEvaluators();
    registerTransformerEvaluators();
  });
}

void Evaluator::registerOp(StringRef opName, OpFn fn) {
  std::lock_guard<std::mutex> lock(registryMutex);
  registry()[opName] = std::move(fn);
}

void Evaluator::bind(Value value, rt::Tensor tensor) { values_[value] = std::move(tensor); }

static std::string describe(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "'" << op->getName() << "' at ";
  op->getLoc().print(os);
  return s;
}

llvm::Error Evaluator::run(Operation *op) {
  const OpFn *fn = nullptr;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    auto it = registry().find(op->getName().getStringRef());
    if (it == registry().end()) // a dialect-wide runner ("onnx.*")
      it = registry().find((op->getName().getDialectNamespace() + ".*").str());
    if (it != registry().end())
      fn = &it->second;
  }
  if (!fn)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the evaluator cannot run " + describe(op));
  SmallVector<const rt::Tensor *> inputs;
  for (Value v : op->getOperands()) {
    auto it = values_.find(v);
    if (it == values_.end())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "operand of " + describe(op) + " was not computed");
    inputs.push_back(&it->second);
  }
  if (observer_)
    observer_(op, inputs);
  SmallVector<rt::Tensor> outputs;
  if (llvm::Error e = (*fn)(*this, op, inputs, outputs))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   describe(op) + ": " + llvm::toString(std::move(e)));
  if (outputs.size() != op->getNumResults())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   describe(op) + " produced " + llvm::Twine(outputs.size()) +
                                       " results, the op has " +
                                       llvm::Twine(op->getNumResults()));
  for (auto [r, t] : llvm::zip(op->getResults(), outputs))
    values_[r] = std::move(t);
  return llvm::Error::success();
}

llvm::Expected<rt::Tensor> Evaluator::evaluate(Value value) {
  // Iterative post-order over the backward slice, so deep graphs do not
  // overflow the stack.
  SmallVector<std::pair<Operation *, bool>> stack;
  auto need = [&](Value v) -> llvm::Error {
    if (values_.count(v))
      return llvm::Error::success();
    if (auto arg = dyn_cast<BlockArgument>(v))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "argument #" + llvm::Twine(arg.getArgNumber()) +
                                         " is not bound");
    stack.push_back({v.getDefiningOp(), false});
    return llvm::Error::success();
  };
  if (llvm::Error e = need(value))
    return std::move(e);
  while (!stack.empty()) {
    auto [op, expanded] = stack.back();
    if (llvm::all_of(op->getResults(), [&](Value r) { return values_.count(r); })) {
      stack.pop_back();
      continue;
    }
    if (expanded) {
      stack.pop_back();
      if (llvm::Error e = run(op))
        return std::move(e);
      continue;
    }
    stack.back().second = true;
    for (Value v : op->getOperands())
      if (llvm::Error e = need(v))
        return std::move(e);
  }
  return values_.find(value)->second;
}

llvm::Expected<std::vector<rt::Tensor>>
eval::evaluateFunction(func::FuncOp func, ArrayRef<rt::Tensor> args,
                       Evaluator::PagedState paged, const Evaluator::Observer &observer) {
  Block &body = func.getBody().front();
  if (args.size() != body.getNumArguments())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "@" + func.getSymName() + " takes " +
                                       llvm::Twine(body.getNumArguments()) +
                                       " arguments, " + llvm::Twine(args.size()) +
                                       " given");
  // Free each value after its last use in the block.
  llvm::DenseMap<Operation *, SmallVector<Value>> dies;
  {
    llvm::DenseMap<Value, Operation *> last;
    for (Operation &op : body)
      for (Value v : op.getOperands())
        last[v] = &op;
    for (auto &[v, op] : last)
      if (!isa<func::ReturnOp>(op))
        dies[op].push_back(v);
  }
  Evaluator ev;
  ev.setPagedState(paged);
  if (observer)
    ev.setObserver(observer);
  for (auto [arg, t] : llvm::zip(body.getArguments(), args))
    ev.bind(arg, t);
  std::vector<rt::Tensor> results;
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value v : ret.getOperands()) {
        llvm::Expected<rt::Tensor> t = ev.evaluate(v);
        if (!t)
          return t.takeError();
        results.push_back(std::move(*t));
      }
      break;
    }
    for (Value r : op.getResults()) {
      llvm::Expected<rt::Tensor> t = ev.evaluate(r);
      if (!t)
        return t.takeError();
    }
    for (Value v : dies.lookup(&op))
      ev.bind(v, rt::Tensor()); // drop the storage, keep the slot
  }
  return results;
}
