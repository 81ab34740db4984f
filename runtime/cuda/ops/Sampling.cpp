//===- Sampling.cpp - greedy tokens on the GPU ----------------------------===//
//
// greedyTokensOnDevice (GpuSteps.h): the argmax of each row of the logits,
// reduced on the host from the per-chunk partials of kernels/Sampling.cu.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/GpuSteps.h"

#include <cstring>
#include <limits>

namespace accel::rt::engine {

StatusOr<Tensor> greedyTokensOnDevice(gpu::GpuContext &gpu, gpu::CuDevicePtr logits,
                                      DType dtype, int64_t rows, int64_t vocab) {
  if (rows < 1 || vocab < 1 || vocab > int64_t(INT32_MAX) ||
      (dtype != DType::kF32 && dtype != DType::kBF16 && dtype != DType::kF16))
    return Status(StatusCode::kInvalidArgument,
                  "greedy selection needs float logits of at least one row and column, got " +
                      std::string(dtypeName(dtype)) + " [" + std::to_string(rows) + ", " +
                      std::to_string(vocab) + "]");
  ACCEL_RT_ASSIGN_OR_RETURN(gpu::CuFunction fn,
                            gpu.function(std::string("argmax_chunks_") + gpuDTypeSuffix(dtype)));
  // Sampling.cu's blocks each scan a chunk of 2048 values of a row (256
  // threads, 8 loads in flight each) and leave its best; the host reduces
  // the row's partials (63 for a 128256-value row).
  constexpr int64_t kChunk = 2048;
  const int64_t chunks = (vocab + kChunk - 1) / kChunk;
  const int64_t parts = rows * chunks;
  ACCEL_RT_ASSIGN_OR_RETURN(gpu::DeviceBuffer part, gpu.allocate(size_t(parts) * 8));
  const gpu::CuDevicePtr partV = part->ptr, partI = part->ptr + gpu::CuDevicePtr(parts) * 4;
  ACCEL_RT_RETURN_IF_ERROR(gpu.launchDependent(fn, gpu::Dim3{unsigned(chunks), unsigned(rows), 1},
                                               gpu::Dim3{256, 1, 1}, 0, logits, vocab, kChunk,
                                               partV, partI));
  std::vector<unsigned char> back(size_t(parts) * 8); // values, then indices: one copy
  ACCEL_RT_RETURN_IF_ERROR(gpu.download(back.data(), partV, back.size()));
  std::vector<float> v(static_cast<size_t>(parts));
  std::vector<int32_t> idx(static_cast<size_t>(parts));
  std::memcpy(v.data(), back.data(), size_t(parts) * 4);
  std::memcpy(idx.data(), back.data() + size_t(parts) * 4, size_t(parts) * 4);
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DType::kI64, {rows}));
  for (int64_t r = 0; r < rows; ++r) {
    float best = -std::numeric_limits<float>::infinity();
    int64_t at = vocab; // no finite value yet
    bool bad = false;
    for (int64_t c = 0; c < chunks; ++c) {
      const size_t p = size_t(r * chunks + c);
      if (idx[p] == -2)
        bad = true;
      else if (idx[p] < vocab && (v[p] > best || (v[p] == best && idx[p] < at))) {
        best = v[p];
        at = idx[p];
      }
    }
    // A NaN or +inf, or every value -inf: the host sampler's refusals.
    t.data<int64_t>()[r] = bad || at >= vocab ? -1 : at;
  }
  return t;
}

} // namespace accel::rt::engine
