//===- GreedyTest.cpp - greedy token selection on the device ----------------===//
//
// argmax_chunks_* (runtime/cuda/kernels/Sampling.cu, through
// engine::greedyTokensOnDevice, which reduces the chunks' partials) against rows whose answer is fixed by
// construction: a unique maximum anywhere (first, last, middle of a
// Llama-3-sized vocabulary of 128256), ties (the lowest index wins, as
// std::max_element does), a constant row, rows the host sampler refuses
// (a NaN, a +inf, every value -inf: -1), and a random row checked against
// std::max_element over the same rounded values; in f32, bf16 and f16, for
// 1 to 70 rows.
//
// Label `gpu`: without a GPU every test reports SKIPPED.
//
//===----------------------------------------------------------------------===//
#include "GpuTestContext.h"
#include "runtime/cuda/GpuSteps.h"
#include "runtime/cuda/kernels/KernelImage.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using namespace accel::rt;
using gpu::GpuContext;

namespace {


/// Runs the device argmax over `rows` x `vocab` values (rounded to `dt`
/// first); `back` gets the rounded values.
std::vector<int64_t> deviceArgmax(GpuContext &gpu, const std::vector<float> &values, DType dt,
                                  int64_t rows, int64_t vocab, std::vector<float> *back) {
  Tensor t = *Tensor::fromVector<float>({rows, vocab}, values);
  Tensor r = t.astype(dt, /*saturate=*/false);
  Tensor f = r.toF32();
  back->assign(f.data<float>(), f.data<float>() + f.numElements());
  StatusOr<gpu::DeviceBuffer> buf = gpu.allocate(r.byteSize());
  EXPECT_TRUE(buf) << buf.status().message();
  if (!buf)
    return {};
  EXPECT_TRUE(gpu.upload((*buf)->ptr, r.rawData(), r.byteSize()).isOk());
  StatusOr<Tensor> ids = engine::greedyTokensOnDevice(gpu, (*buf)->ptr, dt, rows, vocab);
  EXPECT_TRUE(ids) << ids.status().message();
  if (!ids)
    return {};
  EXPECT_EQ(ids->dtype(), DType::kI64);
  return std::vector<int64_t>(ids->data<int64_t>(), ids->data<int64_t>() + rows);
}

#define REQUIRE_GPU(var) ACCEL_REQUIRE_GPU_CONTEXT(var)

} // namespace

TEST(GreedyOnDevice, ConstructedRowsAtLlamaVocabulary) {
  REQUIRE_GPU(gpu);
  const int64_t vocab = 128256, rows = 9;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v(size_t(rows * vocab));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  for (float &x : v)
    x = u(rng);
  auto row = [&](int64_t r) { return v.data() + r * vocab; };
  std::vector<int64_t> want(size_t(rows), -1);
  row(0)[0] = 100.0f;                         // first index
  want[0] = 0;
  row(1)[vocab - 1] = 100.0f;                 // last index
  want[1] = vocab - 1;
  row(2)[77777] = 100.0f;                     // a tie: the lower index wins
  row(2)[9] = 100.0f;
  row(2)[128000] = 100.0f;
  row(2)[1500] = 100.0f;                      // ties in index 9's chunk and in other chunks
  want[2] = 9;
  std::fill(row(3), row(3) + vocab, 0.5f);    // constant: index 0
  want[3] = 0;
  row(4)[5] = nan;                            // a NaN: the row is refused
  row(4)[4242] = 50.0f;
  want[4] = -1;
  std::fill(row(5), row(5) + vocab, -std::numeric_limits<float>::infinity());
  row(5)[31] = -1e30f;                        // everything else -inf (a masked row)
  want[5] = 31;
  row(7)[1000] = std::numeric_limits<float>::infinity(); // +inf: refused
  want[7] = -1;
  std::fill(row(8), row(8) + vocab, -std::numeric_limits<float>::infinity());
  want[8] = -1;                                          // all -inf: refused
  // Row 6 stays random: std::max_element over the rounded values decides.
  for (DType dt : {DType::kF32, DType::kBF16, DType::kF16}) {
    std::vector<float> back;
    if (dt == DType::kF16)
      row(5)[31] = -60000.0f; // f16 has no -1e30
    std::vector<int64_t> got = deviceArgmax(*gpu, v, dt, rows, vocab, &back);
    ASSERT_EQ(got.size(), size_t(rows)) << dtypeName(dt);
    for (int64_t r = 0; r < rows; ++r)
      if (r != 6)
        EXPECT_EQ(got[size_t(r)], want[size_t(r)]) << dtypeName(dt) << " row " << r;
    const float *r6 = back.data() + 6 * vocab;
    EXPECT_EQ(got[6], std::max_element(r6, r6 + vocab) - r6) << dtypeName(dt);
  }
}

TEST(GreedyOnDevice, RandomRowsMatchMaxElement) {
  REQUIRE_GPU(gpu);
  std::mt19937 rng(11);
  std::normal_distribution<float> n(0.0f, 3.0f);
  for (auto [rows, vocab] : {std::pair<int64_t, int64_t>{1, 1}, {1, 33}, {3, 1000},
                             {64, 32000}, {70, 50257}}) {
    std::vector<float> v(size_t(rows * vocab));
    for (float &x : v)
      x = n(rng);
    for (DType dt : {DType::kF32, DType::kBF16}) {
      std::vector<float> back;
      std::vector<int64_t> got = deviceArgmax(*gpu, v, dt, rows, vocab, &back);
      ASSERT_EQ(got.size(), size_t(rows));
      for (int64_t r = 0; r < rows; ++r) {
        const float *p = back.data() + r * vocab;
        EXPECT_EQ(got[size_t(r)], std::max_element(p, p + vocab) - p)
            << dtypeName(dt) << " " << rows << "x" << vocab << " row " << r;
      }
    }
  }
}

TEST(GreedyOnDevice, RefusesBadShapes) {
  REQUIRE_GPU(gpu);
  StatusOr<Tensor> r = engine::greedyTokensOnDevice(*gpu, 0, DType::kI32, 1, 10);
  EXPECT_FALSE(r);
  r = engine::greedyTokensOnDevice(*gpu, 0, DType::kF32, 0, 10);
  EXPECT_FALSE(r);
  EXPECT_NE(r.status().message().find("at least one row"), std::string::npos)
      << r.status().message();
}
