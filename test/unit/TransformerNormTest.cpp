//===- TransformerNormTest.cpp - rms_norm, add_rms_norm, layer_norm -------===//
#include "runtime/cpu/transformer/Norm.h"
#include "runtime/cpu/transformer/Residual.h"

#include "TransformerTestUtil.h"

using namespace tt;
using namespace accel::rt::cpu::transformer;

namespace {

// HF LlamaRMSNorm / GemmaRMSNorm, straight from the formula, in double.
std::vector<float> refRms(const std::vector<float> &x, const std::vector<float> &w,
                          int64_t d, double eps, double offset) {
  std::vector<float> y(x.size());
  for (size_t r = 0; r < x.size() / size_t(d); ++r) {
    double ss = 0;
    for (int64_t i = 0; i < d; ++i)
      ss += double(x[r * d + i]) * x[r * d + i];
    const double inv = 1.0 / std::sqrt(ss / double(d) + eps);
    for (int64_t i = 0; i < d; ++i)
      y[r * d + i] = float(x[r * d + i] * inv * (w[size_t(i)] + offset));
  }
  return y;
}

std::vector<float> refLayer(const std::vector<float> &x, const std::vector<float> &w,
                            const std::vector<float> *b, int64_t d, double eps) {
  std::vector<float> y(x.size());
  for (size_t r = 0; r < x.size() / size_t(d); ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < d; ++i)
      mean += x[r * d + i];
    mean /= double(d);
    for (int64_t i = 0; i < d; ++i)
      var += (x[r * d + i] - mean) * (x[r * d + i] - mean);
    var /= double(d);
    for (int64_t i = 0; i < d; ++i)
      y[r * d + i] = float((x[r * d + i] - mean) / std::sqrt(var + eps) * w[size_t(i)] +
                           (b ? (*b)[size_t(i)] : 0.0));
  }
  return y;
}

} // namespace

TEST(RmsNorm, MatchesTheFormulaOnTokensByHidden) {
  Tensor x = randomF32({5, 32}, 1, -3, 3), w = randomF32({32}, 2);
  TT_ASSIGN(Tensor y, rmsNorm(x, w, 1e-6f));
  EXPECT_TRUE(allClose(y, refRms(x.toFloats(), w.toFloats(), 32, 1e-6, 0), {5, 32}));
}

TEST(RmsNorm, PerHeadWithGemmaOffset) {
  Tensor x = randomF32({3, 4, 8}, 3), w = randomF32({8}, 4);
  TT_ASSIGN(Tensor y, rmsNorm(x, w, 1e-5f, 1.0f));
  EXPECT_TRUE(allClose(y, refRms(x.toFloats(), w.toFloats(), 8, 1e-5, 1.0), {3, 4, 8}));
}

TEST(RmsNorm, Bf16InBf16Out) {
  Tensor x = randomF32({4, 16}, 5).astype(DType::kBF16);
  Tensor w = randomF32({16}, 6).astype(DType::kBF16);
  TT_ASSIGN(Tensor y, rmsNorm(x, w, 1e-6f));
  EXPECT_EQ(y.dtype(), DType::kBF16);
  // bf16 keeps 8 bits of mantissa: one rounding of the f32 result.
  EXPECT_TRUE(allClose(y, refRms(x.toFloats(), w.toFloats(), 16, 1e-6, 0), {4, 16}, 1e-2));
}

TEST(RmsNorm, ShapeErrors) {
  Tensor x = randomF32({4, 16}, 7);
  StatusOr<Tensor> bad = rmsNorm(x, randomF32({8}, 1), 1e-6f);
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("weight f32[8] must be [16]"), std::string::npos)
      << bad.status().message();
  EXPECT_FALSE(rmsNorm(randomF32({16}, 1), randomF32({16}, 1), 1e-6f).isOk());
  EXPECT_FALSE(rmsNorm(i32({2}, {1, 2}), randomF32({2}, 1), 1e-6f).isOk());
}

TEST(AddRmsNorm, EqualsResidualAddThenRmsNorm) {
  Tensor x = randomF32({6, 24}, 8), r = randomF32({6, 24}, 9), w = randomF32({24}, 10);
  TT_ASSIGN(AddRmsNormResult got, addRmsNorm(x, r, w, 1e-5f));
  std::vector<float> xs = x.toFloats(), rs = r.toFloats(), sum(xs.size());
  for (size_t i = 0; i < sum.size(); ++i)
    sum[i] = xs[i] + rs[i];
  EXPECT_TRUE(allClose(got.sum, sum, {6, 24}, 0));
  EXPECT_TRUE(allClose(got.normed, refRms(sum, w.toFloats(), 24, 1e-5, 0), {6, 24}));
  EXPECT_FALSE(addRmsNorm(x, randomF32({5, 24}, 1), w, 1e-5f).isOk());
}

TEST(ResidualAdd, AddsAndChecksShapes) {
  Tensor a = randomF32({3, 5}, 11), b = randomF32({3, 5}, 12);
  TT_ASSIGN(Tensor y, residualAdd(a, b));
  std::vector<float> want = a.toFloats(), bv = b.toFloats();
  for (size_t i = 0; i < want.size(); ++i)
    want[i] += bv[i];
  EXPECT_TRUE(allClose(y, want, {3, 5}, 0));
  StatusOr<Tensor> bad = residualAdd(a, randomF32({5, 3}, 1));
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("differ in shape"), std::string::npos);
}

TEST(LayerNorm, WithAndWithoutBias) {
  Tensor x = randomF32({4, 20}, 13, -2, 5), w = randomF32({20}, 14), b = randomF32({20}, 15);
  std::vector<float> bv = b.toFloats();
  TT_ASSIGN(Tensor y, layerNorm(x, w, &b, 1e-5f));
  EXPECT_TRUE(allClose(y, refLayer(x.toFloats(), w.toFloats(), &bv, 20, 1e-5), {4, 20}));
  TT_ASSIGN(Tensor z, layerNorm(x, w, nullptr, 1e-5f));
  EXPECT_TRUE(allClose(z, refLayer(x.toFloats(), w.toFloats(), nullptr, 20, 1e-5), {4, 20}));
  Tensor b2 = randomF32({19}, 1);
  EXPECT_FALSE(layerNorm(x, w, &b2, 1e-5f).isOk());
}
