//===- GpuPipeline.cpp - pipeline stages of one process, handing over on GPUs ===//
#include "runtime/cuda/GpuPipeline.h"

namespace accel::rt::gpu {

namespace {
constexpr unsigned kEventDisableTiming = 0x2; // CU_EVENT_DISABLE_TIMING
} // namespace

GpuPipeline::GpuPipeline(int stages, int tpSize)
    : stages_(stages), tpSize_(tpSize), contexts_(size_t(stages * tpSize), nullptr) {}

GpuPipeline::~GpuPipeline() {
  for (auto &[key, t] : transfers_)
    if (t.event && t.eventOwner) {
      (void)t.eventOwner->makeCurrent();
      t.eventOwner->api().cuEventDestroy(t.event);
    }
}

void GpuPipeline::setContext(int stage, int rank, GpuContext *context) {
  contexts_[size_t(stage * tpSize_ + rank)] = context;
}

void GpuPipeline::setCapacity(int64_t tag, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  std::size_t &c = capacity_[tag];
  c = std::max(c, bytes);
}

GpuPipeline::Transfer &GpuPipeline::transfer(const TransferKey &key) { return transfers_[key]; }

StatusOr<CuDevicePtr> GpuPipeline::staging(const TransferKey &key, int toStage,
                                           std::size_t bytes, GpuContext &caller) {
  if (toStage < 0 || toStage >= stages_ || key.rank < 0 || key.rank >= tpSize_)
    return Status(StatusCode::kInternal, "a pp_transfer to stage " + std::to_string(toStage) +
                                             " rank " + std::to_string(key.rank) +
                                             " outside the pipeline");
  GpuContext *receiver = contexts_[size_t(toStage * tpSize_ + key.rank)];
  if (!receiver)
    return Status(StatusCode::kInternal,
                  "stage " + std::to_string(toStage) + " has no GPU in the pipeline");
  std::lock_guard<std::mutex> lock(mu_);
  Transfer &t = transfer(key);
  bytes = std::max<std::size_t>(bytes, 1);
  if (!t.buffer) {
    auto it = capacity_.find(key.tag);
    t.capacity = std::max(bytes, it == capacity_.end() ? std::size_t(0) : it->second);
    // allocateExact allocates in the calling thread's current context, the
    // sender's or the receiver's: it takes the receiver's for the call.
    ACCEL_RT_RETURN_IF_ERROR(receiver->makeCurrent());
    StatusOr<DeviceBuffer> b = receiver->allocateExact(t.capacity);
    ACCEL_RT_RETURN_IF_ERROR(caller.makeCurrent());
    if (!b)
      return Status(b.status().code(), "the staging buffer of a pp_transfer (" +
                                           std::to_string(t.capacity) +
                                           " bytes): " + b.status().message());
    t.buffer = std::move(*b);
  }
  if (bytes <= t.capacity)
    return t.buffer->ptr;
  if (!t.overflow || t.overflow->bytes < bytes) {
    ACCEL_RT_RETURN_IF_ERROR(receiver->makeCurrent());
    t.overflow.reset();
    StatusOr<DeviceBuffer> b = receiver->allocateExact(bytes);
    ACCEL_RT_RETURN_IF_ERROR(caller.makeCurrent());
    if (!b)
      return b.status();
    t.overflow = std::move(*b);
  }
  return t.overflow->ptr;
}

Status GpuPipeline::post(const TransferKey &key, GpuContext &sender) {
  const CudaApi &api = sender.api();
  if (!api.cuEventCreate || !api.cuEventRecord || !api.cuStreamWaitEvent)
    return Status(StatusCode::kUnavailable,
                  "the CUDA driver has no events (cuEventCreate, cuEventRecord, "
                  "cuStreamWaitEvent) to order pipeline stages");
  std::lock_guard<std::mutex> lock(mu_);
  if (aborted_)
    return why_;
  Transfer &t = transfer(key);
  if (!t.event) {
    ACCEL_RT_RETURN_IF_ERROR(
        sender.check(api.cuEventCreate(&t.event, kEventDisableTiming), "cuEventCreate"));
    t.eventOwner = &sender;
  }
  ACCEL_RT_RETURN_IF_ERROR(
      sender.check(api.cuEventRecord(t.event, sender.stream()), "cuEventRecord"));
  ++t.posted;
  cv_.notify_all();
  return Status::ok();
}

Status GpuPipeline::await(const TransferKey &key, GpuContext &receiver) {
  std::unique_lock<std::mutex> lock(mu_);
  Transfer &t = transfer(key);
  cv_.wait(lock, [&] { return aborted_ || t.posted > t.taken; });
  if (aborted_)
    return why_;
  ++t.taken;
  // The event was recorded before the post: the wait covers the sender's
  // copy into the staging buffer. The next launch must not start early
  // (programmatic dependent launch) across the wait.
  receiver.noteForeignWork();
  return receiver.check(receiver.api().cuStreamWaitEvent(receiver.stream(), t.event, 0),
                        "cuStreamWaitEvent");
}

void GpuPipeline::abort(const Status &why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (aborted_)
    return;
  aborted_ = true;
  why_ = Status(why.code(), "the pipeline stopped: " + why.message());
  cv_.notify_all();
}

bool GpuPipeline::aborted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return aborted_;
}

void GpuPipeline::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  aborted_ = false;
  why_ = Status::ok();
  for (auto &[key, t] : transfers_)
    t.posted = t.taken = 0;
}

} // namespace accel::rt::gpu
