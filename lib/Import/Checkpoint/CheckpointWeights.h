//===- CheckpointWeights.h - checkpoint tensors as weight constants -*- C++ -*-===//
//
// Internal to lib/Import. Turns a checkpoint tensor into an onnx.Constant of
// the shape the config implies, checking its dtype and shape first. F32
// tensors stay where they are (a blob over the mmapped file, through
// weightElements); BF16 and F16 are widened to f32, and the few layouts HF
// stores differently from `transformer.linear` (GPT-2's Conv1D, GPT-NeoX's
// per-head interleaved QKV) are rearranged: those are computed once.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_LIB_IMPORT_CHECKPOINT_CHECKPOINTWEIGHTS_H
#define ACCEL_LIB_IMPORT_CHECKPOINT_CHECKPOINTWEIGHTS_H

#include "HfConfig.h"
#include "Safetensors.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <memory>
#include <string>
#include <vector>

namespace accel::import::ckpt {

/// How a stored tensor becomes the weight the op reads.
struct WeightLayout {
  /// Stored as [in, out] (GPT-2 Conv1D): transposed to [out, in].
  bool transposed = false;
  /// Stored as [heads][3][head_dim] rows (GPT-NeoX query_key_value):
  /// reordered to [q of every head; k; v]. 0: not interleaved.
  int64_t interleavedHeads = 0;
  /// Multiplied by this (Granite's residual_multiplier, logits_scaling).
  double scale = 1.0;
};

/// A pre-quantised linear's weight as transformer.linear takes it: i4
/// values [out, in] (one per byte), f32 scales and i4 zero points per
/// output row and group ([out, in / group]; [out] for one group per row).
struct QuantWeight {
  mlir::Value weight, scale, zeroPoint;
  int64_t groupSize = 0; ///< 0: one group per row (per channel)
};

class CheckpointWeights {
public:
  CheckpointWeights(mlir::OpBuilder &b, const CheckpointTensors &tensors, std::string dir,
                    int64_t inlineBytes)
      : b_(b), tensors_(tensors), dir_(std::move(dir)), inlineBytes_(inlineBytes) {}

  /// The onnx.Constant holding tensor `name` as f32 of `shape`; null (and
  /// one error emitted at `loc`) when it is missing or does not fit.
  mlir::Value get(llvm::StringRef name, llvm::ArrayRef<int64_t> shape, mlir::Location loc,
                  const WeightLayout &layout = {});
  /// One onnx.Constant of f32 `shape` holding the tensors `parts` (each of
  /// `partShape`) one after another: experts stacked into [E, ...], gate
  /// and up rows fused. Computed once; named `name`.
  /// Errors are located at `locOf(part)`.
  mlir::Value concat(llvm::StringRef name, llvm::ArrayRef<std::string> parts,
                     llvm::ArrayRef<int64_t> partShape, llvm::ArrayRef<int64_t> shape,
                     llvm::function_ref<mlir::Location(llvm::StringRef)> locOf);
  /// The 4-bit weight of the AWQ or GPTQ tensors `<prefix>.qweight`,
  /// `.qzeros` and `.scales` of each of `prefixes` ([outs[i], in] each;
  /// their rows stacked, as fused q/k/v or gate/up are), decoded when the
  /// plan is written; nullopt (one error at `locOf(prefix)`) when a tensor
  /// is missing, of another dtype or shape, or a zero point does not fit i4.
  std::optional<QuantWeight> quantized(llvm::StringRef name, llvm::ArrayRef<std::string> prefixes,
                                       llvm::ArrayRef<int64_t> outs, int64_t in,
                                       const QuantConfig &q,
                                       llvm::function_ref<mlir::Location(llvm::StringRef)> locOf);
  bool has(llvm::StringRef name) const { return tensors_.find(name) != nullptr; }
  /// The stored shape of `name`; null when the checkpoint has no such tensor.
  const std::vector<int64_t> *shapeOf(llvm::StringRef name) const {
    const StTensor *t = tensors_.find(name);
    return t ? &t->shape : nullptr;
  }

private:
  /// The tensor `name` if it exists with a float dtype and `stored` shape;
  /// else null and one error at `loc`.
  const StTensor *checked(llvm::StringRef name, llvm::ArrayRef<int64_t> stored,
                          mlir::Location loc);
  mlir::Value constant(mlir::Location loc, mlir::ElementsAttr value);

  mlir::OpBuilder &b_;
  const CheckpointTensors &tensors_;
  std::string dir_;
  int64_t inlineBytes_;
};

} // namespace accel::import::ckpt

#endif // ACCEL_LIB_IMPORT_CHECKPOINT_CHECKPOINTWEIGHTS_H
