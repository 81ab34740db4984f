//===- GpuStages.cpp - a GpuExecutor as one stage of a pipelined plan -----===//
//
// A stage's side of the pipeline (runtime/cuda/GpuPipeline.h): the waits
// for the transfers it receives before a part's steps, the posts of those
// it sends after them, the staging buffers' sizes, and the timed events
// around each part that give the stage's busy time (TpGpuExecutor).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/GpuExecutorImpl.h"

#include <algorithm>

namespace accel::rt::engine {

namespace pb = accel::plan;

Status GpuExecutorImpl::awaitIncoming(int part) {
  if (!pipeline)
    return incoming.empty() ? Status::ok()
                            : Status(StatusCode::kInternal,
                                     "a pipeline stage runs without its pipeline");
  for (int64_t tag : incoming)
    ACCEL_RT_RETURN_IF_ERROR(pipeline->await({tag, rank, part}, *gpu));
  return Status::ok();
}

Status GpuExecutorImpl::postOutgoing(int part) {
  if (!pipeline)
    return outgoing.empty() ? Status::ok()
                            : Status(StatusCode::kInternal,
                                     "a pipeline stage runs without its pipeline");
  for (int64_t tag : outgoing)
    ACCEL_RT_RETURN_IF_ERROR(pipeline->post({tag, rank, part}, *gpu));
  return Status::ok();
}

StatusOr<Tensor> GpuExecutor::runPart(const Tensor &tokenIds, kv::BlockPool &pool,
                                      const kv::StepMetadata &meta,
                                      const std::vector<kv::BlockCopy> &copies, int part) {
  return impl_->runStep(tokenIds, pool, meta, &copies, part);
}

Status GpuExecutor::synchronize() {
  ACCEL_RT_RETURN_IF_ERROR(impl_->gpu->makeCurrent());
  return impl_->gpu->synchronize();
}

void GpuExecutor::setPipeline(gpu::GpuPipeline *pipeline) {
  GpuExecutorImpl &im = *impl_;
  if (im.pipeline != pipeline && im.graphs)
    im.graphs->clear(); // they copy through the old pipeline's buffers
  im.pipeline = pipeline;
  if (!pipeline)
    return;
  pipeline->setContext(im.stage, im.rank, im.gpu.get());
  // Each received value's staging buffer holds it at the largest step.
  const auto [tokens, seqs] = im.arenaUnits();
  const pb::Schedule &s = im.plan->schedule();
  for (int64_t tag : im.incoming) {
    const pb::Value &v = s.values(int(tag));
    std::optional<DType> d = dtypeFromName(v.dtype());
    uint64_t bytes = d ? (isFloat(*d) ? dtypeSize(im.options.dtype) : dtypeSize(*d)) : 4;
    for (int64_t dim : v.shape())
      bytes *= uint64_t(dim >= 0 ? dim : v.region() == pb::Value::SEQS ? seqs : tokens);
    pipeline->setCapacity(tag, bytes);
  }
}

void GpuExecutor::setPartTiming(bool on) { impl_->timeParts = on; }

Status GpuExecutorImpl::recordPart(int part, bool end) {
  const CudaApi &api = gpu->api();
  if (!api.cuEventCreate || !api.cuEventRecord || !api.cuEventElapsedTime)
    return Status(StatusCode::kUnavailable, "the CUDA driver has no timed events");
  while (int(partEvents.size()) <= part) {
    std::pair<CuEvent, CuEvent> e{nullptr, nullptr};
    ACCEL_RT_RETURN_IF_ERROR(gpu->check(api.cuEventCreate(&e.first, 0), "cuEventCreate"));
    ACCEL_RT_RETURN_IF_ERROR(gpu->check(api.cuEventCreate(&e.second, 0), "cuEventCreate"));
    partEvents.push_back(e);
  }
  // A step starts at part 0: pairs left by a failed step are not counted.
  partsTimed = !end && part == 0 ? 1 : std::max(partsTimed, part + 1);
  const auto &e = partEvents[size_t(part)];
  return gpu->check(api.cuEventRecord(end ? e.second : e.first, gpu->stream()), "cuEventRecord");
}

StatusOr<double> GpuExecutor::partSeconds() {
  GpuExecutorImpl &im = *impl_;
  const CudaApi &api = im.gpu->api();
  ACCEL_RT_RETURN_IF_ERROR(im.gpu->makeCurrent());
  double total = 0;
  for (int p = 0; p < im.partsTimed; ++p) {
    const auto &e = im.partEvents[size_t(p)];
    ACCEL_RT_RETURN_IF_ERROR(im.gpu->check(api.cuEventSynchronize(e.second), "cuEventSynchronize"));
    float ms = 0;
    ACCEL_RT_RETURN_IF_ERROR(
        im.gpu->check(api.cuEventElapsedTime(&ms, e.first, e.second), "cuEventElapsedTime"));
    total += double(ms) * 1e-3;
  }
  im.partsTimed = 0;
  return total;
}

} // namespace accel::rt::engine
