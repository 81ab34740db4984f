//===- DecodeAttentionTest.cpp - the decode attention kernels --------------===//
//
// decode_attention_* (runtime/cuda/kernels/DecodeAttention.cu, a key row
// over a warp) and decode_attention_kp_* (DecodeAttentionKP.cu, a key row
// over D / 16 lanes), launched as ops/Attention.cpp launches them, against a
// double-precision CPU reference computed from the same rounded inputs
// (PagedAttentionProblem.h): one query per sequence at the end of its
// context, head_dim 64, 128 and 256, one to eight query heads per KV head,
// contexts of 1 key to a few hundred (not multiples of the keys a warp
// loads per iteration), block sizes 16 and 5 with shuffled tables, sliding
// window, softcap, split-KV with attention_combine, an f8E4M3FN cache with
// per-layer and per-head scales, and a padded row (seq_len 0) that must
// come out zero. Pool slots no sequence owns hold NaN.
//
// Label `gpu`: without a GPU every test reports SKIPPED.
//
//   accel-gpu-decode-attention-tests           the tests (gtest flags work)
//   accel-gpu-decode-attention-tests --bench   one layer of Llama-3-8B shapes
//       (32 query / 8 KV heads of 128, bf16) at batch 1 to 1024: us per call
//       and KV bytes read per second for both kernels, with the split-KV
//       geometry the executor would choose (GraphBuckets.h)
//
//===----------------------------------------------------------------------===//
#include "GpuTestContext.h"
#include "PagedAttentionProblem.h"
#include "runtime/cuda/GraphBuckets.h"
#include "runtime/cuda/kernels/KvScales.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

using namespace accel::rt;
using namespace accel::rt::test::paged;

namespace {

/// The warp kernel, and the key-parallel one with its variants 0-3
/// (DecodeAttentionKP.cu, ACCEL_GPU_DECODE_KP_VARIANT).
enum class Kernel { kWarp, kKeyParallel, kKp1, kKp2, kKp3 };
constexpr Kernel kKpKernels[] = {Kernel::kKeyParallel, Kernel::kKp1, Kernel::kKp2, Kernel::kKp3};

/// "" or "v1_" .. "v3_": the variant part of a key-parallel kernel's name.
std::string kpVariant(Kernel k) {
  return k <= Kernel::kKeyParallel ? "" : "v" + std::to_string(int(k) - 1) + "_";
}

std::string kernelName(Kernel k) {
  return k == Kernel::kWarp ? "decode_attention" : "decode_attention_kp_" + kpVariant(k);
}

/// The function name ops/Attention.cpp would load, or "" where the kernel
/// has no variant for the case.
std::string functionName(Kernel k, const Case &c) {
  const int64_t group = c.heads / c.kvHeads;
  std::string base;
  if (k == Kernel::kWarp) {
    if (group > 8)
      return "";
    base = "decode_attention_d" + std::to_string(c.d);
  } else {
    if (group > 4 || c.dtype == DType::kF32)
      return "";
    base = "decode_attention_kp_" + kpVariant(k) + "g" + std::string(group == 1 ? "1" : "4") + "_d" +
           std::to_string(c.d);
  }
  return base + "_" + engine::gpuDTypeSuffix(c.dtype) + (c.fp8Cache ? "_kv8" : "");
}

struct Split {
  int numSplits = 1;
  int64_t splitSize = 0;
};

kernels::KvScales scalesOf(const Case &c, bool perHead) {
  kernels::KvScales s;
  if (!c.fp8Cache)
    return s;
  if (!perHead) {
    s.k[0] = c.kScale;
    s.v[0] = c.vScale;
    return s;
  }
  // Per-head scales that all equal the case's: the kernels must index them.
  s.heads = int(c.kvHeads);
  for (int64_t h = 0; h < c.kvHeads; ++h) {
    s.k[h] = c.kScale;
    s.v[h] = c.vScale;
  }
  return s;
}

/// One decode attention (and its combine when split) into `out`.
Status run(Problem &p, Kernel k, const DeviceTensor &out, Split split, bool perHeadScales,
           DeviceTensor *partials) {
  using i64 = long long;
  const Case &c = p.c;
  GpuRunState &st = p.st;
  const std::string name = functionName(k, c);
  if (name.empty())
    return Status(StatusCode::kUnimplemented, "no kernel");
  ACCEL_RT_ASSIGN_OR_RETURN(gpu::CuFunction fn, st.gpu->function(name));
  gpu::CuDevicePtr pm = 0, pl = 0, pacc = 0;
  const int64_t seqs = int64_t(c.seqs.size());
  if (split.numSplits > 1) {
    const int64_t n = p.tokens * c.heads * split.numSplits;
    if (!partials->defined() || partials->numElements() < n * (c.d + 2)) {
      ACCEL_RT_ASSIGN_OR_RETURN(*partials, st.empty(DType::kF32, {n * (c.d + 2)}));
    }
    pm = partials->ptr;
    pl = pm + gpu::CuDevicePtr(n) * 4;
    pacc = pl + gpu::CuDevicePtr(n) * 4;
  }
  ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(
      fn, gpu::Dim3{unsigned(seqs), unsigned(c.kvHeads), unsigned(split.numSplits)},
      gpu::Dim3{128, 1, 1}, 0, p.dq.ptr, p.dk.ptr, p.dv.ptr, p.dqsl.ptr, p.dlens.ptr,
      p.dtables.ptr, i64(p.width), out.ptr, pm, pl, pacc, i64(c.heads), i64(c.kvHeads),
      i64(c.blockSize), p.scale, i64(c.window), c.softcap, split.numSplits, i64(split.splitSize),
      gpu::CuDevicePtr(0), scalesOf(c, perHeadScales)));
  if (split.numSplits == 1)
    return Status::ok();
  ACCEL_RT_ASSIGN_OR_RETURN(
      gpu::CuFunction combine,
      st.gpu->function(std::string("attention_combine_") + engine::gpuDTypeSuffix(c.dtype)));
  const unsigned threads = unsigned(std::clamp<int64_t>((c.d + 31) / 32 * 32, 32, 1024));
  return st.gpu->launch(combine, gpu::Dim3{unsigned(p.tokens), unsigned(c.heads), 1},
                        gpu::Dim3{threads, 1, 1}, 0, pm, pl, pacc, out.ptr, i64(c.heads),
                        i64(c.d), split.numSplits);
}

/// Decode-only cases: every sequence has one query.
Case decodeCase(std::vector<int64_t> lens) {
  Case c;
  for (int64_t l : lens)
    c.seqs.push_back({1, l});
  return c;
}

double tolerance(const Case &c) { return c.dtype == DType::kF16 && !c.fp8Cache ? 4e-3 : 2e-2; }

/// Runs `c` through kernel `k` and checks it against the reference.
void expectCase(const Case &c, Kernel k, Split split = {}, bool perHeadScales = false) {
  std::string why;
  GpuContext *gpu = test::gpuTestContext(&why);
  if (!gpu)
    GTEST_SKIP() << why;
  SCOPED_TRACE(kernelName(k) + " " + describe(c) + " splits " +
               std::to_string(split.numSplits) + (c.fp8Cache ? " fp8 cache" : "") +
               (perHeadScales ? " per-head scales" : ""));
  ASSERT_FALSE(functionName(k, c).empty());
  StatusOr<std::unique_ptr<Problem>> p = makeProblem(gpu, c, 2.0f);
  ASSERT_TRUE(p) << p.status().message();
  Problem &pr = **p;
  StatusOr<DeviceTensor> out = pr.st.empty(c.dtype, {pr.tokens, c.heads, c.d});
  ASSERT_TRUE(out);
  DeviceTensor partials;
  Status s = run(pr, k, *out, split, perHeadScales, &partials);
  ASSERT_TRUE(s.isOk()) << s.message();
  StatusOr<std::vector<float>> got = download(pr, *out);
  ASSERT_TRUE(got) << got.status().message();
  const std::vector<double> ref = reference(pr);
  EXPECT_LE(relError(*got, ref), tolerance(c));
}

void bothKernels(const Case &c, Split split = {}, bool perHeadScales = false) {
  expectCase(c, Kernel::kWarp, split, perHeadScales);
  for (Kernel k : kKpKernels)
    if (!functionName(k, c).empty())
      expectCase(c, k, split, perHeadScales);
}

const std::vector<int64_t> kLens = {1, 2, 7, 16, 17, 40, 100, 333};

} // namespace

TEST(DecodeAttention, HeadDimsAndGroups) {
  for (DType dt : {DType::kBF16, DType::kF16})
    for (int64_t d : {64, 128, 256})
      for (auto [heads, kvHeads] : std::vector<std::pair<int64_t, int64_t>>{
               {8, 8}, {8, 4}, {12, 4}, {16, 4}, {16, 2}}) {
        Case c = decodeCase(kLens);
        c.dtype = dt;
        c.d = d;
        c.heads = heads;
        c.kvHeads = kvHeads;
        c.seed = uint32_t(d + heads);
        bothKernels(c);
      }
}

TEST(DecodeAttention, BlockSizeWindowSoftcap) {
  Case c = decodeCase({5, 23, 64, 301});
  c.heads = 16;
  c.kvHeads = 4;
  c.blockSize = 5;
  bothKernels(c);
  c.blockSize = 16;
  c.window = 50;
  bothKernels(c);
  c.window = 0;
  c.softcap = 30.0f;
  c.scale = 0.2f;
  bothKernels(c);
}

TEST(DecodeAttention, SplitKv) {
  Case c = decodeCase({3, 90, 257, 600});
  c.heads = 32;
  c.kvHeads = 8;
  for (int n : {2, 4, 16}) {
    Split s;
    s.numSplits = n;
    s.splitSize = (600 + n - 1) / n;
    bothKernels(c, s);
  }
  c.window = 100;
  bothKernels(c, Split{4, 150});
}

TEST(DecodeAttention, Fp8Cache) {
  for (DType dt : {DType::kBF16, DType::kF16})
    for (int64_t d : {64, 128, 256}) {
      Case c = decodeCase({1, 17, 130});
      c.dtype = dt;
      c.d = d;
      c.heads = 16;
      c.kvHeads = 4;
      c.fp8Cache = true;
      c.kScale = 0.01f;
      c.vScale = 0.02f;
      bothKernels(c);
      bothKernels(c, {}, /*perHeadScales=*/true);
      bothKernels(c, Split{4, 33});
    }
}

TEST(DecodeAttention, PaddedRowIsZero) {
  std::string why;
  GpuContext *gpu = test::gpuTestContext(&why);
  if (!gpu)
    GTEST_SKIP() << why;
  // A CUDA graph's padded rows have seq_len 0: both kernels write zeros.
  Case c = decodeCase({20, 1});
  c.heads = 16;
  c.kvHeads = 4;
  for (Kernel k : {Kernel::kWarp, Kernel::kKeyParallel, Kernel::kKp1, Kernel::kKp2, Kernel::kKp3}) {
    StatusOr<std::unique_ptr<Problem>> p = makeProblem(gpu, c);
    ASSERT_TRUE(p);
    Problem &pr = **p;
    const std::vector<int32_t> lens = {20, 0};
    ASSERT_TRUE(gpu->upload(pr.dlens.ptr, lens.data(), lens.size() * 4).isOk());
    StatusOr<DeviceTensor> out = pr.st.empty(c.dtype, {pr.tokens, c.heads, c.d});
    ASSERT_TRUE(out);
    DeviceTensor partials;
    ASSERT_TRUE(run(pr, k, *out, {}, false, &partials).isOk());
    StatusOr<std::vector<float>> got = download(pr, *out);
    ASSERT_TRUE(got);
    for (int64_t i = c.heads * c.d; i < 2 * c.heads * c.d; ++i)
      ASSERT_EQ((*got)[size_t(i)], 0.0f) << kernelName(k) << " element " << i;
  }
}

namespace {

int bench() {
  std::string why;
  GpuContext *gpu = test::gpuTestContext(&why);
  if (!gpu) {
    std::printf("no GPU: %s\n", why.c_str());
    return 77;
  }
  const int64_t sms = gpu->info().multiprocessors > 0 ? gpu->info().multiprocessors : 132;
  std::printf("%s, %lld multiprocessors; one layer, 32/8 heads of 128, bf16, block 16\n",
              gpu->info().name.c_str(), (long long)sms);
  struct Shape {
    int64_t batch, ctx;
  };
  for (Shape s : {Shape{1, 4096}, Shape{16, 2048}, Shape{64, 1024}, Shape{64, 192},
                  Shape{256, 192}, Shape{256, 512}, Shape{1024, 192}})
    for (bool fp8 : {false, true}) {
      Case c = decodeCase(std::vector<int64_t>(size_t(s.batch), s.ctx));
      c.heads = 32;
      c.kvHeads = 8;
      c.d = 128;
      c.fp8Cache = fp8;
      c.kScale = c.vScale = 0.01f;
      StatusOr<std::unique_ptr<Problem>> p = makeProblem(gpu, c, 1.0f);
      if (!p) {
        std::printf("setup failed: %s\n", p.status().message().c_str());
        return 1;
      }
      Problem &pr = **p;
      const engine::DecodeSplit ds =
          engine::decodeSplitFor(s.ctx, 256, s.batch * c.kvHeads, 2 * sms);
      const Split split{ds.numSplits, ds.splitSize};
      const double bytes = double(s.batch) * double(s.ctx) * double(c.kvHeads * c.d) * 2.0 *
                           (fp8 ? 1.0 : 2.0);
      double ms[5] = {0, 0, 0, 0, 0};
      std::vector<float> outs[5];
      for (Kernel k : {Kernel::kWarp, Kernel::kKeyParallel, Kernel::kKp1, Kernel::kKp2, Kernel::kKp3}) {
        StatusOr<DeviceTensor> out = pr.st.empty(c.dtype, {pr.tokens, c.heads, c.d});
        if (!out)
          return 1;
        DeviceTensor partials;
        auto once = [&] { return run(pr, k, *out, split, false, &partials).isOk(); };
        for (int i = 0; i < 3; ++i)
          if (!once())
            return 1;
        if (!gpu->synchronize().isOk())
          return 1;
        const int iters = 50;
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < iters; ++i)
          once();
        if (!gpu->synchronize().isOk())
          return 1;
        ms[int(k)] = std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - t0)
                         .count() /
                     iters;
        StatusOr<std::vector<float>> got = download(pr, *out);
        if (got)
          outs[int(k)] = std::move(*got);
      }
      double mx = 0;
      for (float v : outs[0])
        mx = std::max(mx, double(std::fabs(v)));
      std::printf("batch %5lld ctx %5lld %-4s splits %2d: warp %7.1f us %5.0f GB/s", (long long)s.batch,
                  (long long)s.ctx, fp8 ? "fp8" : "bf16", split.numSplits, 1e3 * ms[0],
                  bytes / ms[0] * 1e-6);
      for (int v = 1; v < 5; ++v) {
        double diff = 0;
        for (size_t i = 0; i < outs[0].size() && i < outs[v].size(); ++i)
          diff = std::max(diff, double(std::fabs(outs[0][i] - outs[v][i])));
        std::printf(" | kp%d %7.1f us %5.0f GB/s %.2fx (%.0e)", v - 1, 1e3 * ms[v],
                    bytes / ms[v] * 1e-6, ms[0] / ms[v], mx > 0 ? diff / mx : diff);
      }
      std::printf("\n");
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
