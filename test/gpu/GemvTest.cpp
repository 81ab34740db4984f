//===- GemvTest.cpp - the decode-step GEMM kernels ---------------------------===//
//
// gemv_m1_* (runtime/cuda/kernels/Gemv.cu) against a double-precision CPU
// product of the same rounded bf16/f16 inputs: one row, N not a multiple of
// the columns a block makes, K from one 16-byte chunk to Llama-3's 14336
// (chunk counts that are not multiples of what a warp reads per round, nor
// of the split), every split-K (ks = 1, 2, 4, 8) and the one gemvShape
// picks, outputs in the input dtype and in f32. Columns past N must stay
// untouched (NaN sentinels).
//
// Label `gpu`: without a GPU every test reports SKIPPED.
//
//   accel-gpu-gemv-tests            the tests
//   accel-gpu-gemv-tests --bench    HBM bandwidth of the Llama-3-8B decode
//                                   shapes (weight bytes read / time) for
//                                   every split-K, and the chosen one; the
//                                   int4 GEMMs (GemvInt4Test.cpp) at 1 and
//                                   16 rows
//
//===----------------------------------------------------------------------===//
#include "GpuTestContext.h"
#include "core/Tensor.h"
#include "runtime/cuda/kernels/GemvShape.h"
#include "runtime/cuda/kernels/KernelImage.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace accel::rt;
using gpu::GpuContext;

namespace {

GpuContext *context(std::string *why) { return test::gpuTestContext(why); }

namespace kn = accel::rt::kernels;

struct Case {
  int64_t n, k;
  DType dtype;
  bool f32Out;
  int ks;                  // 0: gemvShape's choice
  const char *variant = ""; // Gemv.cu: "" double buffered, "sr_" single round
};

/// Runs one case; returns the worst |got - ref| / (sum_k |x w| + tiny) over
/// the outputs, or +inf when a sentinel was overwritten or a call failed.
double runCase(GpuContext &gpu, const Case &c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> xs(size_t(c.k)), ws(size_t(c.n * c.k));
  for (float &v : xs)
    v = nd(rng);
  for (float &v : ws)
    v = nd(rng) * 0.05f;
  Tensor xt = Tensor::fromVector<float>({1, c.k}, xs)->astype(c.dtype, false);
  Tensor wt = Tensor::fromVector<float>({c.n, c.k}, ws)->astype(c.dtype, false);
  Tensor xr = xt.toF32(), wr = wt.toF32();
  const DType outType = c.f32Out ? DType::kF32 : c.dtype;
  // y has room for N + 8 columns: the extra must stay NaN.
  const int64_t yElems = c.n + 8;
  Tensor sentinel = Tensor::fromVector<float>(
                        {yElems}, std::vector<float>(size_t(yElems),
                                                     std::numeric_limits<float>::quiet_NaN()))
                        ->astype(outType, false);
  auto xb = gpu.allocate(xt.byteSize()), wb = gpu.allocate(wt.byteSize()),
       yb = gpu.allocate(sentinel.byteSize());
  if (!xb || !wb || !yb)
    return std::numeric_limits<double>::infinity();
  EXPECT_TRUE(gpu.upload((*xb)->ptr, xt.rawData(), xt.byteSize()).isOk());
  EXPECT_TRUE(gpu.upload((*wb)->ptr, wt.rawData(), wt.byteSize()).isOk());
  EXPECT_TRUE(gpu.upload((*yb)->ptr, sentinel.rawData(), sentinel.byteSize()).isOk());
  const std::string name = std::string("gemv_m1_") + c.variant +
                           (c.dtype == DType::kBF16 ? "bf16" : "f16") +
                           (c.f32Out ? "_f32out" : "");
  StatusOr<gpu::CuFunction> fn = gpu.function(name);
  EXPECT_TRUE(fn) << fn.status().message();
  if (!fn)
    return std::numeric_limits<double>::infinity();
  using i64 = long long;
  const kn::GemvShape shape = kn::gemvShape(c.n, c.k, 8192, c.ks);
  Status s = gpu.launchDependent(*fn, gpu::Dim3{shape.blocks, 1, 1},
                                 gpu::Dim3{kn::kGemvWarps * 32, 1, 1}, 0, (*xb)->ptr, (*wb)->ptr,
                                 (*yb)->ptr, i64(c.n), i64(c.k), int(shape.ks));
  EXPECT_TRUE(s.isOk()) << s.message();
  Tensor y = *Tensor::allocate(outType, {yElems});
  EXPECT_TRUE(gpu.download(y.rawData(), (*yb)->ptr, y.byteSize()).isOk());
  Tensor yf = y.toF32();
  const float *got = yf.data<float>();
  double worst = 0;
  for (int64_t j = 0; j < c.n; ++j) {
    const float g = got[j];
    double ref = 0, mag = 0;
    for (int64_t q = 0; q < c.k; ++q) {
      const double p = double(xr.data<float>()[q]) * wr.data<float>()[j * c.k + q];
      ref += p;
      mag += std::fabs(p);
    }
    worst = std::max(worst, std::fabs(g - ref) / (mag + 1e-12));
  }
  for (int64_t e = c.n; e < yElems; ++e)
    if (!std::isnan(got[e]))
      return std::numeric_limits<double>::infinity(); // past the last column
  return worst;
}

#define REQUIRE_GPU(var) ACCEL_REQUIRE_GPU_CONTEXT(var)

} // namespace

TEST(Gemv, MatchesDoubleReference) {
  REQUIRE_GPU(gpu);
  uint32_t seed = 1;
  for (DType dt : {DType::kBF16, DType::kF16})
    for (bool f32Out : {true, false})
      for (const char *variant : {"", "sr_"})
      for (int ks : {0, 1, 2, 4, 8})
        for (auto [n, k] : {std::pair<int64_t, int64_t>{1, 8}, {13, 24}, {64, 1032},
                            {1000, 4096}, {37, 14336}, {3, 8200}}) {
          const double err = runCase(*gpu, {n, k, dt, f32Out, ks, variant}, seed++);
          // f32 outputs: f32 accumulation only; bf16/f16 outputs: one rounding.
          const double tol = f32Out ? 1e-5 : dt == DType::kBF16 ? 8e-3 : 1e-3;
          EXPECT_LE(err, tol) << dtypeName(dt) << (f32Out ? " f32 out" : "") << " ks " << ks
                              << " n " << n << " k " << k << " variant '" << variant << "'";
        }
}

// The gated epilogue: w = [gate; up] (2 * inter rows), y[j] =
// act(gate_j . x) * (up_j . x), silu and gelu_tanh, every split it allows.
TEST(Gemv, GatedEpilogueMatchesDoubleReference) {
  REQUIRE_GPU(gpu);
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (DType dt : {DType::kBF16, DType::kF16})
    for (int kind : {0, 2}) // Common.cuh's activate: silu, gelu_tanh
      for (const char *variant : {"", "sr_"})
      for (int ks : {0, 1, 2, 4})
        for (auto [inter, k] : {std::pair<int64_t, int64_t>{1, 8}, {11, 136}, {300, 4096}}) {
          std::vector<float> xs(static_cast<size_t>(k)), ws(static_cast<size_t>(2 * inter * k));
          for (float &v : xs)
            v = nd(rng);
          for (float &v : ws)
            v = nd(rng) * 0.05f;
          Tensor xt = Tensor::fromVector<float>({1, k}, xs)->astype(dt, false);
          Tensor wt = Tensor::fromVector<float>({2 * inter, k}, ws)->astype(dt, false);
          Tensor xr = xt.toF32(), wr = wt.toF32();
          const int64_t yElems = inter + 8;
          Tensor sentinel =
              Tensor::fromVector<float>({yElems}, std::vector<float>(size_t(yElems), NAN))
                  ->astype(dt, false);
          auto xb = gpu->allocate(xt.byteSize()), wb = gpu->allocate(wt.byteSize()),
               yb = gpu->allocate(sentinel.byteSize());
          ASSERT_TRUE(xb && wb && yb);
          ASSERT_TRUE(gpu->upload((*xb)->ptr, xt.rawData(), xt.byteSize()).isOk());
          ASSERT_TRUE(gpu->upload((*wb)->ptr, wt.rawData(), wt.byteSize()).isOk());
          ASSERT_TRUE(gpu->upload((*yb)->ptr, sentinel.rawData(), sentinel.byteSize()).isOk());
          auto fn = gpu->function(std::string("gemv_m1_gated_") + variant +
                                  (dt == DType::kBF16 ? "bf16" : "f16"));
          ASSERT_TRUE(fn) << fn.status().message();
          const kn::GemvShape shape = kn::gemvShape(2 * inter, k, 8192, ks, true);
          using i64 = long long;
          ASSERT_TRUE(gpu->launch(*fn, gpu::Dim3{shape.blocks, 1, 1},
                                  gpu::Dim3{kn::kGemvWarps * 32, 1, 1}, 0, (*xb)->ptr, (*wb)->ptr,
                                  (*yb)->ptr, i64(inter), i64(k), int(shape.ks), kind)
                          .isOk());
          Tensor y = *Tensor::allocate(dt, {yElems});
          ASSERT_TRUE(gpu->download(y.rawData(), (*yb)->ptr, y.byteSize()).isOk());
          Tensor yf = y.toF32();
          double worst = 0;
          for (int64_t j = 0; j < inter; ++j) {
            double g = 0, u = 0;
            for (int64_t q = 0; q < k; ++q) {
              g += double(xr.data<float>()[q]) * wr.data<float>()[j * k + q];
              u += double(xr.data<float>()[q]) * wr.data<float>()[(inter + j) * k + q];
            }
            const double a = kind == 0 ? g / (1 + std::exp(-g))
                                       : 0.5 * g *
                                             (1 + std::tanh(0.7978845608028654 *
                                                            (g + 0.044715 * g * g * g)));
            const double ref = a * u;
            worst = std::max(worst, std::fabs(yf.data<float>()[j] - ref) / (std::fabs(ref) + 1e-2));
          }
          for (int64_t e = inter; e < yElems; ++e)
            EXPECT_TRUE(std::isnan(yf.data<float>()[e])) << "column " << e << " written";
          // One rounding of the result (bf16 8 bits, f16 11) plus f32 sums.
          EXPECT_LE(worst, dt == DType::kBF16 ? 1e-2 : 2e-3)
              << dtypeName(dt) << " kind " << kind << " ks " << ks << " inter " << inter
              << " k " << k << " variant '" << variant << "'";
        }
}

// Programmatic dependent launch: y1 = W1 x, then y2 = W2 y1 launched while
// the first may still run; the second must read this round's y1 (a stale
// read would match the previous round's). Ten rounds, x new each time.
TEST(Gemv, DependentLaunchesReadTheirInputAfterTheWait) {
  REQUIRE_GPU(gpu);
  const int64_t k = 4096, n1 = 4096, n2 = 1024;
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  auto randomBf16 = [&](std::vector<int64_t> shape, float amp) {
    int64_t count = 1;
    for (int64_t d : shape)
      count *= d;
    std::vector<float> v(static_cast<size_t>(count));
    for (float &f : v)
      f = nd(rng) * amp;
    return Tensor::fromVector<float>(shape, v)->astype(DType::kBF16, false);
  };
  Tensor w1 = randomBf16({n1, k}, 0.02f), w2 = randomBf16({n2, n1}, 0.02f);
  auto w1b = gpu->allocate(w1.byteSize()), w2b = gpu->allocate(w2.byteSize()),
       xb = gpu->allocate(size_t(k * 2)), y1b = gpu->allocate(size_t(n1 * 2)),
       y2b = gpu->allocate(size_t(n2 * 4));
  ASSERT_TRUE(w1b && w2b && xb && y1b && y2b);
  ASSERT_TRUE(gpu->upload((*w1b)->ptr, w1.rawData(), w1.byteSize()).isOk());
  ASSERT_TRUE(gpu->upload((*w2b)->ptr, w2.rawData(), w2.byteSize()).isOk());
  auto bf16 = gpu->function("gemv_m1_bf16");
  auto f32out = gpu->function("gemv_m1_bf16_f32out");
  ASSERT_TRUE(bf16 && f32out);
  using i64 = long long;
  const kn::GemvShape s1 = kn::gemvShape(n1, k), s2 = kn::gemvShape(n2, n1);
  const Tensor w2f = w2.toF32();
  for (int round = 0; round < 10; ++round) {
    Tensor x = randomBf16({1, k}, 1.0f);
    ASSERT_TRUE(gpu->upload((*xb)->ptr, x.rawData(), x.byteSize()).isOk());
    ASSERT_TRUE(gpu->launchDependent(*bf16, gpu::Dim3{s1.blocks, 1, 1},
                                     gpu::Dim3{kn::kGemvWarps * 32, 1, 1}, 0, (*xb)->ptr,
                                     (*w1b)->ptr, (*y1b)->ptr, i64(n1), i64(k), int(s1.ks))
                    .isOk());
    ASSERT_TRUE(gpu->launchDependent(*f32out, gpu::Dim3{s2.blocks, 1, 1},
                                     gpu::Dim3{kn::kGemvWarps * 32, 1, 1}, 0, (*y1b)->ptr,
                                     (*w2b)->ptr, (*y2b)->ptr, i64(n2), i64(n1), int(s2.ks))
                    .isOk());
    Tensor y1 = *Tensor::allocate(DType::kBF16, {n1}), y2 = *Tensor::allocate(DType::kF32, {n2});
    ASSERT_TRUE(gpu->download(y1.rawData(), (*y1b)->ptr, y1.byteSize()).isOk());
    ASSERT_TRUE(gpu->download(y2.rawData(), (*y2b)->ptr, y2.byteSize()).isOk());
    const Tensor y1f = y1.toF32();
    double worst = 0;
    for (int64_t j = 0; j < n2; ++j) {
      double ref = 0, mag = 0;
      for (int64_t q = 0; q < n1; ++q) {
        const double p = double(y1f.data<float>()[q]) * w2f.data<float>()[j * n1 + q];
        ref += p;
        mag += std::fabs(p);
      }
      worst = std::max(worst, std::fabs(y2.data<float>()[j] - ref) / (mag + 1e-12));
    }
    EXPECT_LE(worst, 1e-5) << "round " << round << " (pdl " << gpu->dependentLaunches() << ")";
  }
}

/// Seconds per call of once(i) (a launch), over 200 back-to-back calls after
/// 10 for warm-up.
template <typename Once> double secondsPerLaunch(GpuContext &gpu, Once once) {
  for (int i = 0; i < 10; ++i)
    once(i);
  (void)gpu.synchronize();
  const int reps = 200;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i)
    once(i);
  (void)gpu.synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
}

void benchInt4(GpuContext &gpu); // GemvInt4Test.cpp

int main(int argc, char **argv) {
  bool bench = false;
  for (int i = 1; i < argc; ++i)
    bench |= std::strcmp(argv[i], "--bench") == 0;
  if (!bench) {
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
  }
  std::string why;
  GpuContext *gpu = context(&why);
  if (!gpu) {
    std::fprintf(stderr, "no GPU: %s\n", why.c_str());
    return 77;
  }
  using i64 = long long;
  // Llama-3-8B decode shapes: qkv, o_proj, gate_up, down, lm_head.
  const std::pair<int64_t, int64_t> shapes[] = {
      {6144, 4096}, {4096, 4096}, {28672, 4096}, {4096, 14336}, {128256, 4096}};
  // gemv_m1_bf16 (what the runtime runs) at gemvShape's split and at every
  // split, and its bench-only single-round variant (Gemv.cu) at every split.
  for (auto [n, k] : shapes)
    for (const char *variant : {"gemv_m1_bf16", "gemv_m1_sr_bf16"})
    for (int ks : {0, 1, 2, 4, 8}) {
      if (ks == 0 && std::strcmp(variant, "gemv_m1_bf16") != 0)
        continue;
      // Several weight copies rotated, so that L2 (50 MB) does not serve them.
      const int copies = int(std::max<int64_t>(2, (512ll << 20) / (n * k * 2)));
      std::vector<gpu::DeviceBuffer> ws;
      for (int c = 0; c < copies; ++c)
        ws.push_back(*gpu->allocate(size_t(n * k * 2)));
      gpu::DeviceBuffer x = *gpu->allocate(size_t(k * 2)), y = *gpu->allocate(size_t(n * 4));
      (void)gpu->zero(x->ptr, size_t(k * 2));
      for (auto &w : ws)
        (void)gpu->zero(w->ptr, size_t(n * k * 2));
      gpu::CuFunction fn = *gpu->function(variant);
      const kn::GemvShape shape = kn::gemvShape(n, k, 8192, ks);
      auto once = [&](int i) {
        (void)gpu->launch(fn, gpu::Dim3{shape.blocks, 1, 1}, gpu::Dim3{kn::kGemvWarps * 32, 1, 1},
                          0, x->ptr, ws[size_t(i % copies)]->ptr, y->ptr, i64(n), i64(k),
                          int(shape.ks));
      };
      const double s = secondsPerLaunch(*gpu, once);
      std::printf("%-16s n %6lld k %5lld ks %d%s: %8.2f us, %6.2f TB/s of weights\n", variant,
                  (long long)n, (long long)k, shape.ks, ks ? "         " : " (chosen)", s * 1e6,
                  double(n * k * 2) / s / 1e12);
    }
  // The 8-bit weights of int8-weight / fp8 plans (half the bytes).
  for (const char *wt : {"i8", "e4m3"})
    for (auto [n, k] : shapes) {
      const int copies = int(std::max<int64_t>(2, (512ll << 20) / (n * k)));
      std::vector<gpu::DeviceBuffer> ws;
      for (int c = 0; c < copies; ++c)
        ws.push_back(*gpu->allocate(size_t(n * k)));
      gpu::DeviceBuffer x = *gpu->allocate(size_t(k * 2)), y = *gpu->allocate(size_t(n * 2)),
                        sc = *gpu->allocate(size_t(n * 4));
      (void)gpu->zero(x->ptr, size_t(k * 2));
      (void)gpu->zero(sc->ptr, size_t(n * 4));
      for (auto &w : ws)
        (void)gpu->zero(w->ptr, size_t(n * k));
      gpu::CuFunction fn = *gpu->function(std::string("gemv_m1_q_") + wt + "_bf16");
      const kn::GemvShape shape = kn::gemvShape(n, k / 2);
      auto once = [&](int i) {
        (void)gpu->launch(fn, gpu::Dim3{shape.blocks, 1, 1}, gpu::Dim3{kn::kGemvWarps * 32, 1, 1},
                          0, x->ptr, ws[size_t(i % copies)]->ptr, sc->ptr, 1, y->ptr, i64(n),
                          i64(k), int(shape.ks));
      };
      const double s = secondsPerLaunch(*gpu, once);
      std::printf("gemv %-4s n %6lld k %5lld ks %d (chosen): %8.2f us, %6.2f TB/s of weights\n", wt,
                  (long long)n, (long long)k, shape.ks, s * 1e6, double(n * k) / s / 1e12);
      // W8A8 (gemv_m1_w8a8_*: x as 8-bit codes too).
      gpu::CuFunction w8 = *gpu->function(std::string("gemv_m1_w8a8_") + wt + "_bf16");
      auto once8 = [&](int i) {
        (void)gpu->launch(w8, gpu::Dim3{shape.blocks, 1, 1}, gpu::Dim3{kn::kGemvWarps * 32, 1, 1},
                          0, x->ptr, sc->ptr, ws[size_t(i % copies)]->ptr, sc->ptr, 1, y->ptr,
                          i64(n), i64(k), int(shape.ks));
      };
      const double s8 = secondsPerLaunch(*gpu, once8);
      std::printf("gemv w8a8 %-4s n %6lld k %5lld ks %d: %8.2f us, %6.2f TB/s of weights\n", wt,
                  (long long)n, (long long)k, shape.ks, s8 * 1e6, double(n * k) / s8 / 1e12);
    }
  benchInt4(*gpu);
  return 0;
}
