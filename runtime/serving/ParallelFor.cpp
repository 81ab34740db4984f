//===- ParallelFor.cpp - a few persistent threads for per-sequence work ---===//

#include "runtime/serving/ParallelFor.h"

namespace accel::rt::serve {

ParallelFor::ParallelFor(int threads) {
  for (int i = 0; i < threads; ++i)
    workers_.emplace_back([this] { work(); });
}

ParallelFor::~ParallelFor() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

void ParallelFor::drain() {
  // job_ and n_ are stored before next_ is reset (seq_cst): an index below
  // n_ belongs to the job now set.
  for (size_t i = next_.fetch_add(1); i < n_.load(); i = next_.fetch_add(1))
    (*job_.load())(i);
}

void ParallelFor::work() {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    wake_.wait(l, [&] { return stop_ || generation_ != seen; });
    if (stop_)
      return;
    seen = generation_;
    ++busy_;
    l.unlock();
    drain();
    l.lock();
    if (--busy_ == 0)
      done_.notify_all();
  }
}

void ParallelFor::run(size_t n, const std::function<void(size_t)> &f) {
  if (workers_.empty() || n < 2) {
    for (size_t i = 0; i < n; ++i)
      f(i);
    return;
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    job_.store(&f);
    n_.store(n);
    next_.store(0);
    ++generation_;
  }
  wake_.notify_all();
  drain();
  std::unique_lock<std::mutex> l(mu_);
  // Every index is taken once next_ passes n; wait for the workers still
  // running one (a worker that wakes late finds nothing left).
  done_.wait(l, [&] { return busy_ == 0; });
  next_.store(kIdle); // a worker still looking takes nothing
  n_.store(0);
  job_.store(nullptr);
}

} // namespace accel::rt::serve
