//===- Stepper.h - run a token-major function over a sequence ---*- C++ -*-===//
//
// A raised model function (`func.func @main_graph(%ids: tensor<?xi64>,
// %batch: !transformer.batch, %cache: !transformer.kv_cache<...>)`) computes
// one engine step. runSequence plays the engine for one sequence on the CPU:
// it allocates a paged KV pool from the cache type, feeds the prompt in
// chunks (a whole-prompt prefill, chunked prefill, or token-by-token decode
// through the cache), and concatenates each step's per-token logits.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_EVAL_STEPPER_H
#define ACCEL_EVAL_STEPPER_H

#include "core/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <optional>

namespace mlir {
class Operation;
} // namespace mlir

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace accel::eval {

/// Whether `func` is token-major: it takes a `!transformer.batch` argument.
bool isTokenMajor(mlir::func::FuncOp func);

/// The index of the token-id argument of a token-major `func` (its only
/// tensor argument), or nothing when it has none or several.
std::optional<unsigned> tokenIdsArgument(mlir::func::FuncOp func);

/// Runs the token-major `func` over one sequence `ids` ([S] or [1, S],
/// integer), `chunk` tokens per step (0: the whole sequence in one step; 1:
/// pure decode), each step through rt::kv::prepareStep and a KV pool with
/// room for S tokens. Returns the logits of every token, [1, S, vocab]: the
/// function's result named "logits" (or its only result), which must have a
/// row per token of the step. Fails with one sentence on a malformed `ids`,
/// a negative `chunk`, a function of another shape, or any op that fails.
/// `observer`, when set, sees every op's inputs before it runs.
llvm::Expected<rt::Tensor> runSequence(mlir::func::FuncOp func, const rt::Tensor &ids,
                                       int64_t chunk,
                                       const std::function<void(mlir::Operation *,
                                           llvm::ArrayRef<const rt::Tensor *>)> &observer =
                                           nullptr);

} // namespace accel::eval

#endif // ACCEL_EVAL_STEPPER_H
