//===- Int4Pack.cpp - a plan's 4-bit weights in the GPU's packed layout ----===//
#include "runtime/cuda/Int4Pack.h"

#include "runtime/cuda/kernels/Int4Layout.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace accel::rt::gpu {

namespace kn = accel::rt::kernels;

StatusOr<std::vector<uint8_t>> packInt4(const Tensor &w) {
  const DType dt = w.dtype();
  if ((dt != DType::kI4 && dt != DType::kU4) || w.rank() != 2)
    return Status(StatusCode::kInvalidArgument,
                  "the GPU packs 4-bit weights of shape [N, K]; this one is " + w.describe());
  const int64_t n = w.dim(0), k = w.dim(1);
  const kn::W4Layout l = kn::w4Layout(n, k);
  std::vector<uint8_t> out(size_t(l.bytes()), 0);
  const int qmin = dt == DType::kI4 ? -8 : 0;
  const uint8_t *src = static_cast<const uint8_t *>(w.rawData());
  // Row blocks in parallel (an 8B model's weights are ~7e9 values), each
  // walked in the packed order: lane (g, t), k-tile j, register i, element e.
  std::atomic<int64_t> bad{-1}; // the flat index of a value out of range
  auto packBlocks = [&](int64_t rb0, int64_t rb1) {
    for (int64_t rb = rb0; rb < rb1; ++rb)
      for (int64_t c = 0; c < l.chunks; ++c) {
        uint8_t *dst = out.data() + (rb * l.chunks + c) * kn::kW4ChunkBytes;
        for (int lane = 0; lane < 32; ++lane) {
          const int g = lane >> 2, t = lane & 3;
          for (int j = 0; j < 4; ++j) {
            uint32_t word = 0;
            for (int i = 0; i < 4; ++i) {
              const int64_t row = rb * 16 + g + 8 * (i & 1);
              if (row >= n)
                continue;
              for (int e = 0; e < 2; ++e) {
                const int64_t col = c * 64 + j * 16 + 2 * t + e + 8 * (i >> 1);
                if (col >= k)
                  continue;
                const uint8_t b = src[row * k + col];
                const int nib = (qmin < 0 ? int(int8_t(b)) : int(b)) - qmin;
                if (nib < 0 || nib > 15) {
                  int64_t none = -1;
                  bad.compare_exchange_strong(none, row * k + col);
                  continue;
                }
                word |= uint32_t(nib) << (4 * i + 16 * e);
              }
            }
            uint8_t *p = dst + lane * 16 + j * 4;
            p[0] = uint8_t(word);
            p[1] = uint8_t(word >> 8);
            p[2] = uint8_t(word >> 16);
            p[3] = uint8_t(word >> 24);
          }
        }
      }
  };
  const int64_t threads = std::max<int64_t>(
      1, std::min<int64_t>(int64_t(std::thread::hardware_concurrency()),
                           std::min<int64_t>(l.rowBlocks, n * k / (int64_t(1) << 20) + 1)));
  const int64_t per = (l.rowBlocks + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (int64_t i = 1; i < threads; ++i)
    pool.emplace_back(packBlocks, std::min(l.rowBlocks, i * per),
                      std::min(l.rowBlocks, (i + 1) * per));
  packBlocks(0, std::min(l.rowBlocks, per));
  for (std::thread &th : pool)
    th.join();
  if (const int64_t at = bad.load(); at >= 0) {
    const uint8_t b = src[at];
    return Status(StatusCode::kInvalidArgument,
                  "the 4-bit weight " + w.describe() + " holds " +
                      std::to_string(qmin < 0 ? int(int8_t(b)) : int(b)) + " at [" +
                      std::to_string(at / k) + ", " + std::to_string(at % k) +
                      "], outside its type's range");
  }
  return out;
}

int packedNibble(const std::vector<uint8_t> &packed, int64_t n, int64_t k, int64_t row,
                 int64_t col) {
  const kn::W4Layout l = kn::w4Layout(n, k);
  int64_t byte;
  int shift;
  kn::w4Position(l.chunks, row, col, &byte, &shift);
  return (packed[size_t(byte)] >> shift) & 15;
}

} // namespace accel::rt::gpu
