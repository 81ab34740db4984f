//===- DType.h - element types of runtime tensors ---------------*- C++ -*-===//
//
// The element types a runtime tensor can hold, their sizes and names (spelled
// as MLIR spells them: f32, bf16, f8E4M3FN, ui8, ...), the mapping from ONNX
// TensorProto data type ids, and the scalar conversions between the narrow
// float formats (f16, bf16, f8E4M3FN, f8E5M2) and f32.
//
// Storage: i1 is one byte holding 0 or 1; i4/ui4 are stored unpacked, one
// value per byte (i4 as a sign-extended int8 in [-8, 7], ui4 as a uint8 in
// [0, 15]); f16/bf16 are uint16 bit patterns, f8 formats uint8 bit patterns.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CORE_DTYPE_H
#define ACCEL_RUNTIME_CORE_DTYPE_H

#include "core/Status.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace accel::rt {

enum class DType : uint8_t {
  kF32,
  kF16,
  kBF16,
  kF64,
  kF8E4M3FN,
  kF8E5M2,
  kI1,
  kI4,
  kU4,
  kI8,
  kU8,
  kI16,
  kU16,
  kI32,
  kU32,
  kI64,
  kU64,
};

/// Bytes one element occupies in memory (i1, i4, ui4: 1).
size_t dtypeSize(DType t);
/// MLIR's spelling: "f32", "f16", "bf16", "f64", "f8E4M3FN", "f8E5M2", "i1",
/// "i4", "ui4", "i8", "ui8", "i16", "ui16", "i32", "ui32", "i64", "ui64".
const char *dtypeName(DType t);
/// Parses dtypeName() spellings; also accepts "u8"-style unsigned names and
/// "bool". Empty when the name is unknown.
std::optional<DType> dtypeFromName(std::string_view name);

bool isFloat(DType t);    // f32 f16 bf16 f64 f8E4M3FN f8E5M2
bool isInteger(DType t);  // i4..ui64 (not i1)
bool isSigned(DType t);   // signed integers and floats
/// f16, bf16 and the f8 formats: computed in f32 by the kernels.
bool isNarrowFloat(DType t);

/// ONNX TensorProto.DataType ids (1 f32, 2 u8, 3 i8, 4 u16, 5 i16, 6 i32,
/// 7 i64, 9 bool, 10 f16, 11 f64, 12 u32, 13 u64, 16 bf16, 17 f8E4M3FN,
/// 19 f8E5M2, 21 u4, 22 i4). Unsupported ids (string, complex, FNUZ f8, ...)
/// fail with kUnimplemented naming the id.
StatusOr<DType> dtypeFromOnnx(int64_t onnxType);
int32_t dtypeToOnnx(DType t);

// ---------------------------------------------------------------------------
// Scalar conversions. f32 -> narrow rounds to nearest, ties to even; NaN stays
// NaN (sign kept, quiet). f16/bf16 overflow to +-inf as IEEE does.
// ---------------------------------------------------------------------------
float f16ToF32(uint16_t bits);
uint16_t f32ToF16(float v);
float bf16ToF32(uint16_t bits);
uint16_t f32ToBf16(float v);

/// f8E4M3FN: 1-4-3, bias 7, no infinities, NaN = S.1111.111, max 448.
/// With `saturate` (ONNX Cast's default) values beyond +-448, and +-inf,
/// become +-448; without it they become NaN.
float f8E4M3FNToF32(uint8_t bits);
uint8_t f32ToF8E4M3FN(float v, bool saturate = true);

/// f8E5M2: 1-5-2, bias 15, IEEE-like with infinities, max 57344.
/// With `saturate` values beyond +-57344 and +-inf become +-57344; without
/// it they become +-inf.
float f8E5M2ToF32(uint8_t bits);
uint8_t f32ToF8E5M2(float v, bool saturate = true);

} // namespace accel::rt

#endif // ACCEL_RUNTIME_CORE_DTYPE_H
