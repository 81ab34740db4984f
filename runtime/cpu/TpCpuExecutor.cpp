//===- TpCpuExecutor.cpp - a partitioned plan on the CPU ------------------===//
#include "runtime/cpu/TpCpuExecutor.h"

#include "runtime/Env.h"
#include "runtime/engine/MicroBatches.h"
#include "runtime/engine/StepAttrs.h"

#include <chrono>
#include <thread>

namespace accel::rt::engine {

StatusOr<std::unique_ptr<TpCpuExecutor>>
TpCpuExecutor::create(std::shared_ptr<const plan::PlanFile> plan,
                      const TpCpuExecutorOptions &options) {
  if (options.microBatches < 0)
    return invalidArgument("a pipelined step's micro-batches must be 0 (one per stage) or more, "
                           "got " + std::to_string(options.microBatches));
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
  ex->selectsLast_ = selectsLastRows(*plan);
  if (ex->pp_ > 1) {
    const int64_t fromEnv = env().ppMicroBatches;
    ex->setMicroBatches(options.microBatches > 0 ? options.microBatches
                        : fromEnv > 0           ? int(fromEnv) // at most 2^31 - 1 (Env.h)
                                                : ex->pp_);
    ex->counters_ = std::make_unique<PipelineCounters>(ex->pp_);
    const std::string trace = options.tracePath.empty() ? env().ppTrace : options.tracePath;
    if (!trace.empty())
      ACCEL_RT_RETURN_IF_ERROR(ex->counters_->openTrace(trace));
  }
  ex->plan_ = std::move(plan);
  return ex;
}

std::optional<PipelineStats> TpCpuExecutor::pipelineStats() const {
  if (!counters_)
    return std::nullopt;
  return counters_->snapshot();
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

/// The error of the rank that failed first (the others only saw the abort),
/// naming it; ok when every rank ran. `statuses` is stage-major.
Status firstError(const std::vector<Status> &statuses, int tp, int pp) {
  auto named = [&](size_t i) {
    const Status &st = statuses[i];
    std::string who = pp > 1 ? "stage " + std::to_string(int(i) / tp) + " rank " +
                                   std::to_string(int(i) % tp)
                             : "rank " + std::to_string(i);
    return Status(st.code(), who + ": " + st.message());
  };
  for (size_t i = 0; i < statuses.size(); ++i)
    if (!statuses[i].isOk() && !secondary(statuses[i]))
      return named(i);
  for (size_t i = 0; i < statuses.size(); ++i)
    if (!statuses[i].isOk())
      return named(i);
  return Status::ok();
}

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// A rank's pipeline link while it runs micro-batch `part`: its transfers
/// travel under tag part * (the schedule's steps) + the step's index, so
/// that the parts in flight at once never meet; what it waits in recv() is
/// idle time, not work.
class PartLink final : public comm::StageLink {
public:
  PartLink(comm::StageLink &link, int64_t tagOffset) : link_(link), offset_(tagOffset) {}
  int stage() const override { return link_.stage(); }
  Status send(const Tensor &x, int toStage, int64_t tag) override {
    return link_.send(x, toStage, offset_ + tag);
  }
  StatusOr<Tensor> recv(int fromStage, int64_t tag) override {
    const Clock::time_point t0 = Clock::now();
    StatusOr<Tensor> t = link_.recv(fromStage, offset_ + tag);
    waited_s += secondsSince(t0);
    return t;
  }
  void abort(const Status &why) override { link_.abort(why); }
  double waited_s = 0;

private:
  comm::StageLink &link_;
  const int64_t offset_;
};
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
  if (pp_ > 1)
    return runPipeline(tokenIds, meta);
  return runTensorParallel(tokenIds, pool, meta);
}

StatusOr<Tensor> TpCpuExecutor::runTensorParallel(const Tensor &tokenIds, kv::BlockPool &pool,
                                                  const kv::StepMetadata &meta) {
  const bool devicePool = pool.storage() == kv::KvStorage::kDevice;
  std::vector<std::unique_ptr<comm::Communicator>> group = comm::createInProcessGroup(tp_);
  std::vector<StatusOr<Tensor>> results;
  for (int i = 0; i < tp_; ++i)
    results.emplace_back(Status(StatusCode::kInternal, "rank did not run"));
  auto runRank = [&](int i) {
    kv::BlockPool &shard = devicePool || i != 0 ? *pools_[size_t(i)] : pool;
    results[size_t(i)] = ranks_[size_t(i)]->run(tokenIds, shard, meta, group[size_t(i)].get(),
                                                nullptr);
    if (!results[size_t(i)])
      group[size_t(i)]->abort(results[size_t(i)].status());
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < tp_; ++i)
    threads.emplace_back(runRank, i);
  runRank(0);
  for (std::thread &t : threads)
    t.join();
  std::vector<Status> statuses;
  for (const StatusOr<Tensor> &r : results)
    statuses.push_back(r.status());
  ACCEL_RT_RETURN_IF_ERROR(firstError(statuses, tp_, 1));
  return std::move(results[0]);
}

StatusOr<Tensor> TpCpuExecutor::runPipeline(const Tensor &tokenIds, const kv::StepMetadata &meta) {
  // A plan whose LM head always keeps each sequence's last row returns one
  // row per sequence whatever the step asks: split it as such a step.
  kv::StepMetadata whole = meta;
  if (selectsLast_)
    whole.lastRowsOnly = true;
  ACCEL_RT_ASSIGN_OR_RETURN(std::vector<MicroBatch> parts,
                            splitStep(tokenIds, whole, microBatches_));
  const int n = pp_ * tp_;
  const int64_t tagsPerPart = plan_->schedule().steps_size();
  std::vector<std::vector<std::unique_ptr<comm::Communicator>>> groups;
  for (int s = 0; s < pp_; ++s)
    groups.push_back(comm::createInProcessGroup(tp_));
  std::vector<std::unique_ptr<comm::StageLink>> links = comm::createInProcessPipeline(pp_, tp_);
  std::vector<Status> statuses(size_t(n), Status::ok());
  std::vector<Tensor> outputs(parts.size()); // the last stage's rank 0's
  std::vector<double> busy(size_t(n), 0.0);
  std::vector<int64_t> ran(size_t(n), 0);
  const Clock::time_point start = Clock::now();
  auto runRank = [&](int i) {
    const int s = i / tp_, r = i % tp_;
    comm::Communicator *group = tp_ > 1 ? groups[size_t(s)][size_t(r)].get() : nullptr;
    for (size_t p = 0; p < parts.size(); ++p) {
      PartLink link(*links[size_t(i)], int64_t(p) * tagsPerPart);
      const Clock::time_point t0 = Clock::now();
      StatusOr<Tensor> out = ranks_[size_t(i)]->run(parts[p].tokenIds, *pools_[size_t(i)],
                                                    parts[p].meta, group, &link);
      busy[size_t(i)] += secondsSince(t0) - link.waited_s;
      ++ran[size_t(i)];
      if (!out) {
        statuses[size_t(i)] = out.status();
        if (group)
          group->abort(out.status());
        links[size_t(i)]->abort(out.status());
        return;
      }
      if (i == (pp_ - 1) * tp_)
        outputs[p] = std::move(*out);
    }
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < n; ++i)
    threads.emplace_back(runRank, i);
  runRank(0);
  for (std::thread &t : threads)
    t.join();
  const double wall = secondsSince(start);
  ACCEL_RT_RETURN_IF_ERROR(firstError(statuses, tp_, pp_));

  // Each stage's first rank speaks for it.
  std::vector<double> stageBusy;
  std::vector<int64_t> stageParts;
  for (int s = 0; s < pp_; ++s) {
    stageBusy.push_back(busy[size_t(s * tp_)]);
    stageParts.push_back(ran[size_t(s * tp_)]);
  }
  ACCEL_RT_RETURN_IF_ERROR(counters_->recordStep(meta.numTokens, int64_t(parts.size()), wall,
                                                 stageBusy, stageParts));
  return joinParts(parts, outputs);
}

} // namespace accel::rt::engine
