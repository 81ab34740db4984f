//===- GpuPipeline.h - pipeline stages of one process, handing over on GPUs -*- C++ -*-===//
//
// The pp_transfer steps of a pipelined plan (accelc -pp=M) whose stages are
// GpuExecutors of one process (TpGpuExecutor), on one GPU or several.
//
// Every transfer (the plan step's index as its tag, the tensor-parallel
// rank, the micro-batch) has a staging buffer on the receiving stage's GPU:
//   - the sender copies its value into it on its own stream (a peer copy
//     when the stages are on different GPUs) and, once the copies of its
//     micro-batch are enqueued, post()s the transfer: an event recorded on
//     its stream and a note to the receiver;
//   - the receiver await()s the note on the host, makes its stream wait for
//     the event, and copies the staging buffer into its own activations.
// So no stage blocks its GPU: the host threads meet only at the note, and
// the GPU work is ordered by events (a stage whose part is enqueued goes on
// with the next while the GPU runs it).
//
// A staging buffer keeps its address from the first step on (CUDA graphs
// replay the copies): it is made for the transfer's size at the largest
// step the executors are sized for; a step larger than that (eager only)
// uses a second, growing buffer.
//
// A stage whose step failed abort()s the pipeline: every waiting and later
// await() fails with its reason, until reset().
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_GPUPIPELINE_H
#define ACCEL_RUNTIME_CUDA_GPUPIPELINE_H

#include "runtime/cuda/GpuContext.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

namespace accel::rt::gpu {

/// One transfer of one step: the pp_transfer step's index in the schedule,
/// the tensor-parallel rank (rank r of one stage sends to rank r of the
/// next), the micro-batch.
struct TransferKey {
  int64_t tag = 0;
  int rank = 0;
  int part = 0;
  bool operator<(const TransferKey &o) const {
    return std::tie(tag, rank, part) < std::tie(o.tag, o.rank, o.part);
  }
};

class GpuPipeline {
public:
  /// A pipeline of `stages` x `tpSize` executors; contexts are set with
  /// setContext before the first transfer.
  GpuPipeline(int stages, int tpSize);
  ~GpuPipeline();
  GpuPipeline(const GpuPipeline &) = delete;
  GpuPipeline &operator=(const GpuPipeline &) = delete;

  int stages() const { return stages_; }
  /// Stage `stage`, rank `rank` runs on `context`.
  void setContext(int stage, int rank, GpuContext *context);
  GpuContext *context(int stage, int rank) const {
    return stage >= 0 && stage < stages_ && rank >= 0 && rank < tpSize_
               ? contexts_[size_t(stage * tpSize_ + rank)]
               : nullptr;
  }
  /// The bytes the staging buffer of transfer `tag` is first made with (the
  /// value's size at the executors' largest step).
  void setCapacity(int64_t tag, std::size_t bytes);

  /// The staging buffer of `key` (to stage `toStage`), holding at least
  /// `bytes`; sender and receiver of one step ask for the same bytes.
  /// `caller` is the calling thread's current context (made current again
  /// after an allocation on the receiver's GPU).
  StatusOr<CuDevicePtr> staging(const TransferKey &key, int toStage, std::size_t bytes,
                                GpuContext &caller);
  /// The sender (on `sender`'s stream, after the copy into staging(key)):
  /// records the transfer's event and tells the receiver.
  Status post(const TransferKey &key, GpuContext &sender);
  /// The receiver: waits for the post of `key`, then makes `receiver`'s
  /// stream wait for its event. Fails with the abort's reason once the
  /// pipeline is aborted.
  Status await(const TransferKey &key, GpuContext &receiver);
  /// Makes every pending and later await() fail with `why`.
  void abort(const Status &why);
  bool aborted() const;
  /// After a failed step: drops the notes, so the next step starts clean.
  void reset();

private:
  struct Transfer {
    DeviceBuffer buffer;   // fixed address: what graphs replay
    DeviceBuffer overflow; // steps larger than `buffer` (eager)
    std::size_t capacity = 0;
    CuEvent event = nullptr;
    GpuContext *eventOwner = nullptr;
    int64_t posted = 0, taken = 0;
  };
  Transfer &transfer(const TransferKey &key); // under mu_

  const int stages_, tpSize_;
  std::vector<GpuContext *> contexts_; // stage-major
  std::map<int64_t, std::size_t> capacity_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<TransferKey, Transfer> transfers_;
  bool aborted_ = false;
  Status why_ = Status::ok();
};

} // namespace accel::rt::gpu

#endif // ACCEL_RUNTIME_CUDA_GPUPIPELINE_H
