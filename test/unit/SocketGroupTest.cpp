//===- SocketGroupTest.cpp - the group of processes, on threads -----------===//
//
// runtime/comm/SocketGroup.h over loopback, each rank on a thread of this
// process (the sockets are the same as between processes): the all_gather
// that hands out rank 0's NCCL id, and watchSocketGroup, which tells a GPU
// rank that a peer left (runtime/cuda/GpuProcessRank) so that its NCCL work
// does not wait forever, and stays quiet for a peer that is only in the last
// barrier.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/SocketGroup.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <chrono>
#include <cstring>
#include <future>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace accel::rt;

namespace {

/// A loopback port nobody listens on now.
int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)), 0);
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

/// Every rank of a group of `n` joined on its own thread.
std::vector<std::unique_ptr<comm::Communicator>> joinAll(int n) {
  const std::string master = "127.0.0.1:" + std::to_string(freePort());
  std::vector<std::future<StatusOr<std::unique_ptr<comm::Communicator>>>> joins;
  for (int r = 0; r < n; ++r)
    joins.push_back(std::async(std::launch::async, [=] {
      comm::SocketGroupOptions o;
      o.rank = r;
      o.size = n;
      o.master = master;
      o.fingerprint = "test";
      o.timeoutSeconds = 10;
      return comm::joinSocketGroup(o);
    }));
  std::vector<std::unique_ptr<comm::Communicator>> group;
  for (auto &j : joins) {
    StatusOr<std::unique_ptr<comm::Communicator>> c = j.get();
    EXPECT_TRUE(c.isOk()) << c.status().message();
    group.push_back(c ? std::move(*c) : nullptr);
  }
  return group;
}

/// watchSocketGroup on a thread of its own.
std::future<Status> watch(comm::Communicator &c, std::atomic<bool> &stop) {
  return std::async(std::launch::async, [&] { return comm::watchSocketGroup(c, stop, 20); });
}

bool finishes(std::future<Status> &f, int ms = 5000) {
  return f.wait_for(std::chrono::milliseconds(ms)) == std::future_status::ready;
}

TEST(SocketGroup, AllGatherHandsOutRankZerosBytes) {
  auto group = joinAll(3);
  ASSERT_TRUE(group[2]);
  std::vector<std::future<StatusOr<Tensor>>> outs;
  for (int r = 0; r < 3; ++r)
    outs.push_back(std::async(std::launch::async, [&, r] {
      Tensor id = *Tensor::allocate(DType::kU8, {128});
      for (int i = 0; i < 128; ++i) // rank 0's id; zeros elsewhere
        id.data<uint8_t>()[i] = r == 0 ? uint8_t(i * 7 + 1) : 0;
      return group[size_t(r)]->allGather(id, 0);
    }));
  for (int r = 0; r < 3; ++r) {
    StatusOr<Tensor> all = outs[size_t(r)].get();
    ASSERT_TRUE(all.isOk()) << all.status().message();
    ASSERT_EQ(all->numElements(), 3 * 128);
    for (int i = 0; i < 128; ++i)
      ASSERT_EQ(all->data<uint8_t>()[i], uint8_t(i * 7 + 1)) << "rank " << r << " byte " << i;
    EXPECT_EQ(all->data<uint8_t>()[128 + 5], 0);
  }
}

TEST(SocketGroup, WatchReturnsOkWhenStopped) {
  auto group = joinAll(2);
  std::atomic<bool> stop0{false}, stop1{false};
  auto w0 = watch(*group[0], stop0);
  auto w1 = watch(*group[1], stop1);
  EXPECT_FALSE(finishes(w0, 200)); // nobody left
  stop0 = true;
  stop1 = true;
  ASSERT_TRUE(finishes(w0));
  ASSERT_TRUE(finishes(w1));
  EXPECT_TRUE(w0.get().isOk());
  EXPECT_TRUE(w1.get().isOk());
}

TEST(SocketGroup, RankZeroSeesARankLeave) {
  auto group = joinAll(3);
  std::atomic<bool> stop{false};
  auto w = watch(*group[0], stop);
  group[2].reset(); // the process exits: its connection closes
  ASSERT_TRUE(finishes(w));
  Status s = w.get();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "rank 2 left the tensor-parallel group");
}

TEST(SocketGroup, ARankSeesRankZeroLeaveOrAbort) {
  auto group = joinAll(3);
  std::atomic<bool> stop{false};
  auto w1 = watch(*group[1], stop);
  auto w2 = watch(*group[2], stop);
  // Rank 0's step failed: its abort shuts every connection.
  group[0]->abort(Status(StatusCode::kInternal, "rank 0 (GPU 0): out of memory"));
  for (auto *w : {&w1, &w2}) {
    ASSERT_TRUE(finishes(*w));
    Status s = w->get();
    EXPECT_EQ(s.code(), StatusCode::kUnavailable);
    EXPECT_NE(s.message().find("rank 0 (127.0.0.1:"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(") left the tensor-parallel group"), std::string::npos);
  }
}

TEST(SocketGroup, WatchOfAnAbortedGroupSaysWhy) {
  auto group = joinAll(2);
  group[1]->abort(Status(StatusCode::kInternal, "rank 1 (GPU 1): a kernel failed"));
  std::atomic<bool> stop{false};
  auto w = watch(*group[1], stop);
  ASSERT_TRUE(finishes(w));
  EXPECT_EQ(w.get().message(), "the tensor-parallel group stopped: rank 1 (GPU 1): a kernel failed");
}

TEST(SocketGroup, APeerInTheLastBarrierIsNotALeave) {
  auto group = joinAll(2);
  std::atomic<bool> stop{false};
  auto w = watch(*group[0], stop);
  // Rank 1 is done and waits in the last barrier while rank 0 still runs.
  auto barrier1 = std::async(std::launch::async, [&] {
    return group[1]->allReduceSum(*Tensor::allocate(DType::kF32, {1}));
  });
  EXPECT_FALSE(finishes(w, 300)); // its bytes are not a departure
  stop = true;
  ASSERT_TRUE(finishes(w));
  EXPECT_TRUE(w.get().isOk());
  // Rank 0 reaches the barrier: the bytes the watcher left alone are still there.
  StatusOr<Tensor> b0 = group[0]->allReduceSum(*Tensor::allocate(DType::kF32, {1}));
  ASSERT_TRUE(b0.isOk()) << b0.status().message();
  StatusOr<Tensor> b1 = barrier1.get();
  ASSERT_TRUE(b1.isOk()) << b1.status().message();
}

TEST(SocketGroup, BroadcastHandsRankZerosTensorsToEveryRank) {
  auto group = joinAll(3);
  std::atomic<bool> stop{false};
  auto w = watch(*group[1], stop); // broadcast bytes are not a departure
  std::vector<std::future<StatusOr<std::vector<Tensor>>>> outs;
  for (int r = 0; r < 3; ++r)
    outs.push_back(std::async(std::launch::async, [&, r] {
      std::vector<Tensor> mine;
      if (r == 0) {
        Tensor a = *Tensor::allocate(DType::kI64, {3});
        for (int i = 0; i < 3; ++i)
          a.data<int64_t>()[i] = 10 + i;
        Tensor b = *Tensor::allocate(DType::kI32, {2, 2});
        for (int i = 0; i < 4; ++i)
          b.data<int32_t>()[i] = -i;
        mine = {a, b, *Tensor::allocate(DType::kI32, {0})};
      }
      return comm::broadcastFromRankZero(*group[size_t(r)], mine);
    }));
  for (int r = 0; r < 3; ++r) {
    StatusOr<std::vector<Tensor>> got = outs[size_t(r)].get();
    ASSERT_TRUE(got.isOk()) << got.status().message();
    ASSERT_EQ(got->size(), 3u) << "rank " << r;
    EXPECT_EQ((*got)[0].data<int64_t>()[2], 12);
    EXPECT_EQ((*got)[1].dim(0), 2);
    EXPECT_EQ((*got)[1].data<int32_t>()[3], -3);
    EXPECT_EQ((*got)[2].numElements(), 0);
  }
  EXPECT_FALSE(finishes(w, 200));
  stop = true;
  ASSERT_TRUE(finishes(w));
  EXPECT_TRUE(w.get().isOk());
}

TEST(SocketGroup, ABroadcastToARankThatLeftFails) {
  auto group = joinAll(2);
  group[1].reset();
  StatusOr<std::vector<Tensor>> r =
      comm::broadcastFromRankZero(*group[0], {*Tensor::allocate(DType::kI64, {1})});
  // The closed connection shows at once or at a later send (the first may
  // only fill the socket's buffer).
  for (int i = 0; r.isOk() && i < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    r = comm::broadcastFromRankZero(*group[0], {*Tensor::allocate(DType::kI64, {1})});
  }
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(),
            "the tensor-parallel group stopped: rank 1 left the tensor-parallel group");
}

TEST(SocketGroup, OnlyAGroupOfProcessesCanBeWatched) {
  auto threads = comm::createInProcessGroup(2);
  std::atomic<bool> stop{false};
  Status s = comm::watchSocketGroup(*threads[0], stop);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "only a group of processes (joinSocketGroup) can be watched");
}

} // namespace
