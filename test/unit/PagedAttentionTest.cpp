//===- PagedAttentionTest.cpp - paged attention against dense attention ---===//
//
// Every case writes each sequence's K and V into a block pool (through
// kvWrite, at the slots SequenceKV hands out: block tables interleave and
// are not contiguous), runs pagedAttention on a ragged batch, and compares
// with attention computed directly from the dense per-sequence K and V.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/transformer/PagedAttention.h"
#include "runtime/cpu/transformer/Parallel.h"

#include "TransformerTestUtil.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace tt;
using namespace accel::rt::kv;
using namespace accel::rt::cpu;
using namespace accel::rt::cpu::transformer;

namespace {

struct Geometry {
  int64_t heads = 4, kvHeads = 2, headDim = 8, blockSize = 4, numBlocks = 64;
  DType cacheType = DType::kF32;
};

struct RefParams {
  double scale;
  bool causal = true;
  int64_t window = 0;
  double softcap = 0;
};

// softmax(q k^T * scale (softcapped, masked)) v for the last n of L tokens,
// straight from the definition; q [n, H, D], k/v [L, KVH, D].
std::vector<float> denseAttention(const std::vector<float> &q, const std::vector<float> &k,
                                  const std::vector<float> &v, int64_t n, int64_t len,
                                  const Geometry &g, const RefParams &p) {
  const int64_t H = g.heads, KVH = g.kvHeads, D = g.headDim;
  std::vector<float> out(size_t(n * H * D), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t pos = len - n + i;
    for (int64_t h = 0; h < H; ++h) {
      const int64_t kh = h / (H / KVH);
      std::vector<double> s(size_t(len), -std::numeric_limits<double>::infinity());
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < len; ++j) {
        const bool visible = (!p.causal || j <= pos) && (p.window == 0 || j > pos - p.window);
        if (!visible)
          continue;
        double dot = 0;
        for (int64_t c = 0; c < D; ++c)
          dot += double(q[size_t((i * H + h) * D + c)]) * k[size_t((j * KVH + kh) * D + c)];
        dot *= p.scale;
        if (p.softcap > 0)
          dot = p.softcap * std::tanh(dot / p.softcap);
        s[size_t(j)] = dot;
        mx = std::max(mx, dot);
      }
      double sum = 0;
      for (double &x : s) {
        x = std::exp(x - mx); // exp(-inf) = 0 for masked keys
        sum += x;
      }
      for (int64_t c = 0; c < D; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < len; ++j)
          acc += s[size_t(j)] / sum * v[size_t((j * KVH + kh) * D + c)];
        out[size_t((i * H + h) * D + c)] = float(acc);
      }
    }
  }
  return out;
}

/// A pool holding several sequences' dense K/V, written chunk by chunk in
/// round-robin so their blocks interleave.
struct Scenario {
  Geometry g;
  std::unique_ptr<BlockPool> pool;
  std::vector<SequenceKV> seqs;
  std::vector<std::vector<float>> k, v; // [L, KVH, D] per sequence

  Scenario(const Geometry &geo, const std::vector<int64_t> &lens, uint32_t seed,
           int64_t layers = 1, int64_t layer = 0)
      : g(geo), seqs(lens.size()) {
    KVCacheConfig c;
    c.numLayers = layers;
    c.numKvHeads = g.kvHeads;
    c.headDim = g.headDim;
    c.blockSize = g.blockSize;
    c.numBlocks = g.numBlocks;
    c.dtype = g.cacheType;
    pool = std::move(BlockPool::create(c).value());
    // A sequence that takes and returns a few blocks first, so the free
    // queue is not in index order.
    SequenceKV hole;
    EXPECT_TRUE(hole.appendSlots(*pool, 3 * g.blockSize).isOk());
    const int64_t row = g.kvHeads * g.headDim;
    for (size_t i = 0; i < lens.size(); ++i) {
      k.push_back(randomFloats(size_t(lens[i] * row), seed + 10 * uint32_t(i)));
      v.push_back(randomFloats(size_t(lens[i] * row), seed + 10 * uint32_t(i) + 5));
    }
    std::vector<int64_t> done(lens.size(), 0);
    for (int64_t round = 0;; ++round) {
      bool any = false;
      for (size_t i = 0; i < lens.size(); ++i) {
        const int64_t n = std::min<int64_t>(3 + int64_t(i), lens[i] - done[i]);
        if (n <= 0)
          continue;
        any = true;
        std::vector<int32_t> slots;
        EXPECT_TRUE(seqs[i].appendSlots(*pool, n, &slots).isOk());
        Tensor kt = f32({n, g.kvHeads, g.headDim},
                        std::vector<float>(k[i].begin() + done[i] * row,
                                           k[i].begin() + (done[i] + n) * row));
        Tensor vt = f32({n, g.kvHeads, g.headDim},
                        std::vector<float>(v[i].begin() + done[i] * row,
                                           v[i].begin() + (done[i] + n) * row));
        Status s = kvWrite(*pool, layer, kt, vt, i32({n}, slots));
        EXPECT_TRUE(s.isOk()) << s.toString();
        done[i] += n;
      }
      if (round == 0) {
        EXPECT_TRUE(hole.release(*pool).isOk());
      }
      if (!any)
        break;
    }
  }

  bool blocksAreScattered() const {
    for (const SequenceKV &s : seqs)
      for (size_t b = 1; b < s.blocks().size(); ++b)
        if (s.blocks()[b] != s.blocks()[b - 1] + 1)
          return true;
    return false;
  }

  /// Runs pagedAttention for the last qLens[i] tokens of each sequence and
  /// compares with denseAttention.
  void check(const std::vector<int64_t> &qLens, const PagedAttentionParams &p,
             double tol = 2e-6, DType qType = DType::kF32,
             std::vector<std::vector<float>> *kRef = nullptr,
             std::vector<std::vector<float>> *vRef = nullptr) {
    std::vector<StepSequence> step;
    std::vector<float> qAll, want;
    int64_t tokens = 0;
    for (size_t i = 0; i < seqs.size(); ++i) {
      step.push_back({&seqs[i], qLens[i]});
      std::vector<float> q =
          randomFloats(size_t(qLens[i] * g.heads * g.headDim), 1000 + uint32_t(i), -2, 2);
      if (qType != DType::kF32) // the reference sees the rounded q
        q = f32({int64_t(q.size())}, q).astype(qType).toFloats();
      RefParams rp{p.scale > 0 ? p.scale : 1.0 / std::sqrt(double(g.headDim)), p.causal,
                   p.slidingWindow, p.softcap};
      std::vector<float> o = denseAttention(q, kRef ? (*kRef)[i] : k[i],
                                            vRef ? (*vRef)[i] : v[i], qLens[i],
                                            seqs[i].numTokens(), g, rp);
      qAll.insert(qAll.end(), q.begin(), q.end());
      want.insert(want.end(), o.begin(), o.end());
      tokens += qLens[i];
    }
    StatusOr<StepMetadata> md = describeStep(*pool, step);
    ASSERT_TRUE(md.isOk()) << md.status().toString();
    Tensor q = f32({tokens, g.heads, g.headDim}, qAll).astype(qType);
    StatusOr<Tensor> out =
        pagedAttention(q, *pool, md->queryStartLoc, md->seqLens, md->blockTables, p);
    ASSERT_TRUE(out.isOk()) << out.status().toString();
    EXPECT_EQ(out->dtype(), qType);
    EXPECT_TRUE(allClose(*out, want, {tokens, g.heads, g.headDim}, tol));
  }
};

} // namespace

TEST(PagedAttention, ThreeSequencesPrefillOnScatteredBlocks) {
  Geometry g;
  Scenario sc(g, {7, 13, 1}, 1);
  EXPECT_TRUE(sc.blocksAreScattered());
  PagedAttentionParams p;
  sc.check({7, 13, 1}, p);
}

TEST(PagedAttention, MixedPrefillChunksAndDecodeTokens) {
  Geometry g;
  Scenario sc(g, {11, 11, 9, 30}, 2);
  PagedAttentionParams p;
  p.scale = 0.3f;
  // Decode, a chunk after a cached prefix, a full prefill, a long decode.
  sc.check({1, 6, 9, 1}, p);
}

TEST(PagedAttention, GroupedAndMultiQuery) {
  Geometry gqa;
  gqa.heads = 8;
  gqa.kvHeads = 2;
  Scenario a(gqa, {10, 5}, 3);
  PagedAttentionParams p;
  a.check({4, 5}, p);
  Geometry mqa;
  mqa.heads = 6;
  mqa.kvHeads = 1;
  mqa.headDim = 16;
  Scenario b(mqa, {9, 17}, 4);
  b.check({9, 2}, p);
}

TEST(PagedAttention, SlidingWindow) {
  Geometry g;
  Scenario sc(g, {12, 20, 3}, 5);
  PagedAttentionParams p;
  p.slidingWindow = 5;
  sc.check({12, 1, 3}, p);
  p.slidingWindow = 1; // only itself
  sc.check({4, 2, 3}, p);
}

TEST(PagedAttention, Softcap) {
  Geometry g;
  Scenario sc(g, {9, 14}, 6);
  PagedAttentionParams p;
  p.scale = 2.0f; // large scores, so the cap matters
  p.softcap = 1.5f;
  sc.check({9, 3}, p);
}

TEST(PagedAttention, NonCausalSeesTheWholeContext) {
  Geometry g;
  Scenario sc(g, {6, 10}, 7);
  PagedAttentionParams p;
  p.causal = false;
  sc.check({6, 4}, p);
}

TEST(PagedAttention, ReadsTheRequestedLayer) {
  Geometry g;
  Scenario sc(g, {8, 5}, 8, /*layers=*/3, /*layer=*/2);
  PagedAttentionParams p;
  p.layer = 2;
  sc.check({8, 5}, p);
}

TEST(PagedAttention, HalfPrecisionCacheAndQuery) {
  Geometry g;
  g.cacheType = DType::kF16;
  Scenario sc(g, {10, 7}, 9);
  // The reference sees K and V as the f16 cache stores them.
  std::vector<std::vector<float>> k, v;
  for (size_t i = 0; i < sc.k.size(); ++i) {
    k.push_back(f32({int64_t(sc.k[i].size())}, sc.k[i]).astype(DType::kF16).toFloats());
    v.push_back(f32({int64_t(sc.v[i].size())}, sc.v[i]).astype(DType::kF16).toFloats());
  }
  PagedAttentionParams p;
  sc.check({10, 2}, p, 2e-6, DType::kF32, &k, &v);
  sc.check({3, 7}, p, 1e-2, DType::kBF16, &k, &v);
}

/// An 8-block pool of `g`'s geometry and cache type.
static KVCacheConfig poolConfig(const Geometry &g) {
  KVCacheConfig c;
  c.numKvHeads = g.kvHeads;
  c.headDim = g.headDim;
  c.blockSize = g.blockSize;
  c.numBlocks = 8;
  c.dtype = g.cacheType;
  return c;
}

TEST(PagedAttention, Fp8CacheWithScales) {
  Geometry g;
  g.cacheType = DType::kF8E4M3FN;
  const float ks = 0.01f, vs = 0.02f;
  const KVCacheConfig c = poolConfig(g);
  auto pool = std::move(BlockPool::create(c).value());
  SequenceKV seq;
  std::vector<int32_t> slots;
  const int64_t len = 9;
  TT_OK(seq.appendSlots(*pool, len, &slots));
  Tensor k = randomF32({len, g.kvHeads, g.headDim}, 10);
  Tensor v = randomF32({len, g.kvHeads, g.headDim}, 11);
  TT_OK(kvWrite(*pool, 0, k, v, i32({len}, slots), {ks, vs}));
  // The reference dequantises what an E4M3 cache holds.
  std::vector<float> kq = k.toFloats(), vq = v.toFloats();
  for (float &x : kq)
    x = f8E4M3FNToF32(f32ToF8E4M3FN(x / ks)) * ks;
  for (float &x : vq)
    x = f8E4M3FNToF32(f32ToF8E4M3FN(x / vs)) * vs;
  std::vector<float> q = randomFloats(size_t(len * g.heads * g.headDim), 12);
  std::vector<float> want = denseAttention(q, kq, vq, len, len, g,
                                           {1.0 / std::sqrt(double(g.headDim))});
  TT_ASSIGN(StepMetadata md, describeStep(*pool, {{&seq, len}}));
  PagedAttentionParams p;
  p.kvScales = {ks, vs};
  TT_ASSIGN(Tensor out, pagedAttention(f32({len, g.heads, g.headDim}, q), *pool,
                                       md.queryStartLoc, md.seqLens, md.blockTables, p));
  EXPECT_TRUE(allClose(out, want, {len, g.heads, g.headDim}, 2e-6));
}

// Per-KV-head scales (accelc -kv-cache-dtype=fp8 -calibration): KV head 0
// holds values near 1000 (past E4M3's 448 at a scale of 1) and head 1 near
// 0.001 (below its normal range); each head's scale maps its own max |x|
// to 448. The kernels dequantise each head with its own scale (exactly the
// reference below), and the result stays close to f32 attention on the
// unquantised K and V, where one scale of 1.0 for the layer does not.
TEST(PagedAttention, Fp8CacheWithPerHeadScales) {
  Geometry g; // 4 query heads over 2 KV heads
  g.cacheType = DType::kF8E4M3FN;
  const KVCacheConfig c = poolConfig(g);
  const int64_t len = 11, D = g.headDim, KVH = g.kvHeads, H = g.heads;
  const float mag[2] = {1000.0f, 1e-3f};
  std::vector<float> k = randomFloats(size_t(len * KVH * D), 40),
                     v = randomFloats(size_t(len * KVH * D), 41),
                     q = randomFloats(size_t(len * H * D), 42);
  std::vector<float> absK(2, 0.0f), absV(2, 0.0f);
  for (int64_t t = 0; t < len; ++t)
    for (int64_t h = 0; h < KVH; ++h)
      for (int64_t d = 0; d < D; ++d) {
        const size_t i = size_t((t * KVH + h) * D + d);
        k[i] *= mag[h];
        v[i] *= mag[h];
        absK[size_t(h)] = std::max(absK[size_t(h)], std::fabs(k[i]));
        absV[size_t(h)] = std::max(absV[size_t(h)], std::fabs(v[i]));
      }
  for (int64_t t = 0; t < len; ++t) // scores of order 1 in both groups
    for (int64_t h = 0; h < H; ++h)
      for (int64_t d = 0; d < D; ++d)
        q[size_t((t * H + h) * D + d)] /= mag[h / (H / KVH)];
  KVScales perHead;
  perHead.kHeads = {absK[0] / 448.0f, absK[1] / 448.0f};
  perHead.vHeads = {absV[0] / 448.0f, absV[1] / 448.0f};
  const RefParams rp{1.0 / std::sqrt(double(D))};

  auto run = [&](const KVScales &scales) -> std::vector<float> {
    auto pool = std::move(BlockPool::create(c).value());
    SequenceKV seq;
    std::vector<int32_t> slots;
    EXPECT_TRUE(seq.appendSlots(*pool, len, &slots).isOk());
    Status w = kvWrite(*pool, 0, f32({len, KVH, D}, k), f32({len, KVH, D}, v),
                       i32({len}, slots), scales);
    EXPECT_TRUE(w.isOk()) << w.message();
    StatusOr<StepMetadata> md = describeStep(*pool, {{&seq, len}});
    EXPECT_TRUE(md.isOk());
    PagedAttentionParams p;
    p.kvScales = scales;
    StatusOr<Tensor> out = pagedAttention(f32({len, H, D}, q), *pool, md->queryStartLoc,
                                          md->seqLens, md->blockTables, p);
    EXPECT_TRUE(out.isOk()) << out.status().message();
    return out.isOk() ? out->toFloats() : std::vector<float>();
  };
  // Largest error in the heads of KV head `kh`, relative to their largest output.
  auto relError = [&](const std::vector<float> &got, const std::vector<float> &want, int kh) {
    double err = 0, top = 0;
    for (int64_t t = 0; t < len; ++t)
      for (int64_t h = kh * (H / KVH); h < (kh + 1) * (H / KVH); ++h)
        for (int64_t d = 0; d < D; ++d) {
          const size_t i = size_t((t * H + h) * D + d);
          err = std::max(err, double(std::fabs(got[i] - want[i])));
          top = std::max(top, double(std::fabs(want[i])));
        }
    return err / top;
  };

  // Exactly attention over each head's dequantised values.
  std::vector<float> kq = k, vq = v;
  for (int64_t t = 0; t < len; ++t)
    for (int64_t h = 0; h < KVH; ++h)
      for (int64_t d = 0; d < D; ++d) {
        const size_t i = size_t((t * KVH + h) * D + d);
        kq[i] = f8E4M3FNToF32(f32ToF8E4M3FN(k[i] / perHead.kHeads[size_t(h)])) *
                perHead.kHeads[size_t(h)];
        vq[i] = f8E4M3FNToF32(f32ToF8E4M3FN(v[i] / perHead.vHeads[size_t(h)])) *
                perHead.vHeads[size_t(h)];
      }
  std::vector<float> got = run(perHead);
  ASSERT_EQ(got.size(), size_t(len * H * D));
  std::vector<float> exact = denseAttention(q, kq, vq, len, len, g, rp);
  for (int kh = 0; kh < 2; ++kh)
    EXPECT_LT(relError(got, exact, kh), 1e-5) << "KV head " << kh;
  // Close to f32 attention in both heads; one scale of 1.0 is not.
  std::vector<float> truth = denseAttention(q, k, v, len, len, g, rp);
  std::vector<float> perLayer = run(KVScales{});
  for (int kh = 0; kh < 2; ++kh) {
    EXPECT_LT(relError(got, truth, kh), 0.1) << "KV head " << kh;
    EXPECT_GT(relError(perLayer, truth, kh), 0.3) << "KV head " << kh;
  }
  // Malformed per-head scales are refused, naming what is wrong.
  KVScales wrong = perHead;
  wrong.vHeads.pop_back();
  auto pool = std::move(BlockPool::create(c).value());
  Status bad = kvWrite(*pool, 0, f32({1, KVH, D}, std::vector<float>(size_t(KVH * D), 1.0f)),
                       f32({1, KVH, D}, std::vector<float>(size_t(KVH * D), 1.0f)),
                       i32({1}, {0}), wrong);
  EXPECT_NE(bad.message().find("the per-head v scales have 1 entries for 2 KV heads"),
            std::string::npos)
      << bad.message();
  wrong = perHead;
  wrong.kHeads[1] = 0.0f;
  bad = kvWrite(*pool, 0, f32({1, KVH, D}, std::vector<float>(size_t(KVH * D), 1.0f)),
                f32({1, KVH, D}, std::vector<float>(size_t(KVH * D), 1.0f)), i32({1}, {0}),
                wrong);
  EXPECT_NE(bad.message().find("positive k and v scales (KV head 1)"), std::string::npos)
      << bad.message();
}

TEST(PagedAttention, PrefillThenDecodeEqualsDenseCausal) {
  // One sequence: a 6-token prefill, then 4 decode steps, each through
  // attention() (kv_write + paged attention), against dense causal attention
  // over all 10 tokens.
  Geometry g;
  g.heads = 4;
  g.kvHeads = 2;
  KVCacheConfig c;
  c.numKvHeads = g.kvHeads;
  c.headDim = g.headDim;
  c.blockSize = g.blockSize;
  c.numBlocks = 16;
  auto pool = std::move(BlockPool::create(c).value());
  const int64_t total = 10, row = g.kvHeads * g.headDim, qrow = g.heads * g.headDim;
  std::vector<float> k = randomFloats(size_t(total * row), 20);
  std::vector<float> v = randomFloats(size_t(total * row), 21);
  std::vector<float> q = randomFloats(size_t(total * qrow), 22, -2, 2);
  std::vector<float> want = denseAttention(q, k, v, total, total, g,
                                           {1.0 / std::sqrt(double(g.headDim))});
  SequenceKV seq;
  PagedAttentionParams p;
  std::vector<float> got;
  for (int64_t begin = 0; begin < total;) {
    const int64_t n = begin == 0 ? 6 : 1;
    TT_ASSIGN(StepMetadata md, prepareStep(*pool, {{&seq, n}}));
    auto slice = [&](const std::vector<float> &a, int64_t w) {
      return std::vector<float>(a.begin() + begin * w, a.begin() + (begin + n) * w);
    };
    TT_ASSIGN(Tensor o, attention(f32({n, g.heads, g.headDim}, slice(q, qrow)),
                                  f32({n, g.kvHeads, g.headDim}, slice(k, row)),
                                  f32({n, g.kvHeads, g.headDim}, slice(v, row)), *pool, md, p));
    std::vector<float> ov = o.toFloats();
    got.insert(got.end(), ov.begin(), ov.end());
    begin += n;
  }
  EXPECT_TRUE(allClose(f32({total, g.heads, g.headDim}, got), want,
                       {total, g.heads, g.headDim}, 2e-6));
}

TEST(PagedAttention, SameResultOnAnyThreadCount) {
  Geometry g;
  g.heads = 4;
  g.kvHeads = 4;
  Scenario sc(g, {40, 3, 25}, 23);
  std::vector<StepSequence> step = {{&sc.seqs[0], 40}, {&sc.seqs[1], 1}, {&sc.seqs[2], 9}};
  TT_ASSIGN(StepMetadata md, describeStep(*sc.pool, step));
  Tensor q = randomF32({50, g.heads, g.headDim}, 24);
  PagedAttentionParams p;
  setKernelThreads(1);
  TT_ASSIGN(Tensor one, pagedAttention(q, *sc.pool, md.queryStartLoc, md.seqLens,
                                       md.blockTables, p));
  setKernelThreads(5);
  TT_ASSIGN(Tensor five, pagedAttention(q, *sc.pool, md.queryStartLoc, md.seqLens,
                                        md.blockTables, p));
  setKernelThreads(0);
  ASSERT_EQ(one.byteSize(), five.byteSize());
  EXPECT_EQ(std::memcmp(one.rawData(), five.rawData(), one.byteSize()), 0);
}

TEST(PagedAttention, BadMetadataIsNamed) {
  Geometry g;
  Scenario sc(g, {6, 9}, 25);
  TT_ASSIGN(StepMetadata md, describeStep(*sc.pool, {{&sc.seqs[0], 2}, {&sc.seqs[1], 3}}));
  Tensor q = randomF32({5, g.heads, g.headDim}, 26);
  PagedAttentionParams p;
  auto message = [&](const Tensor &qq, const Tensor &qsl, const Tensor &lens,
                     const Tensor &bt, const PagedAttentionParams &pp) {
    StatusOr<Tensor> r = pagedAttention(qq, *sc.pool, qsl, lens, bt, pp);
    EXPECT_FALSE(r.isOk());
    return r.isOk() ? std::string() : r.status().message();
  };
  EXPECT_NE(message(randomF32({5, 3, g.headDim}, 1), md.queryStartLoc, md.seqLens,
                    md.blockTables, p)
                .find("not a multiple of the 2 KV heads"),
            std::string::npos);
  EXPECT_NE(message(randomF32({5, g.heads, 4}, 1), md.queryStartLoc, md.seqLens,
                    md.blockTables, p)
                .find("head_dim 4"),
            std::string::npos);
  EXPECT_NE(message(q, md.queryStartLoc, i32({2}, {6, 2}), md.blockTables, p)
                .find("sequence 1 has 3 query tokens but seq_len 2"),
            std::string::npos);
  EXPECT_NE(message(q, i32({3}, {0, 2, 4}), md.seqLens, md.blockTables, p)
                .find("from 0 to the 5 tokens"),
            std::string::npos);
  Tensor bt = md.blockTables.clone();
  bt.data<int32_t>()[bt.dim(1) + 1] = 64;
  EXPECT_NE(message(q, md.queryStartLoc, md.seqLens, bt, p)
                .find("sequence 1 lists block 64 at entry 1"),
            std::string::npos);
  EXPECT_NE(message(q, md.queryStartLoc, i32({2}, {6, 40}), md.blockTables, p)
                .find("needs 10 blocks"),
            std::string::npos);
  PagedAttentionParams badLayer;
  badLayer.layer = 1;
  EXPECT_NE(message(q, md.queryStartLoc, md.seqLens, md.blockTables, badLayer).find("layer 1"),
            std::string::npos);
}

TEST(KVWrite, WritesConvertsAndSkipsPadding) {
  KVCacheConfig c;
  c.numKvHeads = 1;
  c.headDim = 2;
  c.blockSize = 2;
  c.numBlocks = 3;
  c.dtype = DType::kBF16;
  auto pool = std::move(BlockPool::create(c).value());
  Tensor k = f32({3, 1, 2}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f});
  Tensor v = f32({3, 1, 2}, {-1.0f, -2.0f, -3.0f, -4.0f, -5.0f, -6.0f});
  TT_OK(kvWrite(*pool, 0, k, v, i64({3}, {5, -1, 0})));
  std::vector<float> keys = pool->keys(0).toFloats(), vals = pool->values(0).toFloats();
  EXPECT_EQ(keys[10], 1.0f);
  EXPECT_EQ(keys[11], 2.0f);
  EXPECT_EQ(keys[0], 5.0f);
  EXPECT_EQ(vals[1], -6.0f);
  EXPECT_EQ(std::count(keys.begin(), keys.end(), 3.0f), 0); // skipped
  Status past = kvWrite(*pool, 0, k, v, i32({3}, {0, 1, 6}));
  EXPECT_NE(past.message().find("token 2 has slot 6, past the 6 slots"), std::string::npos)
      << past.message();
  EXPECT_FALSE(kvWrite(*pool, 0, f32({1, 2, 1}, {1, 2}), f32({1, 2, 1}, {1, 2}),
                       i32({1}, {0}))
                   .isOk());
  EXPECT_FALSE(kvWrite(*pool, 1, k, v, i32({3}, {0, 1, 2})).isOk());
  EXPECT_FALSE(kvWrite(*pool, 0, k, v, i32({2}, {0, 1})).isOk());
}
