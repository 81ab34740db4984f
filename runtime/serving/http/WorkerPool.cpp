//===- WorkerPool.cpp - a few threads for work off the IO threads ---------===//
#include "runtime/serving/http/WorkerPool.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

namespace accel::rt::server {

WorkerPool::WorkerPool(int threads, int niceness) {
  for (int i = 0; i < std::max(1, threads); ++i)
    threads_.emplace_back([this, niceness]() {
#ifdef SYS_gettid
      // Per thread on Linux; best effort (a failure leaves the default).
      if (niceness > 0)
        (void)setpriority(PRIO_PROCESS, id_t(syscall(SYS_gettid)), niceness);
#endif
      while (true) {
        std::function<void()> task;
        {
          std::unique_lock<std::mutex> lock(mu_);
          cv_.wait(lock, [this]() { return stopping_ || !tasks_.empty(); });
          if (stopping_)
            return;
          task = std::move(tasks_.front());
          tasks_.pop_front();
        }
        task();
      }
    });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    tasks_.clear();
  }
  cv_.notify_all();
  for (std::thread &t : threads_)
    t.join();
}

void WorkerPool::post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

} // namespace accel::rt::server
