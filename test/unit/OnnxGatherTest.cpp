// Gather, GatherElements, GatherND (batch_dims), ScatterND, ScatterElements.
#include "KernelTestUtil.h"

using namespace kt;

TEST(OnnxGather, GatherAxisAndNegativeIndices) {
  Tensor data = F({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
  EXPECT_TRUE(near(run1("Gather", {}, {data, I64({2, 2}, {0, 1, 1, 2})}), {2, 2, 2},
                   {1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7}));
  Tensor d3 = F({3, 3}, {1.0f, 1.2f, 1.9f, 2.3f, 3.4f, 3.9f, 4.5f, 5.7f, 5.9f});
  EXPECT_TRUE(near(run1("Gather", {{"axis", int64_t(1)}}, {d3, I64({1, 2}, {0, 2})}), {3, 1, 2},
                   {1.0, 1.9, 2.3, 3.9, 4.5, 5.9}));
  EXPECT_TRUE(near(run1("Gather", {}, {iota({10}), I32({3}, {0, -9, -10})}), {3}, {0, 1, 0}));
  // A scalar index drops the axis (an embedding lookup of one token).
  EXPECT_TRUE(near(run1("Gather", {}, {data, I64({}, {2})}), {2}, {4.5, 5.7}));
  EXPECT_NE(runError("Gather", {}, {data, I64({1}, {3})}).find("out of range"),
            std::string::npos);
}

TEST(OnnxGather, GatherElements) {
  EXPECT_TRUE(near(run1("GatherElements", {{"axis", int64_t(1)}},
                        {F({2, 2}, {1, 2, 3, 4}), I64({2, 2}, {0, 0, 1, 0})}),
                   {2, 2}, {1, 1, 4, 3}));
  EXPECT_TRUE(near(run1("GatherElements", {},
                        {F({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), I64({2, 3}, {1, 2, 0, 2, 0, 0})}),
                   {2, 3}, {4, 8, 3, 7, 2, 3}));
  EXPECT_TRUE(near(run1("GatherElements", {},
                        {F({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), I32({2, 3}, {-1, -2, 0, -2, 0, 0})}),
                   {2, 3}, {7, 5, 3, 4, 2, 3}));
}

TEST(OnnxGather, GatherNDSpecExamples) {
  EXPECT_EQ(run1("GatherND", {}, {I32({2, 2}, {0, 1, 2, 3}), I64({2, 2}, {0, 0, 1, 1})}).toInt64s(),
            (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(near(run1("GatherND", {}, {iota({2, 2}), I64({2, 1}, {1, 0})}), {2, 2}, {2, 3, 0, 1}));
  Tensor d = iota({2, 2, 2});
  EXPECT_TRUE(near(run1("GatherND", {}, {d, I64({2, 2}, {0, 1, 1, 0})}), {2, 2}, {2, 3, 4, 5}));
  EXPECT_TRUE(near(run1("GatherND", {}, {d, I64({2, 1, 2}, {0, 1, 1, 0})}), {2, 1, 2},
                   {2, 3, 4, 5}));
  // batch_dims = 1
  EXPECT_TRUE(near(run1("GatherND", {{"batch_dims", int64_t(1)}}, {d, I64({2, 1}, {1, 0})}),
                   {2, 2}, {2, 3, 4, 5}));
  // batch_dims = 1 with full index tuples: one element per batch row.
  EXPECT_TRUE(near(run1("GatherND", {{"batch_dims", int64_t(1)}},
                        {d, I64({2, 2, 2}, {0, 1, 1, 1, 1, 0, 0, 0})}),
                   {2, 2}, {1, 3, 6, 4}));
  EXPECT_NE(runError("GatherND", {}, {d, I64({1, 2}, {2, 0})}).find("out of range"),
            std::string::npos);
}

TEST(OnnxGather, ScatterND) {
  Tensor data = F({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_TRUE(near(run1("ScatterND", {}, {data, I64({4, 1}, {4, 3, 1, 7}), F({4}, {9, 10, 11, 12})}),
                   {8}, {1, 11, 3, 10, 9, 6, 7, 12}));
  // The spec's slice example: [4, 4, 4] data, whole [4, 4] slices replaced.
  std::vector<float> base = {1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1};
  std::vector<float> dv;
  for (int i = 0; i < 4; ++i)
    dv.insert(dv.end(), base.begin(), base.end());
  std::vector<float> up = iota({2, 4, 4}, 1.0f, 100.0f).toFloats();
  Tensor y = run1("ScatterND", {}, {F({4, 4, 4}, dv), I64({2, 1}, {0, 2}), F({2, 4, 4}, up)});
  std::vector<float> got = y.toFloats();
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(got[size_t(i)], up[size_t(i)]);
    EXPECT_EQ(got[size_t(16 + i)], base[size_t(i)]);
    EXPECT_EQ(got[size_t(32 + i)], up[size_t(16 + i)]);
  }
  EXPECT_TRUE(near(run1("ScatterND", {{"reduction", std::string("add")}},
                        {data, I64({2, 1}, {0, 0}), F({2}, {5, 6})}),
                   {8}, {12, 2, 3, 4, 5, 6, 7, 8}));
  // The input is not modified.
  EXPECT_EQ(data.toFloats()[0], 1.0f);
}

TEST(OnnxGather, ScatterElements) {
  EXPECT_TRUE(near(run1("ScatterElements", {{"axis", int64_t(1)}},
                        {F({1, 5}, {1, 2, 3, 4, 5}), I64({1, 2}, {1, 3}), F({1, 2}, {1.1f, 2.1f})}),
                   {1, 5}, {1, 1.1, 3, 2.1, 5}));
  EXPECT_TRUE(near(run1("ScatterElements", {},
                        {Tensor::zeros(DType::kF32, {3, 3}), I64({2, 3}, {1, 0, 2, 0, 2, 1}),
                         F({2, 3}, {1, 1.1f, 1.2f, 2, 2.1f, 2.2f})}),
                   {3, 3}, {2, 1.1, 0, 1, 0, 2.2, 0, 2.1, 1.2}));
}
