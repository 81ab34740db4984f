// Reductions, Softmax and CumSum: the ONNX spec examples.
#include "KernelTestUtil.h"

using namespace kt;

namespace {
Tensor specData() { // ReduceMean/ReduceSum examples: shape [3, 2, 2]
  return F({3, 2, 2}, {5, 1, 20, 2, 30, 1, 40, 2, 55, 1, 60, 2});
}
} // namespace

TEST(OnnxReduce, MeanKeepdimsAxesInputOrAttribute) {
  Tensor y = run1("ReduceMean", {{"keepdims", int64_t(1)}}, {specData(), I64({1}, {1})});
  EXPECT_TRUE(near(y, {3, 1, 2}, {12.5, 1.5, 35, 1.5, 57.5, 1.5}));
  Tensor z = run1("ReduceMean", {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t(0)}},
                  {specData()});
  EXPECT_TRUE(near(z, {3, 2}, {12.5, 1.5, 35, 1.5, 57.5, 1.5}));
  EXPECT_TRUE(near(run1("ReduceMean", {{"keepdims", int64_t(1)}}, {specData(), I64({1}, {-2})}),
                   {3, 1, 2}, {12.5, 1.5, 35, 1.5, 57.5, 1.5}));
  // No axes: everything.
  EXPECT_TRUE(near(run1("ReduceMean", {{"keepdims", int64_t(0)}}, {specData()}), Shape{}, {18.25}));
}

TEST(OnnxReduce, SumEmptyAxesAndNoop) {
  Tensor x = specData();
  EXPECT_TRUE(near(run1("ReduceSum", {}, {x, I64({0}, {})}), {1, 1, 1}, {219}));
  Tensor same = run1("ReduceSum", {{"noop_with_empty_axes", int64_t(1)}}, {x, I64({0}, {})});
  EXPECT_TRUE(nearTensor(same, x));
  EXPECT_TRUE(near(run1("ReduceSum", {{"keepdims", int64_t(0)}}, {x, I64({2}, {0, 2})}), {2},
                   {5 + 1 + 30 + 1 + 55 + 1, 20 + 2 + 40 + 2 + 60 + 2}));
  EXPECT_EQ(run1("ReduceSum", {{"keepdims", int64_t(0)}}, {I64({3}, {1, 2, int64_t(1) << 55})})
                .toInt64s()[0],
            (int64_t(1) << 55) + 3);
  EXPECT_NE(runError("ReduceSum", {}, {x, I64({1}, {3})}).find("out of range"),
            std::string::npos);
}

TEST(OnnxReduce, MaxOverNonContiguousAxes) {
  Tensor x = specData();
  EXPECT_TRUE(near(run1("ReduceMax", {{"keepdims", int64_t(1)}}, {x, I64({2}, {0, 2})}),
                   {1, 2, 1}, {55, 60}));
  EXPECT_TRUE(near(run1("ReduceMax", {{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t(0)}},
                        {x}),
                   {3, 2}, {5, 20, 30, 40, 55, 60}));
  EXPECT_TRUE(near(run1("ReduceMin", {{"keepdims", int64_t(0)}}, {x, I64({1}, {0})}), {2, 2},
                   {5, 1, 20, 2}));
  EXPECT_EQ(run1("ArgMax", {{"axis", int64_t(1)}, {"keepdims", int64_t(0)}},
                 {F({2, 3}, {1, 9, 9, 7, 2, 3})})
                .toInt64s(),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(run1("ArgMax", {{"axis", int64_t(1)}, {"select_last_index", int64_t(1)}},
                 {F({2, 3}, {1, 9, 9, 7, 2, 3})})
                .toInt64s(),
            (std::vector<int64_t>{2, 0}));
}

TEST(OnnxReduce, Softmax) {
  EXPECT_TRUE(near(run1("Softmax", {}, {F({1, 3}, {-1, 0, 1})}), {1, 3},
                   {0.09003058, 0.24472848, 0.66524094}));
  // Large values do not overflow; axis 0 of a 2-D tensor.
  EXPECT_TRUE(near(run1("Softmax", {{"axis", int64_t(0)}}, {F({2, 2}, {1000, 0, 1001, 0})}),
                   {2, 2}, {0.26894142, 0.5, 0.73105858, 0.5}));
  Tensor x = rnd({2, 3, 4}, 3);
  Tensor y = run1("Softmax", {{"axis", int64_t(1)}}, {x});
  std::vector<float> xv = x.toFloats();
  std::vector<double> want(24, 0.0);
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 4; ++c) {
      double s = 0;
      for (int b = 0; b < 3; ++b)
        s += std::exp(double(xv[size_t(a * 12 + b * 4 + c)]));
      for (int b = 0; b < 3; ++b)
        want[size_t(a * 12 + b * 4 + c)] = std::exp(double(xv[size_t(a * 12 + b * 4 + c)])) / s;
    }
  EXPECT_TRUE(near(y, {2, 3, 4}, want));
  EXPECT_TRUE(near(run1("LogSoftmax", {}, {F({1, 3}, {-1, 0, 1})}), {1, 3},
                   {-2.40760596, -1.40760596, -0.40760596}));
}

TEST(OnnxReduce, CumSumExclusiveReverse) {
  Tensor x = F({5}, {1, 2, 3, 4, 5});
  Tensor ax = I32({}, {0});
  EXPECT_TRUE(near(run1("CumSum", {}, {x, ax}), {5}, {1, 3, 6, 10, 15}));
  EXPECT_TRUE(near(run1("CumSum", {{"exclusive", int64_t(1)}}, {x, ax}), {5}, {0, 1, 3, 6, 10}));
  EXPECT_TRUE(near(run1("CumSum", {{"reverse", int64_t(1)}}, {x, ax}), {5}, {15, 14, 12, 9, 5}));
  EXPECT_TRUE(near(run1("CumSum", {{"exclusive", int64_t(1)}, {"reverse", int64_t(1)}}, {x, ax}),
                   {5}, {14, 12, 9, 5, 0}));
  Tensor m = F({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(near(run1("CumSum", {}, {m, I64({}, {0})}), {2, 3}, {1, 2, 3, 5, 7, 9}));
  EXPECT_TRUE(near(run1("CumSum", {}, {m, I64({}, {-1})}), {2, 3}, {1, 3, 6, 4, 9, 15}));
  // Position ids from an attention mask: CumSum(mask) - 1.
  EXPECT_EQ(run1("CumSum", {}, {I64({1, 4}, {0, 1, 1, 1}), I64({}, {1})}).toInt64s(),
            (std::vector<int64_t>{0, 1, 2, 3}));
}
