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

} // namespace accel

#endif // ACCEL_DRIVER_PIPELINE_H
