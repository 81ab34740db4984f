//===- Pipeline.h - the pass pipelines behind accelc -----------*- C++ -*-===//
#ifndef ACCEL_DRIVER_PIPELINE_H
#define ACCEL_DRIVER_PIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace accel {

/// onnx dialect → transformer dialect: attention first (it proves its
/// subgraphs by evaluating the graph as imported and makes the model
/// token-major), then the local raising patterns, then cleanups.
/// `accelc -emit=transformer` stops after it.
mlir::LogicalResult buildRaisePipeline(mlir::OpPassManager &pm, std::string &error);

/// transformer dialect → fused transformer dialect: gate/up and QKV weight
/// concatenation, residual add + rms_norm. Runs after buildRaisePipeline in
/// `accelc -o model.plan` (and accel_compile); `-emit=transformer` shows
/// the IR before it.
mlir::LogicalResult buildFusionPipeline(mlir::OpPassManager &pm, std::string &error);

/// The fusions that run last, after precision, the KV cache dtype,
/// partitioning and pipeline stages (which know only the unfused ops):
/// accel-fuse-qkv-rotary. `accelc -o model.plan` runs it just before the
/// plan is written, for every target; `-emit=fused` and `-emit=partitioned`
/// show its result.
mlir::LogicalResult buildLateFusionPipeline(mlir::OpPassManager &pm, std::string &error);

/// What -precision=w8a8 needs beyond the mode (docs/precision.md).
struct PrecisionOptions {
  /// accelc's -calibration: token ids (.npy, [S] or [N, S]) the f32 model
  /// runs on to calibrate activation ranges; required by w8a8.
  std::string calibration;
  /// accelc's -smoothquant-alpha: SmoothQuant's migration strength, [0, 1].
  double smoothQuantAlpha = 0.5;
  /// accelc's -smoothquant (default on): false quantises without migration.
  bool smoothQuant = true;
  /// accelc's hidden -smoothquant-only (a check, docs/precision.md): w8a8
  /// calibrates and migrates but quantises nothing, so the IR must compute
  /// what the f32 IR does.
  bool smoothQuantOnly = false;
  /// accelc's -int4-zero-points: -precision=int4-weight with an i4 zero
  /// point per group (asymmetric groups).
  bool int4ZeroPoints = false;
};

/// The precision passes for `accelc -precision=<mode>` (docs/precision.md;
/// modes f32, bf16, fp16, int8-weight, fp8, w8a8):
/// bf16/fp16 narrow the weights before fusion (`beforeFusion`), int8-weight,
/// fp8 and w8a8 quantise them after it (w8a8: calibrate, smooth, quantise
/// weights and activations). Adds nothing for f32 or for the other half. An
/// unknown mode, or w8a8 without a calibration file, is an error.
mlir::LogicalResult buildPrecisionPipeline(mlir::OpPassManager &pm, const std::string &mode,
                                           bool beforeFusion, std::string &error,
                                           const PrecisionOptions &options = {});

/// "" when `options` suit `mode`, else one sentence (w8a8 needs -calibration;
/// alpha outside [0, 1]).
std::string checkPrecisionOptions(const std::string &mode, const PrecisionOptions &options);

/// `accelc -kv-cache-dtype=<dtype>`: `auto` (the model's) adds nothing;
/// `fp8` stores the paged KV cache as f8E4M3FN (accel-kv-cache-dtype) with
/// per-layer scales of 1.0, or, given `calibration` tokens (.npy), per-KV-head
/// scales calibrated on them. Anything else is an error naming the choices.
mlir::LogicalResult buildKVCacheDtypePipeline(mlir::OpPassManager &pm, const std::string &dtype,
                                              std::string &error,
                                              const std::string &calibration = "");

/// "" when `mode` is a -precision mode accelc knows, else one sentence.
std::string checkPrecisionMode(const std::string &mode);

/// Tensor-parallel partitioning and pipeline stages for `accelc -tp=N -pp=M`
/// (docs/passes/partition.md), after fusion and precision:
/// accel-partition{tp-size=N}, then accel-pipeline-stages{pp-size=M}. Adds
/// nothing for N = M = 1; N < 1 or M < 1 is an error.
mlir::LogicalResult buildPartitionPipeline(mlir::OpPassManager &pm, int64_t tpSize,
                                           int64_t ppSize, std::string &error);

/// The layout rules of the target for `accelc` (docs/passes/layout.md),
/// after fusion and precision, before partitioning:
/// accel-pad-gemm-dims{multiple=M}, with M the target's gemmDimMultiple
/// (or `padOverride` when it is 0 or more) times `tpSize`. Adds nothing when
/// that is 0 or 1; an unknown target or a negative override is an error.
mlir::LogicalResult buildLayoutPipeline(mlir::OpPassManager &pm, const std::string &target,
                                        int64_t padOverride, int64_t tpSize,
                                        std::string &error);

/// The exec level (docs/architecture.md): accel-lower-to-exec,
/// accel-exec-assign-buffers, and for a GPU target with generated kernels
/// accel-exec-select-kernels{chip} (which refuses ONNX operators left by
/// raising unless `allowHostSteps`).
mlir::LogicalResult buildExecPipeline(mlir::OpPassManager &pm, const std::string &target,
                                      bool codegen, bool allowHostSteps, std::string &error);

/// Where a compile stops: what `accelc -emit=<phase>` prints. Every phase
/// includes the ones before it.
enum class Phase {
  Transformer, // raised (buildRaisePipeline)
  Fused,       // + precision, fusion, the target's layout rules, the KV cache dtype
  Partitioned, // + -tp/-pp partitioning, then the late fusions
  Exec,        // + the exec level: the schedule the plan is written from
};

/// Everything a compile's pipeline depends on (accelc's flags, the C API's
/// options).
struct PipelineOptions {
  std::string target = "cpu";
  std::string precision = "f32";
  PrecisionOptions precisionOptions;
  std::string kvCacheDtype = "auto";
  /// -1: the target's GEMM multiple.
  int64_t padGemmDims = -1;
  int64_t tpSize = 1, ppSize = 1;
  /// Select generated kernels for a GPU target (off: -no-codegen, or no
  /// libdevice).
  bool codegen = true;
  /// Keep ONNX operators raising left in a GPU plan (run on the host).
  bool allowHostSteps = false;
};

/// The one pipeline behind accelc and the C API: every pass from the
/// imported onnx dialect to `stopAfter`. Fused stops before partitioning
/// (and runs the late fusions on the unpartitioned function); Partitioned
/// and Exec partition first. A bad option is an error in one sentence.
mlir::LogicalResult buildCompilePipeline(mlir::OpPassManager &pm, const PipelineOptions &options,
                                         Phase stopAfter, std::string &error);

} // namespace accel

#endif // ACCEL_DRIVER_PIPELINE_H
