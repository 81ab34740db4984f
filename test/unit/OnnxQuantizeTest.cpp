// QuantizeLinear / DequantizeLinear: per-tensor, per-axis and blocked, to
// u8/i8/i4/u4/f8 (the ONNX spec examples), and round trips.
#include "KernelTestUtil.h"

using namespace kt;

TEST(OnnxQuantize, PerTensorUint8) {
  Tensor x = F({6}, {0, 2, 3, 1000, -254, -1000});
  Tensor y = run1("QuantizeLinear", {}, {x, F({}, {2}), D(DType::kU8, {}, {128})});
  EXPECT_EQ(y.dtype(), DType::kU8);
  EXPECT_EQ(y.toInt64s(), (std::vector<int64_t>{128, 129, 130, 255, 1, 0}));
  // No zero point: uint8 with zero point 0; ties round to even.
  Tensor r = run1("QuantizeLinear", {}, {F({4}, {1, 3, 5, -3}), F({}, {2})});
  EXPECT_EQ(r.dtype(), DType::kU8);
  EXPECT_EQ(r.toInt64s(), (std::vector<int64_t>{0, 2, 2, 0}));
  Tensor i8 = run1("QuantizeLinear", {{"output_dtype", int64_t(3)}}, {F({3}, {-300, 5, 300}), F({}, {1})});
  EXPECT_EQ(i8.dtype(), DType::kI8);
  EXPECT_EQ(i8.toInt64s(), (std::vector<int64_t>{-128, 5, 127}));
}

TEST(OnnxQuantize, PerAxisSpecExample) {
  Tensor x = F({1, 3, 3, 2}, {-162, 10, -100, 232, -20, -50, -76, 0, 0, 252, 32, -44,
                              245, -485, -960, -270, -375, -470});
  Tensor y = run1("QuantizeLinear", {}, {x, F({3}, {2, 4, 5}), D(DType::kU8, {3}, {84, 24, 196})});
  EXPECT_EQ(y.toInt64s(), (std::vector<int64_t>{3, 89, 34, 200, 74, 59, 5, 24, 24, 87, 32, 13,
                                                 245, 99, 4, 142, 121, 102}));
  // Dequantize per axis 1 of a [1, 3, 2, 2] tensor.
  Tensor q = D(DType::kU8, {1, 3, 2, 2}, {3, 89, 34, 200, 74, 59, 5, 24, 24, 87, 32, 13});
  Tensor back = run1("DequantizeLinear", {}, {q, F({3}, {2, 4, 5}), D(DType::kU8, {3}, {84, 24, 196})});
  EXPECT_TRUE(near(back, {1, 3, 2, 2},
                   {-162, 10, -100, 232, 200, 140, -76, 0, -860, -545, -820, -915}));
}

TEST(OnnxQuantize, Int4AndUint4) {
  Tensor x = F({3, 4}, {0.0f, 2.5f, 4.8f, 8.6f, -30, -20, 6, 9, 12, 15, 16, 40});
  Tensor zp = D(DType::kI4, {3}, {1, 1, 1});
  Tensor y = run1("QuantizeLinear", {{"axis", int64_t(0)}}, {x, F({3}, {2, 3, 4}), zp});
  EXPECT_EQ(y.dtype(), DType::kI4);
  EXPECT_EQ(y.toInt64s(), (std::vector<int64_t>{1, 2, 3, 5, -8, -6, 3, 4, 4, 5, 5, 7}));
  Tensor u = run1("QuantizeLinear", {{"axis", int64_t(0)}},
                  {x, F({3}, {2, 3, 4}), D(DType::kU4, {3}, {1, 1, 1})});
  EXPECT_EQ(u.toInt64s(), (std::vector<int64_t>{1, 2, 3, 5, 0, 0, 3, 4, 4, 5, 5, 11}));
  Tensor back = run1("DequantizeLinear", {{"axis", int64_t(0)}}, {y, F({3}, {2, 3, 4}), zp});
  EXPECT_TRUE(near(back, {3, 4}, {0, 2, 4, 8, -27, -21, 6, 9, 12, 16, 16, 24}));
}

TEST(OnnxQuantize, Float8) {
  Tensor x = F({5}, {0, 1, 2, 100000, 200});
  Tensor e4 = run1("QuantizeLinear", {}, {x, F({}, {2}), D(DType::kF8E4M3FN, {1}, {0})});
  EXPECT_EQ(e4.dtype(), DType::kF8E4M3FN);
  EXPECT_EQ(e4.toDoubles(), (std::vector<double>{0, 0.5, 1, 448, 96}));
  Tensor e5 = run1("QuantizeLinear", {}, {x, F({}, {2}), D(DType::kF8E5M2, {1}, {0})});
  EXPECT_EQ(e5.toDoubles(), (std::vector<double>{0, 0.5, 1, 49152, 96}));
  Tensor ns = run1("QuantizeLinear", {{"saturate", int64_t(0)}},
                   {x, F({}, {2}), D(DType::kF8E4M3FN, {1}, {0})});
  EXPECT_TRUE(std::isnan(ns.toDoubles()[3]));
  EXPECT_TRUE(near(run1("DequantizeLinear", {}, {e4, F({}, {2})}), {5}, {0, 1, 2, 896, 192}));
}

TEST(OnnxQuantize, Blocked) {
  Tensor x = F({3, 4}, {6, 12, 50, 5, 1, 8, 4, 5, 0, 20, 10, 4});
  Tensor scale = F({3, 2}, {1.5f, 2.5f, 3, 4.9f, 5.1f, 6.9f});
  Tensor zp = D(DType::kU8, {3, 2}, {0, 1, 1, 0, 2, 3});
  Tensor y = run1("QuantizeLinear", {{"axis", int64_t(1)}, {"block_size", int64_t(2)}}, {x, scale, zp});
  std::vector<float> xs = x.toFloats(), ss = scale.toFloats();
  std::vector<int64_t> zs = zp.toInt64s(), want;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      want.push_back(std::min<int64_t>(
          255, std::max<int64_t>(0, int64_t(std::nearbyint(xs[size_t(i * 4 + j)] / ss[size_t(i * 2 + j / 2)])) +
                                        zs[size_t(i * 2 + j / 2)])));
  EXPECT_EQ(y.toInt64s(), want);
  // Blocked along axis 0 with a partial last block (5 rows, block 2).
  Tensor q = D(DType::kI8, {5, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  Tensor s0 = F({3, 2}, {1, 10, 2, 20, 3, 30});
  Tensor d = run1("DequantizeLinear", {{"axis", int64_t(0)}, {"block_size", int64_t(2)}}, {q, s0});
  EXPECT_TRUE(near(d, {5, 2}, {1, 20, 3, 40, 10, 120, 14, 160, 27, 300}));
  EXPECT_NE(runError("DequantizeLinear", {{"axis", int64_t(0)}, {"block_size", int64_t(2)}},
                     {q, F({2, 2}, {1, 1, 1, 1})})
                .find("blocked scale"),
            std::string::npos);
}

TEST(OnnxQuantize, RoundTripStaysWithinHalfAStep) {
  Tensor x = rnd({4, 16}, 81);
  Tensor scale = F({4}, {0.01f, 0.02f, 0.005f, 0.008f});
  Tensor q = run1("QuantizeLinear", {{"axis", int64_t(0)}}, {x, scale, D(DType::kI8, {4}, {0, 0, 0, 0})});
  Tensor back = run1("DequantizeLinear", {{"axis", int64_t(0)}}, {q, scale, D(DType::kI8, {4}, {0, 0, 0, 0})});
  std::vector<float> xv = x.toFloats(), bv = back.toFloats(), sv = scale.toFloats();
  for (int i = 0; i < 64; ++i) {
    const float s = sv[size_t(i / 16)];
    const float clamped = std::max(-128 * s, std::min(127 * s, xv[size_t(i)]));
    EXPECT_LE(std::fabs(bv[size_t(i)] - clamped), s / 2 + 1e-6f) << i;
  }
}
