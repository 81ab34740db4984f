//===- HostMeeting.h - threads that meet once per collective call -*- C++ -*-===//
//
// Where the threads of a host-ordered all-reduce group meet (P2pAllReduce.h:
// tensor-parallel ranks that share a GPU): every rank's k-th meet() returns
// once every rank has called it k times, so that each rank's stream waits
// only for events its peers have already recorded. stop() (a peer's step
// failed, so it will never come) makes every waiting and later meet() fail
// in one sentence that TpGpuExecutor counts as a peer's failure, not a
// cause; restart() clears that for the next step. No CUDA here: the meeting
// is tested on the CPU (test/unit/HostMeetingTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_HOSTMEETING_H
#define ACCEL_RUNTIME_CUDA_HOSTMEETING_H

#include "core/Status.h"

#include <condition_variable>
#include <mutex>

namespace accel::rt::gpu {

class HostMeeting {
public:
  explicit HostMeeting(int ranks) : ranks_(ranks) {}

  /// Returns when every rank has arrived at this call, or fails once the
  /// meeting is stopped.
  Status meet() {
    std::unique_lock<std::mutex> lock(mu_);
    const unsigned long long gen = generation_;
    if (!stopped_ && ++arrived_ == ranks_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return Status::ok();
    }
    cv_.wait(lock, [&] { return generation_ != gen || stopped_; });
    if (generation_ != gen)
      return Status::ok();
    return Status(StatusCode::kInternal, "a peer's step failed before this all_reduce (the "
                                         "tensor-parallel group stopped)");
  }
  /// Wakes every waiter with the failure; later calls fail at once.
  void stop() {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    cv_.notify_all();
  }
  /// After every rank has returned: the next meet() is a fresh call 0.
  void restart() {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = false;
    arrived_ = 0;
  }

private:
  std::mutex mu_;
  std::condition_variable cv_;
  const int ranks_;
  int arrived_ = 0;
  unsigned long long generation_ = 0;
  bool stopped_ = false;
};

} // namespace accel::rt::gpu

#endif // ACCEL_RUNTIME_CUDA_HOSTMEETING_H
