//===- GpuKvCache.cpp - GpuExecutor's device KV pool and its sizing -------===//
//
// The device pool that mirrors the engine's block pool (its geometry, with
// a pipeline stage's own layers), copy-on-write block copies, and the KV
// cache sizing of planKvCache: a profiling step and the CUDA graphs' pool
// reserved first (reserveKvCache), then the blocks the memory budget
// leaves (allocateKvCache).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/GpuExecutorImpl.h"
#include "runtime/engine/MemoryBudget.h"

#include <algorithm>
#include <cstdio>

namespace accel::rt::engine {

Status GpuExecutorImpl::ensureKvPool(const kv::KVCacheConfig &c, GpuRunState &st) {
  const auto &want = plan->metadata().kv_cache();
  if (c.numLayers < plan->stageLayers(stage) || c.numKvHeads != want.num_kv_heads() ||
      c.headDim != want.head_dim())
    return Status(StatusCode::kInvalidArgument,
                  "the KV pool (" + std::to_string(c.numLayers) + " layers, " +
                      std::to_string(c.numKvHeads) + " KV heads of " + std::to_string(c.headDim) +
                      ") does not match the plan's cache (" +
                      std::to_string(plan->stageLayers(stage)) +
                      " layers, " + std::to_string(want.num_kv_heads()) + " KV heads of " +
                      std::to_string(want.head_dim()) + ")");
  const DType cache = cacheDType();
  const bool same = kvStorage.defined() && c.numLayers == kvConfig.numLayers &&
                    c.numKvHeads == kvConfig.numKvHeads && c.headDim == kvConfig.headDim &&
                    c.blockSize == kvConfig.blockSize && c.numBlocks == kvConfig.numBlocks;
  if (!same) {
    keys.clear();
    values.clear();
    kvStorage = DeviceTensor();
    if (graphs)
      graphs->clear(); // they hold the old pool's addresses
    const int64_t perLayer = c.numBlocks * c.blockSize * c.numKvHeads * c.headDim;
    kvStorage.dtype = cache;
    kvStorage.shape = {2 * c.numLayers * perLayer};
    ACCEL_RT_ASSIGN_OR_RETURN(kvStorage.mem, gpu->allocateExact(kvStorage.byteSize()));
    kvStorage.ptr = kvStorage.mem->ptr;
    ACCEL_RT_RETURN_IF_ERROR(gpu->zero(kvStorage.ptr, kvStorage.byteSize()));
    const size_t layerBytes = size_t(perLayer) * dtypeSize(cache);
    for (int64_t l = 0; l < c.numLayers; ++l)
      for (int which = 0; which < 2; ++which) {
        DeviceTensor t = kvStorage;
        t.ptr = kvStorage.ptr + gpu::CuDevicePtr((2 * l + which) * layerBytes);
        t.shape = {c.numBlocks, c.blockSize, c.numKvHeads, c.headDim};
        (which ? values : keys).push_back(t);
      }
    kvConfig = c;
  }
  st.keys = &keys;
  st.values = &values;
  st.blockSize = c.blockSize;
  st.numKvHeads = c.numKvHeads;
  st.headDim = c.headDim;
  return Status::ok();
}

Status GpuExecutorImpl::applyBlockCopies(const std::vector<kv::BlockCopy> &copies) {
  if (copies.empty())
    return Status::ok();
  // Block b of every layer's K and V: rows r = 2 * layer + which of the
  // storage, each layerBytes apart; one 2D copy moves a block in all of them.
  const size_t elem = dtypeSize(cacheDType());
  const size_t blockBytes = size_t(kvConfig.blockSize * kvConfig.numKvHeads * kvConfig.headDim) * elem;
  const size_t layerBytes = blockBytes * size_t(kvConfig.numBlocks);
  const size_t rows = size_t(2 * kvConfig.numLayers);
  for (const kv::BlockCopy &c : copies) {
    if (c.src < 0 || c.dst < 0 || c.src >= kvConfig.numBlocks || c.dst >= kvConfig.numBlocks)
      return Status(StatusCode::kInvalidArgument,
                    "a copy-on-write copy of block " + std::to_string(c.src) + " to " +
                        std::to_string(c.dst) + " is outside the device KV pool");
    const gpu::CuDevicePtr src = kvStorage.ptr + gpu::CuDevicePtr(size_t(c.src) * blockBytes);
    const gpu::CuDevicePtr dst = kvStorage.ptr + gpu::CuDevicePtr(size_t(c.dst) * blockBytes);
    if (layerBytes < (size_t(1) << 31)) {
      ACCEL_RT_RETURN_IF_ERROR(gpu->copy2D(dst, layerBytes, src, layerBytes, blockBytes, rows));
    } else {
      for (size_t r = 0; r < rows; ++r)
        ACCEL_RT_RETURN_IF_ERROR(gpu->copy(dst + r * layerBytes, src + r * layerBytes, blockBytes));
    }
  }
  return Status::ok();
}

StatusOr<GpuKvReservation> GpuExecutor::reserveKvCache(const kv::KVCacheConfig &geometry) {
  return impl_->reserve(impl_->stageGeometry(geometry));
}

Status GpuExecutor::allocateKvCache(const kv::KVCacheConfig &geometry) {
  GpuExecutorImpl &im = *impl_;
  ACCEL_RT_RETURN_IF_ERROR(im.gpu->makeCurrent());
  GpuRunState st = im.baseState();
  return im.ensureKvPool(im.stageGeometry(geometry), st);
}

StatusOr<GpuKvReservation> GpuExecutorImpl::reserve(const kv::KVCacheConfig &geometry) {
  GpuExecutorImpl &im = *this;
  ACCEL_RT_RETURN_IF_ERROR(im.gpu->makeCurrent());
  const int64_t maxLen = im.maxModelLen;
  const int64_t bs = std::max<int64_t>(geometry.blockSize, 1);
  // The profiling steps run over a one-block device pool: every block-table
  // entry is block 0, no slot is written (-1).
  kv::KVCacheConfig one = geometry;
  one.numBlocks = 1;
  GpuRunState st = im.baseState();
  ACCEL_RT_RETURN_IF_ERROR(im.ensureKvPool(one, st));
  const int64_t before = int64_t(im.gpu->bytesReserved());

  // A prefill of maxNumBatchedTokens tokens, in sequences of at most
  // max-model-len tokens.
  const int64_t total = std::max<int64_t>(1, im.options.maxNumBatchedTokens);
  const int64_t seqs = (total + maxLen - 1) / maxLen;
  const int64_t longest = std::min(total, maxLen);
  kv::StepMetadata meta;
  meta.numSeqs = seqs;
  meta.numTokens = total;
  meta.maxBlocksPerSeq = (longest + bs - 1) / bs;
  meta.queryStartLoc = Tensor::zeros(DType::kI32, {seqs + 1});
  meta.seqLens = Tensor::zeros(DType::kI32, {seqs});
  meta.positions = Tensor::zeros(DType::kI32, {total});
  meta.slotMapping = Tensor::zeros(DType::kI32, {total});
  meta.blockTables = Tensor::zeros(DType::kI32, {seqs, meta.maxBlocksPerSeq});
  Tensor tokens = Tensor::zeros(DType::kI64, {total});
  for (const Tensor *t : {&meta.queryStartLoc, &meta.seqLens, &meta.positions, &meta.slotMapping,
                          &meta.blockTables, &tokens})
    if (!t->defined())
      return Status(StatusCode::kResourceExhausted, "cannot allocate the profiling step");
  int64_t t = 0;
  for (int64_t i = 0; i < seqs; ++i) {
    const int64_t n = std::min(maxLen, total - t);
    for (int64_t p = 0; p < n; ++p, ++t) {
      meta.positions.data<int32_t>()[t] = int32_t(p);
      meta.slotMapping.data<int32_t>()[t] = -1;
    }
    meta.queryStartLoc.data<int32_t>()[i + 1] = int32_t(t);
    meta.seqLens.data<int32_t>()[i] = int32_t(n);
  }
  st.meta = &meta;
  st.maxSeqLen = longest;
  {
    // A pipeline stage's profiling step hands over as a step does.
    Status done = im.awaitIncoming(0);
    if (done.isOk()) {
      StatusOr<Tensor> out = im.runEager(tokens, st, meta);
      done = out ? im.postOutgoing(0) : out.status();
    }
    if (done.isOk() && !im.returnsLogits)
      done = im.gpu->synchronize();
    if (!done.isOk())
      return Status(done.code(), "the profiling step of " + std::to_string(total) +
                                     " tokens (--max-num-batched-tokens) failed: " +
                                     done.message());
  }
  const int64_t activations = int64_t(im.gpu->bytesReserved()) - before;

  // The CUDA graphs' pool, at the largest decode bucket's peak.
  int64_t graphBytes = 0;
  if (DecodeGraphs *graphs = im.decodeGraphs()) {
    GpuRunState gst = im.baseState();
    ACCEL_RT_RETURN_IF_ERROR(im.ensureKvPool(one, gst));
    ACCEL_RT_RETURN_IF_ERROR(graphs->reservePool(maxLen, gst, im.graphSchedule()));
    graphBytes = int64_t(graphs->poolBytes());
  }

  // Drop the one-block pool: the caller sizes the real one.
  im.keys.clear();
  im.values.clear();
  im.kvStorage = DeviceTensor();
  im.kvConfig = kv::KVCacheConfig();
  GpuKvReservation r;
  r.activationsBytes = activations;
  r.profiledTokens = total;
  r.graphBytes = graphBytes;
  r.bytesPerBlock = 2 * geometry.numLayers * bs * geometry.numKvHeads * geometry.headDim *
                    int64_t(dtypeSize(im.cacheDType()));
  return r;
}

StatusOr<int64_t> GpuExecutor::planKvCache(const kv::KVCacheConfig &geometry) {
  GpuExecutorImpl &im = *impl_;
  ACCEL_RT_ASSIGN_OR_RETURN(GpuKvReservation r, reserveKvCache(geometry));
  const int64_t bs = std::max<int64_t>(geometry.blockSize, 1);
  const int64_t maxLen = im.maxModelLen;
  std::size_t freeBytes = 0, totalBytes = 0;
  ACCEL_RT_RETURN_IF_ERROR(im.gpu->memoryInfo(&freeBytes, &totalBytes));
  MemoryBudgetInput in;
  in.totalBytes = int64_t(totalBytes);
  in.freeBytes = int64_t(freeBytes);
  in.utilization = im.options.gpuMemoryUtilization;
  in.bytesPerBlock = r.bytesPerBlock;
  in.blockSize = bs;
  in.maxModelLen = maxLen;
  ACCEL_RT_ASSIGN_OR_RETURN(MemoryBudget budget, kvMemoryBudget(in));
  kv::KVCacheConfig real = geometry;
  real.numBlocks = budget.numBlocks;
  ACCEL_RT_RETURN_IF_ERROR(allocateKvCache(real));
  const int64_t activations = r.activationsBytes, graphBytes = r.graphBytes,
                total = r.profiledTokens;
  if (im.options.logMemory)
    std::fprintf(stderr,
                 "accel: GPU memory (%s): weights %s, activations %s (profiled at %lld tokens), "
                 "CUDA graphs %s, KV cache %s = %lld blocks of %lld tokens (%lld tokens at once) "
                 "at --gpu-memory-utilization %.2f of %s\n",
                 im.gpu->info().name.c_str(), formatGiB(im.weightsBytes).c_str(),
                 formatGiB(activations).c_str(), (long long)total, formatGiB(graphBytes).c_str(),
                 formatGiB(budget.kvBytes).c_str(), (long long)budget.numBlocks, (long long)bs,
                 (long long)budget.maxTokens, im.options.gpuMemoryUtilization,
                 formatGiB(in.totalBytes).c_str());
  return budget.numBlocks;
}

} // namespace accel::rt::engine
