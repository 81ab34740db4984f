//===- FlashPrefillTest.cpp - the tensor-core prefill attention kernel -----===//
//
// flash_prefill_* (runtime/cuda/kernels/FlashPrefill.cu, launched through
// runtime/cuda/GpuFlashPrefill.h) against a double-precision CPU reference
// computed from the same rounded bf16/f16 inputs, and against the old
// paged_attention_* kernel: head_dim 64 and 128, GQA 4:1, 2:1, 3:1, 8:1 and
// MHA, query counts that are not multiples of the 64-row tile (1, 15, 17,
// 100, 300), ragged batches (an empty sequence too), chunks after cached
// tokens (seq_len > q_len), shuffled (non-contiguous) block tables, block
// sizes 16, 32 and 5, sliding window, softcap, non-causal with a scale.
// Pool slots that no sequence owns hold NaN: a kernel that read past a
// sequence's context would fail.
//
// Label `gpu`: without a GPU every test reports SKIPPED.
//
//   accel-gpu-flash-prefill-tests            the tests (gtest flags work)
//   accel-gpu-flash-prefill-tests --bench    timing: a 2048-token prefill of
//       one layer (32 heads, 8 KV heads, head_dim 128), new vs old kernel,
//       bf16 and f16, plus a 512-token chunk after 1536 cached tokens and
//       a 4096-token prefill; prints ms and TFLOP/s (causal FLOPs: 4 d per
//       (query, visible key, head)).
//
//===----------------------------------------------------------------------===//
#include "GpuTestContext.h"
#include "runtime/cuda/GpuFlashPrefill.h"
#include "runtime/cuda/kernels/KernelImage.h"
#include "runtime/cuda/kernels/KvScales.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>

using namespace accel::rt;
using engine::DeviceTensor;
using engine::GpuRunState;
using gpu::GpuContext;

namespace {

struct Case {
  std::vector<std::pair<int64_t, int64_t>> seqs; // (query count, context length)
  int64_t heads = 8, kvHeads = 2, d = 128, blockSize = 16;
  bool causal = true;
  int64_t window = 0;
  float softcap = 0.0f;
  float scale = 0.0f; // 0: 1 / sqrt(d)
  DType dtype = DType::kBF16;
  uint32_t seed = 1;
};

std::string describe(const Case &c) {
  std::string s = std::string(dtypeName(c.dtype)) + " d" + std::to_string(c.d) + " heads " +
                  std::to_string(c.heads) + "/" + std::to_string(c.kvHeads) + " bs " +
                  std::to_string(c.blockSize) + " seqs";
  for (auto [n, l] : c.seqs)
    s += " " + std::to_string(n) + "/" + std::to_string(l);
  if (!c.causal)
    s += " non-causal";
  if (c.window)
    s += " window " + std::to_string(c.window);
  if (c.softcap > 0)
    s += " softcap " + std::to_string(c.softcap);
  return s;
}

GpuContext *context(std::string *why) { return test::gpuTestContext(why); }

/// Host data of one case, rounded to the dtype, and its device copies.
struct Problem {
  Case c;
  int64_t tokens = 0, numBlocks = 0, width = 0, group = 1;
  std::vector<int32_t> qsl, lens, tables; // tables [seqs, width]
  std::vector<float> q, k, v;             // rounded values: q [tokens, heads, d], pool
  GpuRunState st;
  kv::StepMetadata meta;
  DeviceTensor dq, dk, dv, dqsl, dlens, dtables;
  std::vector<DeviceTensor> keys, values;
  float scale = 0;
};

/// `values` (f32) rounded to `dt`: the device bytes and the rounded floats.
Tensor rounded(const std::vector<float> &values, DType dt, std::vector<float> *back) {
  Tensor t = *Tensor::fromVector<float>({int64_t(values.size())}, values);
  Tensor r = t.astype(dt, /*saturate=*/false);
  Tensor f = r.toF32();
  back->assign(f.data<float>(), f.data<float>() + f.numElements());
  return r;
}

Status upload(GpuRunState &st, DeviceTensor *dst, const Tensor &host) {
  ACCEL_RT_ASSIGN_OR_RETURN(*dst, st.empty(host.dtype(), host.shape()));
  return st.gpu->upload(dst->ptr, host.rawData(), host.byteSize());
}

StatusOr<std::unique_ptr<Problem>> makeProblem(GpuContext *gpu, const Case &c, float qAmp = 6.0f) {
  auto p = std::make_unique<Problem>();
  p->c = c;
  p->group = c.heads / c.kvHeads;
  p->scale = c.scale > 0 ? c.scale : 1.0f / std::sqrt(float(c.d));
  std::mt19937 rng(c.seed);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  const int64_t seqs = int64_t(c.seqs.size());
  p->qsl.push_back(0);
  int64_t blocksUsed = 0;
  for (auto [n, l] : c.seqs) {
    p->tokens += n;
    p->qsl.push_back(int32_t(p->tokens));
    p->lens.push_back(int32_t(l));
    const int64_t nb = (l + c.blockSize - 1) / c.blockSize;
    p->width = std::max(p->width, nb);
    blocksUsed += nb;
  }
  p->width = std::max<int64_t>(p->width, 1) + 1; // a padded column
  // Every sequence's blocks at shuffled places in a pool twice as large.
  p->numBlocks = 2 * blocksUsed + 3;
  std::vector<int32_t> perm(size_t(p->numBlocks));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  p->tables.assign(size_t(seqs * p->width), 0);
  const int64_t rowElems = c.kvHeads * c.d;
  std::vector<float> kf(size_t(p->numBlocks * c.blockSize * rowElems),
                        std::numeric_limits<float>::quiet_NaN());
  std::vector<float> vf = kf;
  size_t next = 0;
  for (int64_t s = 0; s < seqs; ++s) {
    const int64_t l = c.seqs[size_t(s)].second;
    for (int64_t b = 0; b * c.blockSize < l; ++b)
      p->tables[size_t(s * p->width + b)] = perm[next++];
    for (int64_t t = 0; t < l; ++t) {
      const int64_t slot =
          int64_t(p->tables[size_t(s * p->width + t / c.blockSize)]) * c.blockSize +
          t % c.blockSize;
      for (int64_t e = 0; e < rowElems; ++e) {
        kf[size_t(slot * rowElems + e)] = uni(rng);
        vf[size_t(slot * rowElems + e)] = uni(rng);
      }
    }
  }
  std::vector<float> qf(size_t(p->tokens * c.heads * c.d));
  for (float &x : qf)
    x = qAmp * uni(rng);
  Tensor qt = rounded(qf, c.dtype, &p->q), kt = rounded(kf, c.dtype, &p->k),
         vt = rounded(vf, c.dtype, &p->v);

  GpuRunState &st = p->st;
  st.gpu = gpu;
  st.dtype = c.dtype;
  p->meta.numSeqs = seqs;
  p->meta.numTokens = p->tokens;
  p->meta.maxBlocksPerSeq = p->width;
  p->meta.queryStartLoc = *Tensor::fromVector<int32_t>({seqs + 1}, p->qsl);
  p->meta.seqLens = *Tensor::fromVector<int32_t>({seqs}, p->lens);
  p->meta.blockTables = *Tensor::fromVector<int32_t>({seqs, p->width}, p->tables);
  st.meta = &p->meta;
  ACCEL_RT_RETURN_IF_ERROR(upload(st, &p->dq, *qt.reshaped({p->tokens, c.heads, c.d})));
  ACCEL_RT_RETURN_IF_ERROR(
      upload(st, &p->dk, *kt.reshaped({p->numBlocks, c.blockSize, c.kvHeads, c.d})));
  ACCEL_RT_RETURN_IF_ERROR(
      upload(st, &p->dv, *vt.reshaped({p->numBlocks, c.blockSize, c.kvHeads, c.d})));
  ACCEL_RT_RETURN_IF_ERROR(upload(st, &p->dqsl, p->meta.queryStartLoc));
  ACCEL_RT_RETURN_IF_ERROR(upload(st, &p->dlens, p->meta.seqLens));
  ACCEL_RT_RETURN_IF_ERROR(upload(st, &p->dtables, p->meta.blockTables));
  st.queryStartLoc = p->dqsl;
  st.seqLens = p->dlens;
  st.blockTables = p->dtables;
  p->keys = {p->dk};
  p->values = {p->dv};
  st.keys = &p->keys;
  st.values = &p->values;
  st.blockSize = c.blockSize;
  st.numKvHeads = c.kvHeads;
  st.headDim = c.d;
  return p;
}

/// The reference output [tokens, heads, d] in double.
std::vector<double> reference(const Problem &p) {
  const Case &c = p.c;
  std::vector<double> out(size_t(p.tokens * c.heads * c.d), 0.0);
  const int64_t rowElems = c.kvHeads * c.d;
  std::vector<double> w;
  for (size_t s = 0; s < c.seqs.size(); ++s) {
    const int64_t n = c.seqs[s].first, l = c.seqs[s].second;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t pos = l - n + j, tok = p.qsl[s] + j;
      const int64_t lo = c.window > 0 ? std::max<int64_t>(0, pos - c.window + 1) : 0;
      const int64_t hi = c.causal ? pos : l - 1;
      for (int64_t h = 0; h < c.heads; ++h) {
        const int64_t kvh = h / p.group;
        const float *qr = &p.q[size_t((tok * c.heads + h) * c.d)];
        w.assign(size_t(std::max<int64_t>(hi - lo + 1, 0)), 0.0);
        double mx = -1e300;
        auto slotOf = [&](int64_t t) {
          return int64_t(p.tables[s * size_t(p.width) + size_t(t / c.blockSize)]) * c.blockSize +
                 t % c.blockSize;
        };
        for (int64_t t = lo; t <= hi; ++t) {
          const float *kr = &p.k[size_t(slotOf(t) * rowElems + kvh * c.d)];
          double dot = 0;
          for (int64_t e = 0; e < c.d; ++e)
            dot += double(qr[e]) * double(kr[e]);
          double sc = dot * double(p.scale);
          if (c.softcap > 0)
            sc = double(c.softcap) * std::tanh(sc / double(c.softcap));
          w[size_t(t - lo)] = sc;
          mx = std::max(mx, sc);
        }
        double sum = 0;
        for (double &x : w)
          sum += (x = std::exp(x - mx));
        double *o = &out[size_t((tok * c.heads + h) * c.d)];
        for (int64_t t = lo; t <= hi; ++t) {
          const float *vr = &p.v[size_t(slotOf(t) * rowElems + kvh * c.d)];
          const double pw = w[size_t(t - lo)] / sum;
          for (int64_t e = 0; e < c.d; ++e)
            o[e] += pw * double(vr[e]);
        }
      }
    }
  }
  return out;
}

/// The old kernel (paged_attention_*, one split), as ops/Attention.cpp launches it.
Status runOld(Problem &p, const DeviceTensor &out) {
  GpuRunState &st = p.st;
  const Case &c = p.c;
  ACCEL_RT_ASSIGN_OR_RETURN(
      gpu::CuFunction fn,
      st.gpu->function(std::string("paged_attention_") + engine::gpuDTypeSuffix(c.dtype)));
  using i64 = long long;
  const unsigned smem = unsigned(64 * 8 + (c.d + 64) * 4);
  return st.gpu->launch(fn, gpu::Dim3{unsigned(p.tokens), unsigned(c.heads), 1},
                        gpu::Dim3{128, 1, 1}, smem, p.dq.ptr, p.dk.ptr, p.dv.ptr, p.dqsl.ptr,
                        p.dlens.ptr, p.dtables.ptr, i64(p.width), out.ptr, gpu::CuDevicePtr(0),
                        gpu::CuDevicePtr(0), gpu::CuDevicePtr(0), i64(c.seqs.size()),
                        i64(c.heads), i64(c.kvHeads), i64(c.d), i64(c.blockSize), p.scale,
                        int(c.causal), i64(c.window), c.softcap, 1, i64(0), gpu::CuDevicePtr(0),
                        kernels::KvScales{} /* scales of 1: a float cache */);
}

/// The new kernel: through the step policy (runFlashPrefill) when some
/// sequence has kFlashPrefillMinQueryLen queries, else launched directly.
StatusOr<bool> runNew(Problem &p, const DeviceTensor &out) {
  const Case &c = p.c;
  int64_t maxQ = 0;
  for (auto [n, l] : c.seqs)
    maxQ = std::max(maxQ, n);
  if (maxQ >= engine::kFlashPrefillMinQueryLen)
    return engine::runFlashPrefill(p.st, p.dq, out, 0, p.scale, c.causal, c.window, c.softcap);
  return engine::launchFlashPrefill(p.st, p.dq, out, 0, p.scale, c.causal, c.window, c.softcap);
}

StatusOr<std::vector<float>> download(Problem &p, const DeviceTensor &t) {
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor h, Tensor::allocate(t.dtype, t.shape));
  ACCEL_RT_RETURN_IF_ERROR(p.st.gpu->download(h.rawData(), t.ptr, h.byteSize()));
  Tensor f = h.toF32();
  return std::vector<float>(f.data<float>(), f.data<float>() + f.numElements());
}

/// max |got - ref| / max |ref| (1e9 for a non-finite value).
double relError(const std::vector<float> &got, const std::vector<double> &ref) {
  double mx = 0, err = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(got[i]))
      return 1e9;
    mx = std::max(mx, std::fabs(ref[i]));
    err = std::max(err, std::fabs(double(got[i]) - ref[i]));
  }
  return mx > 0 ? err / mx : err;
}

struct Errors {
  double flash = 1e9, old = 1e9;
};

Errors check(const Case &c) {
  Errors e;
  std::string why;
  GpuContext *gpu = context(&why);
  if (!gpu)
    return e;
  StatusOr<std::unique_ptr<Problem>> p = makeProblem(gpu, c);
  EXPECT_TRUE(p) << p.status().message();
  if (!p)
    return e;
  Problem &pr = **p;
  StatusOr<DeviceTensor> outNew = pr.st.empty(c.dtype, {pr.tokens, c.heads, c.d});
  StatusOr<DeviceTensor> outOld = pr.st.empty(c.dtype, {pr.tokens, c.heads, c.d});
  EXPECT_TRUE(outNew && outOld);
  if (!outNew || !outOld)
    return e;
  // Poison the outputs: every row must be written.
  std::vector<uint8_t> nan(outNew->byteSize(), 0xFF); // NaN in bf16 and f16
  EXPECT_TRUE(gpu->upload(outNew->ptr, nan.data(), nan.size()).isOk());
  StatusOr<bool> ran = runNew(pr, *outNew);
  EXPECT_TRUE(ran) << ran.status().message();
  EXPECT_TRUE(ran && *ran) << "the flash kernel did not run: " << describe(c);
  Status old = runOld(pr, *outOld);
  EXPECT_TRUE(old.isOk()) << old.message();
  StatusOr<std::vector<float>> gotNew = download(pr, *outNew), gotOld = download(pr, *outOld);
  EXPECT_TRUE(gotNew && gotOld);
  if (!ran || !*ran || !old.isOk() || !gotNew || !gotOld)
    return e;
  const std::vector<double> ref = reference(pr);
  e.flash = relError(*gotNew, ref);
  e.old = relError(*gotOld, ref);
  return e;
}

#define REQUIRE_GPU()                                                                       \
  do {                                                                                      \
    std::string why;                                                                        \
    if (!context(&why))                                                                     \
      GTEST_SKIP() << why;                                                                  \
  } while (0)

// Errors against the double reference from the rounded inputs, relative to
// max |reference|: the output is rounded to the dtype, and P to the dtype
// before P V (as FlashAttention does); the old kernel keeps P in f32.
double tolerance(DType dt) { return dt == DType::kBF16 ? 2e-2 : 4e-3; }

void expectCase(Case c) {
  for (DType dt : {DType::kBF16, DType::kF16}) {
    c.dtype = dt;
    Errors e = check(c);
    EXPECT_LE(e.flash, tolerance(dt)) << describe(c) << " (old kernel: " << e.old << ")";
    EXPECT_LE(e.old, tolerance(dt)) << describe(c);
    if (std::getenv("ACCEL_TEST_VERBOSE"))
      std::printf("%-70s flash %.2e old %.2e\n", describe(c).c_str(), e.flash, e.old);
  }
}

} // namespace

TEST(FlashPrefill, SingleSequenceTileRemainders) {
  REQUIRE_GPU();
  for (int64_t d : {64, 128})
    for (int64_t n : {1, 15, 17, 64, 100, 300}) {
      Case c;
      c.d = d;
      c.seqs = {{n, n}};
      expectCase(c); // GQA 4:1
      c.heads = c.kvHeads = 4;
      expectCase(c); // MHA
    }
}

TEST(FlashPrefill, RaggedBatchesAndCachedPrefixes) {
  REQUIRE_GPU();
  for (int64_t d : {64, 128}) {
    Case c;
    c.d = d;
    c.seqs = {{100, 100}, {37, 37}};
    expectCase(c);
    // Chunks after cached tokens, a decode token, an empty sequence.
    c.seqs = {{70, 200}, {1, 50}, {0, 9}, {16, 16 + 3 * 64}, {129, 300}};
    expectCase(c);
    c.heads = c.kvHeads = 2;
    expectCase(c);
  }
}

TEST(FlashPrefill, GroupSizesAndBlockSizes) {
  REQUIRE_GPU();
  Case c;
  c.seqs = {{33, 33}, {90, 150}};
  c.heads = 8;
  c.kvHeads = 1; // MQA: 8 heads per tile row group
  expectCase(c);
  c.heads = 6;
  c.kvHeads = 2; // G = 3: a token's heads straddle tiles
  c.d = 64;
  expectCase(c);
  c.heads = 4;
  c.kvHeads = 2;
  for (int64_t bs : {32, 5, 1}) {
    c.blockSize = bs;
    expectCase(c);
  }
}

TEST(FlashPrefill, WindowSoftcapNonCausal) {
  REQUIRE_GPU();
  Case c;
  c.heads = 4;
  c.kvHeads = 2;
  c.seqs = {{150, 180}, {40, 40}};
  c.window = 37;
  c.softcap = 5.0f;
  expectCase(c);
  c.window = 64;
  c.softcap = 0;
  c.d = 64;
  expectCase(c);
  c.window = 0;
  c.causal = false;
  c.scale = 0.05f;
  c.seqs = {{50, 90}, {17, 17}};
  expectCase(c);
  c.softcap = 2.0f;
  c.window = 20; // non-causal with a window: keys [pos - 19, L - 1]
  expectCase(c);
}

// The step policy: short query runs, f32, other head dims and the
// executor's tuning (GpuRunState::flashPrefill off) keep the old kernel.
TEST(FlashPrefill, PolicyFallsBack) {
  REQUIRE_GPU();
  GpuContext *gpu = context(nullptr);
  Case c;
  c.seqs = {{15, 40}, {3, 3}};
  StatusOr<std::unique_ptr<Problem>> p = makeProblem(gpu, c);
  ASSERT_TRUE(p) << p.status().message();
  Problem &pr = **p;
  StatusOr<DeviceTensor> out = pr.st.empty(c.dtype, {pr.tokens, c.heads, c.d});
  ASSERT_TRUE(out);
  StatusOr<bool> r = engine::runFlashPrefill(pr.st, pr.dq, *out, 0, pr.scale, true, 0, 0);
  ASSERT_TRUE(r);
  EXPECT_FALSE(*r); // every query run shorter than 16
  c.seqs = {{16, 40}, {3, 3}};
  p = makeProblem(gpu, c);
  ASSERT_TRUE(p);
  out = (*p)->st.empty(c.dtype, {(*p)->tokens, c.heads, c.d});
  r = engine::runFlashPrefill((*p)->st, (*p)->dq, *out, 0, (*p)->scale, true, 0, 0);
  ASSERT_TRUE(r);
  EXPECT_TRUE(*r);
  (*p)->st.flashPrefill = false;
  r = engine::runFlashPrefill((*p)->st, (*p)->dq, *out, 0, (*p)->scale, true, 0, 0);
  ASSERT_TRUE(r);
  EXPECT_FALSE(*r);
  (*p)->st.headDim = 96;
  r = engine::launchFlashPrefill((*p)->st, (*p)->dq, *out, 0, (*p)->scale, true, 0, 0);
  ASSERT_TRUE(r);
  EXPECT_FALSE(*r);
}

namespace {

/// Times `fn` (after warm-up): ms per call.
template <typename Fn> double timeMs(GpuContext *gpu, Fn fn, int iters) {
  for (int i = 0; i < 2; ++i)
    if (!fn())
      return -1;
  if (!gpu->synchronize().isOk())
    return -1;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i)
    if (!fn())
      return -1;
  if (!gpu->synchronize().isOk())
    return -1;
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(t1 - t0).count() / iters;
}

int bench() {
  std::string why;
  GpuContext *gpu = context(&why);
  if (!gpu) {
    std::printf("no GPU: %s\n", why.c_str());
    return 77;
  }
  std::printf("%s\n", gpu->info().name.c_str());
  struct Shape {
    int64_t n, l;
  };
  for (DType dt : {DType::kBF16, DType::kF16})
    for (Shape s : {Shape{2048, 2048}, Shape{512, 2048}, Shape{4096, 4096}}) {
      Case c;
      c.heads = 32;
      c.kvHeads = 8;
      c.d = 128;
      c.dtype = dt;
      c.seqs = {{s.n, s.l}};
      StatusOr<std::unique_ptr<Problem>> p = makeProblem(gpu, c, 1.0f);
      if (!p) {
        std::printf("setup failed: %s\n", p.status().message().c_str());
        return 1;
      }
      Problem &pr = **p;
      StatusOr<DeviceTensor> outNew = pr.st.empty(dt, {pr.tokens, c.heads, c.d});
      StatusOr<DeviceTensor> outOld = pr.st.empty(dt, {pr.tokens, c.heads, c.d});
      if (!outNew || !outOld)
        return 1;
      // Visible (query, key) pairs: causal, the queries are the last n of l.
      double pairs = 0;
      for (int64_t j = 0; j < s.n; ++j)
        pairs += double(s.l - s.n + j + 1);
      const double flops = 4.0 * double(c.d) * double(c.heads) * pairs;
      const double msNew = timeMs(
          gpu, [&] { StatusOr<bool> r = runNew(pr, *outNew); return r && *r; }, 20);
      const double msOld = timeMs(gpu, [&] { return runOld(pr, *outOld).isOk(); }, 3);
      StatusOr<std::vector<float>> a = download(pr, *outNew), b = download(pr, *outOld);
      double diff = 0, mx = 0;
      if (a && b)
        for (size_t i = 0; i < a->size(); ++i) {
          diff = std::max(diff, double(std::fabs((*a)[i] - (*b)[i])));
          mx = std::max(mx, double(std::fabs((*b)[i])));
        }
      std::printf("%s prefill %5lld queries over %5lld keys, 32/8 heads, d 128: flash %8.3f ms "
                  "(%6.1f TFLOP/s)  old %8.3f ms (%6.1f TFLOP/s)  speed-up %5.1fx  "
                  "max|new-old|/max|old| %.1e\n",
                  dtypeName(dt), (long long)s.n, (long long)s.l, msNew, flops / msNew * 1e-9,
                  msOld, flops / msOld * 1e-9, msOld / msNew, mx > 0 ? diff / mx : diff);
    }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--bench") == 0)
      return bench();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
