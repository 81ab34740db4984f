//===- OnnxOps.td - onnx dialect ops -----------------------*- tablegen -*-===//
//
// The ops, one family per file. Ops of the com.microsoft domain (prefixed
// `ms_`) live with the family they belong to.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_ONNX_OPS
#define ACCEL_ONNX_OPS

include "OnnxDialect.td"
include "OnnxElementwiseOps.td"
include "OnnxMatMulOps.td"
include "OnnxShapeOps.td"
include "OnnxIndexingOps.td"
include "OnnxConstantOps.td"
include "OnnxReductionOps.td"
include "OnnxNormalizationOps.td"
include "OnnxAttentionOps.td"
include "OnnxQuantizationOps.td"

#endif // ACCEL_ONNX_OPS
