//===- Pipeline.cpp - the pass pipelines behind accelc --------------------===//
#include "accel/Driver/Pipeline.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

LogicalResult accel::buildRaisePipeline(OpPassManager &pm, std::string &error) {
  // Textual, so that the pipeline reads as `accel-opt` would run it:
  //   accel-opt --pass-pipeline='<this>' model.onnx.mlir
  // The lm head is found first (it looks for the embedding table and the
  // graph output as exported); attention then makes the graph token-major;
  // rotary needs transformer.positions; the local patterns follow.
  static const char *kRaise =
      "func.func(accel-raise-logits),accel-raise-attention,accel-raise-rotary,"
      "func.func(accel-raise-rms-norm,accel-raise-layer-norm,accel-raise-embedding,"
      "accel-raise-linear,accel-raise-activations,accel-raise-mlp,"
      "accel-raise-residual-add),canonicalize,cse,accel-report-unraised";
  llvm::raw_string_ostream os(error);
  return parsePassPipeline(kRaise, pm, os);
}

LogicalResult accel::buildFusionPipeline(OpPassManager &pm, std::string &error) {
  // After raising, on the token-major function. Gate/up and QKV first (they
  // only touch linears and the MLP); the residual add + norm last. Each pass
  // erases the weights it replaced, so no cleanup is needed.
  //   accel-opt --pass-pipeline='builtin.module(<this>)' raised.mlir
  static const char *kFusion =
      "func.func(accel-fuse-gate-up,accel-fuse-qkv,accel-fuse-add-rms-norm)";
  llvm::raw_string_ostream os(error);
  return parsePassPipeline(kFusion, pm, os);
}
