//===- Parallel.cpp - a simple parallel-for for the CPU kernels -----------===//
#include "runtime/cpu/transformer/Parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace accel::rt::cpu {

namespace {
std::atomic<int> gThreads{0};
} // namespace

int kernelThreads() {
  const int n = gThreads.load(std::memory_order_relaxed);
  if (n > 0)
    return n;
  return std::max(1u, std::thread::hardware_concurrency());
}

void setKernelThreads(int n) {
  gThreads.store(n > 0 ? n : 0, std::memory_order_relaxed);
}

void parallelFor(int64_t n, int64_t minPerThread,
                 const std::function<void(int64_t, int64_t)> &body) {
  if (n <= 0)
    return;
  minPerThread = std::max<int64_t>(minPerThread, 1);
  const int64_t threads =
      std::min<int64_t>(kernelThreads(), n / minPerThread);
  if (threads <= 1) {
    body(0, n);
    return;
  }
  const int64_t chunk = (n + threads - 1) / threads;
  std::vector<std::thread> pool;
  pool.reserve(size_t(threads - 1));
  for (int64_t t = 1; t < threads; ++t) {
    const int64_t b = t * chunk, e = std::min(n, b + chunk);
    if (b < e)
      pool.emplace_back([&body, b, e] { body(b, e); });
  }
  body(0, std::min(n, chunk));
  for (std::thread &th : pool)
    th.join();
}

} // namespace accel::rt::cpu
