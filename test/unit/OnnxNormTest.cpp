// LayerNormalization and RMSNormalization against hand-written loops.
#include "KernelTestUtil.h"

using namespace kt;

namespace {

/// Normalises x ([outer, n] after flattening at `axis`), scale/bias given
/// full [n]; writes mean and 1/stddev per row.
std::vector<double> refNorm(const std::vector<float> &x, int64_t outer, int64_t n,
                            const std::vector<float> &scale, const std::vector<float> *bias,
                            double eps, bool rms, std::vector<double> *mean = nullptr,
                            std::vector<double> *inv = nullptr) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    double mu = 0, var = 0;
    if (!rms) {
      for (int64_t i = 0; i < n; ++i)
        mu += x[size_t(o * n + i)];
      mu /= double(n);
    }
    for (int64_t i = 0; i < n; ++i)
      var += (x[size_t(o * n + i)] - mu) * (x[size_t(o * n + i)] - mu);
    var /= double(n);
    const double r = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < n; ++i)
      y[size_t(o * n + i)] =
          (x[size_t(o * n + i)] - mu) * r * scale[size_t(i)] + (bias ? (*bias)[size_t(i)] : 0.0);
    if (mean)
      mean->push_back(mu);
    if (inv)
      inv->push_back(r);
  }
  return y;
}

} // namespace

TEST(OnnxNorm, LayerNormLastAxisWithStats) {
  Tensor x = rnd({2, 3, 4}, 21), g = rnd({4}, 22), b = rnd({4}, 23);
  std::vector<double> mean, inv;
  std::vector<float> bv = b.toFloats();
  std::vector<double> want =
      refNorm(x.toFloats(), 6, 4, g.toFloats(), &bv, 1e-5, false, &mean, &inv);
  std::vector<Tensor> out = run("LayerNormalization", {}, {x, g, b}, 3);
  EXPECT_TRUE(near(out[0], {2, 3, 4}, want));
  EXPECT_TRUE(near(out[1], {2, 3, 1}, mean));
  EXPECT_TRUE(near(out[2], {2, 3, 1}, inv, 1e-4));
}

TEST(OnnxNorm, LayerNormAxisOneBroadcastScale) {
  // axis=1 normalises over [3, 4]; a [4] scale and no bias broadcast there.
  Tensor x = rnd({2, 3, 4}, 24), g = rnd({4}, 25);
  std::vector<float> full;
  for (int r = 0; r < 3; ++r)
    for (float v : g.toFloats())
      full.push_back(v);
  std::vector<double> want = refNorm(x.toFloats(), 2, 12, full, nullptr, 1e-3, false);
  Tensor y = run("LayerNormalization", {{"axis", int64_t(1)}, {"epsilon", 1e-3f}}, {x, g})[0];
  EXPECT_TRUE(near(y, {2, 3, 4}, want));
  EXPECT_NE(runError("LayerNormalization", {}, {x, rnd({3}, 1)}).find("does not broadcast"),
            std::string::npos);
}

TEST(OnnxNorm, LayerNormHalfPrecision) {
  Tensor x = rnd({3, 8}, 26).astype(DType::kF16), g = rnd({8}, 27).astype(DType::kF16);
  std::vector<double> want = refNorm(x.toFloats(), 3, 8, g.toFloats(), nullptr, 1e-5, false);
  Tensor y = run("LayerNormalization", {}, {x, g})[0];
  EXPECT_EQ(y.dtype(), DType::kF16);
  EXPECT_TRUE(near(y, {3, 8}, want, 4e-3));
}

TEST(OnnxNorm, RMSNormalization) {
  Tensor x = rnd({2, 5, 6}, 28), g = rnd({6}, 29);
  std::vector<double> want = refNorm(x.toFloats(), 10, 6, g.toFloats(), nullptr, 1e-6, true);
  EXPECT_TRUE(near(run1("RMSNormalization", {{"epsilon", 1e-6f}}, {x, g}), {2, 5, 6}, want));
  // axis = -2 over [5, 6] with a full scale.
  Tensor g2 = rnd({5, 6}, 30);
  want = refNorm(x.toFloats(), 2, 30, g2.toFloats(), nullptr, 1e-5, true);
  EXPECT_TRUE(near(run1("RMSNormalization", {{"axis", int64_t(-2)}}, {x, g2}), {2, 5, 6}, want));
  // ORT's SimplifiedLayerNormalization is the same computation.
  want = refNorm(x.toFloats(), 10, 6, g.toFloats(), nullptr, 1e-5, true);
  EXPECT_TRUE(near(run("SimplifiedLayerNormalization", {}, {x, g})[0], {2, 5, 6}, want));
}

TEST(OnnxNorm, SkipSimplifiedLayerNormalization) {
  Tensor x = rnd({2, 3, 4}, 31), skip = rnd({2, 3, 4}, 32), g = rnd({4}, 33);
  std::vector<float> sum;
  for (size_t i = 0; i < 24; ++i)
    sum.push_back(x.toFloats()[i] + skip.toFloats()[i]);
  std::vector<double> want = refNorm(sum, 6, 4, g.toFloats(), nullptr, 1e-6, true);
  std::vector<Tensor> out = run("SkipSimplifiedLayerNormalization", {{"epsilon", 1e-6f}},
                                {x, skip, g}, 4, "com.microsoft");
  EXPECT_TRUE(near(out[0], {2, 3, 4}, want));
  EXPECT_TRUE(nearTensor(out[3], F({2, 3, 4}, sum)));
}
