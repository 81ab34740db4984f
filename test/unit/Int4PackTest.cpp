//===- Int4PackTest.cpp - the GPU's packed 4-bit layout, checked on the CPU ===//
//
// runtime/cuda/Int4Pack.cpp packs a plan's i4/u4 weights for GemvInt4.cu.
// These tests need no GPU: every value lands in its own nibble, and a
// lane-by-lane emulation of the kernel's decode (16 bytes per lane and
// chunk, (word >> 4i) & 0x000F000F as mma's A register a[i], the fragment
// rows and columns of PTX's m16n8k16, the subtraction of off and the scale
// per chunk) reproduces x . ((w - zp) * scale)^T computed directly from the
// unpacked weight.
//
//===----------------------------------------------------------------------===//
#include "core/Tensor.h"
#include "runtime/cuda/Int4Pack.h"
#include "runtime/cuda/kernels/Int4Layout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>

using namespace accel::rt;
namespace kn = accel::rt::kernels;

namespace {

Tensor randomInt4(DType dt, int64_t n, int64_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  const int lo = dt == DType::kI4 ? -8 : 0;
  std::uniform_int_distribution<int> d(lo, lo + 15);
  Tensor t = *Tensor::allocate(dt, {n, k});
  for (int64_t i = 0; i < n * k; ++i) {
    const int v = d(rng);
    if (dt == DType::kI4)
      static_cast<int8_t *>(t.rawData())[i] = int8_t(v);
    else
      static_cast<uint8_t *>(t.rawData())[i] = uint8_t(v);
  }
  return t;
}

int valueAt(const Tensor &t, int64_t i) {
  return t.dtype() == DType::kI4 ? int(static_cast<const int8_t *>(t.rawData())[i])
                                 : int(static_cast<const uint8_t *>(t.rawData())[i]);
}

} // namespace

TEST(Int4Pack, EveryValueHasItsOwnNibble) {
  for (auto [n, k] : {std::pair<int64_t, int64_t>{16, 64}, {21, 70}, {40, 192}, {1, 2}}) {
    const kn::W4Layout l = kn::w4Layout(n, k);
    std::set<std::pair<int64_t, int>> seen;
    for (int64_t r = 0; r < l.rowBlocks * 16; ++r)
      for (int64_t c = 0; c < l.chunks * 64; ++c) {
        int64_t byte;
        int shift;
        kn::w4Position(l.chunks, r, c, &byte, &shift);
        ASSERT_GE(byte, 0);
        ASSERT_LT(byte, l.bytes());
        ASSERT_TRUE(shift == 0 || shift == 4);
        ASSERT_TRUE(seen.insert({byte, shift}).second) << "row " << r << " col " << c;
      }
    EXPECT_EQ(int64_t(seen.size()), 2 * l.bytes());
    for (DType dt : {DType::kI4, DType::kU4}) {
      Tensor w = randomInt4(dt, n, k, uint32_t(n * 131 + k));
      StatusOr<std::vector<uint8_t>> p = gpu::packInt4(w);
      ASSERT_TRUE(p) << p.status().message();
      ASSERT_EQ(int64_t(p->size()), l.bytes());
      const int qmin = dt == DType::kI4 ? -8 : 0;
      for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < k; ++c)
          ASSERT_EQ(gpu::packedNibble(*p, n, k, r, c), valueAt(w, r * k + c) - qmin);
    }
  }
}

TEST(Int4Pack, LaneDecodeReproducesTheProduct) {
  // Rows not a multiple of 16, K of 3 chunks, groups of 64 with zero
  // points, 5 rows of x; i4 and u4.
  const int64_t n = 40, k = 192, m = 5, group = 64;
  const int64_t groups = k / group;
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(size_t(m * k)), scale(size_t(n * groups));
  for (float &v : x)
    v = nd(rng);
  for (float &v : scale)
    v = 0.01f + std::fabs(nd(rng)) * 0.02f;
  for (DType dt : {DType::kI4, DType::kU4}) {
    const int qmin = dt == DType::kI4 ? -8 : 0;
    Tensor w = randomInt4(dt, n, k, 11);
    Tensor zp = randomInt4(dt, n, groups, 13);
    // The reference: straight from the unpacked values.
    std::vector<double> ref(size_t(m * n), 0.0);
    for (int64_t t = 0; t < m; ++t)
      for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < k; ++c) {
          const int64_t s = r * groups + c / group;
          ref[size_t(t * n + r)] +=
              double(x[size_t(t * k + c)]) * (valueAt(w, r * k + c) - valueAt(zp, s)) * scale[size_t(s)];
        }
    // The kernel's walk, lane by lane.
    StatusOr<std::vector<uint8_t>> p = gpu::packInt4(w);
    ASSERT_TRUE(p) << p.status().message();
    const kn::W4Layout l = kn::w4Layout(n, k);
    const int64_t groupChunks = group / kn::kW4Chunk;
    std::vector<double> got(size_t(m * n), 0.0);
    for (int64_t rb = 0; rb < l.rowBlocks; ++rb)
      for (int64_t c = 0; c < l.chunks; ++c)
        for (int lane = 0; lane < 32; ++lane) {
          const int g = lane >> 2, t = lane & 3;
          const uint8_t *bytes = p->data() + ((rb * l.chunks + c) * 32 + lane) * 16;
          const int64_t r0 = rb * 16 + g, r1 = r0 + 8;
          for (int j = 0; j < 4; ++j) {
            uint32_t word;
            std::memcpy(&word, bytes + 4 * j, 4);
            for (int i = 0; i < 4; ++i) {
              const uint32_t pair = (word >> (4 * i)) & 0x000F000Fu;
              const int64_t row = (i & 1) ? r1 : r0;
              if (row >= n)
                continue;
              const int64_t s = row * groups + c / groupChunks;
              const int off = valueAt(zp, s) - qmin;
              for (int e = 0; e < 2; ++e) {
                const int u = int((pair >> (16 * e)) & 15u);
                const int64_t col = c * 64 + j * 16 + 2 * t + e + 8 * (i >> 1);
                if (col >= k)
                  continue;
                for (int64_t tok = 0; tok < m; ++tok)
                  got[size_t(tok * n + row)] +=
                      double(x[size_t(tok * k + col)]) * (u - off) * scale[size_t(s)];
              }
            }
          }
        }
    for (int64_t i = 0; i < m * n; ++i)
      ASSERT_NEAR(got[size_t(i)], ref[size_t(i)], 1e-9 * (1 + std::fabs(ref[size_t(i)])))
          << "output " << i << " (" << dtypeName(dt) << ")";
  }
}

TEST(Int4Pack, RefusesWhatIsNot4BitOrOutOfRange) {
  Tensor w = *Tensor::allocate(DType::kI4, {2, 4});
  std::memset(w.rawData(), 0, 8);
  static_cast<int8_t *>(w.rawData())[5] = 9; // past 7
  StatusOr<std::vector<uint8_t>> p = gpu::packInt4(w);
  ASSERT_FALSE(p);
  EXPECT_NE(p.status().message().find("holds 9 at [1, 1]"), std::string::npos)
      << p.status().message();
  Tensor f = *Tensor::allocate(DType::kI8, {2, 4});
  p = gpu::packInt4(f);
  ASSERT_FALSE(p);
  EXPECT_NE(p.status().message().find("4-bit weights of shape [N, K]"), std::string::npos)
      << p.status().message();
}

TEST(Int4Pack, ShapeAndTiles) {
  EXPECT_EQ(kn::w4Tiles(0), 0);
  EXPECT_EQ(kn::w4Tiles(1), 1);
  EXPECT_EQ(kn::w4Tiles(8), 1);
  EXPECT_EQ(kn::w4Tiles(9), 2);
  EXPECT_EQ(kn::w4Tiles(17), 4);
  EXPECT_EQ(kn::w4Tiles(64), 8);
  EXPECT_EQ(kn::w4Tiles(65), 0);
  // Llama-3-8B's qkv: 384 row blocks, 64 chunks: ks 8 for 4096 warps (each
  // warp 8 chunks); down (K 14336): 256 row blocks, ks 8.
  EXPECT_EQ(kn::w4Shape(6144, 4096).ks, 8);
  EXPECT_EQ(kn::w4Shape(6144, 4096).blocks, 384u);
  EXPECT_EQ(kn::w4Shape(4096, 14336).ks, 8);
  // A small K keeps whole rows: 2 chunks cannot be split.
  EXPECT_EQ(kn::w4Shape(4096, 128).ks, 1);
  EXPECT_EQ(kn::w4Shape(4096, 128).blocks, 32u);
  EXPECT_EQ(kn::w4Shape(100, 4096, 4096, 2).ks, 2);
}
