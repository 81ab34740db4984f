//===- TransformerDenseTest.cpp - embedding, linear, activations, MLP, logits ===//
#include "runtime/cpu/transformer/Activation.h"
#include "runtime/cpu/transformer/Embedding.h"
#include "runtime/cpu/transformer/GatedMlp.h"
#include "runtime/cpu/transformer/Linear.h"
#include "runtime/cpu/transformer/Logits.h"
#include "runtime/cpu/transformer/Split.h"

#include "TransformerTestUtil.h"

using namespace tt;
using namespace accel::rt::cpu::transformer;

namespace {

// y[t, o] = sum_i x[t, i] w[o, i] + b[o], in double.
std::vector<float> refLinear(const std::vector<float> &x, const std::vector<float> &w,
                             const std::vector<float> *b, int64_t t, int64_t in,
                             int64_t out) {
  std::vector<float> y(size_t(t * out));
  for (int64_t r = 0; r < t; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double s = b ? (*b)[size_t(o)] : 0.0;
      for (int64_t i = 0; i < in; ++i)
        s += double(x[size_t(r * in + i)]) * w[size_t(o * in + i)];
      y[size_t(r * out + o)] = float(s);
    }
  return y;
}

// The activations in double, from their definitions.
double refAct(ActivationKind k, double x) {
  const double pi = 3.14159265358979323846;
  switch (k) {
  case ActivationKind::kSilu: return x / (1 + std::exp(-x));
  case ActivationKind::kGelu: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  case ActivationKind::kGeluTanh:
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715 * x * x * x)));
  case ActivationKind::kQuickGelu: return x / (1 + std::exp(-1.702 * x));
  case ActivationKind::kRelu: return x > 0 ? x : 0;
  case ActivationKind::kReluSquared: return x > 0 ? x * x : 0;
  case ActivationKind::kSigmoid: return 1 / (1 + std::exp(-x));
  case ActivationKind::kTanh: return std::tanh(x);
  }
  return 0;
}

const ActivationKind kAllKinds[] = {
    ActivationKind::kSilu,      ActivationKind::kGelu, ActivationKind::kGeluTanh,
    ActivationKind::kQuickGelu, ActivationKind::kRelu, ActivationKind::kReluSquared,
    ActivationKind::kSigmoid,   ActivationKind::kTanh};

} // namespace

// --- embedding ----------------------------------------------------------------

TEST(Embedding, LooksUpRowsWithI32AndI64Ids) {
  Tensor table = randomF32({10, 6}, 1);
  std::vector<float> tv = table.toFloats();
  for (const Tensor &ids : {i32({4}, {3, 0, 9, 3}), i64({4}, {3, 0, 9, 3})}) {
    TT_ASSIGN(Tensor y, embedding(table, ids));
    std::vector<float> want;
    for (int id : {3, 0, 9, 3})
      want.insert(want.end(), tv.begin() + id * 6, tv.begin() + id * 6 + 6);
    EXPECT_TRUE(allClose(y, want, {4, 6}, 0));
  }
}

TEST(Embedding, ScaleAndNarrowTable) {
  Tensor table = randomF32({5, 4}, 2).astype(DType::kBF16);
  TT_ASSIGN(Tensor y, embedding(table, i32({2}, {4, 1}), 2.0f));
  EXPECT_EQ(y.dtype(), DType::kBF16);
  std::vector<float> tv = table.toFloats(), want;
  for (int id : {4, 1})
    for (int j = 0; j < 4; ++j)
      want.push_back(2.0f * tv[size_t(id * 4 + j)]); // exact: power of two
  EXPECT_TRUE(allClose(y, want, {2, 4}, 0));
}

TEST(Embedding, BadIdNamesTheIdAndTheVocabulary) {
  Tensor table = randomF32({32, 4}, 3);
  StatusOr<Tensor> y = embedding(table, i64({3}, {1, 32, 2}));
  ASSERT_FALSE(y.isOk());
  EXPECT_EQ(y.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(y.status().message().find("token 1 has id 32"), std::string::npos)
      << y.status().message();
  EXPECT_NE(y.status().message().find("vocabulary of 32 entries"), std::string::npos);
  EXPECT_FALSE(embedding(table, i32({1}, {-1})).isOk());
  EXPECT_FALSE(embedding(table, f32({1}, {1.0f})).isOk());
}

// --- linear -------------------------------------------------------------------

TEST(Linear, MatchesTheSumWithBias) {
  Tensor x = randomF32({7, 13}, 4), w = randomF32({9, 13}, 5), b = randomF32({9}, 6);
  std::vector<float> bv = b.toFloats();
  TT_ASSIGN(Tensor y, linear(x, w, &b));
  EXPECT_TRUE(allClose(y, refLinear(x.toFloats(), w.toFloats(), &bv, 7, 13, 9), {7, 9}));
  TT_ASSIGN(Tensor z, linear(x, w));
  EXPECT_TRUE(allClose(z, refLinear(x.toFloats(), w.toFloats(), nullptr, 7, 13, 9), {7, 9}));
}

TEST(Linear, Bf16WeightsAndF32Result) {
  Tensor x = randomF32({3, 8}, 7).astype(DType::kBF16);
  Tensor w = randomF32({4, 8}, 8).astype(DType::kBF16);
  TT_ASSIGN(Tensor y, linear(x, w, nullptr, DType::kF32));
  EXPECT_EQ(y.dtype(), DType::kF32);
  EXPECT_TRUE(allClose(y, refLinear(x.toFloats(), w.toFloats(), nullptr, 3, 8, 4), {3, 4}));
}

TEST(Linear, QuantisedWeightsAndBadShapesFail) {
  Tensor x = randomF32({2, 8}, 9);
  Tensor q = Tensor::zeros(DType::kI8, {4, 8});
  StatusOr<Tensor> y = linear(x, q);
  ASSERT_FALSE(y.isOk());
  EXPECT_EQ(y.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(y.status().message().find("quantised"), std::string::npos);
  StatusOr<Tensor> s = linear(x, randomF32({4, 7}, 1));
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("must be [out, 8]"), std::string::npos)
      << s.status().message();
  Tensor b = randomF32({3}, 1);
  EXPECT_FALSE(linear(x, randomF32({4, 8}, 1), &b).isOk());
}

// --- activations --------------------------------------------------------------

TEST(Activation, EveryKindMatchesItsDefinition) {
  Tensor x = randomF32({4, 25}, 10, -6, 6);
  std::vector<float> xv = x.toFloats();
  for (ActivationKind k : kAllKinds) {
    TT_ASSIGN(Tensor y, activation(x, k));
    std::vector<float> want(xv.size());
    for (size_t i = 0; i < xv.size(); ++i)
      want[i] = float(refAct(k, xv[i]));
    EXPECT_TRUE(allClose(y, want, {4, 25}, 2e-6)) << activationKindName(k);
    EXPECT_EQ(activationKindFromName(activationKindName(k)), k);
  }
  EXPECT_FALSE(activationKindFromName("swish").has_value());
  // Known values.
  EXPECT_NEAR(activate(ActivationKind::kGelu, 1.0f), 0.8413447f, 1e-6);
  EXPECT_NEAR(activate(ActivationKind::kSilu, 2.0f), 1.7615942f, 1e-6);
}

TEST(GatedAct, GateHalfFirst) {
  Tensor x = randomF32({3, 10}, 11, -3, 3);
  std::vector<float> xv = x.toFloats();
  TT_ASSIGN(Tensor y, gatedAct(x, ActivationKind::kSilu));
  std::vector<float> want;
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 5; ++j)
      want.push_back(float(refAct(ActivationKind::kSilu, xv[size_t(r * 10 + j)]) *
                           xv[size_t(r * 10 + 5 + j)]));
  EXPECT_TRUE(allClose(y, want, {3, 5}, 2e-6));
  EXPECT_FALSE(gatedAct(randomF32({3, 9}, 1), ActivationKind::kSilu).isOk());
}

TEST(GatedMlp, SeparateAndFusedWeightsMatchTheReference) {
  const int64_t t = 5, h = 12, inter = 20;
  Tensor x = randomF32({t, h}, 12), gate = randomF32({inter, h}, 13),
         up = randomF32({inter, h}, 14), down = randomF32({h, inter}, 15);
  std::vector<float> g = refLinear(x.toFloats(), gate.toFloats(), nullptr, t, h, inter);
  std::vector<float> u = refLinear(x.toFloats(), up.toFloats(), nullptr, t, h, inter);
  std::vector<float> a(g.size());
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float(refAct(ActivationKind::kGeluTanh, g[i]) * u[i]);
  std::vector<float> want = refLinear(a, down.toFloats(), nullptr, t, inter, h);

  GatedMlpWeights sep;
  sep.gate = &gate;
  sep.up = &up;
  sep.down = &down;
  TT_ASSIGN(Tensor y, gatedMlp(x, sep, ActivationKind::kGeluTanh));
  EXPECT_TRUE(allClose(y, want, {t, h}, 1e-5));

  std::vector<float> gu = gate.toFloats(), uv = up.toFloats();
  gu.insert(gu.end(), uv.begin(), uv.end());
  Tensor gateUp = f32({2 * inter, h}, gu);
  GatedMlpWeights fused;
  fused.gateUp = &gateUp;
  fused.down = &down;
  TT_ASSIGN(Tensor z, gatedMlp(x, fused, ActivationKind::kGeluTanh));
  EXPECT_TRUE(allClose(z, want, {t, h}, 1e-5));

  GatedMlpWeights both = sep;
  both.gateUp = &gateUp;
  EXPECT_FALSE(gatedMlp(x, both, ActivationKind::kSilu).isOk());
  GatedMlpWeights wrongDown = fused;
  Tensor d2 = randomF32({h, inter + 1}, 1);
  wrongDown.down = &d2;
  EXPECT_FALSE(gatedMlp(x, wrongDown, ActivationKind::kSilu).isOk());
}

// --- logits -------------------------------------------------------------------

TEST(Logits, EveryTokenOrTheLastOfEachSequence) {
  const int64_t t = 6, h = 8, v = 11;
  Tensor hid = randomF32({t, h}, 16), head = randomF32({v, h}, 17), b = randomF32({v}, 18);
  std::vector<float> bv = b.toFloats();
  std::vector<float> all = refLinear(hid.toFloats(), head.toFloats(), &bv, t, h, v);
  LogitsOptions o;
  o.bias = &b;
  TT_ASSIGN(Tensor y, logits(hid, head, o));
  EXPECT_TRUE(allClose(y, all, {t, v}));

  Tensor qsl = i32({4}, {0, 2, 3, 6}); // last tokens: rows 1, 2, 5
  o.queryStartLoc = &qsl;
  o.softcap = 0.5f;
  TT_ASSIGN(Tensor last, logits(hid, head, o));
  std::vector<float> want;
  for (int r : {1, 2, 5})
    for (int64_t j = 0; j < v; ++j)
      want.push_back(float(0.5 * std::tanh(all[size_t(r * v + j)] / 0.5)));
  EXPECT_TRUE(allClose(last, want, {3, v}));
}

TEST(Logits, EmptySequenceUnderSelectLastFails) {
  Tensor hid = randomF32({3, 4}, 1), head = randomF32({5, 4}, 2);
  Tensor qsl = i32({3}, {0, 0, 3});
  LogitsOptions o;
  o.queryStartLoc = &qsl;
  StatusOr<Tensor> y = logits(hid, head, o);
  ASSERT_FALSE(y.isOk());
  EXPECT_NE(y.status().message().find("sequence 0 has no token"), std::string::npos)
      << y.status().message();
  Tensor short_ = i32({2}, {0, 2});
  o.queryStartLoc = &short_;
  EXPECT_FALSE(logits(hid, head, o).isOk());
}

// --- split --------------------------------------------------------------------

TEST(Split, ColumnsAndHeads) {
  Tensor x = randomF32({3, 7}, 19);
  std::vector<float> xv = x.toFloats();
  TT_ASSIGN(std::vector<Tensor> parts, splitColumns(x, {4, 2, 1}));
  ASSERT_EQ(parts.size(), 3u);
  std::vector<float> want;
  for (int r = 0; r < 3; ++r)
    for (int c = 4; c < 6; ++c)
      want.push_back(xv[size_t(r * 7 + c)]);
  EXPECT_TRUE(allClose(parts[1], want, {3, 2}, 0));
  EXPECT_FALSE(splitColumns(x, {4, 2}).isOk());
  TT_ASSIGN(Tensor h, splitHeads(randomF32({2, 12}, 1), 3));
  EXPECT_EQ(h.shape(), (Shape{2, 3, 4}));
  TT_ASSIGN(Tensor m, mergeHeads(h));
  EXPECT_EQ(m.shape(), (Shape{2, 12}));
  EXPECT_FALSE(splitHeads(randomF32({2, 12}, 1), 5).isOk());
}
