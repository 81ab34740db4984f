//===- GpuProcessRank.h - one GPU tensor-parallel rank per process -*- C++ -*-===//
//
// A tensor-parallel GPU plan (accelc -tp=N) run as N processes, one GPU
// each, on one machine or several: `accel-run plan --tp-rank R --tp-master
// HOST:PORT` (or mpirun / srun, docs/gpu-backend.md "Several processes").
//
// The processes meet through the socket group (runtime/comm/SocketGroup.h):
// every rank uploads its weights section to its GPU, then rank 0 makes
// NCCL's unique id and hands it out with an all_gather, every rank joins
// the NCCL communicator (ncclCommInitRank) and NCCL carries every
// collective step from then on, as with the ranks of one process
// (TpGpuExecutor). Each rank runs the same steps: the same requests, and the
// same tokens picked from the same all-gathered logits.
//
// Failures: a rank whose step fails aborts the socket group; a thread of
// every rank watches the group (watchSocketGroup) and, when a peer leaves
// (fails, exits, is killed), aborts this rank's NCCL communicator, so that
// the step waiting for it fails in one sentence naming the rank instead of
// waiting forever. The KV cache: each rank sizes its own, and every rank
// keeps the fewest blocks any rank holds (the block tables must agree). At
// the end every rank stops watching and meets the others once more, so
// that none takes a peer's normal exit for a failure.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_GPUPROCESSRANK_H
#define ACCEL_RUNTIME_CUDA_GPUPROCESSRANK_H

#include "runtime/cuda/GpuExecutor.h"
#include "runtime/engine/Engine.h"

namespace accel::rt::engine {

/// The backend of rank group->rank() of `plan` on GPU options.device (-1:
/// the rank modulo the GPUs this process sees), with NCCL across the
/// processes of `group`. kUnavailable when NCCL cannot be opened or the
/// communicator cannot form; the other ranks' errors name this rank.
StatusOr<std::unique_ptr<Backend>> makeGpuProcessRank(std::shared_ptr<const plan::PlanFile> plan,
                                         const GpuExecutorOptions &options,
                                         std::shared_ptr<comm::Communicator> group);

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_CUDA_GPUPROCESSRANK_H
