//===- Int4Pack.h - a plan's 4-bit weights in the GPU's packed layout -*- C++ -*-===//
//
// A plan stores an i4/u4 weight [N, K] one value per byte; GpuExecutor
// packs it at load into the layout of kernels/Int4Layout.h (two values per
// byte, in tensor-core fragment order) for GemvInt4.cu.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_INT4PACK_H
#define ACCEL_RUNTIME_CUDA_INT4PACK_H

#include "core/Status.h"
#include "core/Tensor.h"

#include <cstdint>
#include <vector>

namespace accel::rt::gpu {

/// The packed bytes of `w` (i4 or u4, [N, K]); padding nibbles are 0. An
/// error names the weight when it is not 2-D 4-bit or a value is out of its
/// type's range (a corrupt plan).
StatusOr<std::vector<uint8_t>> packInt4(const Tensor &w);

/// The value (u - qmin, 0..15) at (row, col) of packed bytes, for tests.
int packedNibble(const std::vector<uint8_t> &packed, int64_t n, int64_t k, int64_t row,
                 int64_t col);

} // namespace accel::rt::gpu

#endif // ACCEL_RUNTIME_CUDA_INT4PACK_H
