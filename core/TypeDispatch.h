//===- TypeDispatch.h - from a runtime DType to a C++ type ------*- C++ -*-===//
//
// Kernels are written once as templates over the C++ storage type and
// instantiated for each dtype that is stored natively:
//
//   dispatchNative(t.dtype(), [&](auto tag) {
//     using T = typename decltype(tag)::type;
//     ...
//   });
//
// Native types: f32 -> float, f64 -> double, i1 -> bool, i4 -> int8_t,
// ui4 -> uint8_t, and the integer types to their <cstdint> type. The narrow
// floats (f16, bf16, f8*) are not native: kernels widen them to f32 first.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CORE_TYPEDISPATCH_H
#define ACCEL_RUNTIME_CORE_TYPEDISPATCH_H

#include "core/DType.h"

#include <cstdint>
#include <type_traits>

namespace accel::rt {

template <typename T> struct TypeTag { using type = T; };

/// The DType a C++ type is stored as (f32 for float, i1 for bool, ...).
template <typename T> constexpr DType dtypeOf();
template <> constexpr DType dtypeOf<float>() { return DType::kF32; }
template <> constexpr DType dtypeOf<double>() { return DType::kF64; }
template <> constexpr DType dtypeOf<bool>() { return DType::kI1; }
template <> constexpr DType dtypeOf<int8_t>() { return DType::kI8; }
template <> constexpr DType dtypeOf<uint8_t>() { return DType::kU8; }
template <> constexpr DType dtypeOf<int16_t>() { return DType::kI16; }
template <> constexpr DType dtypeOf<uint16_t>() { return DType::kU16; }
template <> constexpr DType dtypeOf<int32_t>() { return DType::kI32; }
template <> constexpr DType dtypeOf<uint32_t>() { return DType::kU32; }
template <> constexpr DType dtypeOf<int64_t>() { return DType::kI64; }
template <> constexpr DType dtypeOf<uint64_t>() { return DType::kU64; }

/// Calls f(TypeTag<T>{}) for a natively stored dtype; false for the narrow
/// floats (f16, bf16, f8E4M3FN, f8E5M2), which it does not call f for.
template <typename F> bool dispatchNative(DType t, F &&f) {
  switch (t) {
  case DType::kF32: f(TypeTag<float>{}); return true;
  case DType::kF64: f(TypeTag<double>{}); return true;
  case DType::kI1: f(TypeTag<bool>{}); return true;
  case DType::kI4: case DType::kI8: f(TypeTag<int8_t>{}); return true;
  case DType::kU4: case DType::kU8: f(TypeTag<uint8_t>{}); return true;
  case DType::kI16: f(TypeTag<int16_t>{}); return true;
  case DType::kU16: f(TypeTag<uint16_t>{}); return true;
  case DType::kI32: f(TypeTag<int32_t>{}); return true;
  case DType::kU32: f(TypeTag<uint32_t>{}); return true;
  case DType::kI64: f(TypeTag<int64_t>{}); return true;
  case DType::kU64: f(TypeTag<uint64_t>{}); return true;
  default: return false;
  }
}

/// Same, restricted to the integer types (not i1, not floats).
template <typename F> bool dispatchInteger(DType t, F &&f) {
  switch (t) {
  case DType::kI4: case DType::kI8: f(TypeTag<int8_t>{}); return true;
  case DType::kU4: case DType::kU8: f(TypeTag<uint8_t>{}); return true;
  case DType::kI16: f(TypeTag<int16_t>{}); return true;
  case DType::kU16: f(TypeTag<uint16_t>{}); return true;
  case DType::kI32: f(TypeTag<int32_t>{}); return true;
  case DType::kU32: f(TypeTag<uint32_t>{}); return true;
  case DType::kI64: f(TypeTag<int64_t>{}); return true;
  case DType::kU64: f(TypeTag<uint64_t>{}); return true;
  default: return false;
  }
}

} // namespace accel::rt

#endif // ACCEL_RUNTIME_CORE_TYPEDISPATCH_H
