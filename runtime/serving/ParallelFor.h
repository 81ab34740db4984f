//===- ParallelFor.h - a few persistent threads for per-sequence work ---*- C++ -*-===//
//
// The scheduler samples the next token of each sequence of a step (the
// masks of structured output, penalties, temperature, top-k/p over a row of
// the vocabulary) on these threads: each sequence's sampler is its own, so
// the tokens are those one thread would draw, in any order.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_PARALLELFOR_H
#define ACCEL_RUNTIME_SERVING_PARALLELFOR_H

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace accel::rt::serve {

class ParallelFor {
public:
  /// `threads` workers besides the caller (0: run() does everything itself).
  explicit ParallelFor(int threads);
  ~ParallelFor();
  ParallelFor(const ParallelFor &) = delete;
  ParallelFor &operator=(const ParallelFor &) = delete;

  /// f(0) .. f(n-1), on the workers and the calling thread; returns when all
  /// are done. One run at a time (the scheduler's step thread).
  void run(size_t n, const std::function<void(size_t)> &f);
  int threads() const { return int(workers_.size()); }

private:
  void work();
  void drain();

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::atomic<const std::function<void(size_t)> *> job_{nullptr};
  std::atomic<size_t> n_{0};
  static constexpr size_t kIdle = size_t(1) << 62; // next_ between runs: nothing to take
  std::atomic<size_t> next_{kIdle};
  size_t busy_ = 0;       // workers inside the current job
  uint64_t generation_ = 0;
  bool stop_ = false;
};

} // namespace accel::rt::serve

#endif // ACCEL_RUNTIME_SERVING_PARALLELFOR_H
