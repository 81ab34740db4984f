//===- DevicePool.cpp - a private pool of device memory for CUDA graphs ----===//
#include "runtime/cuda/DevicePool.h"

#include <algorithm>

namespace accel::rt::gpu {

namespace {
constexpr int kCaptureModeRelaxed = 2; // CU_STREAM_CAPTURE_MODE_RELAXED
} // namespace

DevicePool::~DevicePool() {
  for (auto &[ptr, bytes] : chunks)
    api->cuMemFree(ptr);
}

std::size_t DevicePool::bytes() const {
  std::lock_guard<std::mutex> lock(mu);
  return total;
}

std::size_t DevicePool::peakInUse() const {
  std::lock_guard<std::mutex> lock(mu);
  return peak;
}

std::size_t DevicePool::liveBlocks() const {
  std::lock_guard<std::mutex> lock(mu);
  return live;
}

Status DevicePool::reserve(std::size_t want) {
  want = (want + 255) & ~std::size_t(255);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (live != 0)
      return Status(StatusCode::kInternal,
                    "cannot re-reserve a device memory pool while " + std::to_string(live) +
                        " of its blocks are in use");
    if (chunks.size() == 1 && total >= want)
      return Status::ok();
    for (auto &[ptr, bytes] : chunks)
      api->cuMemFree(ptr);
    chunks.clear();
    chunkStarts.clear();
    freeRanges.clear();
    total = inUse = peak = 0;
  }
  if (want == 0)
    return Status::ok();
  if (int r = grow(want); r != 0)
    return Status(StatusCode::kResourceExhausted,
                  "cannot reserve " + std::to_string(want) +
                      " bytes of device memory for CUDA graphs (CUDA error " + std::to_string(r) +
                      ")");
  return Status::ok();
}

CuDevicePtr DevicePool::take(std::size_t want) {
  std::lock_guard<std::mutex> lock(mu);
  auto best = freeRanges.end();
  for (auto it = freeRanges.begin(); it != freeRanges.end(); ++it)
    if (it->second >= want && (best == freeRanges.end() || it->second < best->second))
      best = it;
  if (best == freeRanges.end())
    return 0;
  const CuDevicePtr p = best->first;
  const std::size_t have = best->second;
  freeRanges.erase(best);
  if (have > want)
    freeRanges.emplace(p + want, have - want);
  inUse += want;
  peak = std::max(peak, inUse);
  ++live;
  return p;
}

int DevicePool::grow(std::size_t want) {
  const std::size_t bytes = std::max(want, kMinChunk);
  // cuMemAlloc is "potentially unsafe" during a stream capture: relax this
  // thread's capture mode around it (the chunk outlives every graph, so the
  // capture need not see it).
  int mode = kCaptureModeRelaxed;
  const bool swapped = api->cuThreadExchangeStreamCaptureMode(&mode) == 0;
  CuDevicePtr p = 0;
  const int r = api->cuMemAlloc(&p, bytes);
  if (swapped)
    api->cuThreadExchangeStreamCaptureMode(&mode);
  if (r != 0)
    return r;
  std::lock_guard<std::mutex> lock(mu);
  chunks.emplace_back(p, bytes);
  chunkStarts.insert(p);
  total += bytes;
  addFree(p, bytes);
  return 0;
}

void DevicePool::give(CuDevicePtr ptr, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mu);
  inUse -= bytes;
  --live;
  addFree(ptr, bytes);
}

void DevicePool::addFree(CuDevicePtr ptr, std::size_t bytes) {
  auto next = freeRanges.lower_bound(ptr);
  // Merge with the following range, unless it starts another chunk.
  if (next != freeRanges.end() && next->first == ptr + bytes && !chunkStarts.count(next->first)) {
    bytes += next->second;
    next = freeRanges.erase(next);
  }
  if (next != freeRanges.begin() && !chunkStarts.count(ptr)) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == ptr) {
      prev->second += bytes;
      return;
    }
  }
  freeRanges.emplace(ptr, bytes);
}

} // namespace accel::rt::gpu
