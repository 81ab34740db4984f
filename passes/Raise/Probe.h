//===- Probe.h - evaluate a graph on probe inputs ---------------*- C++ -*-===//
//
// Raising decides what a subgraph computes by running it: the graph's inputs
// are bound to probe tensors of a chosen sequence length (batch 1, ids 0,
// attention mask all ones, position ids 0..S-1, empty past KV) and the values
// in question are evaluated with the CPU reference kernels. A subgraph's
// meaning then does not depend on how an exporter spelled it.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_PASSES_RAISE_PROBE_H
#define ACCEL_PASSES_RAISE_PROBE_H

#include "accel/Eval/Evaluator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <random>

namespace accel::raise {

/// What a function argument is, judged from its ONNX name and type.
enum class ArgRole { InputIds, AttentionMask, PositionIds, PastKey, PastValue, Other };
ArgRole classifyArg(mlir::func::FuncOp func, unsigned index);

/// The ONNX name of argument `index` (its `onnx.name`), or "arg<index>".
std::string argName(mlir::func::FuncOp func, unsigned index);

/// Binds every argument of `func` for a probe of `seqLen` new tokens after
/// `pastLen` cached ones, batch 1. Fails (with a sentence) for an argument
/// it cannot make up.
llvm::Error bindProbeInputs(eval::Evaluator &ev, mlir::func::FuncOp func,
                            int64_t seqLen, int64_t pastLen = 0);

/// A tensor of `shape` with reproducible values uniform in [-1, 1).
rt::Tensor randomTensor(const rt::Shape &shape, std::mt19937 &rng);

/// Whether `v` is computed only from constants, the shapes of values (the
/// operands of onnx.Shape), and the arguments in `allowed`.
bool dependsOnlyOnShapesAnd(mlir::Value v, llvm::ArrayRef<mlir::Value> allowed);

} // namespace accel::raise

#endif // ACCEL_PASSES_RAISE_PROBE_H
