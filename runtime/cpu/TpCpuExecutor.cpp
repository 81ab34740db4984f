//===- TpCpuExecutor.cpp - a partitioned plan on the CPU ------------------===//
#include "runtime/cpu/TpCpuExecutor.h"

#include <thread>

namespace accel::rt::engine {

StatusOr<std::unique_ptr<TpCpuExecutor>>
TpCpuExecutor::create(std::shared_ptr<const plan::PlanFile> plan) {
  std::unique_ptr<TpCpuExecutor> ex(new TpCpuExecutor());
  ex->tp_ = plan->tpSize();
  ex->pp_ = plan->ppSize();
  for (int s = 0; s < ex->pp_; ++s)
    for (int r = 0; r < ex->tp_; ++r) {
      StatusOr<std::unique_ptr<CpuExecutor>> rank = CpuExecutor::create(plan, r, s);
      if (!rank)
        return rank.status();
      ex->ranks_.push_back(std::move(*rank));
    }
  ex->pools_.resize(ex->ranks_.size());
  ex->plan_ = std::move(plan);
  return ex;
}

namespace {
bool sameGeometry(const kv::KVCacheConfig &a, const kv::KVCacheConfig &b) {
  return a.numLayers == b.numLayers && a.numKvHeads == b.numKvHeads && a.headDim == b.headDim &&
         a.blockSize == b.blockSize && a.numBlocks == b.numBlocks && a.dtype == b.dtype;
}

bool secondary(const Status &s) {
  return s.message().find("the tensor-parallel group stopped") != std::string::npos ||
         s.message().find("the pipeline stopped") != std::string::npos;
}
} // namespace

StatusOr<Tensor> TpCpuExecutor::run(const Tensor &tokenIds, kv::BlockPool &pool,
                                    const kv::StepMetadata &meta) {
  if (tp_ == 1 && pp_ == 1)
    return ranks_[0]->run(tokenIds, pool, meta);
  const bool devicePool = pool.storage() == kv::KvStorage::kDevice;
  if (pp_ > 1 && !devicePool)
    return Status(StatusCode::kInvalidArgument,
                  "a plan split into " + std::to_string(pp_) +
                      " pipeline stages keeps one KV cache per stage and needs a block pool "
                      "created with KvStorage::kDevice");
  // Every rank's KV shard follows the caller's pool's geometry, with its
  // stage's layers (the engine replaces that pool when it resizes its KV
  // cache; all blocks are free then, so the shards need not keep their
  // contents).
  for (int s = 0; s < pp_; ++s)
    for (int r = 0; r < tp_; ++r) {
      kv::KVCacheConfig config = pool.config();
      if (pp_ > 1)
        config.numLayers = plan_->stageLayers(s);
      auto &p = pools_[size_t(s * tp_ + r)];
      if (!p || !sameGeometry(p->config(), config)) {
        p.reset();
        ACCEL_RT_ASSIGN_OR_RETURN(p, kv::BlockPool::create(config));
      }
    }
  // Copy-on-write copies the block allocator made since the last step.
  if (devicePool)
    for (const kv::BlockCopy &c : pool.takePendingCopies())
      for (auto &p : pools_)
        ACCEL_RT_RETURN_IF_ERROR(p->copyBlock(c.src, c.dst));

  const int n = pp_ * tp_;
  std::vector<std::vector<std::unique_ptr<comm::Communicator>>> groups;
  for (int s = 0; s < pp_; ++s)
    groups.push_back(comm::createInProcessGroup(tp_));
  std::vector<std::unique_ptr<comm::StageLink>> links;
  if (pp_ > 1)
    links = comm::createInProcessPipeline(pp_, tp_);
  std::vector<StatusOr<Tensor>> results;
  for (int i = 0; i < n; ++i)
    results.emplace_back(Status(StatusCode::kInternal, "rank did not run"));
  auto runRank = [&](int i) {
    const int s = i / tp_, r = i % tp_;
    kv::BlockPool &shard = devicePool || i != 0 ? *pools_[size_t(i)] : pool;
    comm::Communicator *group = tp_ > 1 ? groups[size_t(s)][size_t(r)].get() : nullptr;
    comm::StageLink *link = pp_ > 1 ? links[size_t(i)].get() : nullptr;
    results[size_t(i)] = ranks_[size_t(i)]->run(tokenIds, shard, meta, group, link);
    if (!results[size_t(i)]) {
      if (group)
        group->abort(results[size_t(i)].status());
      if (link)
        link->abort(results[size_t(i)].status());
    }
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < n; ++i)
    threads.emplace_back(runRank, i);
  runRank(0);
  for (std::thread &t : threads)
    t.join();
  auto named = [&](int i) {
    const Status &st = results[size_t(i)].status();
    std::string who = pp_ > 1 ? "stage " + std::to_string(i / tp_) + " rank " +
                                    std::to_string(i % tp_)
                              : "rank " + std::to_string(i);
    return Status(st.code(), who + ": " + st.message());
  };
  // The rank that failed first says why; the others only saw the abort.
  for (int i = 0; i < n; ++i)
    if (!results[size_t(i)] && !secondary(results[size_t(i)].status()))
      return named(i);
  for (int i = 0; i < n; ++i)
    if (!results[size_t(i)])
      return named(i);
  return std::move(results[size_t((pp_ - 1) * tp_)]);
}

} // namespace accel::rt::engine
