//===- PlanWriter.h - serialise a compiled model as a plan file -*- C++ -*-===//
//
// The writer half of docs/plan-format.md. It takes the token-major function
// raising produced and writes the schedule, the weights (streamed from the
// module's constants, never all in memory at once beyond what MLIR holds),
// the KV cache geometry, the model config and the tokenizer.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_PLAN_PLANWRITER_H
#define ACCEL_PLAN_PLANWRITER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace accel::codegen {
struct GeneratedKernels;
}

namespace accel::plan {

struct PlanOptions {
  /// "cpu", or an SM ("sm_80", "sm_90") for GPU plans.
  std::string target = "cpu";
  std::string accelcVersion;
  /// The ONNX file the module came from (recorded, for messages).
  std::string source;
  /// The HF tokenizer.json to carry verbatim; empty: none.
  std::string tokenizerJson;
  /// The chat templates (name, Jinja source) of tokenizer_config.json, the
  /// special-token strings they read (bos_token -> "<s>", ...) and where they
  /// came from (docs/plan-format.md, ChatTemplates). Empty: none.
  std::vector<std::pair<std::string, std::string>> chatTemplates;
  std::vector<std::pair<std::string, std::string>> specialTokens;
  std::string chatTemplateOrigin;
  /// Model facts raising cannot see: max positions (0: unknown), the end of
  /// sequence ids, the beginning of sequence id (-1: none).
  int64_t maxPosition = 0;
  std::vector<int32_t> eosTokenIds;
  int32_t bosTokenId = -1;
  /// The -precision mode (recorded) and the GPU compute dtype it implies
  /// ("bf16", "f16"; empty: f32).
  std::string precision;
  std::string computeDType;
  /// GPU kernels generated for the module (lib/Codegen): their PTX and cubin
  /// become KERNEL_IMAGE sections, and each step of an op they serve names
  /// its kernel (attribute `kernel`). Null or empty: none.
  const codegen::GeneratedKernels *kernels = nullptr;
  /// Called as weights are written: the phase ("weights"), tensors written
  /// of the total, and bytes written so far. Unset: nothing is reported.
  std::function<void(const std::string &phase, uint64_t done, uint64_t total, uint64_t bytes)>
      onProgress;
  /// Called on the complete plan at its temporary path before it takes the
  /// real one: a non-empty result refuses it (the temporary file is removed,
  /// the result is the error). Unset: every plan is kept.
  std::function<std::string(const std::string &tmpPath)> checkWritten;
};

/// Writes `module`'s token-major entry function as a plan at `path`. Fails,
/// naming the op and its location, on what a plan cannot hold yet.
llvm::Error writePlan(mlir::ModuleOp module, const PlanOptions &options,
                      const std::string &path);

} // namespace accel::plan

#endif // ACCEL_PLAN_PLANWRITER_H
