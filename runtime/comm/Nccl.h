//===- Nccl.h - NCCL, opened at run time; a GPU tensor-parallel group -*- C++ -*-===//
//
// accel never links NCCL: a tensor-parallel plan on the GPU (accelc -tp=N,
// runtime/cuda/TpGpuExecutor) opens it with dlopen, `$ACCEL_LIBNCCL` when
// set, else libnccl.so.2, and resolves the entry points below. The few
// types and enum values of nccl.h that the runtime passes are declared here
// (NCCL 2.x ABI: ncclComm_t is a pointer, ncclUniqueId 128 bytes, data types
// and reduction ops ints), so that the runtime builds without NCCL's headers.
//
// NcclGroup holds the communicators of one process's group, one per GPU
// (ncclCommInitAll), or the one communicator of a process that runs one rank
// of a group spread over processes and machines (ncclCommInitRank, the
// unique id handed out by rank 0 over the tensor-parallel rendezvous,
// runtime/cuda/GpuProcessRank), and what a rank calls at a `collective` step: all_reduce
// (sum) and all_gather (along the leading dimension, as NCCL gathers) on the
// rank's stream, asynchronously, in the tensor's own dtype (f32, bf16, f16).
//
// Failures: a rank whose step failed calls abort(why); later collectives of
// every rank fail at once with "the tensor-parallel group stopped: why", and
// abortCommunicators() stops the NCCL kernels that already wait for the
// failed rank (ncclCommAbort), so that no rank waits on its stream forever.
// An aborted group is not used again: the executor makes a new one.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_COMM_NCCL_H
#define ACCEL_RUNTIME_COMM_NCCL_H

#include "core/Status.h"
#include "core/Tensor.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace accel::rt::comm {

/// nccl.h's handles and values.
using NcclCommHandle = void *; // ncclComm_t
struct NcclUniqueId {
  char internal[128];
};
enum NcclDataType : int {
  kNcclInt8 = 0,
  kNcclUint8 = 1,
  kNcclInt32 = 2,
  kNcclUint32 = 3,
  kNcclInt64 = 4,
  kNcclUint64 = 5,
  kNcclFloat16 = 6,
  kNcclFloat32 = 7,
  kNcclFloat64 = 8,
  kNcclBfloat16 = 9,
};
constexpr int kNcclSum = 0; // ncclRedOp_t ncclSum

/// The NCCL entry points (each returns an ncclResult_t, 0: ncclSuccess).
struct NcclApi {
  int (*ncclGetVersion)(int *) = nullptr;
  int (*ncclGetUniqueId)(NcclUniqueId *) = nullptr;
  int (*ncclCommInitRank)(NcclCommHandle *, int, NcclUniqueId, int) = nullptr;
  int (*ncclCommInitAll)(NcclCommHandle *, int, const int *) = nullptr;
  int (*ncclCommDestroy)(NcclCommHandle) = nullptr;
  int (*ncclCommAbort)(NcclCommHandle) = nullptr;
  int (*ncclAllReduce)(const void *, void *, std::size_t, int, int, NcclCommHandle,
                       void *) = nullptr;
  int (*ncclAllGather)(const void *, void *, std::size_t, int, NcclCommHandle, void *) = nullptr;
  int (*ncclGroupStart)() = nullptr;
  int (*ncclGroupEnd)() = nullptr;
  const char *(*ncclGetErrorString)(int) = nullptr;
};

class Nccl {
public:
  /// The process's NCCL: `$ACCEL_LIBNCCL` when set, else libnccl.so.2,
  /// opened once. kUnavailable in one sentence naming the library, the
  /// loader's reason and how to point ACCEL_LIBNCCL at it.
  static StatusOr<const Nccl *> get();
  /// A new group's id (ncclGetUniqueId), what rank 0 of a group spread over
  /// processes hands every other rank.
  StatusOr<NcclUniqueId> uniqueId() const;
  /// Opens the NCCL library at `path` (not cached; get() uses it).
  static StatusOr<std::unique_ptr<Nccl>> open(const std::string &path);
  ~Nccl();

  const NcclApi &api() const { return api_; }
  const std::string &path() const { return path_; }
  /// ncclGetVersion's code, e.g. 22803 for 2.28.3.
  int version() const { return version_; }
  /// "2.28.3".
  std::string versionString() const;
  /// Status::ok() for ncclSuccess, else kUnavailable naming `call` and
  /// NCCL's description of `result`.
  Status check(int result, const char *call) const;

private:
  Nccl() = default;
  void *handle_ = nullptr;
  std::string path_;
  int version_ = 0;
  NcclApi api_;
};

/// The NCCL data type of a device tensor's dtype (f32, f16, bf16, f64, i32,
/// i64, i8, u8), or kUnimplemented.
StatusOr<int> ncclDataType(DType dtype);

class NcclGroup;

/// Rank r's side of an NcclGroup: what its executor's collective steps call.
class NcclRank {
public:
  /// The rank in the whole group (across processes).
  int rank() const { return rank_; }
  int size() const;
  /// recv[i] = the sum over ranks of send[i], `count` elements of `dtype`
  /// (recv may be send), enqueued on `stream`.
  Status allReduceSum(unsigned long long send, unsigned long long recv, std::size_t count,
                      DType dtype, void *stream);
  /// recv = every rank's `count` elements of send, in rank order
  /// (rank-major: recv holds size() x count elements), enqueued on `stream`.
  Status allGather(unsigned long long send, unsigned long long recv, std::size_t count,
                   DType dtype, void *stream);

private:
  friend class NcclGroup;
  NcclGroup *group_ = nullptr;
  int rank_ = 0;
  int local_ = 0; // its communicator in the group's process
};

class NcclGroup {
public:
  /// One communicator per device of `devices` (ncclCommInitAll; rank r on
  /// devices[r]), from the calling thread.
  static StatusOr<std::unique_ptr<NcclGroup>> create(const Nccl &nccl,
                                                     const std::vector<int> &devices);
  /// This process's one rank `rank` of a group of `size` ranks that meet
  /// through `id` (ncclGetUniqueId on rank 0, handed to every rank), on the
  /// device whose context is current on the calling thread
  /// (ncclCommInitRank: returns once every rank has called it).
  static StatusOr<std::unique_ptr<NcclGroup>> createRank(const Nccl &nccl, int rank, int size,
                                                         const NcclUniqueId &id);
  /// Destroys the communicators (aborts them when the group was aborted).
  ~NcclGroup();
  NcclGroup(const NcclGroup &) = delete;
  NcclGroup &operator=(const NcclGroup &) = delete;

  /// Ranks of the whole group (across processes).
  int size() const { return size_; }
  /// This process's rank `local`: every rank (create), or the one of
  /// createRank (local 0).
  NcclRank *rank(int local) { return &ranks_[size_t(local)]; }

  /// Makes every later collective of every rank fail with `why` (the first
  /// reason wins). Thread-safe; does not touch NCCL.
  void abort(const Status &why);
  bool aborted() const { return aborted_.load(); }
  /// Why the group stopped ("the tensor-parallel group stopped: ..."); ok
  /// while it has not.
  Status stopped();
  /// ncclCommAbort on every communicator still open (after abort()): the
  /// NCCL kernels that wait for a rank that will never come stop, and the
  /// streams they hold drain. Called by the thread that watches the ranks.
  void abortCommunicators();

private:
  friend class NcclRank;
  NcclGroup() = default;
  /// Runs `call(comm)` on this process's communicator `local` under its
  /// lock, unless the group was aborted.
  template <typename Fn> Status onComm(int local, const char *what, Fn call);

  const Nccl *nccl_ = nullptr;
  int size_ = 0;
  std::vector<NcclRank> ranks_;
  std::vector<NcclCommHandle> comms_;
  std::unique_ptr<std::timed_mutex[]> locks_; // one per rank
  std::atomic<bool> aborted_{false};
  std::mutex whyMu_;
  Status why_ = Status::ok();
};

} // namespace accel::rt::comm

#endif // ACCEL_RUNTIME_COMM_NCCL_H
