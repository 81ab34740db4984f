//===- DevicePool.h - a private pool of device memory for CUDA graphs -*- C++ -*-===//
//
// A CUDA graph bakes in the device addresses it was captured with, so the
// activations of a captured decode step must live where nothing outside the
// graph can be handed them. While a DevicePool is a context's current pool
// (GpuContext::setPool), allocate() takes from it: best fit over its free
// ranges (256-byte granules), a new chunk from the driver (at least
// kMinChunk) when none fits. Freed blocks go back to the pool's own free
// ranges (coalesced within a chunk), never to the shared caching allocator;
// chunks go back to the driver only when the pool goes or is re-reserved.
//
// Several graphs share one pool: their replays are ordered on one stream and
// nothing of one replay is read after the next starts (the logits are
// downloaded first), so their intermediate buffers may overlap.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_DEVICEPOOL_H
#define ACCEL_RUNTIME_CUDA_DEVICEPOOL_H

#include "runtime/cuda/GpuContext.h"

#include <map>
#include <mutex>
#include <set>
#include <vector>

namespace accel::rt::gpu {

struct DevicePool {
  static constexpr std::size_t kMinChunk = std::size_t(32) << 20;

  explicit DevicePool(const CudaApi *api) : api(api) {}
  ~DevicePool();
  DevicePool(const DevicePool &) = delete;
  DevicePool &operator=(const DevicePool &) = delete;

  /// Bytes the pool holds from the driver.
  std::size_t bytes() const;
  /// The most bytes in use at once since the pool was made (or re-reserved).
  std::size_t peakInUse() const;
  /// Blocks handed out and not yet given back.
  std::size_t liveBlocks() const;
  /// With no block live: gives every chunk back and takes one of `bytes`
  /// instead (no fragmentation for a pool whose peak is known). Fails with
  /// kInternal while blocks are live.
  Status reserve(std::size_t bytes);

  // GpuContext's side.
  /// A block of `bytes` (already in 256-byte granules), or 0 when no free
  /// range fits.
  CuDevicePtr take(std::size_t bytes);
  /// Adds a chunk from the driver (cuMemAlloc, with the thread's capture
  /// mode relaxed so that it may happen during a capture); the driver's
  /// CUresult.
  int grow(std::size_t bytes);
  void give(CuDevicePtr ptr, std::size_t bytes);

private:
  void addFree(CuDevicePtr ptr, std::size_t bytes); // mu held

  const CudaApi *api;
  mutable std::mutex mu;
  std::vector<std::pair<CuDevicePtr, std::size_t>> chunks;
  std::set<CuDevicePtr> chunkStarts;
  std::map<CuDevicePtr, std::size_t> freeRanges; // start -> bytes
  std::size_t total = 0, inUse = 0, peak = 0, live = 0;
};

} // namespace accel::rt::gpu

#endif // ACCEL_RUNTIME_CUDA_DEVICEPOOL_H
