//===- DType.cpp - element types and narrow-float conversions -------------===//
#include "core/DType.h"

#include <cmath>
#include <cstring>
#include <string>

namespace accel::rt {

namespace {

uint32_t bitsOf(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return u;
}
float floatOf(uint32_t u) {
  float v;
  std::memcpy(&v, &u, 4);
  return v;
}

/// Rounds a finite, non-negative f32 (given as bits) to a binary format with
/// `mant` mantissa bits and exponent bias `bias`, to nearest even. Returns the
/// magnitude code (exponent field << mant | mantissa field); a code past the
/// format's largest exponent field means overflow, which callers check.
uint32_t roundToMini(uint32_t absBits, int mant, int bias) {
  const uint32_t minNormal = uint32_t(127 + 1 - bias) << 23;
  if (absBits < minNormal) {
    // Subnormal (or zero) in the target: add a power of two whose f32 ulp is
    // the target's subnormal quantum; the FPU rounds to nearest even for us.
    const uint32_t magicBits = uint32_t((127 - bias) + (23 - mant) + 1) << 23;
    float sum = floatOf(absBits) + floatOf(magicBits);
    return bitsOf(sum) - magicBits;
  }
  const int shift = 23 - mant;
  uint32_t odd = (absBits >> shift) & 1u;
  uint32_t rounded = absBits + ((1u << (shift - 1)) - 1u) + odd;
  return (rounded >> shift) - (uint32_t(127 - bias) << mant);
}

struct Fp8Table {
  float e4m3[256];
  float e5m2[256];
  Fp8Table() {
    for (int i = 0; i < 256; ++i) {
      e4m3[i] = decode(uint8_t(i), 3, 7, /*hasInf=*/false);
      e5m2[i] = decode(uint8_t(i), 2, 15, /*hasInf=*/true);
    }
  }
  static float decode(uint8_t b, int mant, int bias, bool hasInf) {
    const bool neg = b & 0x80;
    const int expBits = 7 - mant;
    const int e = (b >> mant) & ((1 << expBits) - 1);
    const int m = b & ((1 << mant) - 1);
    const int emax = (1 << expBits) - 1;
    float v;
    if (hasInf && e == emax)
      v = m == 0 ? INFINITY : NAN;
    else if (!hasInf && e == emax && m == (1 << mant) - 1)
      v = NAN;
    else if (e == 0)
      v = std::ldexp(float(m), 1 - bias - mant);
    else
      v = std::ldexp(float((1 << mant) | m), e - bias - mant);
    return neg ? -v : v;
  }
};

const Fp8Table &fp8Table() {
  static const Fp8Table table;
  return table;
}

} // namespace

size_t dtypeSize(DType t) {
  switch (t) {
  case DType::kF64: case DType::kI64: case DType::kU64: return 8;
  case DType::kF32: case DType::kI32: case DType::kU32: return 4;
  case DType::kF16: case DType::kBF16: case DType::kI16: case DType::kU16: return 2;
  default: return 1;
  }
}

const char *dtypeName(DType t) {
  switch (t) {
  case DType::kF32: return "f32";
  case DType::kF16: return "f16";
  case DType::kBF16: return "bf16";
  case DType::kF64: return "f64";
  case DType::kF8E4M3FN: return "f8E4M3FN";
  case DType::kF8E5M2: return "f8E5M2";
  case DType::kI1: return "i1";
  case DType::kI4: return "i4";
  case DType::kU4: return "ui4";
  case DType::kI8: return "i8";
  case DType::kU8: return "ui8";
  case DType::kI16: return "i16";
  case DType::kU16: return "ui16";
  case DType::kI32: return "i32";
  case DType::kU32: return "ui32";
  case DType::kI64: return "i64";
  case DType::kU64: return "ui64";
  }
  return "?";
}

std::optional<DType> dtypeFromName(std::string_view name) {
  static const DType all[] = {
      DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kF8E4M3FN,
      DType::kF8E5M2, DType::kI1, DType::kI4, DType::kU4, DType::kI8,
      DType::kU8, DType::kI16, DType::kU16, DType::kI32, DType::kU32,
      DType::kI64, DType::kU64};
  for (DType t : all)
    if (name == dtypeName(t))
      return t;
  if (name == "bool")
    return DType::kI1;
  // "u8" for "ui8" and so on.
  if (name.size() > 1 && name[0] == 'u' && name[1] != 'i')
    return dtypeFromName("ui" + std::string(name.substr(1)));
  return std::nullopt;
}

bool isFloat(DType t) {
  switch (t) {
  case DType::kF32: case DType::kF16: case DType::kBF16: case DType::kF64:
  case DType::kF8E4M3FN: case DType::kF8E5M2: return true;
  default: return false;
  }
}
bool isInteger(DType t) { return !isFloat(t) && t != DType::kI1; }
bool isSigned(DType t) {
  switch (t) {
  case DType::kI4: case DType::kI8: case DType::kI16: case DType::kI32:
  case DType::kI64: return true;
  default: return isFloat(t);
  }
}
bool isNarrowFloat(DType t) {
  return t == DType::kF16 || t == DType::kBF16 || t == DType::kF8E4M3FN ||
         t == DType::kF8E5M2;
}

StatusOr<DType> dtypeFromOnnx(int64_t id) {
  switch (id) {
  case 1: return DType::kF32;
  case 2: return DType::kU8;
  case 3: return DType::kI8;
  case 4: return DType::kU16;
  case 5: return DType::kI16;
  case 6: return DType::kI32;
  case 7: return DType::kI64;
  case 9: return DType::kI1;
  case 10: return DType::kF16;
  case 11: return DType::kF64;
  case 12: return DType::kU32;
  case 13: return DType::kU64;
  case 16: return DType::kBF16;
  case 17: return DType::kF8E4M3FN;
  case 19: return DType::kF8E5M2;
  case 21: return DType::kU4;
  case 22: return DType::kI4;
  default: break;
  }
  const char *what = "";
  switch (id) {
  case 0: what = " (UNDEFINED)"; break;
  case 8: what = " (STRING)"; break;
  case 14: case 15: what = " (complex)"; break;
  case 18: what = " (FLOAT8E4M3FNUZ)"; break;
  case 20: what = " (FLOAT8E5M2FNUZ)"; break;
  case 23: what = " (FLOAT4E2M1)"; break;
  default: break;
  }
  return unimplemented("ONNX data type " + std::to_string(id) + what +
                       " is not supported by the runtime");
}

int32_t dtypeToOnnx(DType t) {
  switch (t) {
  case DType::kF32: return 1;
  case DType::kU8: return 2;
  case DType::kI8: return 3;
  case DType::kU16: return 4;
  case DType::kI16: return 5;
  case DType::kI32: return 6;
  case DType::kI64: return 7;
  case DType::kI1: return 9;
  case DType::kF16: return 10;
  case DType::kF64: return 11;
  case DType::kU32: return 12;
  case DType::kU64: return 13;
  case DType::kBF16: return 16;
  case DType::kF8E4M3FN: return 17;
  case DType::kF8E5M2: return 19;
  case DType::kU4: return 21;
  case DType::kI4: return 22;
  }
  return 0;
}

float f16ToF32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu;
  const uint32_t m = h & 0x3ffu;
  if (e == 0) {
    float v = float(m) * 5.9604644775390625e-8f; // m * 2^-24, exact
    return floatOf(bitsOf(v) | sign);
  }
  if (e == 31)
    return floatOf(sign | 0x7f800000u | (m << 13));
  return floatOf(sign | ((e + 112) << 23) | (m << 13));
}

uint16_t f32ToF16(float v) {
  uint32_t x = bitsOf(v);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) // NaN: keep the top payload bits, make it quiet
    return sign | 0x7e00u | uint16_t((x >> 13) & 0x3ffu);
  if (x == 0x7f800000u)
    return sign | 0x7c00u;
  uint32_t code = roundToMini(x, 10, 15);
  if (code >= 0x7c00u)
    code = 0x7c00u; // overflow to infinity
  return sign | uint16_t(code);
}

float bf16ToF32(uint16_t b) { return floatOf(uint32_t(b) << 16); }

uint16_t f32ToBf16(float v) {
  uint32_t x = bitsOf(v);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((x >> 16) | 0x40u); // quiet NaN, sign and payload kept
  x += 0x7fffu + ((x >> 16) & 1u);
  return uint16_t(x >> 16);
}

float f8E4M3FNToF32(uint8_t b) { return fp8Table().e4m3[b]; }
float f8E5M2ToF32(uint8_t b) { return fp8Table().e5m2[b]; }

uint8_t f32ToF8E4M3FN(float v, bool saturate) {
  uint32_t x = bitsOf(v);
  const uint8_t sign = uint8_t((x >> 24) & 0x80u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u)
    return sign | 0x7fu;
  if (x == 0x7f800000u)
    return sign | (saturate ? 0x7eu : 0x7fu);
  uint32_t code = roundToMini(x, 3, 7);
  if (code > 0x7eu) // past 448: S.1111.111 is NaN, there is no infinity
    return sign | (saturate ? 0x7eu : 0x7fu);
  return sign | uint8_t(code);
}

uint8_t f32ToF8E5M2(float v, bool saturate) {
  uint32_t x = bitsOf(v);
  const uint8_t sign = uint8_t((x >> 24) & 0x80u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u)
    return sign | 0x7eu;
  if (x == 0x7f800000u)
    return sign | (saturate ? 0x7bu : 0x7cu);
  uint32_t code = roundToMini(x, 2, 15);
  if (code > 0x7bu) // past 57344
    return sign | (saturate ? 0x7bu : 0x7cu);
  return sign | uint8_t(code);
}

} // namespace accel::rt
