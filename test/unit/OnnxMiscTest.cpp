// Constant, EyeLike, OneHot, NonZero, TopK, Einsum and com.microsoft
// MatMulNBits.
#include "KernelTestUtil.h"

using namespace kt;

TEST(OnnxMisc, ConstantForms) {
  EXPECT_TRUE(near(run("Constant", {{"value", F({2}, {1, 2})}}, {})[0], {2}, {1, 2}));
  Tensor f = run("Constant", {{"value_float", 2.5f}}, {})[0];
  EXPECT_EQ(f.rank(), 0);
  EXPECT_EQ(f.toFloats()[0], 2.5f);
  EXPECT_EQ(run("Constant", {{"value_ints", std::vector<int64_t>{3, 4}}}, {})[0].toInt64s(),
            (std::vector<int64_t>{3, 4}));
  EXPECT_NE(runError("Constant", {}, {}).find("required"), std::string::npos);
}

TEST(OnnxMisc, EyeLikeOneHotNonZero) {
  EXPECT_TRUE(near(run1("EyeLike", {{"k", int64_t(1)}}, {iota({3, 4})}), {3, 4},
                   {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  Tensor oh = run1("OneHot", {}, {I64({3}, {0, 2, -1}), I64({}, {3}), F({2}, {0, 5})});
  EXPECT_TRUE(near(oh, {3, 3}, {5, 0, 0, 0, 0, 5, 0, 0, 5}));
  Tensor oh0 = run1("OneHot", {{"axis", int64_t(0)}}, {I64({2}, {1, 7}), I64({}, {3}), F({2}, {0, 1})});
  EXPECT_TRUE(near(oh0, {3, 2}, {0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(run1("NonZero", {}, {F({2, 2}, {1, 0, 1, 1})}).toInt64s(),
            (std::vector<int64_t>{0, 1, 1, 0, 0, 1}));
}

TEST(OnnxMisc, TopKLargestSmallestTies) {
  Tensor x = F({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 11, 10, 9, 8});
  std::vector<Tensor> top = run("TopK", {}, {x, I64({1}, {3})}, 2);
  EXPECT_TRUE(near(top[0], {3, 3}, {3, 2, 1, 7, 6, 5, 11, 10, 9}));
  EXPECT_EQ(top[1].toInt64s(), (std::vector<int64_t>{3, 2, 1, 3, 2, 1, 0, 1, 2}));
  std::vector<Tensor> low = run("TopK", {{"largest", int64_t(0)}, {"axis", int64_t(0)}},
                                {x, I64({1}, {1})}, 2);
  EXPECT_TRUE(near(low[0], {1, 4}, {0, 1, 2, 3}));
  std::vector<Tensor> ties = run("TopK", {}, {F({4}, {1, 3, 3, 2}), I64({1}, {2})}, 2);
  EXPECT_EQ(ties[1].toInt64s(), (std::vector<int64_t>{1, 2}));
}

TEST(OnnxMisc, Einsum) {
  Tensor a = rnd({2, 3, 4}, 91), b = rnd({2, 4, 5}, 92);
  Tensor bmm = run1("Einsum", {{"equation", std::string("bij,bjk->bik")}}, {a, b});
  Tensor ref = run1("MatMul", {}, {a, b});
  EXPECT_TRUE(nearTensor(bmm, ref));
  // The outer product rotary tables are built with (HF "i,j->ij").
  Tensor t = F({3}, {0, 1, 2}), f = F({2}, {1, 0.5f});
  EXPECT_TRUE(near(run1("Einsum", {{"equation", std::string("i,j->ij")}}, {t, f}), {3, 2},
                   {0, 0, 1, 0.5, 2, 1}));
  // Transpose, trace (diagonal), implicit output, ellipsis.
  EXPECT_EQ(run1("Einsum", {{"equation", std::string("ij->ji")}}, {iota({2, 3})}).shape(),
            (Shape{3, 2}));
  EXPECT_TRUE(near(run1("Einsum", {{"equation", std::string("ii")}}, {iota({3, 3})}), Shape{},
                   {12}));
  EXPECT_TRUE(nearTensor(run1("Einsum", {{"equation", std::string("...ij,...jk")}}, {a, b}), ref));
  EXPECT_NE(runError("Einsum", {{"equation", std::string("ij,jk->ik")}}, {iota({2, 3}), iota({4, 2})})
                .find("sizes"),
            std::string::npos);
}

TEST(OnnxMisc, MatMulNBitsDequantisesBlocks) {
  // N = 2 rows, K = 4, block 2 (two blocks), 4 bits: row n, k-th weight.
  // Packed low nibble first; zero points 8 by default.
  const std::vector<int> q = {9, 10, 7, 8, 0, 15, 8, 8};   // [2, 4]
  std::vector<uint8_t> packed;
  for (size_t i = 0; i < q.size(); i += 2)
    packed.push_back(uint8_t(q[i] | (q[i + 1] << 4)));
  Tensor bq = Tensor::fromVector<uint8_t>({2, 2, 1}, packed).value();
  Tensor scales = F({4}, {0.5f, 1, 2, 0.25f});
  Tensor a = F({1, 4}, {1, 2, 3, 4});
  AttrMap at{{"K", int64_t(4)}, {"N", int64_t(2)}, {"bits", int64_t(4)}, {"block_size", int64_t(2)}};
  // W row 0: (9-8)*.5, (10-8)*.5, (7-8)*1, (8-8)*1 = .5, 1, -1, 0 -> 1*.5+2*1-3 = -0.5
  // W row 1: (0-8)*2, (15-8)*2, 0, 0 = -16, 14 -> -16 + 28 = 12
  EXPECT_TRUE(near(run("MatMulNBits", at, {a, bq, scales}, 1, "com.microsoft")[0], {1, 2},
                   {-0.5, 12}));
  // Packed zero points: row 0 blocks (9, 7), row 1 blocks (0, 8).
  Tensor zp = Tensor::fromVector<uint8_t>({2}, {uint8_t(9 | (7 << 4)), uint8_t(0 | (8 << 4))}).value();
  // W row 0: 0, .5, 0, 1 -> 1 + 4 = 5; row 1: 0, 30, 0, 0 -> 60
  EXPECT_TRUE(near(run("MatMulNBits", at, {a, bq, scales, zp}, 1, "com.microsoft")[0], {1, 2},
                   {5, 60}));
}
