//===- PrecisionUtils.h - helpers shared by the precision passes -*- C++ -*-===//
//
// Weights at the transformer level are onnx.Constant ops holding an inline
// `dense<...>` or a `dense_resource<key>` blob (possibly elided: IR printed
// without weights and parsed back, as lit tests do). Precision passes read
// their f32 values, write new constants of another element type, and
// release the f32 blob as soon as nothing reads it, so that a large model
// is never held twice.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_PASSES_PRECISION_PRECISIONUTILS_H
#define ACCEL_PASSES_PRECISION_PRECISIONUTILS_H

#include "accel/dialects/Onnx/OnnxOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <optional>

namespace accel::rt {
class Tensor;
} // namespace accel::rt

namespace accel::precision {

/// Which operands the policy narrows (docs/precision.md).
struct WeightSelection {
  bool linear = true;    ///< transformer.linear's weight
  bool gatedMlp = true;  ///< transformer.gated_mlp's gate_up, gate, up, down, and
                         ///< transformer.moe's experts and shared expert
  bool lmHead = true;    ///< transformer.logits' lm_head
  bool embedding = true; ///< transformer.embedding's table
};

/// The f32 onnx.Constant weights the policy selects, each with the operands
/// that read it as a weight, in program order. Operands of ops that compute
/// in f16/bf16 already, weights that are not f32 constants of static shape,
/// and quantised linears are not selected.
/// The onnx.Constant defining `v` when it holds an f32 tensor of static
/// shape as a dense or dense_resource value; null otherwise.
onnx::ConstantOp f32Constant(mlir::Value v);

llvm::MapVector<onnx::ConstantOp, llvm::SmallVector<mlir::OpOperand *>>
selectF32Weights(mlir::func::FuncOp func, const WeightSelection &which);

/// The f32 values of `attr` (a splat expanded into `storage`), or nullopt
/// when its blob is elided.
std::optional<llvm::ArrayRef<float>> readF32(mlir::ElementsAttr attr,
                                             llvm::SmallVectorImpl<float> &storage);

/// A constant value of `type` shaped like `like`: a dense_resource blob named
/// `<like's key><suffix>` when `like` is one (elided, `fill` not called,
/// when `like` is elided), an inline dense otherwise. `fill` writes the
/// row-major bytes.
mlir::ElementsAttr makeElements(mlir::RankedTensorType type, mlir::ElementsAttr like,
                                llvm::StringRef suffix,
                                llvm::function_ref<void(llvm::MutableArrayRef<char>)> fill);

/// A weight of `type` whose rows `map(begin, end, in, out)` computes from
/// the same rows of `like` (row-major bytes, along dimension 0): a lazy
/// weight, computed when the plan writer reads it (accel/Weights/Weights.h),
/// when `like` is a blob with values; made now otherwise (as makeElements).
mlir::ElementsAttr
mapWeightRows(mlir::RankedTensorType type, mlir::ElementsAttr like, llvm::StringRef suffix,
              std::function<void(int64_t begin, int64_t end, const char *in, char *out)> map);

/// Runs `fn(begin, end, rows)` over the f32 rows of `attr` a bounded chunk
/// at a time (the pages read dropped as it goes), the chunks on all cores:
/// `fn` must be thread-safe. False when elided.
bool forEachF32Rows(mlir::ElementsAttr attr,
                    const std::function<void(int64_t begin, int64_t end, const float *rows)> &fn);

/// A new onnx.Constant of `value` built before `before`.
mlir::Value createConstant(mlir::Operation *before, mlir::Location loc, mlir::ElementsAttr value);

/// How many onnx.Constant ops in `func` hold each resource blob.
llvm::DenseMap<void *, unsigned> countBlobHolders(mlir::func::FuncOp func);

/// Frees the bytes of `attr`'s blob when it is a dense_resource that only one
/// constant holds (per `holders`); its key stays, elided.
void releaseBlob(mlir::ElementsAttr attr, const llvm::DenseMap<void *, unsigned> &holders);

/// Gives `c` the value `value` (and its type) when every use of `c` is in
/// `uses`, releasing the old blob; otherwise builds a new constant that the
/// operands in `uses` read instead, leaving `c` to its other readers.
void replaceWeight(onnx::ConstantOp c, llvm::ArrayRef<mlir::OpOperand *> uses,
                   mlir::ElementsAttr value, const llvm::DenseMap<void *, unsigned> &holders);

/// gated_mlp %x gate_up(%gu) down(%d) → linear, gated_act, linear, when x is
/// f32 and both weights are constants (so that both GEMMs can be quantised;
/// a gated MLP with separate gate and up weights is remarked and kept).
void splitGatedMlps(mlir::func::FuncOp func);

/// Runs the token-major `func` on the CPU evaluator (lib/Eval) over every
/// sequence of the calibration tokens at `tokensPath` (a .npy of integer
/// ids, [S] or [N, S]), `observer` seeing every op's inputs. On a missing,
/// unreadable or malformed file, a function that is not token-major or a
/// failing op, emits one error on `func` prefixed with `pass` and fails.
mlir::LogicalResult
runCalibration(mlir::func::FuncOp func, llvm::StringRef pass, llvm::StringRef tokensPath,
               const std::function<void(mlir::Operation *,
                                        llvm::ArrayRef<const accel::rt::Tensor *>)> &observer);

/// The discardable attribute accel-calibrate-activations puts on each f32
/// transformer.linear: max |x[:, j]| over the calibration tokens, an f32
/// `[in_features]` dense. accel-smooth-quant rescales it, and
/// accel-quantize-activations turns it into the static input scale.
inline constexpr llvm::StringLiteral kCalibAbsMaxAttr = "accel.calib_absmax";

/// Runs `fn(begin, end)` over [0, n) in chunks, on the context's threads.
void parallelChunks(mlir::MLIRContext *ctx, int64_t n,
                    llvm::function_ref<void(int64_t, int64_t)> fn);

} // namespace accel::precision

#endif // ACCEL_PASSES_PRECISION_PRECISIONUTILS_H
