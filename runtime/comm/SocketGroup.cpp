//===- SocketGroup.cpp - a tensor-parallel group across processes ---------===//
//
// Wire format (both ends are the same build: fixed-width host-order fields):
//   hello  (rank r -> rank 0): "ACCL", version, rank, size, fingerprint
//   answer (rank 0 -> rank r): ok, or an error sentence
//   input  (rank r -> rank 0): op (1 all_reduce, 2 all_gather), axis, tensor
//   result (rank 0 -> rank r): ok + tensor, or an error sentence
//   broadcast (rank 0 -> rank r): op 3, a count, that many tensors
// A tensor is dtype, rank, dims, byte count, bytes; a sentence a length and
// its bytes.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/SocketGroup.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace accel::rt::comm {

namespace {

constexpr uint32_t kMagic = 0x4C434341; // "ACCL"
constexpr uint32_t kVersion = 1;
constexpr uint32_t kOpSum = 1, kOpGather = 2, kOpBroadcast = 3;

using Clock = std::chrono::steady_clock;

Status ioError(const std::string &what) {
  return Status(StatusCode::kUnavailable, what + " (" + std::strerror(errno) + ")");
}

/// Moves exactly `n` bytes with `io` (one send or recv call); false when
/// the peer is gone.
template <typename Io> bool transferAll(char *c, size_t n, Io io) {
  while (n > 0) {
    ssize_t k = io(c, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    c += k;
    n -= size_t(k);
  }
  return true;
}
bool sendAll(int fd, const void *p, size_t n) {
  return transferAll(const_cast<char *>(static_cast<const char *>(p)), n,
                     [fd](char *c, size_t k) { return ::send(fd, c, k, MSG_NOSIGNAL); });
}
bool recvAll(int fd, void *p, size_t n) {
  return transferAll(static_cast<char *>(p), n,
                     [fd](char *c, size_t k) { return ::recv(fd, c, k, 0); });
}
template <typename T> bool sendPod(int fd, T v) { return sendAll(fd, &v, sizeof(v)); }
template <typename T> bool recvPod(int fd, T &v) { return recvAll(fd, &v, sizeof(v)); }

bool sendString(int fd, const std::string &s) {
  return sendPod(fd, uint64_t(s.size())) && sendAll(fd, s.data(), s.size());
}
bool recvString(int fd, std::string &s, uint64_t limit = 1 << 20) {
  uint64_t n = 0;
  if (!recvPod(fd, n) || n > limit)
    return false;
  s.resize(size_t(n));
  return recvAll(fd, s.data(), size_t(n));
}

bool sendTensor(int fd, const Tensor &t) {
  if (!sendPod(fd, int32_t(t.dtype())) || !sendPod(fd, int32_t(t.rank())))
    return false;
  for (int64_t d : t.shape())
    if (!sendPod(fd, d))
      return false;
  return sendPod(fd, uint64_t(t.byteSize())) && sendAll(fd, t.rawData(), t.byteSize());
}
StatusOr<Tensor> recvTensor(int fd, const std::string &peer) {
  int32_t dtype = 0, rank = 0;
  if (!recvPod(fd, dtype) || !recvPod(fd, rank) || rank < 0 || rank > 8)
    return Status(StatusCode::kUnavailable, peer + " left the tensor-parallel group");
  Shape shape(static_cast<size_t>(rank));
  for (int64_t &d : shape)
    if (!recvPod(fd, d))
      return Status(StatusCode::kUnavailable, peer + " left the tensor-parallel group");
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DType(dtype), shape));
  uint64_t bytes = 0;
  if (!recvPod(fd, bytes) || bytes != t.byteSize() || !recvAll(fd, t.rawData(), t.byteSize()))
    return Status(StatusCode::kUnavailable, peer + " left the tensor-parallel group");
  return t;
}

/// "host:port" or "[v6 address]:port".
Status splitAddress(const std::string &address, std::string &host, std::string &port) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size())
    return Status(StatusCode::kInvalidArgument,
                  "the tensor-parallel master address '" + address + "' is not HOST:PORT");
  host = address.substr(0, colon);
  port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  for (char c : port)
    if (c < '0' || c > '9')
      return Status(StatusCode::kInvalidArgument,
                    "the tensor-parallel master address '" + address + "' has no numeric port");
  return Status::ok();
}

class SocketCommunicator final : public Communicator {
public:
  SocketCommunicator(int rank, int size, std::vector<int> fds, std::string master)
      : rank_(rank), size_(size), fds_(std::move(fds)), master_(std::move(master)) {}
  ~SocketCommunicator() override {
    for (int fd : fds_)
      if (fd >= 0)
        ::close(fd);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Status stopped() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return aborted_ ? why_ : Status::ok();
  }

  void abort(const Status &why) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (aborted_)
      return;
    aborted_ = true;
    why_ = Status(why.code(), "the tensor-parallel group stopped: " + why.message());
    for (int fd : fds_)
      if (fd >= 0)
        ::shutdown(fd, SHUT_RDWR);
  }

  /// watchSocketGroup's body: a closed connection (POLLRDHUP, POLLHUP,
  /// POLLERR) is a peer that left; bytes waiting to be read (a broadcast,
  /// the last barrier) are not looked at.
  Status watch(const std::atomic<bool> &stop, int pollMs) {
    std::vector<pollfd> fds;
    std::vector<int> ranks;
    for (int r = 0; r < size_; ++r)
      if (r != rank_ && (rank_ == 0 || r == 0)) {
        ranks.push_back(r);
        fds.push_back(pollfd{fds_[size_t(rank_ == 0 ? r : 0)], POLLRDHUP, 0});
      }
    while (!stop.load()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (aborted_)
          return why_;
      }
      for (pollfd &f : fds)
        f.revents = 0;
      int n = ::poll(fds.data(), fds.size(), pollMs);
      if (n < 0 && errno != EINTR)
        return ioError("rank " + std::to_string(rank_) + " cannot watch its tensor-parallel group");
      if (n <= 0)
        continue;
      for (size_t i = 0; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
          continue;
        {
          std::lock_guard<std::mutex> lock(mu_);
          if (aborted_) // our own abort shut the sockets
            return why_;
        }
        const std::string who = ranks[i] == 0 ? "rank 0 (" + master_ + ")"
                                              : "rank " + std::to_string(ranks[i]);
        return Status(StatusCode::kUnavailable, who + " left the tensor-parallel group");
      }
    }
    return Status::ok();
  }

  /// broadcastFromRankZero's body.
  StatusOr<std::vector<Tensor>> broadcast(const std::vector<Tensor> &mine) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (aborted_)
        return why_;
    }
    StatusOr<std::vector<Tensor>> r = rank_ == 0 ? sendAllRanks(mine) : receiveFromHub();
    if (!r) {
      abort(r.status());
      std::lock_guard<std::mutex> lock(mu_);
      return why_;
    }
    return r;
  }

  StatusOr<Tensor> allReduceSum(const Tensor &x) override { return collective(kOpSum, 0, x); }
  StatusOr<Tensor> allGather(const Tensor &x, int64_t axis) override {
    return collective(kOpGather, axis, x);
  }

private:
  StatusOr<Tensor> collective(uint32_t op, int64_t axis, const Tensor &x) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (aborted_)
        return why_;
    }
    StatusOr<Tensor> r = rank_ == 0 ? hub(op, axis, x) : spoke(op, axis, x);
    if (!r) {
      abort(r.status());
      std::lock_guard<std::mutex> lock(mu_);
      return why_;
    }
    return r;
  }

  /// Rank 0: every input in rank order, the result to everyone.
  StatusOr<Tensor> hub(uint32_t op, int64_t axis, const Tensor &x) {
    std::vector<Tensor> inputs(static_cast<size_t>(size_));
    std::vector<const Tensor *> ptrs{&x};
    for (int r = 1; r < size_; ++r) {
      const std::string peer = "rank " + std::to_string(r);
      uint32_t peerOp = 0;
      int64_t peerAxis = 0;
      if (!recvPod(fds_[size_t(r)], peerOp) || !recvPod(fds_[size_t(r)], peerAxis))
        return Status(StatusCode::kUnavailable, peer + " left the tensor-parallel group");
      ACCEL_RT_ASSIGN_OR_RETURN(inputs[size_t(r)], recvTensor(fds_[size_t(r)], peer));
      if (peerOp != op || peerAxis != axis)
        return Status(StatusCode::kInternal,
                      peer + " called another collective than rank 0 (the ranks run different "
                             "plans or steps)");
      ptrs.push_back(&inputs[size_t(r)]);
    }
    StatusOr<Tensor> out = op == kOpSum ? sumInRankOrder(ptrs, 0) : gatherInRankOrder(ptrs, axis, 0);
    for (int r = 1; r < size_; ++r) {
      const int fd = fds_[size_t(r)];
      const bool sent = out ? sendPod(fd, uint32_t(0)) && sendTensor(fd, *out)
                            : sendPod(fd, uint32_t(1)) && sendString(fd, out.status().message());
      if (!sent && out)
        return Status(StatusCode::kUnavailable,
                      "rank " + std::to_string(r) + " left the tensor-parallel group");
    }
    return out;
  }

  StatusOr<std::vector<Tensor>> sendAllRanks(const std::vector<Tensor> &mine) {
    for (int r = 1; r < size_; ++r) {
      const int fd = fds_[size_t(r)];
      bool sent = sendPod(fd, kOpBroadcast) && sendPod(fd, uint32_t(mine.size()));
      for (const Tensor &t : mine)
        sent = sent && sendTensor(fd, t);
      if (!sent)
        return Status(StatusCode::kUnavailable,
                      "rank " + std::to_string(r) + " left the tensor-parallel group");
    }
    return mine;
  }

  StatusOr<std::vector<Tensor>> receiveFromHub() {
    const int fd = fds_[0];
    const std::string hub = "rank 0 (" + master_ + ")";
    uint32_t op = 0, count = 0;
    if (!recvPod(fd, op) || !recvPod(fd, count))
      return Status(StatusCode::kUnavailable, hub + " left the tensor-parallel group");
    if (op != kOpBroadcast || count > 64)
      return Status(StatusCode::kInternal,
                    hub + " sent something else than a broadcast (the ranks run different steps)");
    std::vector<Tensor> out;
    for (uint32_t i = 0; i < count; ++i) {
      ACCEL_RT_ASSIGN_OR_RETURN(Tensor t, recvTensor(fd, hub));
      out.push_back(std::move(t));
    }
    return out;
  }

  /// Rank r > 0: the input to rank 0, the result back.
  StatusOr<Tensor> spoke(uint32_t op, int64_t axis, const Tensor &x) {
    const int fd = fds_[0];
    const std::string hub = "rank 0 (" + master_ + ")";
    if (!sendPod(fd, op) || !sendPod(fd, axis) || !sendTensor(fd, x))
      return Status(StatusCode::kUnavailable, hub + " left the tensor-parallel group");
    uint32_t status = 0;
    if (!recvPod(fd, status))
      return Status(StatusCode::kUnavailable, hub + " left the tensor-parallel group");
    if (status != 0) {
      std::string why;
      recvString(fd, why);
      return Status(StatusCode::kInvalidArgument, why);
    }
    return recvTensor(fd, hub);
  }

  const int rank_, size_;
  std::vector<int> fds_; // rank 0: one per rank (fds_[0] unused); others: fds_[0], to rank 0
  const std::string master_;
  mutable std::mutex mu_;
  bool aborted_ = false;
  Status why_ = Status::ok();
};

void noDelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

StatusOr<std::unique_ptr<Communicator>> joinAsMaster(const SocketGroupOptions &o,
                                                     const std::string &port) {
  const std::string where = "port " + port;
  int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
  bool v6 = fd >= 0;
  if (!v6)
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return ioError("rank 0 cannot open a socket for the tensor-parallel group");
  int one = 1, zero = 0;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  int rc;
  if (v6) {
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    a.sin6_port = htons(uint16_t(std::stoi(port)));
    rc = ::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a));
  } else {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(uint16_t(std::stoi(port)));
    rc = ::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a));
  }
  if (rc != 0 || ::listen(fd, o.size) != 0) {
    Status s = ioError("rank 0 cannot listen on " + where + " for the tensor-parallel group");
    ::close(fd);
    return s;
  }
  std::vector<int> peers(static_cast<size_t>(o.size), -1);
  auto closeAll = [&] {
    ::close(fd);
    for (int p : peers)
      if (p >= 0)
        ::close(p);
  };
  const Clock::time_point deadline =
      Clock::now() + std::chrono::milliseconds(int64_t(o.timeoutSeconds * 1000));
  int joined = 1;
  while (joined < o.size) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, int(left)) <= 0) {
      std::string missing;
      for (int r = 1; r < o.size; ++r)
        if (peers[size_t(r)] < 0)
          missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      closeAll();
      return Status(StatusCode::kUnavailable,
                    "rank 0 waited " + std::to_string(int(o.timeoutSeconds)) + " s on " + where +
                        " for tensor-parallel rank(s) " + missing + " of " +
                        std::to_string(o.size) + ", which did not join");
    }
    int c = ::accept(fd, nullptr, nullptr);
    if (c < 0)
      continue;
    noDelay(c);
    uint32_t magic = 0, version = 0;
    int32_t rank = -1, size = 0;
    std::string fingerprint;
    if (!recvPod(c, magic) || magic != kMagic || !recvPod(c, version) || version != kVersion ||
        !recvPod(c, rank) || !recvPod(c, size) || !recvString(c, fingerprint)) {
      ::close(c); // not one of ours: keep waiting for the ranks
      continue;
    }
    std::string bad;
    if (size != o.size)
      bad = "rank " + std::to_string(rank) + " runs a group of " + std::to_string(size) +
            " ranks and rank 0 one of " + std::to_string(o.size);
    else if (rank < 1 || rank >= o.size)
      bad = "rank " + std::to_string(rank) + " is not a rank of a group of " +
            std::to_string(o.size);
    else if (peers[size_t(rank)] >= 0)
      bad = "two processes joined as rank " + std::to_string(rank);
    else if (fingerprint != o.fingerprint)
      bad = "rank " + std::to_string(rank) + " runs " + fingerprint + " and rank 0 " +
            o.fingerprint;
    if (!bad.empty()) {
      sendPod(c, uint32_t(1));
      sendString(c, bad);
      ::close(c);
      closeAll();
      return Status(StatusCode::kInvalidArgument, "the tensor-parallel group cannot form: " + bad);
    }
    sendPod(c, uint32_t(0));
    peers[size_t(rank)] = c;
    ++joined;
  }
  ::close(fd);
  return std::unique_ptr<Communicator>(
      new SocketCommunicator(0, o.size, std::move(peers), o.master));
}

StatusOr<std::unique_ptr<Communicator>> joinAsRank(const SocketGroupOptions &o,
                                                   const std::string &host,
                                                   const std::string &port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo *res = nullptr;
  if (int e = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); e != 0)
    return Status(StatusCode::kInvalidArgument, "rank " + std::to_string(o.rank) +
                                                    " cannot resolve the tensor-parallel master '" +
                                                    o.master + "': " + gai_strerror(e));
  const Clock::time_point deadline =
      Clock::now() + std::chrono::milliseconds(int64_t(o.timeoutSeconds * 1000));
  int fd = -1;
  while (fd < 0) {
    for (addrinfo *a = res; a && fd < 0; a = a->ai_next) {
      int c = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
      if (c < 0)
        continue;
      if (::connect(c, a->ai_addr, a->ai_addrlen) == 0)
        fd = c;
      else
        ::close(c);
    }
    if (fd >= 0 || Clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100)); // rank 0 may not listen yet
  }
  ::freeaddrinfo(res);
  if (fd < 0)
    return Status(StatusCode::kUnavailable,
                  "rank " + std::to_string(o.rank) + " could not reach the tensor-parallel master " +
                      o.master + " in " + std::to_string(int(o.timeoutSeconds)) + " s");
  noDelay(fd);
  uint32_t answer = 1;
  std::string why;
  if (!sendPod(fd, kMagic) || !sendPod(fd, kVersion) || !sendPod(fd, int32_t(o.rank)) ||
      !sendPod(fd, int32_t(o.size)) || !sendString(fd, o.fingerprint) || !recvPod(fd, answer) ||
      (answer != 0 && !recvString(fd, why))) {
    ::close(fd);
    return Status(StatusCode::kUnavailable,
                  "rank " + std::to_string(o.rank) + " lost the tensor-parallel master " +
                      o.master + " while joining");
  }
  if (answer != 0) {
    ::close(fd);
    return Status(StatusCode::kInvalidArgument, "the tensor-parallel group cannot form: " + why);
  }
  return std::unique_ptr<Communicator>(
      new SocketCommunicator(o.rank, o.size, std::vector<int>{fd}, o.master));
}

} // namespace

StatusOr<std::vector<Tensor>> broadcastFromRankZero(Communicator &group,
                                                    const std::vector<Tensor> &mine) {
  auto *socket = dynamic_cast<SocketCommunicator *>(&group);
  if (!socket)
    return Status(StatusCode::kInvalidArgument,
                  "only a group of processes (joinSocketGroup) broadcasts");
  return socket->broadcast(mine);
}

Status watchSocketGroup(Communicator &group, const std::atomic<bool> &stop, int pollMs) {
  auto *socket = dynamic_cast<SocketCommunicator *>(&group);
  if (!socket)
    return Status(StatusCode::kInvalidArgument,
                  "only a group of processes (joinSocketGroup) can be watched");
  return socket->watch(stop, pollMs);
}

StatusOr<std::unique_ptr<Communicator>> joinSocketGroup(const SocketGroupOptions &o) {
  if (o.size < 1 || o.rank < 0 || o.rank >= o.size)
    return Status(StatusCode::kInvalidArgument,
                  "tensor-parallel rank " + std::to_string(o.rank) + " is not in a group of " +
                      std::to_string(o.size) + " ranks");
  std::string host, port;
  ACCEL_RT_RETURN_IF_ERROR(splitAddress(o.master, host, port));
  if (o.rank == 0)
    return joinAsMaster(o, port);
  return joinAsRank(o, host, port);
}

} // namespace accel::rt::comm
