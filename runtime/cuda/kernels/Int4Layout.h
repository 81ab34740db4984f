//===- Int4Layout.h - 4-bit weights as the GPU's int4 GEMM reads them -*- C++ -*-===//
//
// Shared by the kernels (runtime/cuda/kernels/GemvInt4.cu), the executor
// that packs a plan's i4/u4 weights at load (runtime/cuda/Int4Pack.cpp) and
// their tests. A plan stores a 4-bit weight [N, K] one value per byte; on
// the device it is packed two per byte in the order the tensor-core
// fragments want it, so that each lane loads its A fragments with one
// 16-byte load and decodes them with a shift, a mask and one half-precision
// subtraction (no shuffles):
//
//   - rows are cut into blocks of 16 (the M of mma.m16n8k16), K into
//     chunks of 64 (four k-tiles of 16); N and K are padded up to them;
//   - a (row block, chunk) is 512 contiguous bytes, row blocks outermost:
//     lane L's 16 bytes at ((rowBlock * chunks + chunk) * 32 + L) * 16;
//   - word j (0..3) of those 16 bytes is k-tile j: the 8 values of the
//     lane's A fragment (Mma.cuh), nibble p = i + 4 * e for register a[i]'s
//     element e, so that (word >> 4 i) & 0x000F000F puts a[i]'s two values
//     in the low bits of its two 16-bit halves;
//   - a nibble holds value - qmin (0..15): value + 8 for i4, the value for u4.
//
// The value a nibble u stands for is (u - off) * scale, off = zeroPoint -
// qmin per (row, group) with a zero point and -qmin without.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_KERNELS_INT4LAYOUT_H
#define ACCEL_RUNTIME_CUDA_KERNELS_INT4LAYOUT_H

#include <stdint.h>

#ifdef __CUDACC__
#define ACCEL_W4_HD __host__ __device__
#else
#define ACCEL_W4_HD
#endif

namespace accel::rt::kernels {

constexpr int kW4RowBlock = 16; // rows per tile (M of m16n8k16)
constexpr int kW4Chunk = 64;    // K per 16-byte lane load: four k-tiles of 16
constexpr int kW4ChunkBytes = 512;
/// The mma kernels take up to this many rows of x (8 per n-tile, 1, 2, 4
/// or 8 n-tiles); more rows are dequantised and multiplied by cuBLASLt.
constexpr int kW4MaxRows = 64;
constexpr int kW4Warps = 8; // warps per block of the mma kernels

struct W4Layout {
  int64_t n = 0, k = 0;
  int64_t rowBlocks = 0, chunks = 0;
  ACCEL_W4_HD int64_t bytes() const { return rowBlocks * chunks * kW4ChunkBytes; }
};

ACCEL_W4_HD inline W4Layout w4Layout(int64_t n, int64_t k) {
  W4Layout l;
  l.n = n;
  l.k = k;
  l.rowBlocks = (n + kW4RowBlock - 1) / kW4RowBlock;
  l.chunks = (k + kW4Chunk - 1) / kW4Chunk;
  return l;
}

/// Where value (row, col) lives: the byte, and 0 (low nibble) or 4.
ACCEL_W4_HD inline void w4Position(int64_t chunks, int64_t row, int64_t col, int64_t *byte,
                                   int *shift) {
  const int64_t rb = row / kW4RowBlock, c = col / kW4Chunk;
  const int r = int(row % kW4RowBlock), kc = int(col % kW4Chunk);
  const int j = kc / 16, cc = kc % 16;
  const int g = r % 8, hiRow = r / 8;
  const int t = (cc % 8) / 2, e = cc % 2, hiCol = cc / 8;
  const int lane = 4 * g + t;
  const int p = hiRow + 2 * hiCol + 4 * e; // a[hiRow + 2 hiCol], element e
  *byte = ((rb * chunks + c) * 32 + lane) * 16 + j * 4 + p / 2;
  *shift = (p % 2) * 4;
}

/// The split of the mma kernels: `ks` warps (1, 2, 4 or 8) share a row block
/// along K, a block of kW4Warps warps makes kW4Warps / ks row blocks. The
/// smallest ks that gives `targetWarps` warps, as long as each keeps at
/// least two rounds of 4 chunks; `forceKs` overrides.
struct W4Shape {
  unsigned blocks = 0;
  int ks = 1;
};
inline W4Shape w4Shape(int64_t n, int64_t k, int64_t targetWarps = 4096, int forceKs = 0) {
  const W4Layout l = w4Layout(n, k);
  W4Shape s;
  if (forceKs == 1 || forceKs == 2 || forceKs == 4 || forceKs == 8) {
    s.ks = forceKs;
  } else {
    while (s.ks < kW4Warps && l.rowBlocks * s.ks < targetWarps && l.chunks / (s.ks * 2) >= 8)
      s.ks *= 2;
  }
  const int64_t per = kW4Warps / s.ks;
  s.blocks = unsigned((l.rowBlocks + per - 1) / per);
  return s;
}

/// The n-tiles (8 rows of x each) the mma kernel for `rows` rows of x uses:
/// 1, 2, 4 or 8; 0 past kW4MaxRows.
inline int w4Tiles(int64_t rows) {
  if (rows <= 0 || rows > kW4MaxRows)
    return 0;
  int nt = 1;
  while (nt * 8 < rows)
    nt *= 2;
  return nt;
}

} // namespace accel::rt::kernels

#undef ACCEL_W4_HD

#endif // ACCEL_RUNTIME_CUDA_KERNELS_INT4LAYOUT_H
