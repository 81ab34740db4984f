// Tensor: ownership, views, shapes, conversions (ONNX Cast semantics).
#include "KernelTestUtil.h"

#include <limits>
#include <memory>

using namespace kt;

TEST(Tensor, ZerosOwnsAlignedStorage) {
  Tensor t = Tensor::zeros(DType::kF32, {2, 3});
  ASSERT_TRUE(t.defined());
  EXPECT_EQ(t.numElements(), 6);
  EXPECT_EQ(t.byteSize(), 24u);
  EXPECT_EQ(t.rank(), 2);
  EXPECT_EQ(t.dim(-1), 3);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.rawData()) % 64, 0u);
  for (float v : t.toFloats())
    EXPECT_EQ(v, 0.0f);
  EXPECT_EQ(t.describe(), "f32[2, 3]");
}

TEST(Tensor, ScalarAndEmpty) {
  Tensor s = Tensor::scalar<int64_t>(7);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.numElements(), 1);
  EXPECT_EQ(s.toInt64s()[0], 7);
  Tensor e = Tensor::zeros(DType::kF16, {3, 0});
  ASSERT_TRUE(e.defined());
  EXPECT_EQ(e.numElements(), 0);
  EXPECT_EQ(e.byteSize(), 0u);
  EXPECT_FALSE(Tensor().defined());
}

TEST(Tensor, AllocateRejectsBadShapes) {
  EXPECT_FALSE(Tensor::allocate(DType::kF32, {2, -1}).isOk());
  StatusOr<Tensor> huge = Tensor::allocate(DType::kF32, {int64_t(1) << 40, int64_t(1) << 40});
  ASSERT_FALSE(huge.isOk());
  EXPECT_FALSE(Tensor::zeros(DType::kF32, {-3}).defined());
}

TEST(Tensor, ViewSharesExternalMemoryAndKeepsOwnerAlive) {
  auto blob = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4, 5, 6});
  std::weak_ptr<std::vector<float>> watch = blob;
  Tensor v = Tensor::view(DType::kF32, {3, 2}, blob->data(), blob);
  const float *raw = blob->data();
  blob.reset();
  ASSERT_FALSE(watch.expired()); // the view keeps the blob alive
  EXPECT_EQ(v.data<float>(), raw);
  EXPECT_EQ(v.toFloats()[5], 6.0f);
  Tensor r = v.reshaped({6}).value();
  EXPECT_EQ(r.data<float>(), raw); // still no copy
  EXPECT_FALSE(v.reshaped({4}).isOk());
  Tensor c = v.clone();
  EXPECT_NE(c.data<float>(), raw);
  v = Tensor();
  r = Tensor();
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(c.toFloats()[0], 1.0f);
}

TEST(Tensor, FromVectorChecksTheShape) {
  EXPECT_TRUE(Tensor::fromVector<float>({2, 2}, {1, 2, 3, 4}).isOk());
  StatusOr<Tensor> bad = Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4});
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("[2, 3] holds 6 elements, 4 values given"),
            std::string::npos);
  Tensor b = B({3}, {true, false, true});
  EXPECT_EQ(b.dtype(), DType::kI1);
  EXPECT_EQ(b.toInt64s(), (std::vector<int64_t>{1, 0, 1}));
}

TEST(Tensor, AstypeFollowsOnnxCast) {
  Tensor f = F({6}, {1.7f, -1.7f, 300.5f, -1e20f, NAN, 0.0f});
  // Float -> integer truncates, then wraps like numpy / the ONNX reference.
  EXPECT_EQ(f.astype(DType::kI32).toInt64s(), (std::vector<int64_t>{1, -1, 300, 0, 0, 0}));
  EXPECT_EQ(f.astype(DType::kI64).toInt64s(),
            (std::vector<int64_t>{1, -1, 300, std::numeric_limits<int64_t>::min(), 0, 0}));
  EXPECT_EQ(f.astype(DType::kU8).toInt64s(), (std::vector<int64_t>{1, 255, 44, 0, 0, 0}));
  EXPECT_EQ(f.astype(DType::kI4).toInt64s(), (std::vector<int64_t>{1, -1, -4, 0, 0, 0}));
  EXPECT_EQ(F({4}, {-9, 8, 15.7f, -1.5f}).astype(DType::kI4).toInt64s(),
            (std::vector<int64_t>{7, -8, -1, -1}));
  EXPECT_EQ(F({4}, {-9, 8, 15.7f, -1.5f}).astype(DType::kU4).toInt64s(),
            (std::vector<int64_t>{7, 8, 15, 15}));
  EXPECT_EQ(f.astype(DType::kI1).toInt64s(), (std::vector<int64_t>{1, 1, 1, 1, 1, 0}));
  // Integer narrowing wraps; i4/ui4 keep the low four bits.
  Tensor i = I64({4}, {300, -129, 15, 9});
  EXPECT_EQ(i.astype(DType::kI8).toInt64s(), (std::vector<int64_t>{44, 127, 15, 9}));
  EXPECT_EQ(i.astype(DType::kI4).toInt64s(), (std::vector<int64_t>{-4, -1, -1, -7}));
  EXPECT_EQ(i.astype(DType::kU4).toInt64s(), (std::vector<int64_t>{12, 15, 15, 9}));
  // Narrow floats round to nearest even through f32.
  Tensor h = F({3}, {1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 65536.0f}).astype(DType::kF16);
  EXPECT_EQ(h.toDoubles(), (std::vector<double>{1.0, 1.0 + 2.0 / 1024, INFINITY}));
  EXPECT_EQ(h.astype(DType::kBF16).toDoubles(), (std::vector<double>{1.0, 1.0, INFINITY}));
  Tensor big = F({2}, {500.0f, -1e9f});
  EXPECT_EQ(big.astype(DType::kF8E4M3FN, true).toDoubles(), (std::vector<double>{448, -448}));
  std::vector<double> nosat = big.astype(DType::kF8E4M3FN, false).toDoubles();
  EXPECT_TRUE(std::isnan(nosat[0]) && std::isnan(nosat[1]));
  EXPECT_EQ(big.astype(DType::kF8E5M2, false).toDoubles(),
            (std::vector<double>{512, -INFINITY}));
  // f64 -> i64 keeps integers beyond 2^24 exactly.
  Tensor d = D(DType::kF64, {1}, {9007199254740991.0});
  EXPECT_EQ(d.astype(DType::kI64).toInt64s()[0], 9007199254740991LL);
}
