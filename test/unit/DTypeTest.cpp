// Element types: names, ONNX ids, and the narrow-float conversions checked
// exhaustively over every bit pattern against an independent decoding.
#include "core/DType.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace accel::rt;

namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// Independent decoding of a binary float with `e` exponent and `m` mantissa
/// bits from its fields (IEEE layout; `fn`: no infinities, only all-ones is
/// NaN).
double decodeFields(uint32_t bits, int e, int m, bool fn) {
  const bool neg = (bits >> (e + m)) & 1;
  const int exp = int((bits >> m) & ((1u << e) - 1));
  const uint32_t man = bits & ((1u << m) - 1);
  const int bias = (1 << (e - 1)) - 1;
  const int emax = (1 << e) - 1;
  double v;
  if (!fn && exp == emax)
    v = man ? NAN : INFINITY;
  else if (fn && exp == emax && man == (1u << m) - 1)
    v = NAN;
  else if (exp == 0)
    v = std::ldexp(double(man), 1 - bias - m);
  else
    v = std::ldexp(double(man | (1u << m)), exp - bias - m);
  return neg ? -v : v;
}

} // namespace

TEST(DType, NamesSizesAndOnnxIds) {
  EXPECT_STREQ(dtypeName(DType::kF32), "f32");
  EXPECT_STREQ(dtypeName(DType::kBF16), "bf16");
  EXPECT_STREQ(dtypeName(DType::kF8E4M3FN), "f8E4M3FN");
  EXPECT_STREQ(dtypeName(DType::kU8), "ui8");
  EXPECT_EQ(dtypeSize(DType::kI4), 1u);
  EXPECT_EQ(dtypeSize(DType::kI1), 1u);
  EXPECT_EQ(dtypeSize(DType::kBF16), 2u);
  EXPECT_EQ(dtypeSize(DType::kU64), 8u);
  EXPECT_EQ(dtypeFromName("u8"), DType::kU8);
  EXPECT_EQ(dtypeFromName("ui16"), DType::kU16);
  EXPECT_EQ(dtypeFromName("bool"), DType::kI1);
  EXPECT_FALSE(dtypeFromName("complex64").has_value());
  const std::pair<int, DType> ids[] = {
      {1, DType::kF32},  {2, DType::kU8},   {3, DType::kI8},       {4, DType::kU16},
      {5, DType::kI16},  {6, DType::kI32},  {7, DType::kI64},      {9, DType::kI1},
      {10, DType::kF16}, {11, DType::kF64}, {12, DType::kU32},     {13, DType::kU64},
      {16, DType::kBF16}, {17, DType::kF8E4M3FN}, {19, DType::kF8E5M2},
      {21, DType::kU4},  {22, DType::kI4}};
  for (auto [id, t] : ids) {
    StatusOr<DType> got = dtypeFromOnnx(id);
    ASSERT_TRUE(got.isOk()) << id;
    EXPECT_EQ(*got, t);
    EXPECT_EQ(dtypeToOnnx(t), id);
    EXPECT_EQ(dtypeFromName(dtypeName(t)), t);
  }
  StatusOr<DType> str = dtypeFromOnnx(8);
  ASSERT_FALSE(str.isOk());
  EXPECT_EQ(str.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(str.status().message().find("STRING"), std::string::npos);
}

TEST(DType, F16AllBitPatternsDecodeAndRoundTrip) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = f16ToF32(uint16_t(b));
    const double want = decodeFields(b, 5, 10, false);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << b;
      ASSERT_TRUE(std::isnan(f16ToF32(f32ToF16(f)))) << b;
      continue;
    }
    ASSERT_EQ(double(f), want) << b;
    ASSERT_EQ(std::signbit(f), bool(b & 0x8000)) << b;
    ASSERT_EQ(f32ToF16(f), b) << b;
  }
}

TEST(DType, Bf16AllBitPatternsDecodeAndRoundTrip) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = bf16ToF32(uint16_t(b));
    ASSERT_EQ(bitsOf(f), b << 16) << b; // bf16 is the top half of an f32
    if (std::isnan(f))
      ASSERT_TRUE(std::isnan(bf16ToF32(f32ToBf16(f)))) << b;
    else
      ASSERT_EQ(f32ToBf16(f), b) << b;
  }
}

TEST(DType, F8AllBitPatternsDecodeAndRoundTrip) {
  for (uint32_t b = 0; b < 256; ++b) {
    const double w43 = decodeFields(b, 4, 3, true), w52 = decodeFields(b, 5, 2, false);
    const float f43 = f8E4M3FNToF32(uint8_t(b)), f52 = f8E5M2ToF32(uint8_t(b));
    if (std::isnan(w43)) {
      EXPECT_TRUE(std::isnan(f43)) << b;
    } else {
      EXPECT_EQ(double(f43), w43) << b;
      EXPECT_EQ(f32ToF8E4M3FN(f43), b) << b;
      EXPECT_EQ(f32ToF8E4M3FN(f43, false), b) << b;
    }
    if (std::isnan(w52)) {
      EXPECT_TRUE(std::isnan(f52)) << b;
    } else {
      EXPECT_EQ(double(f52), w52) << b;
      if (!std::isinf(w52)) {
        EXPECT_EQ(f32ToF8E5M2(f52), b) << b;
      }
      EXPECT_EQ(f32ToF8E5M2(f52, false), b) << b;
    }
  }
  EXPECT_EQ(f8E4M3FNToF32(0x7e), 448.0f);
  EXPECT_EQ(f8E5M2ToF32(0x7b), 57344.0f);
}

// Between two neighbouring representable values, the exact midpoint rounds
// to the one with an even mantissa, and anything off the midpoint to the
// nearer one. Checked for every neighbouring pair of finite values.
template <typename Dec, typename Enc>
void checkRoundToNearestEven(uint32_t maxFinite, Dec dec, Enc enc, const char *what) {
  for (uint32_t a = 0; a < maxFinite; ++a) {
    const float lo = dec(a), hi = dec(a + 1);
    const float mid = float((double(lo) + double(hi)) / 2); // exact in f32
    ASSERT_EQ(double(mid), (double(lo) + double(hi)) / 2) << what << " " << a;
    const uint32_t even = (a & 1) ? a + 1 : a;
    ASSERT_EQ(uint32_t(enc(mid)), even) << what << " midpoint above " << a;
    ASSERT_EQ(uint32_t(enc(std::nextafter(mid, 0.0f))), a) << what << " below mid " << a;
    ASSERT_EQ(uint32_t(enc(std::nextafter(mid, INFINITY))), a + 1) << what << " above mid " << a;
    // Negative values mirror.
    const uint32_t sign = (maxFinite > 0xff) ? 0x8000u : 0x80u;
    ASSERT_EQ(uint32_t(enc(-mid)), even | sign) << what << " -midpoint " << a;
  }
}

TEST(DType, RoundToNearestEvenEverywhere) {
  checkRoundToNearestEven(0x7bff, f16ToF32, f32ToF16, "f16");
  checkRoundToNearestEven(0x7f7f, bf16ToF32, f32ToBf16, "bf16");
  checkRoundToNearestEven(
      0x7e, f8E4M3FNToF32, [](float v) { return f32ToF8E4M3FN(v, false); }, "e4m3");
  checkRoundToNearestEven(
      0x7b, f8E5M2ToF32, [](float v) { return f32ToF8E5M2(v, false); }, "e5m2");
}

TEST(DType, OverflowInfinityNanAndSaturation) {
  // f16: 65504 is the largest; the midpoint to 65536 rounds to even (= inf).
  EXPECT_EQ(f32ToF16(65504.0f), 0x7bff);
  EXPECT_EQ(f32ToF16(65519.996f), 0x7bff);
  EXPECT_EQ(f32ToF16(65520.0f), 0x7c00);
  EXPECT_EQ(f32ToF16(-1e10f), 0xfc00);
  EXPECT_EQ(f32ToF16(INFINITY), 0x7c00);
  EXPECT_TRUE(std::isnan(f16ToF32(f32ToF16(NAN))));
  EXPECT_EQ(f32ToF16(1e-8f), 0x0000);           // below half the smallest subnormal
  EXPECT_EQ(f32ToF16(5.9604645e-8f), 0x0001);   // the smallest subnormal
  EXPECT_EQ(f32ToBf16(3.4e38f), 0x7f80);        // rounds past the largest bf16
  EXPECT_EQ(f32ToBf16(-INFINITY), 0xff80);
  EXPECT_TRUE(std::isnan(bf16ToF32(f32ToBf16(NAN))));
  // f8E4M3FN (ONNX Cast saturate table): saturate clamps to +-448 (inf
  // included); without it anything past 448 (after rounding) is NaN.
  EXPECT_EQ(f32ToF8E4M3FN(448.0f), 0x7e);
  EXPECT_EQ(f32ToF8E4M3FN(464.0f, false), 0x7e); // midpoint 448/480: even is 448
  EXPECT_EQ(f32ToF8E4M3FN(465.0f, false), 0x7f);
  EXPECT_EQ(f32ToF8E4M3FN(1e6f, true), 0x7e);
  EXPECT_EQ(f32ToF8E4M3FN(-1e6f, true), 0xfe);
  EXPECT_EQ(f32ToF8E4M3FN(INFINITY, true), 0x7e);
  EXPECT_EQ(f32ToF8E4M3FN(-INFINITY, true), 0xfe);
  EXPECT_EQ(f32ToF8E4M3FN(INFINITY, false) & 0x7f, 0x7f);
  EXPECT_EQ(f32ToF8E4M3FN(NAN, true) & 0x7f, 0x7f);
  EXPECT_EQ(f32ToF8E4M3FN(-0.0f), 0x80);
  EXPECT_EQ(f32ToF8E4M3FN(0.0009f), 0x00); // below half of 2^-9
  EXPECT_EQ(f32ToF8E4M3FN(0.0015f), 0x01);
  // f8E5M2: saturate clamps to +-57344; without it overflow is +-inf.
  EXPECT_EQ(f32ToF8E5M2(57344.0f), 0x7b);
  EXPECT_EQ(f32ToF8E5M2(61439.0f, false), 0x7b);
  EXPECT_EQ(f32ToF8E5M2(61440.0f, false), 0x7c);
  EXPECT_EQ(f32ToF8E5M2(1e6f, true), 0x7b);
  EXPECT_EQ(f32ToF8E5M2(INFINITY, true), 0x7b);
  EXPECT_EQ(f32ToF8E5M2(-INFINITY, false), 0xfc);
  EXPECT_EQ(f32ToF8E5M2(-1e6f, false), 0xfc);
  EXPECT_TRUE(std::isnan(f8E5M2ToF32(f32ToF8E5M2(NAN))));
  // Results of the ONNX QuantizeLinear f8 examples (x / 2).
  EXPECT_EQ(f8E4M3FNToF32(f32ToF8E4M3FN(50000.0f)), 448.0f);
  EXPECT_EQ(f8E5M2ToF32(f32ToF8E5M2(50000.0f)), 49152.0f);
}

TEST(DType, F32SubnormalInputsRound) {
  // f32 subnormals are far below every narrow format's range: they become
  // signed zeros (bf16 keeps subnormals, so it keeps them rounded).
  const float tiny = floatOf(0x00000001u);
  EXPECT_EQ(f32ToF16(tiny), 0x0000);
  EXPECT_EQ(f32ToF16(-tiny), 0x8000);
  EXPECT_EQ(f32ToF8E4M3FN(-tiny), 0x80);
  EXPECT_EQ(f32ToBf16(floatOf(0x00010000u)), 0x0001);
  EXPECT_EQ(f32ToBf16(floatOf(0x00008000u)), 0x0000); // tie to even (0)
  EXPECT_EQ(f32ToBf16(floatOf(0x00018000u)), 0x0002); // tie to even (2)
}
