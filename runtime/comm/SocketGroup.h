//===- SocketGroup.h - a tensor-parallel group across processes -*- C++ -*-===//
//
// The CPU backend's group when its ranks are separate processes, on one
// machine or several (accel-run --tp-rank R --tp-master HOST:PORT; under
// mpirun the rank comes from its environment, docs/gpu-backend.md "Several
// processes"). Rank 0 listens on PORT; every other rank connects to
// HOST:PORT, retrying until the timeout, and says its rank, the group size
// and the plan it runs (a fingerprint), which must match rank 0's.
//
// Collectives go through rank 0 (a star): each rank sends its input, rank 0
// computes the result exactly as the in-process group does
// (sumInRankOrder, gatherInRankOrder) and sends it back, so every rank gets
// the same bits, and the same bits as the threads of one process. A rank
// that fails or exits closes its connection: the others' pending and later
// collectives fail with one sentence naming it.
//
// GPU ranks in their own processes (runtime/cuda/GpuProcessRank) meet
// here once: rank 0 hands out NCCL's unique id with an all_gather, NCCL
// carries every collective after that, and watchSocketGroup turns a rank
// that leaves (fails, exits, is killed) into an abort of the others' NCCL
// work, which would otherwise wait for it forever.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_COMM_SOCKETGROUP_H
#define ACCEL_RUNTIME_COMM_SOCKETGROUP_H

#include "runtime/comm/Communicator.h"

#include <atomic>
#include <string>

namespace accel::rt::comm {

struct SocketGroupOptions {
  int rank = 0;
  int size = 1;
  /// Rank 0's address ("host:port", "[v6]:port"); rank 0 binds the port on
  /// every interface.
  std::string master;
  /// What every rank must agree on (the plan's path and size, say).
  std::string fingerprint;
  /// How long ranks wait for each other to join.
  double timeoutSeconds = 120.0;
};

/// This process's rank of the group, once every rank has joined; one
/// sentence naming what failed (a bad address, a port in use, a rank that
/// never came, a rank with another plan or group size) otherwise.
StatusOr<std::unique_ptr<Communicator>> joinSocketGroup(const SocketGroupOptions &options);

/// Rank 0's `mine` on every rank of `group` (a joinSocketGroup
/// communicator): rank 0 sends it to each rank and returns it, the others
/// return what they received (their `mine` is ignored). What a serving rank 0
/// tells the others before each step (runtime/engine/Engine.h, tpServing).
/// Every rank must call it at the same point of the group's calls.
StatusOr<std::vector<Tensor>> broadcastFromRankZero(Communicator &group,
                                                    const std::vector<Tensor> &mine);

/// Waits, while `stop` is false (checked every `pollMs`), until a peer of
/// `group` (a joinSocketGroup communicator; rank 0 watches every rank, the
/// others rank 0) closes its connection or the group is aborted, and says
/// who left in one sentence; ok once `stop` is set. Bytes in flight (a
/// broadcast, the last barrier) are left alone: only a closed connection
/// counts. kInvalidArgument for another kind of communicator. Meant for a
/// thread of its own, while other threads may use the group.
Status watchSocketGroup(Communicator &group, const std::atomic<bool> &stop, int pollMs = 100);

} // namespace accel::rt::comm

#endif // ACCEL_RUNTIME_COMM_SOCKETGROUP_H
