//===- TpGpuExecutor.cpp - a tensor-parallel plan on N GPUs ---------------===//
#include "runtime/cuda/TpGpuExecutor.h"

#include "runtime/cuda/CudaDriver.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace accel::rt::engine {

namespace {
/// How long the other ranks get to finish after one failed before their
/// NCCL kernels are aborted (they may wait for the failed rank forever).
constexpr std::chrono::seconds kGraceAfterFailure(2);

bool secondary(const Status &s) {
  return s.message().find("the tensor-parallel group stopped") != std::string::npos;
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
  if (plan->ppSize() != 1)
    return Status(StatusCode::kUnimplemented,
                  plan->path() + ": the plan is split into " + std::to_string(plan->ppSize()) +
                      " pipeline stages; the GPU runtime runs one (compile with -target=cpu "
                      "to run it on the CPU)");
  const int n = plan->tpSize();
  ACCEL_RT_ASSIGN_OR_RETURN(CudaDriver * driver, CudaDriver::get());
  ACCEL_RT_ASSIGN_OR_RETURN(std::vector<GpuInfo> gpus, driver->listDevices());
  const int have = int(gpus.size());
  if (options.device < 0 || options.device + n > have)
    return Status(StatusCode::kUnavailable,
                  plan->path() + ": the plan is partitioned for " + std::to_string(n) +
                      " ranks; this machine has " + std::to_string(have) + " GPU" +
                      (have == 1 ? "" : "s") +
                      (options.device > 0 ? " and the ranks would start at GPU " +
                                                std::to_string(options.device)
                                          : std::string()) +
                      " (recompile with -tp=" + std::to_string(std::max(have, 1)) +
                      " or fewer, or -target=cpu)");
  std::unique_ptr<TpGpuExecutor> ex(new TpGpuExecutor());
  ACCEL_RT_ASSIGN_OR_RETURN(ex->nccl_, comm::Nccl::get());
  ex->options_ = options;
  for (int r = 0; r < n; ++r) {
    GpuExecutorOptions o = options;
    o.device = options.device + r;
    o.tpRank = r;
    // One line per event, not one per rank.
    o.logFallbacks = options.logFallbacks && r == 0;
    o.logMemory = options.logMemory && r == 0;
    StatusOr<std::unique_ptr<GpuExecutor>> rank = GpuExecutor::create(plan, o);
    if (!rank)
      return Status(rank.status().code(),
                    "rank " + std::to_string(r) + " (GPU " + std::to_string(o.device) +
                        "): " + rank.status().message());
    ex->ranks_.push_back(std::move(*rank));
  }
  ex->plan_ = std::move(plan);
  // Small all_reduces (decode steps) through peer access, unless
  // options.tuning.p2pAllReduce is off or the GPUs cannot reach each other.
  if (!options.tuning.p2pAllReduce) {
    ex->p2pOff_ = "GpuTuning::p2pAllReduce is off";
  } else {
    std::vector<gpu::GpuContext *> contexts;
    for (auto &r : ex->ranks_)
      contexts.push_back(&r->context());
    StatusOr<std::unique_ptr<gpu::P2pAllReduce>> p2p = gpu::P2pAllReduce::create(contexts);
    if (p2p)
      ex->p2p_ = std::move(*p2p);
    else
      ex->p2pOff_ = p2p.status().message();
  }
  ACCEL_RT_RETURN_IF_ERROR(ex->ensureGroup());
  ex->threads_ = std::make_unique<RankThreads>(n);
  return ex;
}

TpGpuExecutor::~TpGpuExecutor() {
  threads_.reset();
  for (auto &r : ranks_)
    r->setCommunicator(nullptr); // their graphs hold the group's kernels
  group_.reset();
  p2p_.reset();
  ranks_.clear();
}

Status TpGpuExecutor::ensureGroup() {
  if (group_ && !group_->aborted())
    return Status::ok();
  for (auto &r : ranks_)
    r->setCommunicator(nullptr);
  group_.reset();
  std::vector<int> devices;
  for (int r = 0; r < tpSize(); ++r)
    devices.push_back(options_.device + r);
  StatusOr<std::unique_ptr<comm::NcclGroup>> g = comm::NcclGroup::create(*nccl_, devices);
  if (!g)
    return Status(g.status().code(),
                  plan_->path() + ": cannot make the tensor-parallel group of " +
                      std::to_string(tpSize()) + " GPUs (NCCL " + nccl_->versionString() +
                      " from " + nccl_->path() + "): " + g.status().message());
  group_ = std::move(*g);
  for (int r = 0; r < tpSize(); ++r)
    ranks_[size_t(r)]->setCommunicator(group_->rank(r), p2p_.get());
  return Status::ok();
}

Status TpGpuExecutor::onRanks(const std::function<Status(int)> &fn) {
  const int n = tpSize();
  comm::NcclGroup *group = group_.get();
  std::vector<Status> results(static_cast<size_t>(n));
  std::mutex mu;
  std::condition_variable cv;
  int done = 0;
  bool failed = false;
  auto body = [&](int r) {
    Status s = fn(r);
    if (!s.isOk() && group)
      group->abort(Status(s.code(), "rank " + std::to_string(r) + ": " + s.message()));
    std::lock_guard<std::mutex> lock(mu);
    results[size_t(r)] = std::move(s);
    failed |= !results[size_t(r)].isOk();
    ++done;
    cv.notify_all();
  };
  // On the persistent rank threads (a thread started per rank per step cost
  // 60-140 us a step on the demo model, docs/performance.md).
  const std::function<void(int)> bodyFn = body;
  threads_->start(bodyFn);
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done == n || failed; });
    // A rank failed while others still run: they may wait on their streams
    // for NCCL or one-shot all-reduce kernels that wait for it. Give them a
    // moment, then abort NCCL's and release the one-shot kernels.
    if (done < n && !cv.wait_for(lock, kGraceAfterFailure, [&] { return done == n; })) {
      std::vector<int> absent;
      for (int r = 0; r < n; ++r)
        if (!results[size_t(r)].isOk())
          absent.push_back(r);
      lock.unlock();
      if (p2p_)
        for (int r : absent)
          (void)p2p_->releaseWaitersFor(r);
      if (group)
        group->abortCommunicators();
      lock.lock();
      cv.wait(lock, [&] { return done == n; });
    }
  }
  // Every thread has returned from body (not only counted itself done).
  threads_->wait();
  if (!failed)
    return Status::ok();
  // The group is not used again (ensureGroup makes a new one): the
  // failed step may have left NCCL work that no peer will match.
  if (group)
    group->abort(Status(StatusCode::kInternal, "a rank's step failed"));
  for (auto &r : ranks_)
    r->setCommunicator(nullptr);
  group_.reset();
  // The one-shot kernels' epochs may differ between ranks now: start over.
  if (p2p_ && !p2p_->reset().isOk())
    p2p_.reset(), p2pOff_ = "its reset after a failed step failed";
  auto named = [&](int r) {
    const Status &s = results[size_t(r)];
    return Status(s.code(), "rank " + std::to_string(r) + ": " + s.message());
  };
  // The rank that failed first says why; the others only saw the abort.
  for (int r = 0; r < n; ++r)
    if (!results[size_t(r)].isOk() && !secondary(results[size_t(r)]))
      return named(r);
  for (int r = 0; r < n; ++r)
    if (!results[size_t(r)].isOk())
      return named(r);
  return Status(StatusCode::kInternal, "a rank failed without saying why");
}

StatusOr<Tensor> TpGpuExecutor::run(const Tensor &tokenIds, kv::BlockPool &pool,
                                    const kv::StepMetadata &meta) {
  ACCEL_RT_RETURN_IF_ERROR(kv::checkStepTokenIds(tokenIds, meta));
  ACCEL_RT_RETURN_IF_ERROR(ensureGroup());
  // Copy-on-write copies the block allocator made since the last step,
  // applied to every rank's device pool.
  const std::vector<kv::BlockCopy> copies = pool.takePendingCopies();
  std::vector<StatusOr<Tensor>> results;
  for (int r = 0; r < tpSize(); ++r)
    results.emplace_back(Status(StatusCode::kInternal, "rank did not run"));
  ACCEL_RT_RETURN_IF_ERROR(onRanks([&](int r) -> Status {
    results[size_t(r)] = ranks_[size_t(r)]->run(tokenIds, pool, meta, copies);
    return results[size_t(r)].status();
  }));
  return std::move(results[0]);
}

StatusOr<int64_t> TpGpuExecutor::planKvCache(const kv::KVCacheConfig &geometry) {
  ACCEL_RT_RETURN_IF_ERROR(ensureGroup());
  std::vector<int64_t> blocks(size_t(tpSize()), 0);
  ACCEL_RT_RETURN_IF_ERROR(onRanks([&](int r) -> Status {
    StatusOr<int64_t> b = ranks_[size_t(r)]->planKvCache(geometry);
    if (!b)
      return b.status();
    blocks[size_t(r)] = *b;
    return Status::ok();
  }));
  return *std::min_element(blocks.begin(), blocks.end());
}

std::string TpGpuExecutor::describe() const {
  const int first = options_.device, last = options_.device + tpSize() - 1;
  return ranks_[0]->describe() + ", tensor-parallel over " + std::to_string(tpSize()) +
         " GPUs (" + std::to_string(first) + "-" + std::to_string(last) + ") with NCCL " +
         nccl_->versionString() + " from " + nccl_->path() +
         (p2p_ ? ", small all_reduces over peer access"
               : ", every all_reduce through NCCL (" + p2pOff_ + ")");
}

} // namespace accel::rt::engine
