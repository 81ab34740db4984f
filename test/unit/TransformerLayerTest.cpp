//===- TransformerLayerTest.cpp - a tiny Llama block, end to end ----------===//
//
// A random one-layer Llama-style model (embedding, rms_norm, q/k/v
// projections, rotary, paged GQA attention, o projection, add_rms_norm,
// SiLU gated MLP, residual, final norm, lm head) run through the CPU
// kernels:
//   (a) one prefill step of 10 tokens,
//   (b) token by token through the paged KV cache,
//   (c) chunked prefill mixed with another sequence's steps in ragged
//       batches, logits of each sequence's last token only,
// all equal, and (a) equal to the same model written as plain loops.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/transformer/Activation.h"
#include "runtime/cpu/transformer/Embedding.h"
#include "runtime/cpu/transformer/GatedMlp.h"
#include "runtime/cpu/transformer/Linear.h"
#include "runtime/cpu/transformer/Logits.h"
#include "runtime/cpu/transformer/Norm.h"
#include "runtime/cpu/transformer/PagedAttention.h"
#include "runtime/cpu/transformer/Residual.h"
#include "runtime/cpu/transformer/Rotary.h"
#include "runtime/cpu/transformer/Split.h"

#include "TransformerTestUtil.h"

using namespace tt;
using namespace accel::rt::kv;
using namespace accel::rt::cpu::transformer;

namespace {

constexpr int64_t kVocab = 37, kHidden = 32, kHeads = 4, kKvHeads = 2, kHeadDim = 8,
                  kInter = 48;
constexpr float kEps = 1e-6f;
constexpr double kTheta = 10000.0;

struct TinyLlama {
  Tensor embed = randomF32({kVocab, kHidden}, 1);
  Tensor ln1 = randomF32({kHidden}, 2, 0.5f, 1.5f);
  Tensor wq = randomF32({kHeads * kHeadDim, kHidden}, 3, -0.3f, 0.3f);
  Tensor wk = randomF32({kKvHeads * kHeadDim, kHidden}, 4, -0.3f, 0.3f);
  Tensor wv = randomF32({kKvHeads * kHeadDim, kHidden}, 5, -0.3f, 0.3f);
  Tensor wo = randomF32({kHidden, kHeads * kHeadDim}, 6, -0.3f, 0.3f);
  Tensor ln2 = randomF32({kHidden}, 7, 0.5f, 1.5f);
  Tensor gate = randomF32({kInter, kHidden}, 8, -0.3f, 0.3f);
  Tensor up = randomF32({kInter, kHidden}, 9, -0.3f, 0.3f);
  Tensor down = randomF32({kHidden, kInter}, 10, -0.3f, 0.3f);
  Tensor lnf = randomF32({kHidden}, 11, 0.5f, 1.5f);
  Tensor lmHead = randomF32({kVocab, kHidden}, 12);
};

std::unique_ptr<BlockPool> makePool() {
  KVCacheConfig c;
  c.numKvHeads = kKvHeads;
  c.headDim = kHeadDim;
  c.blockSize = 4;
  c.numBlocks = 32;
  return std::move(BlockPool::create(c).value());
}

/// One engine step of the model through the kernels; logits of every token,
/// or of each sequence's last token with selectLast.
StatusOr<Tensor> forward(const TinyLlama &m, const std::vector<int32_t> &ids,
                         BlockPool &pool, const StepMetadata &md, bool selectLast) {
#define TRY(lhs, expr)                                                         \
  {                                                                            \
    auto _r = (expr);                                                          \
    if (!_r.isOk())                                                            \
      return _r.status();                                                      \
    lhs = std::move(_r).value();                                               \
  }
  const int64_t t = int64_t(ids.size());
  Tensor h, n, q, k, v, o;
  TRY(h, embedding(m.embed, i32({t}, ids)));
  TRY(n, rmsNorm(h, m.ln1, kEps));
  TRY(q, linear(n, m.wq));
  TRY(k, linear(n, m.wk));
  TRY(v, linear(n, m.wv));
  TRY(q, splitHeads(q, kHeads));
  TRY(k, splitHeads(k, kKvHeads));
  TRY(v, splitHeads(v, kKvHeads));
  RotaryParams rp;
  rp.theta = kTheta;
  TRY(q, rotary(q, md.positions, rp));
  TRY(k, rotary(k, md.positions, rp));
  PagedAttentionParams ap;
  ap.scale = float(1.0 / std::sqrt(double(kHeadDim)));
  TRY(o, attention(q, k, v, pool, md, ap));
  TRY(o, mergeHeads(o));
  TRY(o, linear(o, m.wo));
  AddRmsNormResult r;
  TRY(r, addRmsNorm(o, h, m.ln2, kEps));
  GatedMlpWeights w;
  w.gate = &m.gate;
  w.up = &m.up;
  w.down = &m.down;
  Tensor mlp, h2, f;
  TRY(mlp, gatedMlp(r.normed, w, ActivationKind::kSilu));
  TRY(h2, residualAdd(r.sum, mlp));
  TRY(f, rmsNorm(h2, m.lnf, kEps));
  LogitsOptions lo;
  if (selectLast)
    lo.queryStartLoc = &md.queryStartLoc;
  return logits(f, m.lmHead, lo);
#undef TRY
}

// ---- The same model as plain loops over a dense causal context (double) ----

using Mat = std::vector<double>; // row-major

Mat vec(const Tensor &t) {
  std::vector<float> f = t.toFloats();
  return Mat(f.begin(), f.end());
}
Mat matmulT(const Mat &x, const Mat &w, int64_t rows, int64_t in, int64_t out) {
  Mat y(size_t(rows * out), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < in; ++i)
        y[size_t(r * out + o)] += x[size_t(r * in + i)] * w[size_t(o * in + i)];
  return y;
}
Mat rms(const Mat &x, const Mat &w, int64_t rows, int64_t d) {
  Mat y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < d; ++i)
      ss += x[size_t(r * d + i)] * x[size_t(r * d + i)];
    const double inv = 1.0 / std::sqrt(ss / double(d) + kEps);
    for (int64_t i = 0; i < d; ++i)
      y[size_t(r * d + i)] = x[size_t(r * d + i)] * inv * w[size_t(i)];
  }
  return y;
}
void rope(Mat &x, int64_t rows, int64_t heads) {
  const int64_t half = kHeadDim / 2;
  for (int64_t p = 0; p < rows; ++p)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t j = 0; j < half; ++j) {
        const double ang = double(p) / std::pow(kTheta, 2.0 * double(j) / double(kHeadDim));
        double &a = x[size_t((p * heads + h) * kHeadDim + j)];
        double &b = x[size_t((p * heads + h) * kHeadDim + j + half)];
        const double a0 = a, b0 = b;
        a = a0 * std::cos(ang) - b0 * std::sin(ang);
        b = b0 * std::cos(ang) + a0 * std::sin(ang);
      }
}

std::vector<float> referenceLogits(const TinyLlama &m, const std::vector<int32_t> &ids) {
  const int64_t t = int64_t(ids.size()), qd = kHeads * kHeadDim, kd = kKvHeads * kHeadDim;
  Mat emb = vec(m.embed), h(size_t(t * kHidden));
  for (int64_t i = 0; i < t; ++i)
    for (int64_t c = 0; c < kHidden; ++c)
      h[size_t(i * kHidden + c)] = emb[size_t(ids[size_t(i)] * kHidden + c)];
  Mat n = rms(h, vec(m.ln1), t, kHidden);
  Mat q = matmulT(n, vec(m.wq), t, kHidden, qd), k = matmulT(n, vec(m.wk), t, kHidden, kd),
      v = matmulT(n, vec(m.wv), t, kHidden, kd);
  rope(q, t, kHeads);
  rope(k, t, kKvHeads);
  Mat att(size_t(t * qd), 0.0);
  for (int64_t i = 0; i < t; ++i)
    for (int64_t hh = 0; hh < kHeads; ++hh) {
      const int64_t kh = hh / (kHeads / kKvHeads);
      std::vector<double> s(size_t(i + 1));
      double mx = -1e300, sum = 0;
      for (int64_t j = 0; j <= i; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < kHeadDim; ++c)
          dot += q[size_t(i * qd + hh * kHeadDim + c)] * k[size_t(j * kd + kh * kHeadDim + c)];
        s[size_t(j)] = dot / std::sqrt(double(kHeadDim));
        mx = std::max(mx, s[size_t(j)]);
      }
      for (double &x : s)
        sum += (x = std::exp(x - mx));
      for (int64_t j = 0; j <= i; ++j)
        for (int64_t c = 0; c < kHeadDim; ++c)
          att[size_t(i * qd + hh * kHeadDim + c)] +=
              s[size_t(j)] / sum * v[size_t(j * kd + kh * kHeadDim + c)];
    }
  Mat o = matmulT(att, vec(m.wo), t, qd, kHidden);
  for (size_t i = 0; i < h.size(); ++i)
    h[i] += o[i];
  Mat n2 = rms(h, vec(m.ln2), t, kHidden);
  Mat g = matmulT(n2, vec(m.gate), t, kHidden, kInter), u = matmulT(n2, vec(m.up), t, kHidden, kInter);
  for (size_t i = 0; i < g.size(); ++i)
    g[i] = g[i] / (1 + std::exp(-g[i])) * u[i];
  Mat d = matmulT(g, vec(m.down), t, kInter, kHidden);
  for (size_t i = 0; i < h.size(); ++i)
    h[i] += d[i];
  Mat l = matmulT(rms(h, vec(m.lnf), t, kHidden), vec(m.lmHead), t, kHidden, kVocab);
  return std::vector<float>(l.begin(), l.end());
}

const std::vector<int32_t> kIds = {5, 17, 0, 36, 2, 2, 29, 11, 8, 23};

} // namespace

TEST(TinyLlama, PrefillEqualsTokenByTokenDecode) {
  TinyLlama m;
  const int64_t t = int64_t(kIds.size());

  // (a) one prefill step.
  auto poolA = makePool();
  SequenceKV a;
  TT_ASSIGN(StepMetadata mdA, prepareStep(*poolA, {{&a, t}}));
  TT_ASSIGN(Tensor prefill, forward(m, kIds, *poolA, mdA, /*selectLast=*/false));
  ASSERT_EQ(prefill.shape(), (Shape{t, kVocab}));

  // (b) token by token through the cache.
  auto poolB = makePool();
  SequenceKV b;
  std::vector<float> stepwise;
  for (int64_t i = 0; i < t; ++i) {
    TT_ASSIGN(StepMetadata md, prepareStep(*poolB, {{&b, 1}}));
    TT_ASSIGN(Tensor l, forward(m, {kIds[size_t(i)]}, *poolB, md, /*selectLast=*/true));
    ASSERT_EQ(l.shape(), (Shape{1, kVocab}));
    std::vector<float> lv = l.toFloats();
    stepwise.insert(stepwise.end(), lv.begin(), lv.end());
  }
  EXPECT_EQ(b.numTokens(), t);
  EXPECT_TRUE(allClose(prefill, stepwise, {t, kVocab}, 1e-5));
}

TEST(TinyLlama, PrefillMatchesPlainLoops) {
  TinyLlama m;
  const int64_t t = int64_t(kIds.size());
  auto pool = makePool();
  SequenceKV a;
  TT_ASSIGN(StepMetadata md, prepareStep(*pool, {{&a, t}}));
  TT_ASSIGN(Tensor prefill, forward(m, kIds, *pool, md, false));
  EXPECT_TRUE(allClose(prefill, referenceLogits(m, kIds), {t, kVocab}, 1e-4));
}

TEST(TinyLlama, RaggedBatchesWithChunkedPrefill) {
  TinyLlama m;
  const int64_t t = int64_t(kIds.size());
  const std::vector<int32_t> other = {1, 2, 3, 4, 5, 6, 7};
  auto pool = makePool();
  SequenceKV x, y;
  // Step 1: x prefills 7 tokens while y prefills 5.
  // Step 2: y decodes its 6th token while x prefills its last 3 (chunked).
  std::vector<int32_t> ids1(kIds.begin(), kIds.begin() + 7);
  ids1.insert(ids1.end(), other.begin(), other.begin() + 5);
  TT_ASSIGN(StepMetadata md1, prepareStep(*pool, {{&x, 7}, {&y, 5}}));
  TT_ASSIGN(Tensor l1, forward(m, ids1, *pool, md1, true));
  std::vector<int32_t> ids2 = {other[5], kIds[7], kIds[8], kIds[9]};
  TT_ASSIGN(StepMetadata md2, prepareStep(*pool, {{&y, 1}, {&x, 3}}));
  TT_ASSIGN(Tensor l2, forward(m, ids2, *pool, md2, true));
  ASSERT_EQ(l2.shape(), (Shape{2, kVocab}));

  // x's last logits equal row 9 of the one-step prefill; y's equal the
  // plain-loop logits of its 6-token prefix.
  std::vector<float> want = referenceLogits(m, kIds);
  std::vector<float> l2v = l2.toFloats();
  std::vector<float> xLast(l2v.begin() + kVocab, l2v.end());
  EXPECT_TRUE(allClose(f32({1, kVocab}, xLast),
                       std::vector<float>(want.begin() + (t - 1) * kVocab, want.end()),
                       {1, kVocab}, 1e-4));
  std::vector<float> yWant = referenceLogits(m, std::vector<int32_t>(other.begin(), other.begin() + 6));
  std::vector<float> yLast(l2v.begin(), l2v.begin() + kVocab);
  EXPECT_TRUE(allClose(f32({1, kVocab}, yLast),
                       std::vector<float>(yWant.begin() + 5 * kVocab, yWant.end()), {1, kVocab},
                       1e-4));
  // Step 1's logits of x's 7th token match the reference too.
  std::vector<float> l1v = l1.toFloats();
  std::vector<float> x7 = referenceLogits(m, std::vector<int32_t>(kIds.begin(), kIds.begin() + 7));
  EXPECT_TRUE(allClose(f32({1, kVocab}, std::vector<float>(l1v.begin(), l1v.begin() + kVocab)),
                       std::vector<float>(x7.begin() + 6 * kVocab, x7.end()), {1, kVocab}, 1e-4));
}
