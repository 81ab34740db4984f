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
#include "PagedAttentionProblem.h"
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

using namespace test::paged;

GpuContext *context(std::string *why) { return test::gpuTestContext(why); }

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
