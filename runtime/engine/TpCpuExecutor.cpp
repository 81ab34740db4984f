//===- TpCpuExecutor.cpp - a tensor-parallel plan on the CPU --------------===//
#include "runtime/engine/TpCpuExecutor.h"

#include <thread>

namespace accel::rt::engine {

StatusOr<std::unique_ptr<TpCpuExecutor>>
TpCpuExecutor::create(std::shared_ptr<const plan::PlanFile> plan) {
  std::unique_ptr<TpCpuExecutor> ex(new TpCpuExecutor());
  const int tp = plan->tpSize();
  for (int r = 0; r < tp; ++r) {
    StatusOr<std::unique_ptr<CpuExecutor>> rank = CpuExecutor::create(plan, r);
    if (!rank)
      return rank.status();
    ex->ranks_.push_back(std::move(*rank));
  }
  ex->pools_.resize(size_t(tp));
  return ex;
}

namespace {
bool sameGeometry(const kv::KVCacheConfig &a, const kv::KVCacheConfig &b) {
  return a.numLayers == b.numLayers && a.numKvHeads == b.numKvHeads && a.headDim == b.headDim &&
         a.blockSize == b.blockSize && a.numBlocks == b.numBlocks && a.dtype == b.dtype;
}
} // namespace

StatusOr<Tensor> TpCpuExecutor::run(const Tensor &tokenIds, kv::BlockPool &pool,
                                    const kv::StepMetadata &meta) {
  const int tp = tpSize();
  if (tp == 1)
    return ranks_[0]->run(tokenIds, pool, meta);
  // Every rank's KV shard follows the caller's pool's geometry (the engine
  // replaces that pool when it resizes its KV cache; all blocks are free
  // then, so the shards need not keep their contents).
  for (auto &p : pools_)
    if (!p || !sameGeometry(p->config(), pool.config())) {
      p.reset();
      ACCEL_RT_ASSIGN_OR_RETURN(p, kv::BlockPool::create(pool.config()));
    }
  // Copy-on-write copies the block allocator made since the last step.
  if (pool.storage() == kv::KvStorage::kDevice)
    for (const kv::BlockCopy &c : pool.takePendingCopies())
      for (auto &p : pools_)
        ACCEL_RT_RETURN_IF_ERROR(p->copyBlock(c.src, c.dst));

  std::vector<std::unique_ptr<comm::Communicator>> comms = comm::createInProcessGroup(tp);
  std::vector<StatusOr<Tensor>> results;
  for (int r = 0; r < tp; ++r)
    results.emplace_back(Status(StatusCode::kInternal, "rank did not run"));
  auto runRank = [&](int r) {
    kv::BlockPool &shard =
        pool.storage() == kv::KvStorage::kDevice ? *pools_[size_t(r)] : r == 0 ? pool : *pools_[size_t(r)];
    results[size_t(r)] = ranks_[size_t(r)]->run(tokenIds, shard, meta, comms[size_t(r)].get());
    if (!results[size_t(r)])
      comms[size_t(r)]->abort(results[size_t(r)].status());
  };
  std::vector<std::thread> threads;
  for (int r = 1; r < tp; ++r)
    threads.emplace_back(runRank, r);
  runRank(0);
  for (std::thread &t : threads)
    t.join();
  // The rank that failed first says why; the others only saw the abort.
  for (int r = 0; r < tp; ++r)
    if (!results[size_t(r)] &&
        results[size_t(r)].status().message().find("the tensor-parallel group stopped") ==
            std::string::npos)
      return Status(results[size_t(r)].status().code(),
                    "rank " + std::to_string(r) + ": " + results[size_t(r)].status().message());
  for (int r = 0; r < tp; ++r)
    if (!results[size_t(r)])
      return Status(results[size_t(r)].status().code(),
                    "rank " + std::to_string(r) + ": " + results[size_t(r)].status().message());
  return std::move(results[0]);
}

} // namespace accel::rt::engine
