//===- Communicator.h - collectives of a TP group, pipeline links -*- C++ -*-===//
//
// What a rank of a tensor-parallel plan calls at a `collective` step
// (docs/plan-format.md): all_reduce (sum) and all_gather along an axis,
// NCCL's semantics. One Communicator per rank, as NCCL has one ncclComm_t
// per rank; the CPU backend runs the ranks as threads of one process with
// the in-process group below, and a GPU backend can implement the same
// interface over NCCL.
//
// Every rank of the group must call the same collectives in the same order
// with tensors of one shape and dtype. Results are deterministic and equal
// on every rank: all_reduce sums in rank order.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_COMM_COMMUNICATOR_H
#define ACCEL_RUNTIME_COMM_COMMUNICATOR_H

#include "core/Status.h"
#include "core/Tensor.h"

#include <memory>
#include <vector>

namespace accel::rt::comm {

class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  /// The elementwise sum of every rank's `x` (f32, f64, f16 or bf16; 16-bit
  /// types are summed in f32 and rounded once).
  virtual StatusOr<Tensor> allReduceSum(const Tensor &x) = 0;
  /// Every rank's `x` concatenated along `axis`, in rank order.
  virtual StatusOr<Tensor> allGather(const Tensor &x, int64_t axis) = 0;
  /// Makes every pending and later collective of the group, on every rank,
  /// fail with `why`: what a rank whose step failed calls, so that the
  /// others do not wait for it forever.
  virtual void abort(const Status &why) = 0;
  /// Why the group stopped (after abort() or a lost rank); ok while it
  /// works. Groups that cannot tell answer ok.
  virtual Status stopped() const { return Status::ok(); }
};

/// The result of all_reduce (sum) / all_gather given every rank's input, in
/// rank order (`self`: the calling rank, for the error naming a mismatch):
/// what every Communicator computes, so that every kind of group gives the
/// same bits. 16-bit floats are summed in f32 and rounded once.
StatusOr<Tensor> sumInRankOrder(const std::vector<const Tensor *> &inputs, int self);
StatusOr<Tensor> gatherInRankOrder(const std::vector<const Tensor *> &inputs, int64_t axis,
                                   int self);

/// A group of `size` ranks in one process (threads): element r is rank r's
/// communicator. They share the group's state; each is used by one thread.
std::vector<std::unique_ptr<Communicator>> createInProcessGroup(int size);

/// What a rank of a pipeline-parallel plan (accelc -pp) calls at a
/// `collective pp_transfer` step: point to point, from a stage to a later
/// one, tensor-parallel rank r to rank r (NCCL's send / recv). One per
/// (stage, rank). `tag` tells the transfers in flight apart: the plan
/// step's index, plus part * (the schedule's step count) when a forward
/// pass runs as micro-batches (runtime/cpu/TpCpuExecutor: stage s sends part
/// i + 1 while stage s + 1 still receives part i). A tag is sent once and
/// received once per forward pass; transfers of different tags may be in
/// flight at once, in any order.
class StageLink {
public:
  virtual ~StageLink() = default;
  virtual int stage() const = 0;
  /// Hands (a copy of) `x` to stage `toStage`; does not wait for it.
  virtual Status send(const Tensor &x, int toStage, int64_t tag) = 0;
  /// Waits for what stage `fromStage` sent under `tag`.
  virtual StatusOr<Tensor> recv(int fromStage, int64_t tag) = 0;
  /// Makes every pending and later recv of the pipeline, on every stage and
  /// rank, fail with `why` (a stage whose step failed calls it).
  virtual void abort(const Status &why) = 0;
};

/// `stages` x `tpSize` links in one process (threads): element
/// s * tpSize + r is stage s, tensor-parallel rank r.
std::vector<std::unique_ptr<StageLink>> createInProcessPipeline(int stages, int tpSize);

} // namespace accel::rt::comm

#endif // ACCEL_RUNTIME_COMM_COMMUNICATOR_H
