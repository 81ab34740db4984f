//===- QuantLinearTest.cpp - linear with narrow and quantised weights -----===//
//
// The CPU GEMM over bf16/f16/i8/f8E4M3FN weights (runtime/cpu/Gemm.h's
// gemmF32Weights, decoding a block of rows at a time), and over i4 / i8
// weights with zero points and per-group scales (ONNX QDQ / MatMulNBits
// weights), against a plain double loop over the exactly decoded weights
// (docs/precision.md).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/transformer/Linear.h"
#include "runtime/cpu/transformer/QuantLinear.h"

#include "TransformerTestUtil.h"

#include <limits>

using namespace tt;
using namespace accel::rt::cpu::transformer;

namespace {

std::vector<float> ref(const std::vector<float> &x, const std::vector<float> &w,
                       const std::vector<float> *b, int64_t t, int64_t in, int64_t out) {
  std::vector<float> y(size_t(t * out));
  for (int64_t r = 0; r < t; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double s = b ? (*b)[size_t(o)] : 0.0;
      for (int64_t i = 0; i < in; ++i)
        s += double(x[size_t(r * in + i)]) * w[size_t(o * in + i)];
      y[size_t(r * out + o)] = float(s);
    }
  return y;
}

// in = 300, out = 5000: the decoder works in blocks of 2^20 / 300 = 3495
// rows, so two blocks, the second partial.
constexpr int64_t kT = 3, kIn = 300, kOut = 5000;

TEST(QuantLinear, Bf16AndF16WeightsThroughLinear) {
  Tensor x = randomF32({kT, kIn}, 1);
  Tensor w32 = randomF32({kOut, kIn}, 2);
  for (DType dt : {DType::kBF16, DType::kF16}) {
    Tensor w = w32.astype(dt);
    std::vector<float> want = ref(x.toFloats(), w.toFloats(), nullptr, kT, kIn, kOut);
    StatusOr<Tensor> y = linear(x, w, nullptr, DType::kF32);
    ASSERT_TRUE(y.isOk()) << y.status().message();
    EXPECT_TRUE(allClose(*y, want, {kT, kOut}, 1e-5)) << dtypeName(dt);
  }
}

TEST(QuantLinear, I8PerChannelWithBias) {
  Tensor x = randomF32({kT, kIn}, 3);
  std::vector<float> qf = randomFloats(size_t(kOut * kIn), 4, -127.0f, 127.0f);
  std::vector<int8_t> q(qf.size());
  for (size_t i = 0; i < q.size(); ++i)
    q[i] = int8_t(std::lround(qf[i]));
  std::vector<float> s = randomFloats(size_t(kOut), 5, 0.001f, 0.01f);
  std::vector<float> b = randomFloats(size_t(kOut), 6);
  std::vector<float> w(q.size());
  for (int64_t o = 0; o < kOut; ++o)
    for (int64_t i = 0; i < kIn; ++i)
      w[size_t(o * kIn + i)] = float(q[size_t(o * kIn + i)]) * s[size_t(o)];
  Tensor qt = Tensor::fromVector<int8_t>({kOut, kIn}, q).value();
  StatusOr<Tensor> y = quantLinear(x, qt, f32({kOut}, s), nullptr, DType::kF32);
  ASSERT_TRUE(y.isOk()) << y.status().message();
  EXPECT_TRUE(allClose(*y, ref(x.toFloats(), w, nullptr, kT, kIn, kOut), {kT, kOut}, 1e-5));
  Tensor bias = f32({kOut}, b);
  StatusOr<Tensor> yb = quantLinear(x, qt, f32({kOut}, s), &bias, DType::kF32);
  ASSERT_TRUE(yb.isOk()) << yb.status().message();
  EXPECT_TRUE(allClose(*yb, ref(x.toFloats(), w, &b, kT, kIn, kOut), {kT, kOut}, 1e-5));
}

TEST(QuantLinear, F8E4M3PerTensorToBf16) {
  Tensor x = randomF32({kT, kIn}, 7);
  Tensor w8 = randomF32({kOut, kIn}, 8, -448.0f, 448.0f).astype(DType::kF8E4M3FN);
  const float scale = 0.003f;
  std::vector<float> w = w8.toFloats();
  for (float &v : w)
    v *= scale;
  StatusOr<Tensor> y = quantLinear(x, w8, f32({}, {scale}), nullptr, DType::kBF16);
  ASSERT_TRUE(y.isOk()) << y.status().message();
  EXPECT_EQ(y->dtype(), DType::kBF16);
  // bf16 output: 8 bits of mantissa.
  EXPECT_TRUE(allClose(*y, ref(x.toFloats(), w, nullptr, kT, kIn, kOut), {kT, kOut}, 1e-2));
}

// i4 weights (one value per byte, [-8, 7]) with per-group scales and zero
// points along in (group 20: 15 groups of the 300 inputs), and an i8 weight
// with a per-channel zero point: (q - zp) * s, against the double loop.
TEST(QuantLinear, I4PerGroupAndZeroPoints) {
  constexpr int64_t kGroup = 20, kGroups = kIn / kGroup;
  Tensor x = randomF32({kT, kIn}, 11);
  std::vector<float> qf = randomFloats(size_t(kOut * kIn), 12, -8.0f, 7.0f);
  std::vector<int8_t> q(qf.size());
  for (size_t i = 0; i < q.size(); ++i)
    q[i] = int8_t(std::clamp<long>(std::lround(qf[i]), -8, 7));
  std::vector<float> s = randomFloats(size_t(kOut * kGroups), 13, 0.01f, 0.1f);
  std::vector<float> zf = randomFloats(size_t(kOut * kGroups), 14, -8.0f, 7.0f);
  std::vector<int8_t> z(zf.size());
  for (size_t i = 0; i < z.size(); ++i)
    z[i] = int8_t(std::clamp<long>(std::lround(zf[i]), -8, 7));
  std::vector<float> w(q.size()), wNoZp(q.size());
  for (int64_t o = 0; o < kOut; ++o)
    for (int64_t i = 0; i < kIn; ++i) {
      const size_t g = size_t(o * kGroups + i / kGroup), at = size_t(o * kIn + i);
      w[at] = (float(q[at]) - float(z[g])) * s[g];
      wNoZp[at] = float(q[at]) * s[g];
    }
  Tensor q4 = Tensor::fromVector<int8_t>({kOut, kIn}, q).value().astype(DType::kI4);
  Tensor z4 = Tensor::fromVector<int8_t>({kOut, kGroups}, z).value().astype(DType::kI4);
  ASSERT_EQ(q4.dtype(), DType::kI4);
  Tensor sc = f32({kOut, kGroups}, s);
  StatusOr<Tensor> y = quantLinear(x, q4, sc, nullptr, DType::kF32, &z4, kGroup);
  ASSERT_TRUE(y.isOk()) << y.status().message();
  EXPECT_TRUE(allClose(*y, ref(x.toFloats(), w, nullptr, kT, kIn, kOut), {kT, kOut}, 1e-5));
  StatusOr<Tensor> y0 = quantLinear(x, q4, sc, nullptr, DType::kF32, nullptr, kGroup);
  ASSERT_TRUE(y0.isOk()) << y0.status().message();
  EXPECT_TRUE(allClose(*y0, ref(x.toFloats(), wNoZp, nullptr, kT, kIn, kOut), {kT, kOut}, 1e-5));

  // i8, per-channel zero point.
  std::vector<int8_t> q8(q.begin(), q.end());
  std::vector<int8_t> z8(static_cast<size_t>(kOut));
  std::vector<float> s8 = randomFloats(size_t(kOut), 15, 0.001f, 0.01f);
  for (int64_t o = 0; o < kOut; ++o)
    z8[size_t(o)] = int8_t((o * 37) % 255 - 127);
  std::vector<float> w8(q8.size());
  for (int64_t o = 0; o < kOut; ++o)
    for (int64_t i = 0; i < kIn; ++i)
      w8[size_t(o * kIn + i)] =
          (float(q8[size_t(o * kIn + i)]) - float(z8[size_t(o)])) * s8[size_t(o)];
  Tensor qt8 = Tensor::fromVector<int8_t>({kOut, kIn}, q8).value();
  Tensor zt8 = Tensor::fromVector<int8_t>({kOut}, z8).value();
  StatusOr<Tensor> y8 = quantLinear(x, qt8, f32({kOut}, s8), nullptr, DType::kF32, &zt8);
  ASSERT_TRUE(y8.isOk()) << y8.status().message();
  EXPECT_TRUE(allClose(*y8, ref(x.toFloats(), w8, nullptr, kT, kIn, kOut), {kT, kOut}, 1e-5));
}

TEST(QuantLinear, RefusesInconsistentZeroPointsAndGroups) {
  Tensor x = randomF32({1, 4}, 16);
  Tensor q = Tensor::fromVector<int8_t>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}).value();
  // Group 3 does not divide 4 inputs.
  StatusOr<Tensor> g3 = quantLinear(x, q, f32({2, 1}, {1, 1}), nullptr, DType::kF32, nullptr, 3);
  ASSERT_FALSE(g3.isOk());
  EXPECT_NE(g3.status().message().find("does not divide"), std::string::npos)
      << g3.status().message();
  // Scales of the wrong group count.
  StatusOr<Tensor> g2 = quantLinear(x, q, f32({2, 3}, {1, 1, 1, 1, 1, 1}), nullptr,
                                    DType::kF32, nullptr, 2);
  ASSERT_FALSE(g2.isOk());
  EXPECT_NE(g2.status().message().find("must be [2, 2]"), std::string::npos)
      << g2.status().message();
  // A zero point of another type than the weight.
  Tensor z = Tensor::fromVector<int8_t>({2}, {1, 2}).value().astype(DType::kI4);
  StatusOr<Tensor> zt = quantLinear(x, q, f32({2}, {1, 1}), nullptr, DType::kF32, &z);
  ASSERT_FALSE(zt.isOk());
  EXPECT_NE(zt.status().message().find("like the weight"), std::string::npos)
      << zt.status().message();
  // A zero point on an fp8 weight.
  Tensor f8 = randomF32({2, 4}, 17).astype(DType::kF8E4M3FN);
  Tensor z8 = Tensor::fromVector<int8_t>({2}, {1, 2}).value();
  StatusOr<Tensor> zf8 = quantLinear(x, f8, f32({2}, {1, 1}), nullptr, DType::kF32, &z8);
  ASSERT_FALSE(zf8.isOk());
  EXPECT_NE(zf8.status().message().find("needs an i8, i4 or ui4 weight"), std::string::npos)
      << zf8.status().message();
}

TEST(QuantLinear, RefusesWhatItCannotDequantise) {
  Tensor x = randomF32({1, 4}, 9);
  StatusOr<Tensor> f16 = quantLinear(x, randomF32({2, 4}, 10).astype(DType::kF16),
                                     f32({2}, {1, 1}), nullptr, DType::kF32);
  ASSERT_FALSE(f16.isOk());
  EXPECT_EQ(f16.status().code(), StatusCode::kUnimplemented);
  Tensor q = Tensor::fromVector<int8_t>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}).value();
  StatusOr<Tensor> badScale = quantLinear(x, q, f32({3}, {1, 1, 1}), nullptr, DType::kF32);
  ASSERT_FALSE(badScale.isOk());
  EXPECT_NE(badScale.status().message().find("must be [2] (per channel) or [] (per tensor)"),
            std::string::npos)
      << badScale.status().message();
}

// W8A8 (-precision=w8a8): x quantised per tensor to i8 inside the kernel,
// i8 x i8 summed in i32, rescaled in f32. The reference dequantises both
// operands (xq * xs, q * ws[o]) and multiplies in double; xq is rounded as
// the kernel rounds (x * (1 / xs), half to even, clamped to ±127), so the
// only difference is the final f32 rescale.
TEST(QuantLinear, W8A8MatchesDoubleReferenceOfDequantisedOperands) {
  Tensor x = randomF32({kT, kIn}, 11, -2.0f, 2.0f); // beyond 1.5: clamped
  std::vector<float> qf = randomFloats(size_t(kOut * kIn), 12, -127.0f, 127.0f);
  std::vector<int8_t> q(qf.size());
  for (size_t i = 0; i < q.size(); ++i)
    q[i] = int8_t(std::lround(qf[i]));
  std::vector<float> ws = randomFloats(size_t(kOut), 13, 0.001f, 0.01f);
  std::vector<float> b = randomFloats(size_t(kOut), 14);
  const float xs = 1.5f / 127.0f;
  std::vector<float> xd = x.toFloats(), w(q.size());
  int clamped = 0;
  for (float &v : xd) {
    float r = std::nearbyint(v * (1.0f / xs));
    clamped += std::fabs(r) > 127.0f;
    v = std::max(-127.0f, std::min(127.0f, r)) * xs;
  }
  ASSERT_GT(clamped, 0);
  for (int64_t o = 0; o < kOut; ++o)
    for (int64_t i = 0; i < kIn; ++i)
      w[size_t(o * kIn + i)] = float(q[size_t(o * kIn + i)]) * ws[size_t(o)];
  Tensor qt = Tensor::fromVector<int8_t>({kOut, kIn}, q).value();
  Tensor bias = f32({kOut}, b);
  StatusOr<Tensor> y = w8a8Linear(x, qt, f32({kOut}, ws), f32({}, {xs}), &bias, DType::kF32);
  ASSERT_TRUE(y.isOk()) << y.status().message();
  EXPECT_TRUE(allClose(*y, ref(xd, w, &b, kT, kIn, kOut), {kT, kOut}, 1e-5));
}

// Exact small cases: 1000 and -1000 clamp to 127 and -127 (never -128),
// 0.5 rounds to 0 (half to even), 1.5 to 2 and -2.5 to -2; per-tensor
// weight scale 0.5, bf16 result.
TEST(QuantLinear, W8A8ClampsAndRoundsHalfToEven) {
  Tensor x = f32({2, 3}, {1000.0f, -1000.0f, 0.5f, 1.5f, -2.5f, 3.0f});
  Tensor q = Tensor::fromVector<int8_t>({1, 3}, {1, 1, 2}).value();
  StatusOr<Tensor> y = w8a8Linear(x, q, f32({}, {0.5f}), f32({}, {1.0f}), nullptr, DType::kBF16);
  ASSERT_TRUE(y.isOk()) << y.status().message();
  EXPECT_EQ(y->dtype(), DType::kBF16);
  std::vector<float> got = y->toFloats();
  EXPECT_EQ(got[0], 0.0f);                      // (127 - 127 + 0) * 0.5
  EXPECT_EQ(got[1], 3.0f);                      // (2 - 2 + 6) * 0.5
}

TEST(QuantLinear, W8A8RefusesWhatItCannotRun) {
  Tensor x = randomF32({1, 4}, 15);
  Tensor q = Tensor::fromVector<int8_t>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}).value();
  StatusOr<Tensor> perToken = w8a8Linear(x, q, f32({2}, {1, 1}), f32({2}, {1, 1}), nullptr,
                                         DType::kF32);
  ASSERT_FALSE(perToken.isOk());
  EXPECT_NE(perToken.status().message().find("static, per tensor"), std::string::npos)
      << perToken.status().message();
  StatusOr<Tensor> zero = w8a8Linear(x, q, f32({2}, {1, 1}), f32({}, {0.0f}), nullptr,
                                     DType::kF32);
  ASSERT_FALSE(zero.isOk());
  StatusOr<Tensor> e5m2 = w8a8Linear(x, randomF32({2, 4}, 16).astype(DType::kF8E5M2),
                                     f32({2}, {1, 1}), f32({}, {1.0f}), nullptr, DType::kF32);
  ASSERT_FALSE(e5m2.isOk());
  EXPECT_EQ(e5m2.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(e5m2.status().message().find("i8 x i8 and f8E4M3FN x f8E4M3FN only"),
            std::string::npos)
      << e5m2.status().message();
}

// W8A8 with e4m3 (-precision=w8a8-fp8): x quantised per tensor to e4m3
// inside the kernel (saturating at 448), e4m3 weights with per-channel
// scales, f32 sums. The reference dequantises both operands through
// DType.h's e4m3 conversions and multiplies in double.
TEST(QuantLinear, W8A8Fp8MatchesDoubleReferenceOfDequantisedOperands) {
  Tensor x = randomF32({kT, kIn}, 21, -3.0f, 3.0f);
  const float xs = 2.0f / 448.0f; // |x| past 2 saturates
  std::vector<float> wf = randomFloats(size_t(kOut * kIn), 22, -400.0f, 400.0f);
  Tensor q = f32({kOut, kIn}, wf).astype(DType::kF8E4M3FN);
  std::vector<float> ws = randomFloats(size_t(kOut), 23, 0.001f, 0.01f);
  std::vector<float> b = randomFloats(size_t(kOut), 24);
  std::vector<float> xd = x.toFloats(), qd = q.toFloats(), w(qd.size());
  int saturated = 0;
  for (float &v : xd) {
    saturated += std::fabs(v / xs) > 448.0f;
    v = f8E4M3FNToF32(f32ToF8E4M3FN(v / xs)) * xs;
  }
  ASSERT_GT(saturated, 0);
  for (int64_t o = 0; o < kOut; ++o)
    for (int64_t i = 0; i < kIn; ++i)
      w[size_t(o * kIn + i)] = qd[size_t(o * kIn + i)] * ws[size_t(o)];
  Tensor bias = f32({kOut}, b);
  StatusOr<Tensor> y = w8a8Linear(x, q, f32({kOut}, ws), f32({}, {xs}), &bias, DType::kF32);
  ASSERT_TRUE(y.isOk()) << y.status().message();
  EXPECT_TRUE(allClose(*y, ref(xd, w, &b, kT, kIn, kOut), {kT, kOut}, 1e-5));
}

// Dynamic per-token scales (-precision=w8a8-fp8 without -calibration):
// rows of very different magnitude each get max |x[r]| / 448, so each
// keeps e4m3's relative precision; a row of zeros gives the bias; a row
// with a NaN is refused, naming it. The reference quantises each row with
// its own scale and multiplies in double.
TEST(QuantLinear, W8A8Fp8DynamicScalesPerToken) {
  const int64_t t = 3, in = 16, out = 5;
  std::vector<float> xv = randomFloats(size_t(t * in), 31, -1.0f, 1.0f);
  for (int64_t i = 0; i < in; ++i) {
    xv[size_t(in + i)] *= 1000.0f; // row 1: near 1000
    xv[size_t(2 * in + i)] = 0.0f; // row 2: zeros
  }
  Tensor x = f32({t, in}, xv);
  Tensor q = f32({out, in}, randomFloats(size_t(out * in), 32, -300.0f, 300.0f))
                 .astype(DType::kF8E4M3FN);
  std::vector<float> ws = randomFloats(size_t(out), 33, 0.001f, 0.01f);
  std::vector<float> b = randomFloats(size_t(out), 34);
  std::vector<float> xd = xv, qd = q.toFloats(), w(qd.size());
  for (int64_t r = 0; r < t; ++r) {
    float amax = 0.0f;
    for (int64_t i = 0; i < in; ++i)
      amax = std::max(amax, std::fabs(xv[size_t(r * in + i)]));
    const float s = amax > 0.0f ? amax / 448.0f : 1.0f;
    for (int64_t i = 0; i < in; ++i)
      xd[size_t(r * in + i)] = f8E4M3FNToF32(f32ToF8E4M3FN(xv[size_t(r * in + i)] / s)) * s;
  }
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i)
      w[size_t(o * in + i)] = qd[size_t(o * in + i)] * ws[size_t(o)];
  Tensor bias = f32({out}, b);
  StatusOr<Tensor> y = w8a8LinearDynamic(x, q, f32({out}, ws), &bias, DType::kF32);
  ASSERT_TRUE(y.isOk()) << y.status().message();
  EXPECT_TRUE(allClose(*y, ref(xd, w, &b, t, in, out), {t, out}, 1e-5));
  std::vector<float> got = y->toFloats();
  for (int64_t o = 0; o < out; ++o)
    EXPECT_EQ(got[size_t(2 * out + o)], b[size_t(o)]); // the zero row
  xv[5] = std::numeric_limits<float>::quiet_NaN();
  StatusOr<Tensor> nan = w8a8LinearDynamic(f32({t, in}, xv), q, f32({out}, ws), &bias,
                                           DType::kF32);
  ASSERT_FALSE(nan.isOk());
  EXPECT_NE(nan.status().message().find("row 0 of x"), std::string::npos)
      << nan.status().message();
}

// Exact small case: 1000 saturates to 448 and 0.3 rounds to 0.3125 (the
// nearer of e4m3's 0.28125 and 0.3125); weights 1 and 2, scale 0.5.
TEST(QuantLinear, W8A8Fp8SaturatesAndRounds) {
  Tensor x = f32({1, 2}, {1000.0f, 0.3f});
  Tensor q = f32({1, 2}, {1.0f, 2.0f}).astype(DType::kF8E4M3FN);
  StatusOr<Tensor> y = w8a8Linear(x, q, f32({}, {0.5f}), f32({}, {1.0f}), nullptr, DType::kF32);
  ASSERT_TRUE(y.isOk()) << y.status().message();
  EXPECT_EQ(y->toFloats()[0], (448.0f + 2.0f * 0.3125f) * 0.5f);
}

} // namespace
