// RotaryEmbedding (opset 23): half-split and interleaved pairs, partial
// rotation, position_ids tables, per-batch caches and a batch-1 cache
// broadcast over the input batch; against a loop written out here.
#include "KernelTestUtil.h"

using namespace kt;

namespace {

/// x as [B, S, H, D] values via `at`; cos/sin rows per (b, s).
std::vector<double> refRotary(const std::vector<float> &x, bool fourD, int64_t b, int64_t h,
                              int64_t s, int64_t d, int64_t rot, bool interleaved,
                              const std::vector<float> &cosv, const std::vector<float> &sinv,
                              const std::vector<int64_t> &row) {
  std::vector<double> y(x.size());
  const int64_t half = rot / 2;
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t si = 0; si < s; ++si)
      for (int64_t hi = 0; hi < h; ++hi) {
        const int64_t base = fourD ? ((bi * h + hi) * s + si) * d : ((bi * s + si) * h + hi) * d;
        const int64_t r = row[size_t(bi * s + si)];
        for (int64_t i = 0; i < d; ++i)
          y[size_t(base + i)] = x[size_t(base + i)];
        for (int64_t i = 0; i < half; ++i) {
          const int64_t i1 = interleaved ? 2 * i : i, i2 = interleaved ? 2 * i + 1 : i + half;
          const double c = cosv[size_t(r * half + i)], sn = sinv[size_t(r * half + i)];
          const double x1 = x[size_t(base + i1)], x2 = x[size_t(base + i2)];
          y[size_t(base + i1)] = c * x1 - sn * x2;
          y[size_t(base + i2)] = sn * x1 + c * x2;
        }
      }
  return y;
}

/// cos/sin tables of theta = pos * 10000^(-2i/rot), [maxPos, rot/2].
void tables(int64_t maxPos, int64_t rot, std::vector<float> &c, std::vector<float> &s) {
  c.clear();
  s.clear();
  for (int64_t p = 0; p < maxPos; ++p)
    for (int64_t i = 0; i < rot / 2; ++i) {
      const double th = double(p) * std::pow(10000.0, -2.0 * double(i) / double(rot));
      c.push_back(float(std::cos(th)));
      s.push_back(float(std::sin(th)));
    }
}

} // namespace

TEST(OnnxRotary, PositionIdsHalfSplitAndInterleaved4D) {
  const int64_t b = 2, h = 3, s = 4, d = 8, maxPos = 16;
  std::vector<float> c, sn;
  tables(maxPos, d, c, sn);
  Tensor x = rnd({b, h, s, d}, 71);
  std::vector<int64_t> pos = {0, 1, 2, 3, 7, 8, 9, 10};
  for (bool inter : {false, true}) {
    Tensor y = run1("RotaryEmbedding", {{"interleaved", int64_t(inter)}},
                    {x, F({maxPos, d / 2}, c), F({maxPos, d / 2}, sn), I64({b, s}, pos)});
    EXPECT_TRUE(near(y, {b, h, s, d}, refRotary(x.toFloats(), true, b, h, s, d, d, inter, c, sn, pos)))
        << "interleaved=" << inter;
  }
}

TEST(OnnxRotary, PartialRotation3DWithNumHeads) {
  const int64_t b = 1, h = 2, s = 3, d = 8, rot = 4, maxPos = 8;
  std::vector<float> c, sn;
  tables(maxPos, rot, c, sn);
  Tensor x = rnd({b, s, h * d}, 72);
  std::vector<int64_t> pos = {5, 6, 7};
  Tensor y = run1("RotaryEmbedding", {{"num_heads", h}, {"rotary_embedding_dim", rot}},
                  {x, F({maxPos, rot / 2}, c), F({maxPos, rot / 2}, sn), I64({b, s}, pos)});
  EXPECT_TRUE(near(y, {b, s, h * d}, refRotary(x.toFloats(), false, b, h, s, d, rot, false, c, sn, pos)));
  // The untouched tail is copied exactly.
  EXPECT_EQ(y.toFloats()[7], x.toFloats()[7]);
}

TEST(OnnxRotary, PerBatchCachesAndBatchOneBroadcast) {
  const int64_t b = 2, h = 2, s = 3, d = 4;
  std::vector<float> c, sn;
  tables(b * s, d, c, sn); // rows 0..5 as [2, 3, 2] caches
  Tensor x = rnd({b, h, s, d}, 73);
  std::vector<int64_t> rows = {0, 1, 2, 3, 4, 5};
  Tensor y = run1("RotaryEmbedding", {}, {x, F({b, s, d / 2}, c), F({b, s, d / 2}, sn)});
  EXPECT_TRUE(near(y, {b, h, s, d}, refRotary(x.toFloats(), true, b, h, s, d, d, false, c, sn, rows)));
  // A [1, S, rot/2] cache applies to every batch, as real exports produce.
  std::vector<float> c1(c.begin(), c.begin() + s * d / 2), s1(sn.begin(), sn.begin() + s * d / 2);
  std::vector<int64_t> rows1 = {0, 1, 2, 0, 1, 2};
  Tensor y1 = run1("RotaryEmbedding", {{"interleaved", int64_t(1)}},
                   {x, F({1, s, d / 2}, c1), F({1, s, d / 2}, s1)});
  EXPECT_TRUE(near(y1, {b, h, s, d}, refRotary(x.toFloats(), true, b, h, s, d, d, true, c1, s1, rows1)));
  // bf16 in, bf16 out.
  Tensor yb = run1("RotaryEmbedding", {}, {x.astype(DType::kBF16), F({b, s, d / 2}, c), F({b, s, d / 2}, sn)});
  EXPECT_EQ(yb.dtype(), DType::kBF16);
  EXPECT_NE(runError("RotaryEmbedding", {}, {x, F({3, s, d / 2}, std::vector<float>(18, 0)),
                                             F({3, s, d / 2}, std::vector<float>(18, 0))})
                .find("batch"),
            std::string::npos);
  EXPECT_NE(runError("RotaryEmbedding", {}, {x, F({4, 2}, std::vector<float>(8, 0)),
                                             F({4, 2}, std::vector<float>(8, 0)), I64({b, s}, {0, 1, 2, 3, 4, 5})})
                .find("outside the cos/sin table"),
            std::string::npos);
}

TEST(OnnxRotary, MicrosoftContribOrderAndOffset) {
  const int64_t b = 1, h = 2, s = 3, d = 4, maxPos = 10;
  std::vector<float> c, sn;
  tables(maxPos, d, c, sn);
  Tensor x = rnd({b, s, h * d}, 74);
  Tensor y = run("RotaryEmbedding", {{"num_heads", h}},
                 {x, I64({1}, {4}), F({maxPos, d / 2}, c), F({maxPos, d / 2}, sn)}, 1,
                 "com.microsoft")[0];
  EXPECT_TRUE(near(y, {b, s, h * d},
                   refRotary(x.toFloats(), false, b, h, s, d, d, false, c, sn, {4, 5, 6})));
}
