//===- QuantLinearTest.cpp - linear with narrow and quantised weights -----===//
//
// The CPU GEMM over bf16/f16/i8/f8E4M3FN weights (runtime/cpu/Gemm.h's
// gemmF32Weights, decoding a block of rows at a time) against a plain double
// loop over the exactly decoded weights (accelc -precision, docs/precision.md).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/transformer/Linear.h"
#include "runtime/cpu/transformer/QuantLinear.h"

#include "TransformerTestUtil.h"

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

} // namespace
