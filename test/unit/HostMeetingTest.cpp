//===- HostMeetingTest.cpp - the host meeting of ranks that share a GPU ---===//
//
// runtime/cuda/HostMeeting.h (P2pAllReduce's host-ordered groups) without a
// GPU: no rank passes call k before every rank has reached it, a stop wakes
// the waiters with the peer-failure sentence and fails later calls, and a
// restart starts over at call 0.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/HostMeeting.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using namespace accel::rt;

namespace {

/// Every one of `ranks` threads meets `calls` times; returns whether some
/// thread ever passed call k while another had not reached it.
bool someRankRanAhead(gpu::HostMeeting &m, int ranks, int calls) {
  std::vector<std::atomic<int>> reached(static_cast<size_t>(ranks));
  for (auto &r : reached)
    r = 0;
  std::atomic<bool> ahead{false}, failed{false};
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      for (int k = 1; k <= calls; ++k) {
        if (r == k % ranks) // a different late rank each call
          std::this_thread::sleep_for(std::chrono::microseconds(200));
        reached[size_t(r)] = k;
        if (!m.meet().isOk())
          failed = true;
        for (int q = 0; q < ranks; ++q)
          if (reached[size_t(q)] < k)
            ahead = true;
      }
    });
  for (auto &t : threads)
    t.join();
  EXPECT_FALSE(failed);
  return ahead;
}

} // namespace

TEST(HostMeeting, NoRankPassesACallBeforeEveryRankReachedIt) {
  for (int ranks : {2, 3, 8}) {
    gpu::HostMeeting m(ranks);
    EXPECT_FALSE(someRankRanAhead(m, ranks, 200)) << ranks << " ranks";
  }
}

TEST(HostMeeting, AStopWakesTheWaitersAndARestartStartsOver) {
  gpu::HostMeeting m(2);
  Status waited = Status::ok();
  const auto t0 = std::chrono::steady_clock::now();
  std::thread rank0([&] { waited = m.meet(); }); // rank 1 never comes
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  m.stop();
  rank0.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(waited.isOk());
  EXPECT_NE(waited.message().find("the tensor-parallel group stopped"), std::string::npos)
      << waited.message();
  EXPECT_GE(s, 0.09);
  // Stopped: a later call fails at once instead of waiting.
  EXPECT_FALSE(m.meet().isOk());
  // Restarted: rank 0's earlier arrival is forgotten, both meet again.
  m.restart();
  EXPECT_FALSE(someRankRanAhead(m, 2, 50));
}
