//===- Pipeline.cpp - the pass pipelines behind accelc --------------------===//
#include "accel/Driver/Pipeline.h"

#include "accel/Target/Target.h"
#include "accel/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

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
      "accel-raise-quantized-linear,accel-raise-linear,accel-raise-activations,accel-raise-mlp,"
      "accel-raise-residual-add,accel-raise-views),canonicalize,cse,accel-report-unraised";
  llvm::raw_string_ostream os(error);
  return parsePassPipeline(kRaise, pm, os);
}

LogicalResult accel::buildFusionPipeline(OpPassManager &pm, std::string &error) {
  // After raising, on the token-major function. Gate/up and QKV first (they
  // only touch linears and the MLP), then the activations into the linears
  // before them (GPT-2's c_fc + gelu); the residual add + norm last. Each
  // pass erases the weights it replaced, so no cleanup is needed.
  //   accel-opt --pass-pipeline='builtin.module(<this>)' raised.mlir
  static const char *kFusion = "func.func(accel-fuse-gate-up,accel-fuse-qkv,"
                               "accel-fuse-linear-activation,accel-fuse-add-rms-norm)";
  llvm::raw_string_ostream os(error);
  return parsePassPipeline(kFusion, pm, os);
}

LogicalResult accel::buildLateFusionPipeline(OpPassManager &pm, std::string &error) {
  // After partitioning and pipeline stages, which know the unfused ops only:
  // split + head views + q/k rotaries become transformer.qkv_rotary, which
  // the plan writer fuses with the KV-cache write.
  //   accel-opt --pass-pipeline='builtin.module(<this>)' partitioned.mlir
  llvm::raw_string_ostream os(error);
  return parsePassPipeline("func.func(accel-fuse-qkv-rotary)", pm, os);
}

std::string accel::checkPrecisionMode(const std::string &mode) {
  if (mode == "f32" || mode == "bf16" || mode == "fp16" || mode == "int8-weight" ||
      mode == "int4-weight" || mode == "fp8" || mode == "w8a8" || mode == "w8a8-fp8")
    return "";
  return "unknown precision '" + mode +
         "' (expected f32, bf16, fp16, int8-weight, int4-weight, fp8, w8a8 or w8a8-fp8)";
}

std::string accel::checkPrecisionOptions(const std::string &mode,
                                         const PrecisionOptions &options) {
  const bool w8a8 = mode == "w8a8" || mode == "w8a8-fp8";
  if (w8a8 && options.smoothQuantOnly && options.calibration.empty())
    return "-smoothquant-only migrates activation ranges calibrated on sample tokens: "
           "give them with -calibration <tokens.npy> (integer ids, [S] or [N, S])";
  if (options.int4ZeroPoints && mode != "int4-weight")
    return "-int4-zero-points makes int4 groups asymmetric: it needs -precision=int4-weight, "
           "not " + mode;
  if (w8a8 && !(options.smoothQuantAlpha >= 0.0 && options.smoothQuantAlpha <= 1.0))
    return "-smoothquant-alpha must be in [0, 1], got " +
           std::to_string(options.smoothQuantAlpha);
  return "";
}

LogicalResult accel::buildPrecisionPipeline(OpPassManager &pm, const std::string &mode,
                                            bool beforeFusion, std::string &error,
                                            const PrecisionOptions &options) {
  if (std::string bad = checkPrecisionMode(mode); !bad.empty()) {
    error = bad;
    return failure();
  }
  if (std::string bad = checkPrecisionOptions(mode, options); !bad.empty() && !beforeFusion) {
    error = bad;
    return failure();
  }
  // W8A8 (SmoothQuant): calibrate on the f32 model after fusion (the fused
  // QKV / gate_up inputs are the norms' outputs), migrate, quantise the
  // weights (i8 per channel) and then the activations (i8 per tensor,
  // static); lm head and embedding bf16 as for int8-weight. Built rather
  // than parsed: the calibration path may hold any character.
  // w8a8-fp8 is the same with f8E4M3FN weights (per channel) and
  // activations (per tensor, max |x| / 448).
  // Without calibration tokens both quantise activations with dynamic
  // per-token scales (vLLM's FP8 default), and w8a8 does not smooth (the
  // migration needs calibrated ranges).
  if (!beforeFusion && (mode == "w8a8" || mode == "w8a8-fp8")) {
    const std::string q8 = mode == "w8a8" ? "i8" : "f8E4M3FN";
    const bool dynamic = options.calibration.empty();
    OpPassManager &fpm = pm.nest<func::FuncOp>();
    if (!dynamic) {
      CalibrateActivationsOptions calibrate;
      calibrate.tokens = options.calibration;
      fpm.addPass(createCalibrateActivations(calibrate));
    }
    // SmoothQuant migrates activation outliers into i8's uniform grid; e4m3
    // keeps them itself, and smoothing measured worse on the demo model
    // (mean KL 6.5e-3 against 4.8e-3 without; docs/precision.md).
    if (options.smoothQuant && mode == "w8a8" && !dynamic) {
      SmoothQuantOptions smooth;
      smooth.alpha = options.smoothQuantAlpha;
      fpm.addPass(createSmoothQuant(smooth));
    }
    if (options.smoothQuantOnly) { // f32 weights; the statistics dropped
      fpm.addPass(createQuantizeActivations());
      return success();
    }
    QuantizeWeightsOptions weights;
    weights.dtype = q8;
    weights.granularity = "per_channel";
    fpm.addPass(createQuantizeWeights(weights));
    QuantizeActivationsOptions activations;
    activations.dtype = q8;
    activations.dynamic = dynamic;
    fpm.addPass(createQuantizeActivations(activations));
    NarrowWeightsOptions narrow;
    narrow.dtype = "bf16";
    fpm.addPass(createNarrowWeights(narrow));
    return success();
  }
  // bf16/fp16 run before fusion, so that fusion concatenates half-size
  // weights (an 8B model's fused gate_up alone is 15 GB in f32).
  std::string passes;
  if (beforeFusion && mode == "bf16")
    passes = "func.func(accel-narrow-weights{dtype=bf16})";
  else if (beforeFusion && mode == "fp16")
    passes = "func.func(accel-narrow-weights{dtype=f16})";
  // Quantisation after fusion (the fused QKV and gate_up weights get one
  // scale per output channel like any other); the lm head and the embedding
  // table are then stored as bf16.
  else if (!beforeFusion && mode == "int8-weight")
    passes = "func.func(accel-quantize-weights{dtype=i8 granularity=per_channel},"
             "accel-narrow-weights{dtype=bf16})";
  else if (!beforeFusion && mode == "int4-weight")
    passes = std::string("func.func(accel-quantize-weights{dtype=i4 granularity=per_group "
                         "group-size=128") +
             (options.int4ZeroPoints ? " zero-points=true" : "") +
             "},accel-narrow-weights{dtype=bf16})";
  else if (!beforeFusion && mode == "fp8")
    passes = "func.func(accel-quantize-weights{dtype=f8E4M3FN granularity=per_channel},"
             "accel-narrow-weights{dtype=bf16})";
  if (passes.empty())
    return success();
  llvm::raw_string_ostream os(error);
  return parsePassPipeline(passes, pm, os);
}

LogicalResult accel::buildPartitionPipeline(OpPassManager &pm, int64_t tpSize, int64_t ppSize,
                                            std::string &error) {
  if (tpSize < 1) {
    error = "-tp must be at least 1, got " + std::to_string(tpSize);
    return failure();
  }
  if (ppSize < 1) {
    error = "-pp must be at least 1, got " + std::to_string(ppSize);
    return failure();
  }
  if (tpSize == 1 && ppSize == 1)
    return success();
  //   accel-opt --pass-pipeline='builtin.module(<this>)' fused.mlir
  std::string passes;
  if (tpSize > 1)
    passes = "accel-partition{tp-size=" + std::to_string(tpSize) + "}";
  if (ppSize > 1)
    passes += (passes.empty() ? "" : ",") + std::string("accel-pipeline-stages{pp-size=") +
              std::to_string(ppSize) + "}";
  passes = "func.func(" + passes + ")";
  llvm::raw_string_ostream os(error);
  return parsePassPipeline(passes, pm, os);
}

LogicalResult accel::buildKVCacheDtypePipeline(OpPassManager &pm, const std::string &dtype,
                                               std::string &error,
                                               const std::string &calibration) {
  if (dtype.empty() || dtype == "auto")
    return success();
  if (dtype != "fp8") {
    error = "unknown KV cache dtype '" + dtype + "' (expected auto or fp8)";
    return failure();
  }
  // Built rather than parsed: the calibration path may hold any character.
  KVCacheDtypeOptions kv;
  kv.dtype = "f8E4M3FN";
  kv.tokens = calibration;
  pm.nest<func::FuncOp>().addPass(createKVCacheDtype(kv));
  return success();
}

LogicalResult accel::buildLayoutPipeline(OpPassManager &pm, const std::string &target,
                                         int64_t padOverride, int64_t tpSize,
                                         std::string &error) {
  const accel::target::TargetDesc *t = accel::target::lookup(target);
  if (!t) {
    error = "unknown target '" + target + "' (expected " + accel::target::describeNames() + ")";
    return failure();
  }
  if (padOverride < -1) {
    error = "-pad-gemm-dims must be 0 (no padding) or more, got " + std::to_string(padOverride);
    return failure();
  }
  const int64_t multiple = (padOverride >= 0 ? padOverride : t->gemmDimMultiple) *
                           std::max<int64_t>(tpSize, 1);
  if (multiple <= 1)
    return success();
  //   accel-opt --pass-pipeline='builtin.module(<this>)' fused.mlir
  std::string passes = "func.func(accel-pad-gemm-dims{multiple=" + std::to_string(multiple) + "})";
  llvm::raw_string_ostream os(error);
  return parsePassPipeline(passes, pm, os);
}

LogicalResult accel::buildExecPipeline(OpPassManager &pm, const std::string &target,
                                       bool codegen, bool allowHostSteps, std::string &error) {
  const accel::target::TargetDesc *t = accel::target::lookup(target);
  if (!t) {
    error = "unknown target '" + target + "' (expected " + accel::target::describeNames() + ")";
    return failure();
  }
  //   accel-opt --pass-pipeline='builtin.module(<this>)' partitioned.mlir
  std::string passes = "accel-lower-to-exec,accel-exec-remove-dead-steps,accel-exec-assign-buffers";
  // A GPU plan runs every step on the GPU: select-kernels refuses a step
  // that would run on the host (without generating kernels when codegen is
  // off).
  if (t->isGpu)
    passes += "," + std::string("accel-exec-select-kernels{chip=") + std::string(t->arch) +
              (allowHostSteps ? " allow-onnx=true" : "") + (codegen ? "" : " generate=false") +
              "}";
  llvm::raw_string_ostream os(error);
  return parsePassPipeline(passes, pm, os);
}

LogicalResult accel::buildCompilePipeline(OpPassManager &pm, const PipelineOptions &o,
                                          Phase stopAfter, std::string &error) {
  if (std::string bad = checkPrecisionMode(o.precision); !bad.empty()) {
    error = bad;
    return failure();
  }
  if (std::string bad = checkPrecisionOptions(o.precision, o.precisionOptions); !bad.empty()) {
    error = bad;
    return failure();
  }
  if (failed(buildRaisePipeline(pm, error)))
    return failure();
  if (stopAfter == Phase::Transformer)
    return success();
  if (failed(buildPrecisionPipeline(pm, o.precision, /*beforeFusion=*/true, error)) ||
      failed(buildFusionPipeline(pm, error)) ||
      failed(buildPrecisionPipeline(pm, o.precision, /*beforeFusion=*/false, error,
                                    o.precisionOptions)) ||
      failed(buildLayoutPipeline(pm, o.target, o.padGemmDims, o.tpSize, error)) ||
      failed(buildKVCacheDtypePipeline(pm, o.kvCacheDtype, error, o.precisionOptions.calibration)))
    return failure();
  if (stopAfter != Phase::Fused &&
      failed(buildPartitionPipeline(pm, o.tpSize, o.ppSize, error)))
    return failure();
  if (failed(buildLateFusionPipeline(pm, error)))
    return failure();
  if (stopAfter != Phase::Exec)
    return success();
  return buildExecPipeline(pm, o.target, o.codegen, o.allowHostSteps, error);
}
