//===- Parallel.h - a simple parallel-for for the CPU kernels ---*- C++ -*-===//
//
// parallelFor splits [0, n) into contiguous chunks run on std::threads. The
// transformer kernels give every output element to exactly one index and
// compute it in a fixed order, so their results do not depend on the thread
// count.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_PARALLEL_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_PARALLEL_H

#include <cstdint>
#include <functional>

namespace accel::rt::cpu {

/// Threads the kernels use: the last setKernelThreads() value, or the
/// hardware concurrency (at least 1).
int kernelThreads();
/// Sets the kernels' thread count; n <= 0 restores the default.
void setKernelThreads(int n);

/// Calls body(begin, end) over chunks covering [0, n), on up to
/// kernelThreads() threads; inline when n is below 2 * minPerThread. Each
/// index is visited exactly once. The body must not throw.
void parallelFor(int64_t n, int64_t minPerThread,
                 const std::function<void(int64_t begin, int64_t end)> &body);

} // namespace accel::rt::cpu

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_PARALLEL_H
