//===- GemvInt4Test.cpp - GemvInt4.cu's 4-bit GEMMs against a CPU product ===//
//
// gemm_w4_<T>_nt<NT> and dequantize_w4_<T> (runtime/cuda/kernels/GemvInt4.cu)
// on weights packed by runtime/cuda/Int4Pack.cpp, against a double-precision
// CPU product of the unpacked values: i4 and u4, with and without zero
// points, groups of 64 and 128, per channel and per tensor; 1 to 64 rows of
// x (every n-tile count, rows that fill none of them); N not a multiple of
// 16, K of one chunk and not a multiple of 64 chunks; every split-K; the
// _u8 kernels (8 chunks in flight, up to 16 rows) on the same cases. Rows
// of y past M and columns past N must stay untouched (NaN sentinels).
//
// Label `gpu`: without a GPU every test reports SKIPPED. The benchmark runs
// from accel-gpu-gemv-tests --bench (benchInt4).
//
//===----------------------------------------------------------------------===//
#include "GpuTestContext.h"
#include "core/Tensor.h"
#include "runtime/cuda/Int4Pack.h"
#include "runtime/cuda/GpuSteps.h"
#include "runtime/cuda/W4Prefetch.h"
#include "runtime/cuda/kernels/Int4Layout.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

using namespace accel::rt;
using gpu::GpuContext;

namespace {

namespace kn = accel::rt::kernels;
using i64 = long long;

struct W4Case {
  int64_t m, n, k;
  DType dtype;      // x and y: bf16 or f16
  DType wtype;      // i4 or u4
  int64_t group;    // 0: per channel (or per tensor with perTensor)
  bool zeroPoint;
  bool perTensor = false;
  int ks = 0;       // 0: w4Shape's choice
  int unroll = 4;   // chunks in flight per lane: 4, or 8 (the _u8 kernels, m <= 16)
};

Tensor randomInt4(DType dt, int64_t n, int64_t k, std::mt19937 &rng) {
  const int lo = dt == DType::kI4 ? -8 : 0;
  std::uniform_int_distribution<int> d(lo, lo + 15);
  Tensor t = *Tensor::allocate(dt, {n, k});
  for (int64_t i = 0; i < n * k; ++i)
    static_cast<int8_t *>(t.rawData())[i] = int8_t(d(rng));
  return t;
}

int valueAt(const Tensor &t, int64_t i) {
  return t.dtype() == DType::kI4 ? int(static_cast<const int8_t *>(t.rawData())[i])
                                 : int(static_cast<const uint8_t *>(t.rawData())[i]);
}

struct Uploaded {
  gpu::DeviceBuffer w, scale, zp;
  int64_t scaleRow = 0, groupChunks = 1, scales = 1;
};

/// The weight's packed bytes, scales and zero points on the device, and the
/// f64 dequantised weight for the reference.
Uploaded upload(GpuContext &gpu, const W4Case &c, const Tensor &w, const std::vector<float> &scale,
                const Tensor *zp) {
  Uploaded u;
  const kn::W4Layout l = kn::w4Layout(c.n, c.k);
  std::vector<uint8_t> packed = *gpu::packInt4(w);
  u.w = *gpu.allocate(packed.size());
  EXPECT_TRUE(gpu.upload(u.w->ptr, packed.data(), packed.size()).isOk());
  u.scale = *gpu.allocate(scale.size() * 4);
  EXPECT_TRUE(gpu.upload(u.scale->ptr, scale.data(), scale.size() * 4).isOk());
  if (zp) {
    u.zp = *gpu.allocate(size_t(zp->numElements()));
    EXPECT_TRUE(gpu.upload(u.zp->ptr, zp->rawData(), size_t(zp->numElements())).isOk());
  }
  u.scaleRow = c.group > 0 ? c.k / c.group : (c.perTensor ? 0 : 1);
  u.groupChunks = c.group > 0 ? c.group / kn::kW4Chunk : std::max<int64_t>(l.chunks, 1);
  return u;
}

/// Runs one case of the mma kernel; the worst |got - ref| / (sum |x w| +
/// tiny), +inf when a sentinel was overwritten or a call failed.
double runW4(GpuContext &gpu, const W4Case &c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const int64_t groups = c.group > 0 ? c.k / c.group : 1;
  const int64_t scales = c.perTensor ? 1 : c.n * groups;
  std::vector<float> xs(size_t(c.m * c.k));
  std::vector<float> scale(static_cast<size_t>(scales));
  for (float &v : xs)
    v = nd(rng);
  for (float &v : scale)
    v = 0.002f + std::fabs(nd(rng)) * 0.01f;
  Tensor xt = Tensor::fromVector<float>({c.m, c.k}, xs)->astype(c.dtype, false);
  Tensor xr = xt.toF32();
  Tensor w = randomInt4(c.wtype, c.n, c.k, rng);
  Tensor zp = randomInt4(c.wtype, c.perTensor ? 1 : c.n, c.perTensor ? 1 : groups, rng);
  const int qmin = c.wtype == DType::kI4 ? -8 : 0;
  Uploaded u = upload(gpu, c, w, scale, c.zeroPoint ? &zp : nullptr);
  // y has 3 extra rows past M (NaN) and is [M + 3, N]: rows past M and,
  // by the kernel's indexing, nothing past N in a row may be written.
  const int64_t yRows = c.m + 3;
  Tensor sentinel =
      Tensor::fromVector<float>({yRows, c.n},
                                std::vector<float>(size_t(yRows * c.n),
                                                   std::numeric_limits<float>::quiet_NaN()))
          ->astype(c.dtype, false);
  auto xb = gpu.allocate(xt.byteSize()), yb = gpu.allocate(sentinel.byteSize());
  if (!xb || !yb)
    return std::numeric_limits<double>::infinity();
  EXPECT_TRUE(gpu.upload((*xb)->ptr, xt.rawData(), xt.byteSize()).isOk());
  EXPECT_TRUE(gpu.upload((*yb)->ptr, sentinel.rawData(), sentinel.byteSize()).isOk());
  const int nt = kn::w4Tiles(c.m);
  const std::string name = std::string("gemm_w4_") + (c.dtype == DType::kBF16 ? "bf16" : "f16") +
                           "_nt" + std::to_string(nt) + (c.unroll == 8 ? "_u8" : "");
  StatusOr<gpu::CuFunction> fn = gpu.function(name);
  EXPECT_TRUE(fn) << name << ": " << fn.status().message();
  if (!fn)
    return std::numeric_limits<double>::infinity();
  const kn::W4Shape sh = kn::w4Shape(c.n, c.k, 4096, c.ks);
  Status s = gpu.launchDependent(*fn, gpu::Dim3{sh.blocks, 1, 1},
                                 gpu::Dim3{kn::kW4Warps * 32, 1, 1}, 0, (*xb)->ptr, u.w->ptr,
                                 u.scale->ptr, c.zeroPoint ? u.zp->ptr : gpu::CuDevicePtr(0), qmin,
                                 (*yb)->ptr, i64(c.m), i64(c.n), i64(c.k), i64(u.scaleRow),
                                 i64(u.groupChunks), int(sh.ks));
  EXPECT_TRUE(s.isOk()) << s.message();
  Tensor y = *Tensor::allocate(c.dtype, {yRows, c.n});
  EXPECT_TRUE(gpu.download(y.rawData(), (*yb)->ptr, y.byteSize()).isOk());
  Tensor yf = y.toF32();
  const float *got = yf.data<float>();
  // The dequantised weight in f64, once.
  std::vector<double> wd(size_t(c.n * c.k));
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t q = 0; q < c.k; ++q) {
      const int64_t si = c.perTensor ? 0 : j * groups + (c.group > 0 ? q / c.group : 0);
      const int off = c.zeroPoint ? valueAt(zp, si) : 0;
      wd[size_t(j * c.k + q)] = double(valueAt(w, j * c.k + q) - off) * scale[size_t(si)];
    }
  double worst = 0;
  for (int64_t t = 0; t < c.m; ++t)
    for (int64_t j = 0; j < c.n; ++j) {
      double ref = 0, mag = 0;
      const float *xrow = xr.data<float>() + t * c.k;
      const double *wrow = wd.data() + j * c.k;
      for (int64_t q = 0; q < c.k; ++q) {
        const double p = double(xrow[q]) * wrow[q];
        ref += p;
        mag += std::fabs(p);
      }
      const float g = got[t * c.n + j];
      if (!std::isfinite(g))
        return std::numeric_limits<double>::infinity();
      worst = std::max(worst, std::fabs(g - ref) / (mag + 1e-12));
    }
  for (int64_t e = c.m * c.n; e < yRows * c.n; ++e)
    if (!std::isnan(got[e]))
      return std::numeric_limits<double>::infinity(); // a row past M
  return worst;
}

#define REQUIRE_GPU(var) ACCEL_REQUIRE_GPU_CONTEXT(var)

} // namespace

TEST(GemvInt4, MatchesDoubleReference) {
  REQUIRE_GPU(gpu);
  uint32_t seed = 1;
  // bf16 output rounding is 2^-9 of |y| <= sum |x w|; f16 2^-12.
  for (DType dt : {DType::kBF16, DType::kF16})
    for (DType wt : {DType::kI4, DType::kU4})
      for (int64_t m : {1, 3, 8, 9, 16, 17, 33, 64})
        for (auto [n, k, group] : {std::tuple<int64_t, int64_t, int64_t>{40, 192, 64},
                                   {16, 64, 0},
                                   {100, 1024, 128},
                                   {4096, 4096, 128}})
          for (bool zpOn : {false, true}) {
            if (n == 4096 && m != 1 && m != 16 && m != 64)
              continue;
            for (int unroll : {4, 8}) {
              if (unroll == 8 && m > 16)
                continue;
              W4Case c{m, n, k, dt, wt, group, zpOn};
              c.unroll = unroll;
              const double e = runW4(*gpu, c, seed++);
              EXPECT_LE(e, dt == DType::kBF16 ? 4e-3 : 1e-3)
                  << "m " << m << " n " << n << " k " << k << " group " << group << " zp "
                  << zpOn << " " << dtypeName(dt) << " " << dtypeName(wt) << " unroll "
                  << unroll;
            }
          }
}

TEST(GemvInt4, EverySplitAndPerTensorScales) {
  REQUIRE_GPU(gpu);
  uint32_t seed = 1000;
  for (int ks : {1, 2, 4, 8})
    for (int64_t m : {1, 12, 40}) {
      // 40 chunks: not a multiple of 4 (a round) nor of every split.
      W4Case c{m, 48, 2560, DType::kBF16, DType::kI4, 128, true, false, ks};
      EXPECT_LE(runW4(*gpu, c, seed++), 4e-3) << "ks " << ks << " m " << m;
      if (m <= 16) { // 40 chunks: not a multiple of 8 either
        c.unroll = 8;
        EXPECT_LE(runW4(*gpu, c, seed++), 4e-3) << "unroll 8, ks " << ks << " m " << m;
      }
      W4Case pt{m, 48, 2560, DType::kBF16, DType::kU4, 0, true, true, ks};
      EXPECT_LE(runW4(*gpu, pt, seed++), 4e-3) << "per tensor, ks " << ks << " m " << m;
    }
}

TEST(GemvInt4, DequantizeIsExact) {
  REQUIRE_GPU(gpu);
  std::mt19937 rng(5);
  const int64_t n = 37, k = 384, group = 128, groups = k / group;
  Tensor w = randomInt4(DType::kI4, n, k, rng);
  Tensor zp = randomInt4(DType::kI4, n, groups, rng);
  std::vector<float> scale(size_t(n * groups));
  for (float &v : scale)
    v = 0.01f + float(rng() % 100) * 1e-4f;
  W4Case c{1, n, k, DType::kF32, DType::kI4, group, true};
  Uploaded u = upload(*gpu, c, w, scale, &zp);
  auto out = *gpu->allocate(size_t(n * k * 4));
  auto fn = gpu->function("dequantize_w4_f32");
  ASSERT_TRUE(fn) << fn.status().message();
  ASSERT_TRUE(gpu->launch(*fn, gpu::Dim3{64, 1, 1}, gpu::Dim3{256, 1, 1}, 0, u.w->ptr,
                          u.scale->ptr, u.zp->ptr, -8, out->ptr, i64(n), i64(k), i64(u.scaleRow),
                          i64(u.groupChunks))
                  .isOk());
  std::vector<float> got(size_t(n * k));
  ASSERT_TRUE(gpu->download(got.data(), out->ptr, got.size() * 4).isOk());
  for (int64_t r = 0; r < n; ++r)
    for (int64_t q = 0; q < k; ++q) {
      const int64_t si = r * groups + q / group;
      const float want = float(valueAt(w, r * k + q) - valueAt(zp, si)) * scale[size_t(si)];
      ASSERT_EQ(got[size_t(r * k + q)], want) << "[" << r << ", " << q << "]";
    }
}

// w4Dequant (W4Prefetch.h, shared by int4Gemm and the executor's
// prefetch order): the scale indexing of each granularity, and one
// sentence for what the GPU cannot read. No GPU needed.
TEST(W4Prefetch, W4DequantReadsEachGranularity) {
  auto tensor = [](DType dt, Shape shape, bool packed) {
    engine::DeviceTensor t;
    t.ptr = 4096;
    t.dtype = dt;
    t.shape = std::move(shape);
    t.packedInt4 = packed;
    return t;
  };
  const engine::DeviceTensor w = tensor(DType::kI4, {300, 512}, true);
  StatusOr<engine::W4Dequant> g =
      engine::w4Dequant(w, tensor(DType::kF32, {300, 4}, false), nullptr, 128);
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_EQ(g->scaleRow, 4);
  EXPECT_EQ(g->groupChunks, 2);
  EXPECT_EQ(g->qmin, -8);
  EXPECT_EQ(g->zp, 0u);
  EXPECT_EQ(g->packedBytes, kn::w4Layout(300, 512).bytes());
  StatusOr<engine::W4Dequant> c =
      engine::w4Dequant(tensor(DType::kU4, {300, 512}, true), tensor(DType::kF32, {300}, false),
                        nullptr, 0);
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_EQ(c->scaleRow, 1);
  EXPECT_EQ(c->groupChunks, 8); // every chunk in the one group
  EXPECT_EQ(c->qmin, 0);
  StatusOr<engine::W4Dequant> t =
      engine::w4Dequant(w, tensor(DType::kF32, {1}, false), nullptr, 0);
  ASSERT_TRUE(t) << t.status().message();
  EXPECT_EQ(t->scaleRow, 0);
  const engine::DeviceTensor zp = tensor(DType::kI4, {300, 4}, false);
  StatusOr<engine::W4Dequant> z =
      engine::w4Dequant(w, tensor(DType::kF32, {300, 4}, false), &zp, 128);
  ASSERT_TRUE(z) << z.status().message();
  EXPECT_EQ(z->zp, 4096u);

  StatusOr<engine::W4Dequant> bad =
      engine::w4Dequant(w, tensor(DType::kF32, {300, 16}, false), nullptr, 32);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(bad.status().message(),
            "the GPU runs 4-bit groups of a multiple of 64 columns that divides K; the weight "
            "i4[300, 512] (device) has groups of 32");
  bad = engine::w4Dequant(w, tensor(DType::kF32, {300, 3}, false), nullptr, 128);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.status().message(), "the weight scale f32[300, 3] (device) must be [300, 4] (per "
                                    "group of 128)");
  bad = engine::w4Dequant(w, tensor(DType::kF32, {7}, false), nullptr, 0);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.status().message(), "the weight scale f32[7] (device) must have one entry per "
                                    "output (300) or one in all");
  const engine::DeviceTensor zpU4 = tensor(DType::kU4, {300, 4}, false);
  bad = engine::w4Dequant(w, tensor(DType::kF32, {300, 4}, false), &zpU4, 128);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.status().message(), "the zero point ui4[300, 4] (device) must be i4 with one "
                                    "entry per scale (1200)");
  bad = engine::w4Dequant(tensor(DType::kI4, {300, 512}, false), tensor(DType::kF32, {1}, false),
                          nullptr, 0);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.status().code(), StatusCode::kInternal);
}

// W4Prefetcher (W4Prefetch.h): three weights acquired in the plan's order
// (the second and later ones come prefetched from the side stream), out of
// order and after an unknown weight; each acquired buffer is copied on the
// compute stream (as the GEMM would read it) and must equal the weight
// dequantised directly, byte for byte.
TEST(W4Prefetch, BuffersHoldEachWeightInAnyOrder) {
  REQUIRE_GPU(gpu);
  std::mt19937 rng(11);
  const W4Case cases[] = {{1, 40, 192, DType::kF32, DType::kI4, 64, true},
                          {1, 1000, 1024, DType::kF32, DType::kI4, 128, false},
                          {1, 16, 64, DType::kF32, DType::kU4, 0, false}};
  std::vector<Uploaded> ups;
  std::vector<engine::W4Dequant> order;
  std::vector<std::vector<float>> want;
  for (const W4Case &c : cases) {
    const int64_t groups = c.group > 0 ? c.k / c.group : 1;
    Tensor w = randomInt4(c.wtype, c.n, c.k, rng);
    Tensor zp = randomInt4(c.wtype, c.n, groups, rng);
    std::vector<float> scale(size_t(c.n * groups));
    for (float &v : scale)
      v = 0.01f + float(rng() % 100) * 1e-4f;
    ups.push_back(upload(*gpu, c, w, scale, c.zeroPoint ? &zp : nullptr));
    const Uploaded &u = ups.back();
    engine::W4Dequant d;
    d.w = u.w->ptr;
    d.scale = u.scale->ptr;
    d.zp = c.zeroPoint ? u.zp->ptr : gpu::CuDevicePtr(0);
    d.qmin = c.wtype == DType::kI4 ? -8 : 0;
    d.n = c.n;
    d.k = c.k;
    d.scaleRow = u.scaleRow;
    d.groupChunks = u.groupChunks;
    d.packedBytes = kn::w4Layout(c.n, c.k).bytes();
    order.push_back(d);
    // The reference: dequantize_w4_f32 straight into a buffer of its own.
    auto out = *gpu->allocate(size_t(c.n * c.k * 4));
    gpu::CuFunction fn = *gpu->function("dequantize_w4_f32");
    ASSERT_TRUE(gpu->launch(fn, gpu::Dim3{64, 1, 1}, gpu::Dim3{256, 1, 1}, 0, d.w, d.scale, d.zp,
                            d.qmin, out->ptr, i64(d.n), i64(d.k), i64(d.scaleRow),
                            i64(d.groupChunks))
                    .isOk());
    std::vector<float> h(size_t(c.n * c.k));
    ASSERT_TRUE(gpu->download(h.data(), out->ptr, h.size() * 4).isOk());
    want.push_back(std::move(h));
  }
  StatusOr<std::unique_ptr<engine::W4Prefetcher>> p =
      engine::W4Prefetcher::create(*gpu, DType::kF32, order);
  ASSERT_TRUE(p) << p.status().message();
  // In order twice, then out of order.
  const int sequence[] = {0, 1, 2, 0, 1, 2, 1, 0, 2, 2, 0};
  std::vector<gpu::DeviceBuffer> copies;
  for (int i : sequence) {
    StatusOr<gpu::CuDevicePtr> buf = (*p)->acquire(order[size_t(i)]);
    ASSERT_TRUE(buf) << buf.status().message();
    ASSERT_NE(*buf, 0u) << "weight " << i;
    copies.push_back(*gpu->allocate(size_t(order[size_t(i)].n * order[size_t(i)].k * 4)));
    ASSERT_TRUE(gpu->copy(copies.back()->ptr, *buf, size_t(order[size_t(i)].n * order[size_t(i)].k * 4))
                    .isOk());
    ASSERT_TRUE((*p)->release().isOk());
  }
  engine::W4Dequant unknown = order[0];
  unknown.w += 16;
  StatusOr<gpu::CuDevicePtr> none = (*p)->acquire(unknown);
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, 0u);
  EXPECT_FALSE((*p)->release().isOk()); // nothing acquired
  ASSERT_TRUE(gpu->synchronize().isOk());
  for (size_t s = 0; s < copies.size(); ++s) {
    const int i = sequence[s];
    std::vector<float> got(want[size_t(i)].size());
    ASSERT_TRUE(gpu->download(got.data(), copies[s]->ptr, got.size() * 4).isOk());
    EXPECT_EQ(got, want[size_t(i)]) << "acquire " << s << " (weight " << i << ")";
  }
  // 0 misses the first time; 1, 2, 0, 1, 2 come prefetched; out of order,
  // 1, 0 and 2 miss (each dequantised into the buffer not holding its
  // successor), the repeated 2 and then 0 are held.
  EXPECT_EQ((*p)->hits(), 7);
  EXPECT_EQ((*p)->misses(), 4);
  std::printf("W4Prefetch: %lld hits, %lld misses\n", (long long)(*p)->hits(),
              (long long)(*p)->misses());
}

/// accel-gpu-gemv-tests --bench: the int4 GEMMs of the Llama-3-8B shapes at
/// 1, 16 and 64 rows (64: what one pass over a prefill chunk would cost
/// against dequantising for cuBLASLt), every split, and the weight bytes
/// read per second.
void benchInt4(GpuContext &gpu) {
  const std::pair<int64_t, int64_t> shapes[] = {{6144, 4096}, {4096, 4096}, {28672, 4096},
                                                {4096, 14336}};
  for (int64_t m : {1, 16, 64})
    for (auto [n, k] : shapes)
      for (int unroll : {4, 8})
      for (int ks : {0, 1, 2, 4, 8}) {
        if (unroll == 8 && m > 16)
          continue;
        const kn::W4Layout l = kn::w4Layout(n, k);
        const int64_t bytes = l.bytes() + n * (k / 128) * 4;
        const int copies = int(std::max<int64_t>(2, (512ll << 20) / bytes));
        std::vector<gpu::DeviceBuffer> ws, ss;
        for (int c = 0; c < copies; ++c) {
          ws.push_back(*gpu.allocate(size_t(l.bytes())));
          ss.push_back(*gpu.allocate(size_t(n * (k / 128) * 4)));
          (void)gpu.zero(ws.back()->ptr, size_t(l.bytes()));
          (void)gpu.zero(ss.back()->ptr, size_t(n * (k / 128) * 4));
        }
        gpu::DeviceBuffer x = *gpu.allocate(size_t(m * k * 2)), y = *gpu.allocate(size_t(m * n * 2));
        (void)gpu.zero(x->ptr, size_t(m * k * 2));
        gpu::CuFunction fn = *gpu.function(std::string("gemm_w4_bf16_nt") +
                                           std::to_string(kn::w4Tiles(m)) +
                                           (unroll == 8 ? "_u8" : ""));
        const kn::W4Shape sh = kn::w4Shape(n, k, 4096, ks);
        auto once = [&](int i) {
          (void)gpu.launch(fn, gpu::Dim3{sh.blocks, 1, 1}, gpu::Dim3{kn::kW4Warps * 32, 1, 1}, 0,
                           x->ptr, ws[size_t(i % copies)]->ptr, ss[size_t(i % copies)]->ptr,
                           gpu::CuDevicePtr(0), -8, y->ptr, i64(m), i64(n), i64(k),
                           i64(k / 128), i64(2), int(sh.ks));
        };
        for (int i = 0; i < 10; ++i)
          once(i);
        (void)gpu.synchronize();
        const int reps = 200;
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < reps; ++i)
          once(i);
        (void)gpu.synchronize();
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
        std::printf("gemm_w4%s m %2lld n %6lld k %5lld ks %d%s: %8.2f us, %6.2f TB/s of weights "
                    "and scales\n",
                    unroll == 8 ? "_u8" : "", (long long)m, (long long)n, (long long)k, sh.ks,
                    ks ? "         " : " (chosen)", s * 1e6, double(bytes) / s / 1e12);
      }
}
