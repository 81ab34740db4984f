//===- GemvTest.cpp - the decode-step GEMM kernels ---------------------------===//
//
// gemv_m<M>_* (runtime/kernels/Gemv.cu) against a double-precision CPU
// product of the same rounded bf16/f16 inputs: one row (the M = 1 kernel
// the runtime dispatches), N not a multiple of the 8 columns a block makes, K from one 16-byte chunk to Llama-3's 14336 (chunk counts that are
// not multiples of the 128 a warp reads per round), outputs in the input
// dtype and in f32. Columns past N must stay untouched (NaN sentinels).
//
// Label `gpu`: without a GPU every test reports SKIPPED.
//
//   accel-gpu-gemv-tests            the tests
//   accel-gpu-gemv-tests --bench    HBM bandwidth of the Llama-3-8B decode
//                                   shapes (weight bytes read / time)
//
//===----------------------------------------------------------------------===//
#include "GpuTestContext.h"
#include "runtime/kernels/KernelImage.h"
#include "runtime/tensor/Tensor.h"

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

int variantFor(int64_t) { return 1; } // Gemv.cu builds M = 1 only

struct Case {
  int64_t rows, n, k;
  DType dtype;
  bool f32Out;
};

/// Runs one case; returns the worst |got - ref| / (sum_k |x w| + tiny) over
/// the outputs, or +inf when a sentinel was overwritten or a call failed.
double runCase(GpuContext &gpu, const Case &c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> xs(size_t(c.rows * c.k)), ws(size_t(c.n * c.k));
  for (float &v : xs)
    v = nd(rng);
  for (float &v : ws)
    v = nd(rng) * 0.05f;
  Tensor xt = Tensor::fromVector<float>({c.rows, c.k}, xs)->astype(c.dtype, false);
  Tensor wt = Tensor::fromVector<float>({c.n, c.k}, ws)->astype(c.dtype, false);
  Tensor xr = xt.toF32(), wr = wt.toF32();
  const DType outType = c.f32Out ? DType::kF32 : c.dtype;
  const int64_t m = variantFor(c.rows);
  // y has M rows and N + 8 columns' worth of room: the extra must stay NaN.
  const int64_t yElems = m * c.n + 8;
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
  const std::string name = "gemv_m" + std::to_string(m) + "_" +
                           (c.dtype == DType::kBF16 ? "bf16" : "f16") +
                           (c.f32Out ? "_f32out" : "");
  StatusOr<gpu::CuFunction> fn = gpu.function(name);
  EXPECT_TRUE(fn) << fn.status().message();
  if (!fn)
    return std::numeric_limits<double>::infinity();
  using i64 = long long;
  Status s = gpu.launch(*fn, gpu::Dim3{unsigned((c.n + 7) / 8), 1, 1}, gpu::Dim3{256, 1, 1}, 0,
                        (*xb)->ptr, (*wb)->ptr, (*yb)->ptr, i64(c.rows), i64(c.n), i64(c.k));
  EXPECT_TRUE(s.isOk()) << s.message();
  Tensor y = *Tensor::allocate(outType, {yElems});
  EXPECT_TRUE(gpu.download(y.rawData(), (*yb)->ptr, y.byteSize()).isOk());
  Tensor yf = y.toF32();
  const float *got = yf.data<float>();
  double worst = 0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < c.n; ++j) {
      const float g = got[r * c.n + j];
      if (r >= c.rows) {
        if (!std::isnan(g))
          return std::numeric_limits<double>::infinity(); // a row past `rows` was written
        continue;
      }
      double ref = 0, mag = 0;
      for (int64_t q = 0; q < c.k; ++q) {
        const double p = double(xr.data<float>()[r * c.k + q]) * wr.data<float>()[j * c.k + q];
        ref += p;
        mag += std::fabs(p);
      }
      worst = std::max(worst, std::fabs(g - ref) / (mag + 1e-12));
    }
  for (int64_t e = m * c.n; e < yElems; ++e)
    if (!std::isnan(got[e]))
      return std::numeric_limits<double>::infinity(); // past the last column
  return worst;
}

#define REQUIRE_GPU(var)                                                                    \
  std::string why;                                                                          \
  GpuContext *var = context(&why);                                                          \
  if (!var)                                                                                 \
    GTEST_SKIP() << why;

} // namespace

TEST(Gemv, MatchesDoubleReference) {
  REQUIRE_GPU(gpu);
  uint32_t seed = 1;
  for (DType dt : {DType::kBF16, DType::kF16})
    for (bool f32Out : {true, false})
      for (int64_t rows : {int64_t(1)}) // the only variant (Gemv.cu)
        for (auto [n, k] : {std::pair<int64_t, int64_t>{1, 8}, {13, 24}, {64, 1032},
                            {1000, 4096}, {37, 14336}}) {
          const double err = runCase(*gpu, {rows, n, k, dt, f32Out}, seed++);
          // f32 outputs: f32 accumulation only; bf16/f16 outputs: one rounding.
          const double tol = f32Out ? 1e-5 : dt == DType::kBF16 ? 8e-3 : 1e-3;
          EXPECT_LE(err, tol) << dtypeName(dt) << (f32Out ? " f32 out" : "") << " rows " << rows
                              << " n " << n << " k " << k;
        }
}

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
  for (int64_t rows : {int64_t(1)})
    for (auto [n, k] : shapes) {
      // Several weight copies rotated, so that L2 (50 MB) does not serve them.
      const int copies = int(std::max<int64_t>(2, (512ll << 20) / (n * k * 2)));
      std::vector<gpu::DeviceBuffer> ws;
      for (int c = 0; c < copies; ++c)
        ws.push_back(*gpu->allocate(size_t(n * k * 2)));
      gpu::DeviceBuffer x = *gpu->allocate(size_t(rows * k * 2)), y = *gpu->allocate(size_t(rows * n * 4));
      (void)gpu->zero(x->ptr, size_t(rows * k * 2));
      for (auto &w : ws)
        (void)gpu->zero(w->ptr, size_t(n * k * 2));
      gpu::CuFunction fn = *gpu->function("gemv_m" + std::to_string(variantFor(rows)) + "_bf16");
      auto once = [&](int i) {
        (void)gpu->launch(fn, gpu::Dim3{unsigned((n + 7) / 8), 1, 1}, gpu::Dim3{256, 1, 1}, 0,
                          x->ptr, ws[size_t(i % copies)]->ptr, y->ptr, i64(rows), i64(n), i64(k));
      };
      for (int i = 0; i < 10; ++i)
        once(i);
      (void)gpu->synchronize();
      const int reps = 200;
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < reps; ++i)
        once(i);
      (void)gpu->synchronize();
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
      std::printf("gemv bf16 rows %lld n %6lld k %5lld: %8.2f us, %6.2f TB/s of weights\n",
                  (long long)rows, (long long)n, (long long)k, s * 1e6,
                  double(n * k * 2) / s / 1e12);
    }
  return 0;
}
