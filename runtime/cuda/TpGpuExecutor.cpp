//===- TpGpuExecutor.cpp - a partitioned plan on the GPUs of one process ===//
#include "runtime/cuda/TpGpuExecutor.h"

#include "runtime/cuda/CudaDriver.h"
#include "runtime/engine/MemoryBudget.h"
#include "runtime/engine/MicroBatches.h"
#include "runtime/engine/StepAttrs.h"
#include "runtime/Env.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace accel::rt::engine {

namespace {
/// How long the other ranks get to finish after one failed before their
/// NCCL kernels are aborted (they may wait for the failed rank forever).
constexpr std::chrono::seconds kGraceAfterFailure(2);

bool secondary(const Status &s) {
  return s.message().find("the tensor-parallel group stopped") != std::string::npos ||
         s.message().find("the pipeline stopped") != std::string::npos;
}
} // namespace

/// One thread per rank, kept for the executor's life: start(fn) calls fn(r)
/// on thread r; wait() returns once every thread has returned from fn.
/// Thread r always serves rank r, so a rank's CUDA context stays current on
/// one thread.
class TpGpuExecutor::RankThreads {
public:
  explicit RankThreads(int n) : n_(n) {
    for (int r = 0; r < n; ++r)
      threads_.emplace_back([this, r] { loop(r); });
  }
  ~RankThreads() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    for (std::thread &t : threads_)
      t.join();
  }
  void start(const std::function<void(int)> &fn) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn_ = &fn;
      finished_ = 0;
      ++generation_;
    }
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return finished_ == n_; });
  }

private:
  void loop(int r) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return quit_ || generation_ != seen; });
      if (quit_)
        return;
      seen = generation_;
      const std::function<void(int)> *fn = fn_;
      lock.unlock();
      (*fn)(r);
      lock.lock();
      ++finished_;
      cv_.notify_all();
    }
  }

  const int n_;
  std::mutex mu_;
  std::condition_variable cv_;
  const std::function<void(int)> *fn_ = nullptr;
  uint64_t generation_ = 0;
  int finished_ = 0;
  bool quit_ = false;
  std::vector<std::thread> threads_;
};

StatusOr<std::unique_ptr<TpGpuExecutor>>
TpGpuExecutor::create(std::shared_ptr<const plan::PlanFile> plan,
                      const GpuExecutorOptions &options) {
  const int tp = plan->tpSize(), pp = plan->ppSize();
  ACCEL_RT_ASSIGN_OR_RETURN(CudaDriver * driver, CudaDriver::get());
  ACCEL_RT_ASSIGN_OR_RETURN(std::vector<GpuInfo> gpus, driver->listDevices());
  const int have = int(gpus.size());
  // Ranks share GPUs only when asked (options.shareGpus).
  const bool shareRanks = options.shareGpus && options.device >= 0 && options.device < have &&
                          options.device + tp > have;
  if (options.device < 0 || (options.device + tp > have && !shareRanks))
    return Status(StatusCode::kUnavailable,
                  plan->path() + ": the plan is partitioned for " + std::to_string(tp) +
                      " ranks; this machine has " + std::to_string(have) + " GPU" +
                      (have == 1 ? "" : "s") +
                      (options.device > 0 ? " and the ranks would start at GPU " +
                                                std::to_string(options.device)
                                          : std::string()) +
                      " (recompile with -tp=" + std::to_string(std::max(have, 1)) +
                      " or fewer, or -target=cpu, or let the ranks share GPUs with "
                      "--share-gpus)");
  std::unique_ptr<TpGpuExecutor> ex(new TpGpuExecutor());
  ex->tp_ = tp;
  ex->pp_ = pp;
  ex->shared_ = shareRanks;
  if (tp > 1 && !shareRanks) {
    ACCEL_RT_ASSIGN_OR_RETURN(ex->nccl_, comm::Nccl::get());
  }
  ex->options_ = options;
  // A GPU per executor when there are enough, else the stages share the
  // ranks' GPUs, else (shareRanks) the ranks share the GPUs there are.
  const int avail = have - options.device;
  const bool spread = tp * pp <= avail;
  for (int s = 0; s < pp; ++s)
    for (int r = 0; r < tp; ++r) {
      GpuExecutorOptions o = options;
      o.device = options.device + (spread ? s * tp + r : shareRanks ? r % avail : r);
      o.tpRank = tp > 1 ? r : -1;
      o.ppStage = pp > 1 ? s : -1;
      // One line per event, not one per executor.
      o.logFallbacks = options.logFallbacks && s == 0 && r == 0;
      o.logMemory = false; // planKvCache prints one line per GPU
      // Ranks that share GPUs meet on the host at every collective
      // (P2pAllReduce.h), which a CUDA graph cannot hold.
      if (shareRanks && tp > 1)
        o.cudaGraphs = false;
      StatusOr<std::unique_ptr<GpuExecutor>> rank = GpuExecutor::create(plan, o);
      if (!rank)
        return Status(rank.status().code(),
                      (pp > 1 ? "stage " + std::to_string(s) + " " : std::string()) + "rank " +
                          std::to_string(r) + " (GPU " + std::to_string(o.device) +
                          "): " + rank.status().message());
      ex->ranks_.push_back(std::move(*rank));
      ex->devices_.push_back(o.device);
    }
  ex->plan_ = std::move(plan);
  if (pp > 1) {
    ex->pipeline_ = std::make_unique<gpu::GpuPipeline>(pp, tp);
    for (auto &r : ex->ranks_) {
      r->setPipeline(ex->pipeline_.get());
      r->setPartTiming(true);
    }
    // One micro-batch per stage when each stage has GPUs of its own; one in
    // all when the stages share GPUs, where nothing overlaps and every
    // micro-batch reads the weights again (the 8B shapes on one H100,
    // 2026-12-08: decode at batch 16 took 12.1 ms in 2 micro-batches, 6.6 ms
    // in one; docs/performance.md).
    const int64_t fromEnv = env().ppMicroBatches;
    ex->microBatches_ = options.ppMicroBatches > 0 ? options.ppMicroBatches
                        : fromEnv > 0              ? int(fromEnv)
                        : spread                   ? pp
                                                   : 1;
    ex->selectsLast_ = selectsLastRows(*ex->plan_);
    ex->counters_ = std::make_unique<PipelineCounters>(pp);
    if (!env().ppTrace.empty())
      ACCEL_RT_RETURN_IF_ERROR(ex->counters_->openTrace(env().ppTrace));
  }
  // Each stage's one-shot group over its ranks' GPUs (P2pAllReduce).
  ex->p2p_.resize(size_t(pp));
  auto oneShot = [&](int s) {
    std::vector<gpu::GpuContext *> contexts;
    for (int r = 0; r < tp; ++r)
      contexts.push_back(&ex->rank(r, s).context());
    return gpu::P2pAllReduce::create(contexts);
  };
  if (shareRanks) {
    // No NCCL: the one-shot group carries every collective.
    for (int s = 0; s < pp; ++s) {
      StatusOr<std::unique_ptr<gpu::P2pAllReduce>> p2p = oneShot(s);
      if (!p2p)
        return Status(p2p.status().code(),
                      ex->plan_->path() + ": tensor-parallel ranks that share GPUs meet through "
                                          "the one-shot all-reduce, which cannot be made: " +
                          p2p.status().message());
      ex->p2p_[size_t(s)] = std::move(*p2p);
      for (int r = 0; r < tp; ++r)
        ex->rank(r, s).setCommunicator(nullptr, ex->p2p_[size_t(s)].get());
    }
  } else if (tp > 1 && !options.tuning.p2pAllReduce) {
    ex->p2pOff_ = "GpuTuning::p2pAllReduce is off";
  } else if (tp > 1) {
    // Small all_reduces (decode steps) through peer access, unless
    // options.tuning.p2pAllReduce is off or the GPUs cannot reach each other
    // (then NCCL carries all of them).
    for (int s = 0; s < pp && ex->p2pOff_.empty(); ++s) {
      StatusOr<std::unique_ptr<gpu::P2pAllReduce>> p2p = oneShot(s);
      if (p2p)
        ex->p2p_[size_t(s)] = std::move(*p2p);
      else
        ex->p2pOff_ = p2p.status().message();
    }
    if (!ex->p2pOff_.empty())
      for (auto &p : ex->p2p_)
        p.reset();
  }
  ex->groups_.resize(size_t(pp));
  ACCEL_RT_RETURN_IF_ERROR(ex->ensureGroups());
  ex->threads_ = std::make_unique<RankThreads>(tp * pp);
  return ex;
}

TpGpuExecutor::~TpGpuExecutor() {
  threads_.reset();
  for (auto &r : ranks_) {
    r->setCommunicator(nullptr); // their graphs hold the groups' kernels
    r->setPipeline(nullptr);
  }
  groups_.clear();
  p2p_.clear();
  pipeline_.reset();
  ranks_.clear();
}

std::string TpGpuExecutor::who(int i) const {
  return (pp_ > 1 ? "stage " + std::to_string(i / tp_) + " " : std::string()) + "rank " +
         std::to_string(i % tp_);
}

Status TpGpuExecutor::ensureGroups() {
  if (pipeline_ && pipeline_->aborted())
    pipeline_->reset();
  if (tp_ == 1 || shared_)
    return Status::ok();
  for (int s = 0; s < pp_; ++s) {
    std::unique_ptr<comm::NcclGroup> &group = groups_[size_t(s)];
    if (group && !group->aborted())
      continue;
    for (int r = 0; r < tp_; ++r)
      rank(r, s).setCommunicator(nullptr);
    group.reset();
    std::vector<int> devices;
    for (int r = 0; r < tp_; ++r)
      devices.push_back(deviceOf(r, s));
    StatusOr<std::unique_ptr<comm::NcclGroup>> g = comm::NcclGroup::create(*nccl_, devices);
    if (!g)
      return Status(g.status().code(),
                    plan_->path() + ": cannot make the tensor-parallel group of " +
                        std::to_string(tp_) + " GPUs" +
                        (pp_ > 1 ? " of stage " + std::to_string(s) : std::string()) +
                        " (NCCL " + nccl_->versionString() + " from " + nccl_->path() +
                        "): " + g.status().message());
    group = std::move(*g);
    for (int r = 0; r < tp_; ++r)
      rank(r, s).setCommunicator(group->rank(r), p2p_[size_t(s)].get());
  }
  return Status::ok();
}

Status TpGpuExecutor::onRanks(const std::function<Status(int)> &fn) {
  const int n = tp_ * pp_;
  std::vector<Status> results(static_cast<size_t>(n));
  std::mutex mu;
  std::condition_variable cv;
  int done = 0;
  bool failed = false;
  auto body = [&](int i) {
    Status s = fn(i);
    if (!s.isOk()) {
      const Status named(s.code(), who(i) + ": " + s.message());
      if (comm::NcclGroup *group = groups_[size_t(i / tp_)].get())
        group->abort(named);
      if (pipeline_)
        pipeline_->abort(named);
    }
    std::lock_guard<std::mutex> lock(mu);
    results[size_t(i)] = std::move(s);
    failed |= !results[size_t(i)].isOk();
    ++done;
    cv.notify_all();
  };
  // On the persistent threads (a thread started per rank per step cost
  // 60-140 us a step on the demo model, docs/performance.md).
  const std::function<void(int)> bodyFn = body;
  threads_->start(bodyFn);
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done == n || failed; });
    // One failed while others still run: they may wait on their streams
    // for NCCL or one-shot all-reduce kernels that wait for it (a transfer
    // never blocks a stream: its sender's event is recorded before the
    // receiver waits). Give them a moment, then abort NCCL's and release
    // the one-shot kernels.
    if (done < n && !cv.wait_for(lock, kGraceAfterFailure, [&] { return done == n; })) {
      std::vector<int> absent;
      for (int i = 0; i < n; ++i)
        if (!results[size_t(i)].isOk())
          absent.push_back(i);
      lock.unlock();
      for (int i : absent)
        if (gpu::P2pAllReduce *p = p2p_[size_t(i / tp_)].get())
          (void)p->releaseWaitersFor(i % tp_);
      for (auto &g : groups_)
        if (g)
          g->abortCommunicators();
      lock.lock();
      cv.wait(lock, [&] { return done == n; });
    }
  }
  // Every thread has returned from body (not only counted itself done).
  threads_->wait();
  if (!failed)
    return Status::ok();
  // The groups are not used again (ensureGroups makes new ones): the
  // failed step may have left NCCL work that no peer will match.
  for (int s = 0; s < pp_ && !shared_; ++s) {
    if (groups_[size_t(s)])
      groups_[size_t(s)]->abort(Status(StatusCode::kInternal, "a rank's step failed"));
    for (int r = 0; r < tp_; ++r)
      rank(r, s).setCommunicator(nullptr);
    groups_[size_t(s)].reset();
  }
  if (pipeline_)
    pipeline_->abort(Status(StatusCode::kInternal, "a stage's step failed"));
  // The one-shot kernels' epochs may differ between ranks now: start over.
  std::string resetFailed;
  for (auto &p : p2p_)
    if (p)
      if (Status r = p->reset(); !r.isOk()) {
        if (shared_) {
          // No NCCL to fall back on: the executor cannot run another step.
          resetFailed = "; the one-shot all-reduce of ranks sharing GPUs could not be reset "
                        "after it (" + r.message() + ")";
          continue;
        }
        p.reset(), p2pOff_ = "its reset after a failed step failed";
      }
  auto named = [&](int i) {
    const Status &s = results[size_t(i)];
    return Status(s.code(), who(i) + ": " + s.message() + resetFailed);
  };
  // The one that failed first says why; the others only saw the abort.
  for (int i = 0; i < n; ++i)
    if (!results[size_t(i)].isOk() && !secondary(results[size_t(i)]))
      return named(i);
  for (int i = 0; i < n; ++i)
    if (!results[size_t(i)].isOk())
      return named(i);
  return Status(StatusCode::kInternal, "a rank failed without saying why");
}

StatusOr<Tensor> TpGpuExecutor::run(const Tensor &tokenIds, kv::BlockPool &pool,
                                    const kv::StepMetadata &meta) {
  ACCEL_RT_RETURN_IF_ERROR(kv::checkStepTokenIds(tokenIds, meta));
  ACCEL_RT_RETURN_IF_ERROR(ensureGroups());
  // Copy-on-write copies the block allocator made since the last step,
  // applied to every executor's device pool.
  const std::vector<kv::BlockCopy> copies = pool.takePendingCopies();
  if (pp_ > 1)
    return runPipeline(tokenIds, pool, meta, copies);
  std::vector<StatusOr<Tensor>> results;
  for (int i = 0; i < tp_; ++i)
    results.emplace_back(Status(StatusCode::kInternal, "rank did not run"));
  ACCEL_RT_RETURN_IF_ERROR(onRanks([&](int i) -> Status {
    results[size_t(i)] = ranks_[size_t(i)]->run(tokenIds, pool, meta, copies);
    return results[size_t(i)].status();
  }));
  return std::move(results[0]);
}

StatusOr<Tensor> TpGpuExecutor::runPipeline(const Tensor &tokenIds, kv::BlockPool &pool,
                                            const kv::StepMetadata &meta,
                                            const std::vector<kv::BlockCopy> &copies) {
  // A plan whose LM head keeps each sequence's last row returns one row per
  // sequence whatever the step asks: split it as such a step.
  kv::StepMetadata whole = meta;
  if (selectsLast_)
    whole.lastRowsOnly = true;
  ACCEL_RT_ASSIGN_OR_RETURN(std::vector<MicroBatch> parts,
                            splitStep(tokenIds, whole, microBatches_));
  const int n = tp_ * pp_;
  std::vector<Tensor> outputs(parts.size()); // the last stage's rank 0's
  std::vector<double> busy(size_t(n), 0.0);
  const std::vector<kv::BlockCopy> none;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  // Each executor enqueues its parts in order (stage s runs part i while
  // stage s + 1 runs part i - 1: their streams wait only for the transfers
  // of the part at hand); the last stage's parts return their logits.
  ACCEL_RT_RETURN_IF_ERROR(onRanks([&](int i) -> Status {
    GpuExecutor &ex = *ranks_[size_t(i)];
    for (size_t p = 0; p < parts.size(); ++p) {
      StatusOr<Tensor> out = ex.runPart(parts[p].tokenIds, pool, parts[p].meta,
                                        p == 0 ? copies : none, int(p));
      if (!out)
        return out.status();
      if (i == (pp_ - 1) * tp_)
        outputs[p] = std::move(*out);
    }
    ACCEL_RT_RETURN_IF_ERROR(ex.synchronize());
    ACCEL_RT_ASSIGN_OR_RETURN(busy[size_t(i)], ex.partSeconds());
    return Status::ok();
  }));
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  // Each stage's first rank speaks for it.
  std::vector<double> stageBusy;
  for (int s = 0; s < pp_; ++s)
    stageBusy.push_back(busy[size_t(s * tp_)]);
  ACCEL_RT_RETURN_IF_ERROR(counters_->recordStep(
      meta.numTokens, int64_t(parts.size()), wall, stageBusy,
      std::vector<int64_t>(size_t(pp_), int64_t(parts.size()))));
  return joinParts(parts, outputs);
}

std::optional<PipelineStats> TpGpuExecutor::pipelineStats() const {
  if (!counters_)
    return std::nullopt;
  return counters_->snapshot();
}

StatusOr<int64_t> TpGpuExecutor::planKvCache(const kv::KVCacheConfig &geometry) {
  ACCEL_RT_RETURN_IF_ERROR(ensureGroups());
  const int n = tp_ * pp_;
  std::vector<GpuKvReservation> reserved(static_cast<size_t>(n));
  ACCEL_RT_RETURN_IF_ERROR(onRanks([&](int i) -> Status {
    ACCEL_RT_ASSIGN_OR_RETURN(reserved[size_t(i)], ranks_[size_t(i)]->reserveKvCache(geometry));
    return Status::ok();
  }));
  // Each GPU's pools get the same blocks: what its budget leaves over the
  // block bytes of every pool it holds.
  std::map<int, std::vector<int>> onDevice; // GPU -> executors
  for (int i = 0; i < n; ++i)
    onDevice[devices_[size_t(i)]].push_back(i);
  const int64_t bs = std::max<int64_t>(geometry.blockSize, 1);
  int64_t blocks = -1;
  struct Line {
    int device;
    MemoryBudgetInput in;
    int64_t weights = 0, activations = 0, graphs = 0;
  };
  std::vector<Line> lines;
  for (const auto &[device, members] : onDevice) {
    GpuExecutor &first = *ranks_[size_t(members[0])];
    ACCEL_RT_RETURN_IF_ERROR(first.makeCurrent());
    std::size_t freeBytes = 0, totalBytes = 0;
    ACCEL_RT_RETURN_IF_ERROR(first.context().memoryInfo(&freeBytes, &totalBytes));
    Line line;
    line.device = device;
    line.in.totalBytes = int64_t(totalBytes);
    line.in.freeBytes = int64_t(freeBytes);
    line.in.utilization = options_.gpuMemoryUtilization;
    line.in.blockSize = bs;
    line.in.maxModelLen =
        options_.maxModelLen > 0 ? options_.maxModelLen
                                 : (plan_->metadata().model().max_position() > 0
                                        ? plan_->metadata().model().max_position()
                                        : 2048);
    for (int i : members) {
      line.in.bytesPerBlock += reserved[size_t(i)].bytesPerBlock;
      line.weights += int64_t(ranks_[size_t(i)]->deviceBytes());
      line.activations += reserved[size_t(i)].activationsBytes;
      line.graphs += reserved[size_t(i)].graphBytes;
    }
    StatusOr<MemoryBudget> budget = kvMemoryBudget(line.in);
    if (!budget)
      return Status(budget.status().code(),
                    "GPU " + std::to_string(device) + ": " + budget.status().message());
    blocks = blocks < 0 ? budget->numBlocks : std::min(blocks, budget->numBlocks);
    lines.push_back(line);
  }
  kv::KVCacheConfig real = geometry;
  real.numBlocks = blocks;
  ACCEL_RT_RETURN_IF_ERROR(onRanks(
      [&](int i) -> Status { return ranks_[size_t(i)]->allocateKvCache(real); }));
  if (options_.logMemory)
    for (const Line &l : lines) {
      const int64_t kv = blocks * l.in.bytesPerBlock;
      std::fprintf(stderr,
                   "accel: GPU %d memory (%zu of %d executors): weights and activations %s "
                   "(profiled at %lld tokens), CUDA graphs %s, KV cache %s = %lld blocks of "
                   "%lld tokens (%lld tokens at once) at --gpu-memory-utilization %.2f of %s\n",
                   l.device, onDevice[l.device].size(), n, formatGiB(l.weights).c_str(),
                   (long long)reserved[0].profiledTokens, formatGiB(l.graphs).c_str(),
                   formatGiB(kv).c_str(), (long long)blocks, (long long)bs,
                   (long long)(blocks * bs), options_.gpuMemoryUtilization,
                   formatGiB(l.in.totalBytes).c_str());
    }
  return blocks;
}

std::string TpGpuExecutor::describe() const {
  std::string d = ranks_[0]->describe();
  if (tp_ > 1 && shared_) {
    d += ", " + std::to_string(tp_) + " tensor-parallel ranks sharing GPUs " +
         std::to_string(options_.device) + "-" +
         std::to_string(*std::max_element(devices_.begin(), devices_.end())) +
         " through a host-ordered all-reduce, without CUDA graphs (--share-gpus)";
  } else if (tp_ > 1) {
    const int first = devices_[0], last = devices_[size_t(tp_ - 1)];
    d += ", tensor-parallel over " + std::to_string(tp_) + " GPUs (" + std::to_string(first) +
         "-" + std::to_string(last) + ") with NCCL " + nccl_->versionString() + " from " +
         nccl_->path() +
         (p2p_[0] ? ", small all_reduces over peer access"
                  : ", every all_reduce through NCCL (" + p2pOff_ + ")");
  }
  if (pp_ > 1) {
    const bool shared = devices_.back() == devices_[size_t(tp_ - 1)];
    d += ", " + std::to_string(pp_) + " pipeline stages" +
         (shared ? " sharing " + std::string(tp_ > 1 ? "the ranks' GPUs" : "GPU " +
                                                                       std::to_string(devices_[0]))
                 : " on GPUs " + std::to_string(devices_.front()) + "-" +
                       std::to_string(devices_.back()));
  }
  return d;
}

} // namespace accel::rt::engine
