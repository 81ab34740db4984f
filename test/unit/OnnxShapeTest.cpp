// Shape manipulation: the ONNX spec examples (Reshape 0/-1, Slice with
// negative steps and clamping, Split, Trilu, ...).
#include "KernelTestUtil.h"

#include <limits>

using namespace kt;

namespace {
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

/// Python's slice(start, stop, step).indices(dim): the reference for Slice.
std::vector<int64_t> pyRange(int64_t start, int64_t stop, int64_t step, int64_t dim) {
  auto adjust = [&](int64_t v, bool isStart) {
    if (v < 0) {
      v = v < -dim ? (step < 0 ? -1 : 0) : v + dim;
    } else if (v >= dim) {
      v = step < 0 ? dim - 1 : dim;
    }
    (void)isStart;
    return v;
  };
  int64_t s = adjust(start, true), e = adjust(stop, false);
  std::vector<int64_t> r;
  if (step > 0)
    for (int64_t i = s; i < e; i += step)
      r.push_back(i);
  else
    for (int64_t i = s; i > e; i += step)
      r.push_back(i);
  return r;
}

/// Slices a [20, 10, 5] iota with per-axis python ranges.
void checkSlice(const std::vector<int64_t> &starts, const std::vector<int64_t> &ends,
                const std::vector<int64_t> &axes, const std::vector<int64_t> &steps) {
  Tensor x = iota({20, 10, 5});
  const int64_t dims[3] = {20, 10, 5};
  std::vector<std::vector<int64_t>> idx(3);
  for (int d = 0; d < 3; ++d)
    idx[size_t(d)] = pyRange(0, kMax, 1, dims[d]);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a = axes.empty() ? int64_t(i) : axes[i];
    if (a < 0)
      a += 3;
    idx[size_t(a)] = pyRange(starts[i], ends[i], steps.empty() ? 1 : steps[i], dims[a]);
  }
  std::vector<double> want;
  for (int64_t i : idx[0])
    for (int64_t j : idx[1])
      for (int64_t k : idx[2])
        want.push_back(double(i * 50 + j * 5 + k));
  std::vector<Tensor> in = {x, I64({int64_t(starts.size())}, starts),
                            I64({int64_t(ends.size())}, ends)};
  in.push_back(axes.empty() ? Tensor() : I64({int64_t(axes.size())}, axes));
  if (!steps.empty())
    in.push_back(I64({int64_t(steps.size())}, steps));
  Tensor y = run1("Slice", {}, in);
  EXPECT_TRUE(near(y, {int64_t(idx[0].size()), int64_t(idx[1].size()), int64_t(idx[2].size())},
                   want))
      << "starts " << shapeToString(starts) << " ends " << shapeToString(ends);
}
} // namespace

TEST(OnnxShape, SliceSpecExamples) {
  checkSlice({0, 0}, {3, 10}, {0, 1}, {1, 1});       // slice
  checkSlice({0, 0, 3}, {20, 10, 4}, {}, {});          // slice_default_axes
  checkSlice({1}, {kMax}, {1}, {1});                   // slice_end_out_of_bounds
  checkSlice({1000}, {1000}, {1}, {1});                // slice_start_out_of_bounds
  checkSlice({0}, {-1}, {1}, {1});                     // slice_neg
  checkSlice({20, 10, 4}, {0, 0, 1}, {0, 1, 2}, {-1, -3, -2}); // slice_neg_steps
  checkSlice({0, 0, 3}, {20, 10, 4}, {0, -2, -1}, {}); // slice_negative_axes
  checkSlice({-1}, {kMin}, {0}, {-1});                 // full reverse
  checkSlice({-100}, {100}, {2}, {3});
  checkSlice({5}, {2}, {0}, {1});                      // empty
  checkSlice({3}, {kMin}, {1}, {kMin});                // the most negative step
}

TEST(OnnxShape, SliceErrors) {
  Tensor x = iota({4});
  EXPECT_NE(runError("Slice", {}, {x, I64({1}, {0}), I64({1}, {2}), I64({1}, {0}), I64({1}, {0})})
                .find("steps must be nonzero"),
            std::string::npos);
  EXPECT_NE(runError("Slice", {}, {x, I64({1}, {0}), I64({1}, {2}), I64({1}, {1})})
                .find("out of range"),
            std::string::npos);
}

TEST(OnnxShape, ReshapeZeroAndMinusOne) {
  Tensor x = iota({2, 3, 4});
  auto shapeOf = [&](std::vector<int64_t> s, int64_t allowzero = 0) {
    return run1("Reshape", {{"allowzero", allowzero}}, {x, I64({int64_t(s.size())}, s)}).shape();
  };
  EXPECT_EQ(shapeOf({4, 2, 3}), (Shape{4, 2, 3}));
  EXPECT_EQ(shapeOf({2, 12}), (Shape{2, 12}));
  EXPECT_EQ(shapeOf({2, 0, 4, 1}), (Shape{2, 3, 4, 1})); // 0 copies the input dim
  EXPECT_EQ(shapeOf({2, -1, 2}), (Shape{2, 6, 2}));
  EXPECT_EQ(shapeOf({-1, 2, 3, 4}), (Shape{1, 2, 3, 4}));
  EXPECT_EQ(shapeOf({0, 0, -1}), (Shape{2, 3, 4}));
  Tensor y = run1("Reshape", {}, {x, I64({1}, {-1})});
  EXPECT_EQ(y.shape(), (Shape{24}));
  EXPECT_EQ(y.rawData(), x.rawData()); // a view
  // allowzero: 0 is a real zero.
  Tensor e = Tensor::zeros(DType::kF32, {0, 3, 4});
  EXPECT_EQ(run1("Reshape", {{"allowzero", int64_t(1)}}, {e, I64({3}, {3, 4, 0})}).shape(),
            (Shape{3, 4, 0}));
  EXPECT_EQ(runError("Reshape", {}, {x, I64({2}, {5, -1})}),
            "Reshape: cannot reshape 24 elements into [5, -1]");
  EXPECT_NE(runError("Reshape", {}, {x, I64({2}, {-1, -1})}).find("more than one -1"),
            std::string::npos);
}

TEST(OnnxShape, ShapeSizeFlatten) {
  Tensor x = iota({3, 4, 5});
  EXPECT_EQ(run1("Shape", {}, {x}).toInt64s(), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(run1("Shape", {{"start", int64_t(1)}}, {x}).toInt64s(), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(run1("Shape", {{"end", int64_t(-1)}}, {x}).toInt64s(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(run1("Shape", {{"start", int64_t(-10)}, {"end", int64_t(10)}}, {x}).toInt64s(),
            (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(run1("Shape", {{"start", int64_t(2)}, {"end", int64_t(1)}}, {x}).numElements(), 0);
  EXPECT_EQ(run1("Size", {}, {x}).toInt64s()[0], 60);
  EXPECT_EQ(run1("Flatten", {{"axis", int64_t(2)}}, {x}).shape(), (Shape{12, 5}));
  EXPECT_EQ(run1("Flatten", {{"axis", int64_t(0)}}, {x}).shape(), (Shape{1, 60}));
}

TEST(OnnxShape, TransposeConcatSplit) {
  Tensor x = iota({2, 3, 4});
  Tensor t = run1("Transpose", {{"perm", std::vector<int64_t>{1, 2, 0}}}, {x});
  ASSERT_EQ(t.shape(), (Shape{3, 4, 2}));
  EXPECT_EQ(t.toFloats()[size_t(1 * 8 + 2 * 2 + 1)], float(1 * 12 + 1 * 4 + 2));
  EXPECT_EQ(run1("Transpose", {}, {x}).shape(), (Shape{4, 3, 2}));
  Tensor c = run1("Concat", {{"axis", int64_t(-1)}}, {iota({2, 2}), iota({2, 1}, 1, 10)});
  EXPECT_TRUE(near(c, {2, 3}, {0, 1, 10, 2, 3, 11}));
  EXPECT_TRUE(near(run1("Concat", {{"axis", int64_t(0)}}, {iota({1, 2}), iota({0, 2}), iota({1, 2}, 1, 5)}),
                   {2, 2}, {0, 1, 5, 6}));
  // Split: equal parts, explicit sizes, num_outputs with a short last part.
  Tensor v = F({6}, {1, 2, 3, 4, 5, 6});
  std::vector<Tensor> eq = run("Split", {}, {v}, 3);
  EXPECT_TRUE(near(eq[0], {2}, {1, 2}));
  EXPECT_TRUE(near(eq[2], {2}, {5, 6}));
  std::vector<Tensor> sz = run("Split", {}, {v, I64({2}, {2, 4})}, 2);
  EXPECT_TRUE(near(sz[1], {4}, {3, 4, 5, 6}));
  std::vector<Tensor> no = run("Split", {{"num_outputs", int64_t(4)}}, {iota({7})}, 4);
  EXPECT_EQ(no[0].shape(), (Shape{2}));
  EXPECT_TRUE(near(no[3], {1}, {6}));
  std::vector<Tensor> ax = run("Split", {{"axis", int64_t(1)}}, {iota({2, 6})}, 2);
  EXPECT_TRUE(near(ax[1], {2, 3}, {3, 4, 5, 9, 10, 11}));
  EXPECT_NE(runError("Split", {}, {v, I64({2}, {2, 3})}, 2).find("add up to 5"),
            std::string::npos);
}

TEST(OnnxShape, SqueezeUnsqueeze) {
  Tensor x = iota({1, 3, 1, 5});
  EXPECT_EQ(run1("Squeeze", {}, {x}).shape(), (Shape{3, 5}));
  EXPECT_EQ(run1("Squeeze", {}, {x, I64({1}, {-2})}).shape(), (Shape{1, 3, 5}));
  EXPECT_EQ(run1("Squeeze", {{"axes", std::vector<int64_t>{0}}}, {x}).shape(), (Shape{3, 1, 5}));
  EXPECT_NE(runError("Squeeze", {}, {x, I64({1}, {1})}).find("not 1"), std::string::npos);
  Tensor y = iota({3, 4, 5});
  EXPECT_EQ(run1("Unsqueeze", {}, {y, I64({2}, {0, 4})}).shape(), (Shape{1, 3, 4, 5, 1}));
  EXPECT_EQ(run1("Unsqueeze", {}, {y, I64({1}, {-1})}).shape(), (Shape{3, 4, 5, 1}));
  EXPECT_EQ(run1("Unsqueeze", {{"axes", std::vector<int64_t>{1}}}, {y}).shape(),
            (Shape{3, 1, 4, 5}));
  EXPECT_EQ(run1("Unsqueeze", {}, {F({}, {1}), I64({1}, {0})}).shape(), (Shape{1}));
}

TEST(OnnxShape, ExpandTileRangeConstantOfShape) {
  Tensor e = run1("Expand", {}, {F({3, 1}, {1, 2, 3}), I64({3}, {2, 1, 6})});
  ASSERT_EQ(e.shape(), (Shape{2, 3, 6}));
  EXPECT_EQ(e.toFloats()[6], 2.0f);
  EXPECT_EQ(run1("Expand", {}, {F({3, 1}, {1, 2, 3}), I64({2}, {1, 1})}).shape(), (Shape{3, 1}));
  EXPECT_TRUE(near(run1("Tile", {}, {F({2, 2}, {0, 1, 2, 3}), I64({2}, {2, 2})}), {4, 4},
                   {0, 1, 0, 1, 2, 3, 2, 3, 0, 1, 0, 1, 2, 3, 2, 3}));
  EXPECT_EQ(run1("Range", {}, {I64({}, {3}), I64({}, {9}), I64({}, {3})}).toInt64s(),
            (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(run1("Range", {}, {I32({}, {10}), I32({}, {4}), I32({}, {-2})}).toInt64s(),
            (std::vector<int64_t>{10, 8, 6}));
  EXPECT_TRUE(near(run1("Range", {}, {F({}, {1}), F({}, {2}), F({}, {0.3f})}), {4},
                   {1, 1.3, 1.6, 1.9}));
  EXPECT_EQ(run1("Range", {}, {I64({}, {5}), I64({}, {1}), I64({}, {1})}).numElements(), 0);
  AttrMap one{{"value", I64({1}, {1})}};
  Tensor c = run1("ConstantOfShape", one, {I64({2}, {2, 3})});
  EXPECT_EQ(c.dtype(), DType::kI64);
  EXPECT_EQ(c.toInt64s(), (std::vector<int64_t>(6, 1)));
  Tensor z = run1("ConstantOfShape", {}, {I64({1}, {3})});
  EXPECT_EQ(z.dtype(), DType::kF32);
  EXPECT_EQ(z.toFloats(), (std::vector<float>(3, 0.0f)));
  EXPECT_EQ(run1("ConstantOfShape", one, {I64({0}, {})}).rank(), 0);
}

TEST(OnnxShape, TriluSpecExamples) {
  Tensor x = F({4, 5}, {4, 7, 3, 7, 9, 1, 2, 8, 6, 9, 9, 4, 0, 8, 7, 4, 3, 4, 2, 4});
  EXPECT_TRUE(near(run1("Trilu", {}, {x}), {4, 5},
                   {4, 7, 3, 7, 9, 0, 2, 8, 6, 9, 0, 0, 0, 8, 7, 0, 0, 0, 2, 4}));
  EXPECT_TRUE(near(run1("Trilu", {}, {x, I64({}, {1})}), {4, 5},
                   {0, 7, 3, 7, 9, 0, 0, 8, 6, 9, 0, 0, 0, 8, 7, 0, 0, 0, 0, 4}));
  EXPECT_TRUE(near(run1("Trilu", {}, {x, I64({}, {-1})}), {4, 5},
                   {4, 7, 3, 7, 9, 1, 2, 8, 6, 9, 0, 4, 0, 8, 7, 0, 0, 4, 2, 4}));
  EXPECT_TRUE(near(run1("Trilu", {{"upper", int64_t(0)}}, {x}), {4, 5},
                   {4, 0, 0, 0, 0, 1, 2, 0, 0, 0, 9, 4, 0, 0, 0, 4, 3, 4, 2, 0}));
  EXPECT_TRUE(near(run1("Trilu", {{"upper", int64_t(0)}}, {x, I64({}, {-7})}), {4, 5},
                   std::vector<double>(20, 0.0)));
  // Batched: a causal mask from ones.
  Tensor ones = run1("ConstantOfShape", {{"value", F({1}, {1})}}, {I64({3}, {2, 3, 3})});
  Tensor low = run1("Trilu", {{"upper", int64_t(0)}}, {ones});
  EXPECT_EQ(low.toFloats(),
            (std::vector<float>{1, 0, 0, 1, 1, 0, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 1}));
}

TEST(OnnxShape, Pad) {
  Tensor x = F({3, 2}, {1, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
  EXPECT_TRUE(near(run1("Pad", {}, {x, I64({4}, {0, 2, 0, 0})}), {3, 4},
                   {0, 0, 1, 1.2, 0, 0, 2.3, 3.4, 0, 0, 4.5, 5.7}));
  EXPECT_TRUE(near(run1("Pad", {{"mode", std::string("reflect")}}, {x, I64({4}, {0, 2, 0, 0})}),
                   {3, 4}, {1, 1.2, 1, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7, 4.5, 5.7}));
  EXPECT_TRUE(near(run1("Pad", {{"mode", std::string("edge")}}, {x, I64({4}, {0, 2, 0, 0})}),
                   {3, 4}, {1, 1, 1, 1.2, 2.3, 2.3, 2.3, 3.4, 4.5, 4.5, 4.5, 5.7}));
  EXPECT_TRUE(near(run1("Pad", {}, {x, I64({2}, {1, -1}), F({}, {7}), I64({1}, {0})}), {3, 2},
                   {7, 7, 1, 1.2, 2.3, 3.4}));
}
