//===- OnnxOps.h - onnx dialect ops -------------------------*- C++ -*-===//
#ifndef ACCEL_DIALECTS_ONNX_ONNXOPS_H
#define ACCEL_DIALECTS_ONNX_ONNXOPS_H

#include "accel/dialects/Onnx/OnnxDialect.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/Onnx/OnnxOps.h.inc"

#endif // ACCEL_DIALECTS_ONNX_ONNXOPS_H
