// Elementwise kernels: the worked examples of the ONNX operator spec, numpy
// broadcasting, integer exactness, and Cast rounding/saturation.
#include "KernelTestUtil.h"

#include <limits>

using namespace kt;

TEST(OnnxElementwise, AddBroadcastsMultidirectionally) {
  // [2, 1, 3] + [4, 1] -> [2, 4, 3]
  Tensor a = iota({2, 1, 3}), b = iota({4, 1}, 10.0f);
  Tensor y = run1("Add", {}, {a, b});
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k)
        want.push_back(i * 3 + k + j * 10);
  EXPECT_TRUE(near(y, {2, 4, 3}, want));
  // The spec's [3, 4, 5] + [5] and a scalar operand.
  Tensor x = iota({3, 4, 5}), v = iota({5}, 100.0f);
  Tensor z = run1("Sub", {}, {x, v});
  std::vector<double> wz;
  for (int i = 0; i < 60; ++i)
    wz.push_back(i - (i % 5) * 100.0);
  EXPECT_TRUE(near(z, {3, 4, 5}, wz));
  Tensor m = run1("Mul", {}, {x, F({}, {2.0f})});
  EXPECT_EQ(m.shape(), (Shape{3, 4, 5}));
  EXPECT_EQ(m.toFloats()[59], 118.0f);
  EXPECT_NE(runError("Add", {}, {iota({2, 3}), iota({4})}).find("do not broadcast"),
            std::string::npos);
}

TEST(OnnxElementwise, IntegerArithmeticIsExact) {
  Tensor a = I64({3}, {int64_t(1) << 60, -7, 7}), b = I64({3}, {3, 2, -2});
  EXPECT_EQ(run1("Add", {}, {a, b}).toInt64s(),
            (std::vector<int64_t>{(int64_t(1) << 60) + 3, -5, 5}));
  EXPECT_EQ(run1("Div", {}, {a, b}).toInt64s(),
            (std::vector<int64_t>{(int64_t(1) << 60) / 3, -3, -3})); // truncates
  EXPECT_EQ(run1("Mul", {}, {I32({1}, {1 << 30}), I32({1}, {4})}).toInt64s()[0], 0); // wraps
  EXPECT_NE(runError("Div", {}, {I32({2}, {1, 2}), I32({2}, {1, 0})}).find("division by zero"),
            std::string::npos);
  EXPECT_NE(runError("Add", {}, {F({1}, {1}), I64({1}, {1})}).find("same type"),
            std::string::npos);
}

TEST(OnnxElementwise, ModFollowsTheSpec) {
  // mod_mixed_sign_int64: the sign of the divisor.
  Tensor x = I64({6}, {-4, 7, 5, 4, -7, 8}), y = I64({6}, {2, -3, 8, -2, 3, 5});
  EXPECT_EQ(run1("Mod", {}, {x, y}).toInt64s(), (std::vector<int64_t>{0, -2, 5, 0, 2, 3}));
  // fmod=1: the sign of the dividend.
  EXPECT_EQ(run1("Mod", {{"fmod", int64_t(1)}}, {x, y}).toInt64s(),
            (std::vector<int64_t>{0, 1, 5, 0, -1, 3}));
  Tensor xf = F({6}, {-4.3f, 7.2f, 5.0f, 4.3f, -7.2f, 8.0f});
  Tensor yf = F({6}, {2.1f, -3.4f, 8.0f, -2.1f, 3.4f, 5.0f});
  std::vector<double> want;
  for (int i = 0; i < 6; ++i)
    want.push_back(std::fmod(xf.toFloats()[size_t(i)], yf.toFloats()[size_t(i)]));
  EXPECT_TRUE(near(run1("Mod", {{"fmod", int64_t(1)}}, {xf, yf}), {6}, want));
  // fmod=0 on floats: numpy's mod, the sign of the divisor.
  EXPECT_TRUE(near(run1("Mod", {}, {xf, yf}), {6}, {2.0, -3.0, 5.0, -2.0, 3.0, 3.0}, 1e-5));
  EXPECT_NE(runError("Mod", {}, {I32({1}, {1}), I32({1}, {0})}).find("division by zero"),
            std::string::npos);
}

TEST(OnnxElementwise, PowMixesTypes) {
  EXPECT_TRUE(near(run1("Pow", {}, {F({3}, {1, 2, 3}), F({3}, {4, 5, 6})}), {3}, {1, 32, 729}));
  EXPECT_TRUE(near(run1("Pow", {}, {F({3}, {1, 2, 3}), I64({}, {2})}), {3}, {1, 4, 9}));
  EXPECT_TRUE(near(run1("Pow", {}, {F({2}, {4, 9}), F({1}, {0.5f})}), {2}, {2, 3}));
  EXPECT_EQ(run1("Pow", {}, {I64({3}, {2, 3, -2}), I64({3}, {62, 3, 3})}).toInt64s(),
            (std::vector<int64_t>{int64_t(1) << 62, 27, -8}));
}

TEST(OnnxElementwise, VariadicMaxMinSumMean) {
  Tensor a = F({3}, {3, 2, 1}), b = F({3}, {1, 4, 4}), c = F({3}, {2, 5, 3});
  EXPECT_TRUE(near(run1("Max", {}, {a, b, c}), {3}, {3, 5, 4}));
  EXPECT_TRUE(near(run1("Min", {}, {a, b, c}), {3}, {1, 2, 1}));
  EXPECT_TRUE(near(run1("Sum", {}, {a, b, c}), {3}, {6, 11, 8}));
  EXPECT_TRUE(near(run1("Mean", {}, {a, b, c}), {3}, {2, 11.0 / 3, 8.0 / 3}));
  EXPECT_TRUE(near(run1("Max", {}, {a}), {3}, {3, 2, 1}));
  Tensor n = run1("Max", {}, {F({2}, {NAN, 1}), F({1}, {0})});
  EXPECT_TRUE(std::isnan(n.toFloats()[0]));
  // Broadcast across operands.
  EXPECT_TRUE(near(run1("Min", {}, {F({2, 1}, {1, 5}), F({3}, {0, 2, 6})}), {2, 3},
                   {0, 1, 1, 0, 2, 5}));
}

TEST(OnnxElementwise, UnaryMath) {
  Tensor x = F({3}, {-1, 0, 1});
  EXPECT_TRUE(near(run1("Gelu", {}, {x}), {3}, {-0.15865526, 0, 0.8413447}));
  EXPECT_TRUE(near(run1("Gelu", {{"approximate", std::string("tanh")}}, {x}), {3},
                   {-0.15880801, 0, 0.841192}));
  EXPECT_TRUE(near(run1("Sigmoid", {}, {x}), {3}, {0.26894142, 0.5, 0.73105858}));
  EXPECT_TRUE(near(run1("Sigmoid", {}, {F({2}, {-100, 100})}), {2}, {3.7200759e-44, 1}));
  EXPECT_TRUE(near(run1("Relu", {}, {x}), {3}, {0, 0, 1}));
  EXPECT_TRUE(near(run1("Erf", {}, {x}), {3}, {-0.84270079, 0, 0.84270079}));
  EXPECT_TRUE(near(run1("Tanh", {}, {x}), {3}, {-0.76159416, 0, 0.76159416}));
  EXPECT_TRUE(near(run1("Exp", {}, {x}), {3}, {0.36787944, 1, 2.71828183}));
  EXPECT_TRUE(near(run1("Sqrt", {}, {F({2}, {4, 2})}), {2}, {2, 1.41421356}));
  EXPECT_TRUE(near(run1("Reciprocal", {}, {F({2}, {-4, 2})}), {2}, {-0.25, 0.5}));
  EXPECT_TRUE(near(run1("Floor", {}, {F({3}, {-1.5f, 1.2f, 2.0f})}), {3}, {-2, 1, 2}));
  EXPECT_TRUE(near(run1("Ceil", {}, {F({3}, {-1.5f, 1.2f, 2.0f})}), {3}, {-1, 2, 2}));
  EXPECT_TRUE(near(run1("Round", {}, {F({4}, {0.5f, 1.5f, 2.5f, -2.5f})}), {4}, {0, 2, 2, -2}));
  EXPECT_TRUE(near(run1("Sin", {}, {x}), {3}, {-0.84147098, 0, 0.84147098}));
  EXPECT_TRUE(near(run1("Cos", {}, {x}), {3}, {0.54030231, 1, 0.54030231}));
  EXPECT_TRUE(near(run1("Log", {}, {F({2}, {1, 2.718281828f})}), {2}, {0, 1}));
  EXPECT_EQ(run1("Neg", {}, {I32({2}, {-3, 4})}).toInt64s(), (std::vector<int64_t>{3, -4}));
  EXPECT_EQ(run1("Abs", {}, {I64({2}, {-3, 4})}).toInt64s(), (std::vector<int64_t>{3, 4}));
  EXPECT_NE(runError("Sqrt", {}, {I64({1}, {4})}).find("floating-point"), std::string::npos);
  // bf16 computes in f32 and rounds back.
  Tensor h = run1("Exp", {}, {D(DType::kBF16, {1}, {1.0})});
  EXPECT_EQ(h.dtype(), DType::kBF16);
  EXPECT_EQ(h.toDoubles()[0], 2.71875);
}

TEST(OnnxElementwise, ComparisonAndLogic) {
  Tensor a = F({2, 2}, {1, 2, 3, 4}), b = F({2}, {2, 2});
  EXPECT_EQ(run1("Equal", {}, {a, b}).toInt64s(), (std::vector<int64_t>{0, 1, 0, 0}));
  EXPECT_EQ(run1("Greater", {}, {a, b}).toInt64s(), (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(run1("GreaterOrEqual", {}, {a, b}).toInt64s(), (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(run1("Less", {}, {a, b}).toInt64s(), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(run1("LessOrEqual", {}, {a, b}).dtype(), DType::kI1);
  Tensor p = B({4}, {true, true, false, false}), q = B({4}, {true, false, true, false});
  EXPECT_EQ(run1("And", {}, {p, q}).toInt64s(), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(run1("Or", {}, {p, q}).toInt64s(), (std::vector<int64_t>{1, 1, 1, 0}));
  EXPECT_EQ(run1("Xor", {}, {p, q}).toInt64s(), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(run1("Not", {}, {p}).toInt64s(), (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(run1("IsNaN", {}, {F({3}, {NAN, 1, INFINITY})}).toInt64s(),
            (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(run1("Equal", {}, {I64({2}, {5, 6}), I64({}, {6})}).toInt64s(),
            (std::vector<int64_t>{0, 1}));
  EXPECT_NE(runError("And", {}, {a, a}).find("boolean"), std::string::npos);
}

TEST(OnnxElementwise, WhereBroadcastsAllThree) {
  Tensor c = B({2, 2}, {true, false, true, true});
  Tensor x = F({2, 2}, {1, 2, 3, 4}), y = F({2, 2}, {9, 8, 7, 6});
  EXPECT_TRUE(near(run1("Where", {}, {c, x, y}), {2, 2}, {1, 8, 3, 4}));
  // A causal mask from a [S, 1] >= [1, S] comparison, the way exports build it.
  Tensor i = I64({3, 1}, {0, 1, 2}), j = I64({1, 3}, {0, 1, 2});
  Tensor allowed = run1("GreaterOrEqual", {}, {i, j});
  Tensor mask = run1("Where", {}, {allowed, F({}, {0}), F({}, {-INFINITY})});
  EXPECT_TRUE(near(mask, {3, 3},
                   {0, -INFINITY, -INFINITY, 0, 0, -INFINITY, 0, 0, 0}));
  EXPECT_NE(runError("Where", {}, {x, x, y}).find("boolean"), std::string::npos);
}

TEST(OnnxElementwise, ClipAndIdentity) {
  Tensor x = F({3}, {-2, 0, 2});
  EXPECT_TRUE(near(run1("Clip", {}, {x, F({}, {-1}), F({}, {1})}), {3}, {-1, 0, 1}));
  EXPECT_TRUE(near(run1("Clip", {}, {x, Tensor(), F({}, {1})}), {3}, {-2, 0, 1}));
  EXPECT_TRUE(near(run1("Clip", {}, {x}), {3}, {-2, 0, 2}));
  EXPECT_EQ(run1("Clip", {}, {I64({3}, {-5, 3, 9}), I64({}, {0}), I64({}, {4})}).toInt64s(),
            (std::vector<int64_t>{0, 3, 4}));
  Tensor id = run1("Identity", {}, {x});
  EXPECT_EQ(id.rawData(), x.rawData());
}

TEST(OnnxElementwise, CastRoundsAndSaturates) {
  Tensor x = F({5}, {1.0f + 1.0f / 256, 1.0f + 3.0f / 256, 3.0e38f, -500.0f, NAN});
  Tensor bf = run1("Cast", {{"to", int64_t(16)}}, {x});
  EXPECT_EQ(bf.dtype(), DType::kBF16);
  std::vector<double> v = bf.toDoubles();
  EXPECT_EQ(v[0], 1.0);        // tie -> even
  EXPECT_EQ(v[1], 1.015625);   // tie -> even (up)
  EXPECT_NEAR(v[2], 3.0e38, 0.01e38);
  EXPECT_EQ(v[3], -500.0);
  EXPECT_TRUE(std::isnan(v[4]));
  Tensor f8 = run1("Cast", {{"to", int64_t(17)}}, {x});
  v = f8.toDoubles();
  EXPECT_EQ(v[0], 1.0);
  EXPECT_EQ(v[2], 448.0);
  EXPECT_EQ(v[3], -448.0);
  EXPECT_TRUE(std::isnan(v[4]));
  Tensor f8n = run1("Cast", {{"to", int64_t(17)}, {"saturate", int64_t(0)}}, {x});
  v = f8n.toDoubles();
  EXPECT_TRUE(std::isnan(v[2]) && std::isnan(v[3]));
  Tensor e5 = run1("Cast", {{"to", int64_t(19)}, {"saturate", int64_t(0)}}, {x});
  v = e5.toDoubles();
  EXPECT_EQ(v[2], INFINITY);
  EXPECT_EQ(v[3], -512.0);
  EXPECT_EQ(run1("Cast", {{"to", int64_t(7)}}, {F({3}, {2.9f, -2.9f, 0.5f})}).toInt64s(),
            (std::vector<int64_t>{2, -2, 0}));
  EXPECT_EQ(run1("Cast", {{"to", int64_t(9)}}, {F({3}, {2.9f, 0.0f, -0.0f})}).toInt64s(),
            (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(run1("CastLike", {}, {I64({1}, {3}), F({1}, {0})}).dtype(), DType::kF32);
  EXPECT_NE(runError("Cast", {{"to", int64_t(8)}}, {x}).find("STRING"), std::string::npos);
}

TEST(OnnxKernels, DispatchErrorsNameTheOp) {
  std::vector<Tensor> out;
  Status s = runStatus("NoSuchOp", {}, {iota({1})}, out);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("NoSuchOp"), std::string::npos);
  EXPECT_NE(runError("Add", {}, {iota({1})}).find("Add: expects 2 inputs, got 1"),
            std::string::npos);
  EXPECT_NE(runError("Gelu", {{"approximate", int64_t(1)}}, {iota({1})})
                .find("attribute 'approximate' must be a string"),
            std::string::npos);
  EXPECT_TRUE(onnx::isSupported("Attention", ""));
  EXPECT_TRUE(onnx::isSupported("FastGelu", "com.microsoft"));
  EXPECT_FALSE(onnx::isSupported("Conv", ""));
  EXPECT_FALSE(onnx::isSupported("Add", "ai.onnx.ml"));
  EXPECT_GT(onnx::supportedOps().size(), 100u);
}
