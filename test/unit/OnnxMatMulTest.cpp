// MatMul (numpy matmul semantics) and Gemm against naive loops.
#include "KernelTestUtil.h"

using namespace kt;

namespace {

/// Naive [.., m, k] x [.., k, n] for contiguous operands with equal batch.
std::vector<double> naiveMatMul(const std::vector<float> &a, const std::vector<float> &b,
                                int64_t batch, int64_t m, int64_t k, int64_t n,
                                bool aBroadcast = false, bool bBroadcast = false) {
  std::vector<double> c(size_t(batch * m * n), 0.0);
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p)
          s += double(a[size_t((aBroadcast ? 0 : t) * m * k + i * k + p)]) *
               double(b[size_t((bBroadcast ? 0 : t) * k * n + p * n + j)]);
        c[size_t(t * m * n + i * n + j)] = s;
      }
  return c;
}

} // namespace

TEST(OnnxMatMul, TwoDAndBatched) {
  Tensor a = rnd({3, 4}, 1), b = rnd({4, 5}, 2);
  EXPECT_TRUE(near(run1("MatMul", {}, {a, b}), {3, 5},
                   naiveMatMul(a.toFloats(), b.toFloats(), 1, 3, 4, 5)));
  Tensor a3 = rnd({2, 3, 4}, 3), b3 = rnd({2, 4, 5}, 4);
  EXPECT_TRUE(near(run1("MatMul", {}, {a3, b3}), {2, 3, 5},
                   naiveMatMul(a3.toFloats(), b3.toFloats(), 2, 3, 4, 5)));
  // Activations [B, S, K] times weights [K, N]: B folds into the rows.
  Tensor w = rnd({4, 6}, 5);
  EXPECT_TRUE(near(run1("MatMul", {}, {a3, w}), {2, 3, 6},
                   naiveMatMul(a3.toFloats(), w.toFloats(), 2, 3, 4, 6, false, true)));
  // A shared left operand against batched right operands.
  EXPECT_TRUE(near(run1("MatMul", {}, {a, b3}), {2, 3, 5},
                   naiveMatMul(a.toFloats(), b3.toFloats(), 2, 3, 4, 5, true, false)));
}

TEST(OnnxMatMul, BatchDimsBroadcast) {
  // [2, 1, 3, 4] x [5, 4, 2] -> [2, 5, 3, 2]
  Tensor a = rnd({2, 1, 3, 4}, 6), b = rnd({5, 4, 2}, 7);
  Tensor y = run1("MatMul", {}, {a, b});
  ASSERT_EQ(y.shape(), (Shape{2, 5, 3, 2}));
  std::vector<float> av = a.toFloats(), bv = b.toFloats();
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j)
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 2; ++c) {
          double s = 0;
          for (int p = 0; p < 4; ++p)
            s += double(av[size_t(i * 12 + r * 4 + p)]) * bv[size_t(j * 8 + p * 2 + c)];
          want.push_back(s);
        }
  EXPECT_TRUE(near(y, {2, 5, 3, 2}, want));
}

TEST(OnnxMatMul, OneDOperands) {
  Tensor v = F({3}, {1, 2, 3}), m = iota({3, 2});
  EXPECT_TRUE(near(run1("MatMul", {}, {v, m}), {2}, {16, 22}));
  EXPECT_TRUE(near(run1("MatMul", {}, {iota({2, 3}), v}), {2}, {8, 26}));
  EXPECT_TRUE(near(run1("MatMul", {}, {v, v}), Shape{}, {14}));
  EXPECT_TRUE(near(run1("MatMul", {}, {v, iota({2, 3, 2})}), {2, 2}, {16, 22, 52, 58}));
  EXPECT_NE(runError("MatMul", {}, {iota({2, 3}), iota({2, 3})}).find("inner dimensions"),
            std::string::npos);
}

TEST(OnnxMatMul, NarrowAndIntegerTypes) {
  Tensor a = rnd({4, 8}, 8), b = rnd({8, 3}, 9);
  Tensor ah = a.astype(DType::kF16), bh = b.astype(DType::kF16);
  Tensor y = run1("MatMul", {}, {ah, bh});
  EXPECT_EQ(y.dtype(), DType::kF16);
  EXPECT_TRUE(near(y, {4, 3}, naiveMatMul(ah.toFloats(), bh.toFloats(), 1, 4, 8, 3), 2e-3));
  Tensor ai = I64({2, 2}, {1, 2, 3, 4}), bi = I64({2, 2}, {int64_t(1) << 40, 1, 1, 1});
  EXPECT_EQ(run1("MatMul", {}, {ai, bi}).toInt64s(),
            (std::vector<int64_t>{(int64_t(1) << 40) + 2, 3, (int64_t(3) << 40) + 4, 7}));
}

TEST(OnnxMatMul, GemmAllAttributes) {
  // transA, transB, alpha, beta and a C that broadcasts from [1, N].
  Tensor a = rnd({3, 4}, 10), b = rnd({5, 3}, 11), c = rnd({1, 5}, 12);
  Tensor y = run1("Gemm",
                  {{"transA", int64_t(1)}, {"transB", int64_t(1)}, {"alpha", 0.25f},
                   {"beta", 0.35f}},
                  {a, b, c});
  std::vector<float> av = a.toFloats(), bv = b.toFloats(), cv = c.toFloats();
  std::vector<double> want;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) {
      double s = 0;
      for (int p = 0; p < 3; ++p)
        s += double(av[size_t(p * 4 + i)]) * bv[size_t(j * 3 + p)];
      want.push_back(0.25 * s + 0.35 * cv[size_t(j)]);
    }
  EXPECT_TRUE(near(y, {4, 5}, want));
  // No C; scalar C.
  EXPECT_TRUE(near(run1("Gemm", {}, {iota({2, 2}), iota({2, 2})}), {2, 2}, {2, 3, 6, 11}));
  EXPECT_TRUE(near(run1("Gemm", {}, {iota({2, 2}), iota({2, 2}), F({}, {1})}), {2, 2},
                   {3, 4, 7, 12}));
  EXPECT_NE(runError("Gemm", {}, {iota({2, 2}), iota({2, 2}), iota({3})}).find("broadcast"),
            std::string::npos);
}
