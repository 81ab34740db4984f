//===- Compile.h - an ONNX file in, a plan file out -------------*- C++ -*-===//
//
// The whole compile behind `accelc model.onnx -o model.plan` and
// accel_compile() in the C API: import the ONNX model, raise it to the
// transformer dialect, and write the plan with the model facts (tokenizer,
// max positions, BOS/EOS ids) read from HF's files beside the model.
//
// Nothing is printed. MLIR diagnostics are captured: errors come back in the
// returned llvm::Error (a CompileError whose message is one line per
// diagnostic, "<file>: node '<name>': error: <message>", as accelc prints
// them); warnings and remarks (a subgraph that could not be raised) go to
// CompileOptions::onDiagnostic when it is set, and are dropped otherwise.
//
// This header includes no MLIR: the C API's translation unit uses it.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_DRIVER_COMPILE_H
#define ACCEL_DRIVER_COMPILE_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <string>

namespace accel {

struct CompileOptions {
  /// The ONNX model (external data is read from beside it).
  std::string onnxPath;
  /// Where the plan is written (through `<path>.tmp`, renamed at the end, so
  /// a failed compile leaves nothing behind).
  std::string outputPath;
  /// cpu, a100, h100 or h200 (only cpu plans can be written today).
  std::string target = "cpu";
  /// The HF tokenizer.json the plan carries; empty: tokenizer.json beside the
  /// model, when there is one.
  std::string tokenizerPath;
  /// Write a plan without a tokenizer (tokenizerPath is then ignored).
  bool noTokenizer = false;
  /// HF's config.json (max positions, BOS/EOS ids); empty: config.json beside
  /// the model, when there is one. generation_config.json beside the model
  /// is read too when it exists.
  std::string modelConfigPath;
  /// Recorded in the plan as the compiler that wrote it.
  std::string compilerVersion = "accelc 0.1.0";
  /// Initializers up to this many bytes are imported inline
  /// (OnnxImportOptions::inlineConstantBytes, accelc's
  /// -inline-constant-bytes). Raising matches small constants by value:
  /// keep the default unless you know why not.
  int64_t inlineConstantBytes = 256;
  /// accelc's -precision (docs/precision.md): f32, bf16, fp16, int8-weight,
  /// fp8 or w8a8.
  std::string precision = "f32";
  /// accelc's -calibration: the token ids (.npy) w8a8 calibrates activation
  /// ranges on (required by w8a8, ignored otherwise).
  std::string calibrationPath;
  /// accelc's -smoothquant-alpha and -smoothquant (w8a8's SmoothQuant
  /// migration strength, and whether to migrate at all).
  double smoothQuantAlpha = 0.5;
  bool smoothQuant = true;
  /// accelc's -int4-zero-points (-precision=int4-weight: asymmetric groups
  /// with an i4 zero point each).
  bool int4ZeroPoints = false;
  /// accelc's -gpu-memory-utilization: for a GPU -target, the fraction of
  /// its HBM a plan's GPU may use (accel-run's default 0.9); a -tp x -pp
  /// split whose weights and activations exceed it on any GPU is refused
  /// (runtime/engine/PlanMemory.h).
  double gpuMemoryUtilization = 0.9;
  /// The tokens of a step the GPU check sizes the activations arena for
  /// (accel-run's --max-num-batched-tokens default; accelc -print-memory-plan
  /// passes its -max-tokens).
  int64_t gpuCheckTokens = 2048;
  /// accelc's -kv-cache-dtype: auto (the model's) or fp8 (f8E4M3FN with
  /// per-layer scales of 1.0; CPU only for now).
  std::string kvCacheDtype = "auto";
  /// accelc's -tp: tensor-parallel ranks the plan is partitioned for
  /// (docs/passes/partition.md); 1: not partitioned.
  int64_t tpSize = 1;
  /// accelc's -pad-gemm-dims: pad MLP intermediate sizes to this multiple
  /// (docs/passes/layout.md); -1: the target's rule (64 on GPUs, none on the
  /// CPU); 0: no padding.
  int64_t padGemmDims = -1;
  /// accelc's -pp: pipeline stages the plan is split into by decoder layers
  /// (docs/passes/partition.md); 1: one stage.
  int64_t ppSize = 1;
  /// GPU targets: generate the pointwise, norm and rotary kernels and carry
  /// them in the plan (docs/codegen.md); false: the runtime's hand-written
  /// kernels run every step (accelc -no-codegen).
  bool codegen = true;
  /// Keep ONNX operators raising left in a GPU plan; the GPU runtime then
  /// runs them on the host every step (accelc -allow-host-steps). Off: such
  /// a model is refused for GPU targets in one sentence naming the operator.
  bool allowHostSteps = false;
  /// The CUDA toolkit that codegen takes libdevice and ptxas from; empty:
  /// $CUDA_HOME, $CUDA_PATH, else /usr/local/cuda (accelc -cuda-path).
  std::string cudaPath;
  /// Apply the -mlir-* pass manager flags (IR printing, timing, crash
  /// reproducers) of a tool that registered them with
  /// mlir::registerPassManagerCLOptions() (accelc does; a library must not).
  bool applyPassManagerCLOptions = false;
  /// Receives each warning, remark or note the compile emits, formatted as
  /// "<file>: node '<name>': warning: <message>" (no trailing newline), in
  /// the order emitted (MLIR's diagnostic engine serialises them: never two
  /// calls at once). Errors are not passed here: they are the returned error.
  std::function<void(const std::string &line)> onDiagnostic;
  /// accelc -v: receives one line per phase (the import, each pass, kernel
  /// generation, writing the plan) with its time and the process's memory
  /// (lib/Driver/Phases.cpp). Unset: nothing is timed.
  std::function<void(const std::string &line)> onPhase;
  /// accelc's progress line: called as the plan writer writes weights (see
  /// accel::plan::PlanProgress). Unset: none.
  std::function<void(const std::string &phase, uint64_t done, uint64_t total,
                     uint64_t bytes)>
      onProgress;
};

/// Why a compile failed.
enum class CompileErrorKind {
  /// A bad option: an unknown target, an empty path.
  InvalidArgument,
  /// The ONNX model, tokenizer or model config is not there / not readable.
  NotFound,
  /// Asked for something that does not exist yet (GPU plans).
  Unimplemented,
  /// The model was rejected: it does not parse, uses an operator or a
  /// construct accel does not support, or cannot be laid out as a plan; or
  /// a side file (config.json) is malformed. The message names the node.
  InvalidModel,
  /// A bug in accel (a pipeline that does not parse, a failed pass without
  /// a diagnostic).
  Internal,
};

/// The error compileToPlan() returns.
class CompileError : public llvm::ErrorInfo<CompileError> {
public:
  static char ID;
  CompileError(CompileErrorKind kind, std::string message, bool fromDiagnostics)
      : kind_(kind), message_(std::move(message)), fromDiagnostics_(fromDiagnostics) {}

  CompileErrorKind kind() const { return kind_; }
  /// One sentence, or (fromDiagnostics) one line per MLIR diagnostic with its
  /// notes, "<where>: error: <message>", lines joined by '\n'.
  std::string message() const override { return message_; }
  /// True when message() is made of formatted diagnostics, which already say
  /// where and that they are errors (accelc prints them as they are).
  bool fromDiagnostics() const { return fromDiagnostics_; }

  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

private:
  CompileErrorKind kind_;
  std::string message_;
  bool fromDiagnostics_;
};

/// Compiles the ONNX model at options.onnxPath into a plan at
/// options.outputPath. Thread-safe: every call has its own MLIRContext.
/// Returns a CompileError on failure.
llvm::Error compileToPlan(const CompileOptions &options);

/// "unknown target 'x' (expected cpu, a100, h100 or h200)", or empty when
/// `target` is one accel knows.
std::string checkTargetName(const std::string &target);

/// "" when `precision` can run on `target`, else one sentence (fp8 GEMMs need
/// sm_89 or newer: -target=a100 -precision=fp8 is refused).
std::string checkPrecisionForTarget(const std::string &precision, const std::string &target);

} // namespace accel

#endif // ACCEL_DRIVER_COMPILE_H
