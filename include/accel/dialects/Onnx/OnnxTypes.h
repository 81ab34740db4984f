//===- OnnxTypes.h - ONNX data types as MLIR types ----------*- C++ -*-===//
//
// The one mapping from ONNX `TensorProto.DataType` ids to MLIR element types,
// shared by the onnx dialect (Cast, QuantizeLinear, ... verifiers) and the
// ONNX importer (graph inputs, initializers, value_info).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_DIALECTS_ONNX_ONNXTYPES_H
#define ACCEL_DIALECTS_ONNX_ONNXTYPES_H

#include "mlir/IR/Types.h"

#include <cstdint>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace accel::onnx {

/// Returns the MLIR element type of the ONNX `TensorProto.DataType` id
/// `tensorProtoType`, or a null `mlir::Type` when accel has no such type
/// (UNDEFINED = 0, STRING = 8, and ids it does not know).
///
///   1 f32      2 ui8     3 i8      4 ui16    5 i16     6 i32
///   7 i64      9 i1     10 f16    11 f64    12 ui32   13 ui64
///  14 complex<f32>      15 complex<f64>     16 bf16
///  17 f8E4M3FN          18 f8E4M3FNUZ       19 f8E5M2
///  20 f8E5M2FNUZ        21 ui4              22 i4
///  23 f4E2M1FN          24 f8E8M0FNU
///
/// ONNX signed integers become signless MLIR integers (int8 -> i8), unsigned
/// ones unsigned (uint8 -> ui8), BOOL becomes i1.
mlir::Type convertOnnxDataType(mlir::MLIRContext *context,
                               int32_t tensorProtoType);

} // namespace accel::onnx

#endif // ACCEL_DIALECTS_ONNX_ONNXTYPES_H
