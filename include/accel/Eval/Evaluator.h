//===- Evaluator.h - evaluate accel IR on the CPU reference kernels -*- C++ -*-===//
//
// The compiler's window onto numbers: runs IR op by op with the runtime's CPU
// kernels (runtime/cpu). Two uses: `accelc -interpret`, which runs a whole
// model at a given level so that a user can compare it with the framework
// (and each level with the one before), and raising patterns that must know
// what a subgraph computes (a mask, a cos/sin table) rather than how it is
// spelled: they bind the subgraph's inputs and evaluate its result.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_EVAL_EVALUATOR_H
#define ACCEL_EVAL_EVALUATOR_H

#include "core/Tensor.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <optional>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace accel::rt::kv {
class BlockPool;
struct StepMetadata;
} // namespace accel::rt::kv

namespace accel::eval {

/// The runtime element type of an MLIR element type (null when it has none).
std::optional<rt::DType> toDType(mlir::Type elementType);

/// A runtime tensor holding `attr`'s elements. Dense resource blobs are
/// viewed, not copied (the MLIR context keeps them alive).
llvm::Expected<rt::Tensor> toTensor(mlir::ElementsAttr attr);

/// Evaluates values of one function. Values can be bound to tensors; any
/// other value is computed from its defining op, recursively, and cached.
class Evaluator {
public:
  /// Runs one op: `inputs` has one entry per operand, `outputs` must receive
  /// one tensor per result.
  using OpFn = std::function<llvm::Error(Evaluator &ev, mlir::Operation *op,
                                         llvm::ArrayRef<const rt::Tensor *> inputs,
                                         llvm::SmallVectorImpl<rt::Tensor> &outputs)>;

  /// What transformer-level ops read and write beyond their operands: the
  /// paged KV cache (`!transformer.kv_cache` values) and this step's
  /// metadata (`!transformer.batch` values). Null at the onnx level.
  struct PagedState {
    rt::kv::BlockPool *pool = nullptr;
    const rt::kv::StepMetadata *step = nullptr;
  };
  void setPagedState(PagedState state) { paged_ = state; }
  const PagedState &pagedState() const { return paged_; }

  /// Called with each op and its operands' tensors just before the op runs
  /// (accel-calibrate-activations records linear inputs this way).
  using Observer = std::function<void(mlir::Operation *op,
                                      llvm::ArrayRef<const rt::Tensor *> inputs)>;
  void setObserver(Observer observer) { observer_ = std::move(observer); }

  Evaluator();

  /// Gives `value` a tensor (a function argument, or an override).
  void bind(mlir::Value value, rt::Tensor tensor);
  /// The tensor of `value`, computing what it depends on. Fails with one
  /// sentence naming the op (and its location) that could not be run, or
  /// the unbound argument reached.
  llvm::Expected<rt::Tensor> evaluate(mlir::Value value);

  /// Registers how ops named `opName` run (transformer ops register here).
  static void registerOp(llvm::StringRef opName, OpFn fn);

private:
  llvm::Error run(mlir::Operation *op);
  llvm::DenseMap<mlir::Value, rt::Tensor> values_;
  PagedState paged_;
  Observer observer_;
};

/// Runs `func` on `args` (one per argument) and returns its results. Tensors
/// are freed after their last use, so memory peaks near the live set.
/// Arguments that are not tensors (`!transformer.batch`, `!transformer.kv_cache`)
/// take an undefined rt::Tensor in `args`; `paged` supplies their state
/// (eval::runSequence in Stepper.h drives a token-major function this way).
/// `observer`, when set, sees every op's inputs before it runs.
llvm::Expected<std::vector<rt::Tensor>>
evaluateFunction(mlir::func::FuncOp func, llvm::ArrayRef<rt::Tensor> args,
                 Evaluator::PagedState paged = {},
                 const Evaluator::Observer &observer = nullptr);

} // namespace accel::eval

#endif // ACCEL_EVAL_EVALUATOR_H
