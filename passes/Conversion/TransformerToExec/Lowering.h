//===- Lowering.h - transformer dialect to exec: shared machinery -*- C++ -*-===//
//
// accel-lower-to-exec turns the token-major function (transformer ops and
// the ONNX glue raising left) into an exec.schedule: every tensor becomes a
// view (a weight, a step input, a buffer, or a view of one), every op a
// step. The lowering of each op family lives in its own file (Embedding,
// Norms, Pointwise, Moe, Rotary, Attention, Linear, Collectives, Views, Onnx)
// and registers one function per op kind with LoweringPatterns; Lowering
// is the state they share.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_PASSES_CONVERSION_LOWERING_H
#define ACCEL_PASSES_CONVERSION_LOWERING_H

#include "TokenShapes.h"

#include "accel/dialects/Exec/ExecOps.h"
#include "accel/dialects/Exec/ExecUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <functional>

namespace accel::conversion {

class Lowering;

/// How one op kind lowers: emits steps (and declarations) with the builder of
/// `l`, maps the op's results to views, or fails with a diagnostic on the op.
using LowerFn = std::function<mlir::LogicalResult(mlir::Operation *, Lowering &)>;

/// The lowering patterns, one per op name.
class LoweringPatterns {
public:
  void add(llvm::StringRef opName, LowerFn fn) { byName_[opName] = std::move(fn); }
  template <typename OpT>
  void add(std::function<mlir::LogicalResult(OpT, Lowering &)> fn) {
    add(OpT::getOperationName(),
        [fn](mlir::Operation *op, Lowering &l) { return fn(llvm::cast<OpT>(op), l); });
  }
  /// The pattern of `op`, else the fallback for its dialect (ONNX), else null.
  const LowerFn *lookup(mlir::Operation *op) const;
  void setOnnxFallback(LowerFn fn) { onnxFallback_ = std::move(fn); }

private:
  llvm::StringMap<LowerFn> byName_;
  LowerFn onnxFallback_;
};

void populateEmbeddingLowerings(LoweringPatterns &patterns);
void populateNormLowerings(LoweringPatterns &patterns);
void populatePointwiseLowerings(LoweringPatterns &patterns);
void populateMoeLowerings(LoweringPatterns &patterns);
void populateRotaryLowerings(LoweringPatterns &patterns);
void populateAttentionLowerings(LoweringPatterns &patterns);
void populateLinearLowerings(LoweringPatterns &patterns);
void populateCollectiveLowerings(LoweringPatterns &patterns);
void populateViewLowerings(LoweringPatterns &patterns);
void populateOnnxLowerings(LoweringPatterns &patterns);

/// exec.onnx for any ONNX operator (the fallback of populateOnnxLowerings).
mlir::LogicalResult lowerOnnxOperator(mlir::Operation *op, Lowering &l);

/// All of them.
void populateTransformerToExecPatterns(LoweringPatterns &patterns);

class Lowering {
public:
  Lowering(mlir::func::FuncOp func, exec::ScheduleOp schedule, exec::KVPoolOp pool,
           exec::ArenaOp weights, const LoweringPatterns &patterns);

  mlir::OpBuilder &builder() { return builder_; }
  const TokenShapes &shapes() const { return shapes_; }
  mlir::func::FuncOp func() { return func_; }

  /// The view `tensor` lowered to; lowers a deferred producer (a constant,
  /// shape arithmetic) on demand. Fails, with a diagnostic at `user`, for a
  /// value that has none (a !transformer type, an unlowered op).
  mlir::FailureOr<mlir::Value> view(mlir::Value tensor, mlir::Operation *user);
  /// view() of an optional operand (null stays null).
  mlir::FailureOr<mlir::Value> optionalView(mlir::Value tensor, mlir::Operation *user);
  /// The views of every operand of `op`.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> views(mlir::ValueRange tensors,
                                                       mlir::Operation *user);
  /// A new buffer for the op result `result` (exec.alloc; a buffer whose
  /// dynamic extent is k x T is allocated [.., k, T, ..] and viewed), mapped
  /// to it.
  mlir::FailureOr<mlir::Value> alloc(mlir::Value result);
  /// The view type `tensor` lowers to: its shape from TokenShapes (static
  /// where known static, `?` for k x T or k x S).
  mlir::FailureOr<exec::ViewType> viewType(mlir::Value tensor, mlir::Operation *where);
  /// Maps `tensor` to `view` (exec.view when the types differ).
  void map(mlir::Value tensor, mlir::Value view);
  /// Whether `tensor` has been lowered already.
  bool isMapped(mlir::Value tensor) const { return views_.count(tensor); }

  /// The schedule's step size (created once, at the top of the schedule).
  mlir::Value stepSize(exec::StepSizeKind kind);
  /// The schedule's step input of `kind` with elements of `elementType`.
  mlir::FailureOr<mlir::Value> stepInput(exec::StepInputKind kind, mlir::Type elementType,
                                         mlir::Operation *user);
  /// The KV pool's symbol.
  mlir::FlatSymbolRefAttr pool() const;
  mlir::FlatSymbolRefAttr weightsArena() const;

  /// Copies what every step keeps from the op it lowers: its location (set
  /// by the builder) and accel.pp_stage.
  mlir::Operation *finish(mlir::Operation *step, mlir::Operation *from);

  /// Lowers one op with its pattern (used by the driver and on demand).
  mlir::LogicalResult lower(mlir::Operation *op);
  /// Whether the driver leaves `op` until a step reads its result: constants
  /// and shape arithmetic whose contents are known.
  bool isDeferred(mlir::Operation *op) const;

private:
  mlir::FailureOr<mlir::Value> weight(mlir::Operation *constant, mlir::Value result,
                                      mlir::Operation *user);
  mlir::FailureOr<mlir::Value> shapeConstant(mlir::Value tensor, const SymShape &contents);

  mlir::func::FuncOp func_;
  exec::ScheduleOp schedule_;
  exec::KVPoolOp pool_;
  exec::ArenaOp weights_;
  const LoweringPatterns &patterns_;
  TokenShapes shapes_;
  mlir::OpBuilder builder_;
  llvm::DenseMap<mlir::Value, mlir::Value> views_;
  llvm::DenseMap<unsigned, mlir::Value> stepSizes_;
  llvm::DenseMap<unsigned, mlir::Value> stepInputs_;
  llvm::DenseSet<mlir::Operation *> lowering_; // on-demand recursion guard
  int64_t weightBytes_ = 0;
  /// Names given to exec.weight so far: two constants of one ONNX name
  /// (a folded copy and its source) get `name`, `name.1`, ...
  llvm::StringMap<unsigned> weightNames_;
  std::string uniqueWeightName(std::string name);
  int64_t tpSize_ = 1;
};

using accel::exec::locationName;

} // namespace accel::conversion

#endif // ACCEL_PASSES_CONVERSION_LOWERING_H
