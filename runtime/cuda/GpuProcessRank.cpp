//===- GpuProcessRank.cpp - one GPU tensor-parallel rank per process ------===//
#include "runtime/cuda/GpuProcessRank.h"

#include "runtime/comm/Nccl.h"
#include "runtime/comm/SocketGroup.h"
#include "runtime/cuda/CudaDriver.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <thread>

namespace accel::rt::engine {

namespace {

/// How long a rank that is done waits for the others at the end.
constexpr int kLastMeetingSeconds = 60;

class ProcessRank final : public Backend {
public:
  ProcessRank(std::shared_ptr<comm::Communicator> group, const comm::Nccl *nccl, int device)
      : group_(std::move(group)), nccl_(nccl), device_(device) {}
  ~ProcessRank() override;
  ProcessRank(const ProcessRank &) = delete;
  ProcessRank &operator=(const ProcessRank &) = delete;

  /// The executor, NCCL's id from rank 0 and the communicator; then the
  /// watcher starts.
  Status start(std::shared_ptr<const plan::PlanFile> plan, GpuExecutorOptions options);
  StatusOr<Tensor> run(const Tensor &ids, kv::BlockPool &pool,
                       const kv::StepMetadata &meta) override;
  /// The fewest blocks any rank's GPU holds (every rank's allocator must
  /// hand out the same blocks).
  StatusOr<int64_t> sizeKvCache(const kv::KVCacheConfig &geometry) override;
  KvCacheHome kvCacheHome() const override { return {true, ex_->kvCacheDType()}; }
  std::string describe() const override;

private:
  int rank() const { return group_->rank(); }
  /// `s` with this rank and its GPU named; the socket group is aborted
  /// with it, so that the other processes stop too.
  Status fail(const Status &s);
  void startWatching();
  void stopWatching();

  std::shared_ptr<comm::Communicator> group_;
  const comm::Nccl *nccl_;
  const int device_;
  std::unique_ptr<GpuExecutor> ex_;
  std::unique_ptr<comm::NcclGroup> nccl_group_;
  std::thread watcher_;
  std::atomic<bool> stop_{false};
};

Status ProcessRank::fail(const Status &s) {
  Status named(s.code(), "rank " + std::to_string(rank()) + " (GPU " + std::to_string(device_) +
                             "): " + s.message());
  group_->abort(named);
  if (nccl_group_)
    nccl_group_->abort(named);
  return named;
}

Status ProcessRank::start(std::shared_ptr<const plan::PlanFile> plan,
                          GpuExecutorOptions options) {
  options.device = device_;
  options.tpRank = rank();
  // One line per event, not one per rank.
  options.logFallbacks = options.logFallbacks && rank() == 0;
  options.logMemory = options.logMemory && rank() == 0;
  StatusOr<std::unique_ptr<GpuExecutor>> ex = GpuExecutor::create(std::move(plan), options);
  if (!ex)
    return fail(ex.status());
  ex_ = std::move(*ex);
  // Rank 0's NCCL id to every rank, once every rank holds its weights.
  comm::NcclUniqueId id{};
  if (rank() == 0) {
    StatusOr<comm::NcclUniqueId> mine = nccl_->uniqueId();
    if (!mine)
      return fail(mine.status());
    id = *mine;
  }
  StatusOr<Tensor> local = Tensor::allocate(DType::kU8, {int64_t(sizeof(id))});
  if (!local)
    return fail(local.status());
  std::memcpy(local->rawData(), &id, sizeof(id));
  StatusOr<Tensor> all = group_->allGather(*local, 0);
  if (!all)
    return fail(all.status());
  std::memcpy(&id, all->rawData(), sizeof(id)); // rank 0's
  if (Status s = ex_->makeCurrent(); !s.isOk())
    return fail(s);
  StatusOr<std::unique_ptr<comm::NcclGroup>> g =
      comm::NcclGroup::createRank(*nccl_, rank(), group_->size(), id);
  if (!g)
    return fail(Status(g.status().code(),
                       "cannot join the tensor-parallel group of " +
                           std::to_string(group_->size()) + " processes (NCCL " +
                           nccl_->versionString() + " from " + nccl_->path() +
                           "): " + g.status().message()));
  nccl_group_ = std::move(*g);
  ex_->setCommunicator(nccl_group_->rank(0));
  startWatching();
  return Status::ok();
}

void ProcessRank::startWatching() {
  stop_.store(false);
  watcher_ = std::thread([this] {
    Status s = comm::watchSocketGroup(*group_, stop_);
    if (s.isOk())
      return;
    // A peer left: the NCCL work that waits for it never ends on its own.
    nccl_group_->abort(s);
    group_->abort(s); // rank 0 tells the ranks it watches for the others
    nccl_group_->abortCommunicators();
  });
}

void ProcessRank::stopWatching() {
  stop_.store(true);
  if (watcher_.joinable())
    watcher_.join();
}

ProcessRank::~ProcessRank() {
  stopWatching();
  // The last meeting: no rank exits while another still runs its last
  // step, whose NCCL work may need it (and no watcher takes that exit for
  // a failure: every one has stopped before the meeting ends).
  // A peer that failed outside its steps (and so never aborted the group)
  // may be waiting in NCCL for this rank: after kLastMeetingSeconds the
  // group is aborted, this process leaves, and that peer's watcher stops it.
  if (nccl_group_ && !nccl_group_->aborted()) {
    std::future<void> met = std::async(std::launch::async, [this] {
      if (StatusOr<Tensor> one = Tensor::allocate(DType::kF32, {1}))
        (void)group_->allReduceSum(*one);
    });
    if (met.wait_for(std::chrono::seconds(kLastMeetingSeconds)) != std::future_status::ready)
      group_->abort(Status(StatusCode::kUnavailable,
                           "rank " + std::to_string(rank()) + " waited " +
                               std::to_string(kLastMeetingSeconds) +
                               " s for the others to finish"));
    met.wait();
  }
  if (ex_)
    ex_->setCommunicator(nullptr);
  nccl_group_.reset();
  ex_.reset();
}

StatusOr<Tensor> ProcessRank::run(const Tensor &ids, kv::BlockPool &pool,
                                  const kv::StepMetadata &meta) {
  ACCEL_RT_RETURN_IF_ERROR(nccl_group_->stopped());
  StatusOr<Tensor> out = ex_->run(ids, pool, meta);
  // A step cut short by a peer's departure returns what it had.
  ACCEL_RT_RETURN_IF_ERROR(nccl_group_->stopped());
  if (!out)
    return fail(out.status());
  return out;
}

StatusOr<int64_t> ProcessRank::sizeKvCache(const kv::KVCacheConfig &geometry) {
  StatusOr<int64_t> mine = ex_->planKvCache(geometry);
  ACCEL_RT_RETURN_IF_ERROR(nccl_group_->stopped());
  if (!mine)
    return fail(mine.status());
  // Every rank's allocator must hand out the same blocks: the fewest.
  stopWatching();
  StatusOr<Tensor> t = Tensor::allocate(DType::kI64, {1});
  if (!t)
    return fail(t.status());
  *static_cast<int64_t *>(t->rawData()) = *mine;
  StatusOr<Tensor> all = group_->allGather(*t, 0);
  if (!all)
    return fail(all.status());
  startWatching();
  const int64_t *b = static_cast<const int64_t *>(all->rawData());
  return *std::min_element(b, b + all->numElements());
}

std::string ProcessRank::describe() const {
  return ex_->describe() + ", tensor-parallel rank " + std::to_string(rank()) + " of " +
         std::to_string(group_->size()) + " processes (GPU " + std::to_string(device_) +
         ") with NCCL " + nccl_->versionString() + " from " + nccl_->path();
}

} // namespace

StatusOr<std::unique_ptr<Backend>>
makeGpuProcessRank(std::shared_ptr<const plan::PlanFile> plan, const GpuExecutorOptions &options,
                   std::shared_ptr<comm::Communicator> group) {
  const int rank = group->rank(), size = group->size();
  auto refuse = [&](const Status &s) {
    Status named(s.code(), "rank " + std::to_string(rank) + ": " + s.message());
    group->abort(named);
    return named;
  };
  if (plan->tpSize() != size)
    return refuse(Status(StatusCode::kInvalidArgument,
                         plan->path() + " is partitioned for " + std::to_string(plan->tpSize()) +
                             " ranks and the group of processes has " + std::to_string(size)));
  StatusOr<const comm::Nccl *> nccl = comm::Nccl::get();
  if (!nccl)
    return refuse(nccl.status());
  int device = options.device;
  if (device < 0) {
    StatusOr<CudaDriver *> driver = CudaDriver::get();
    if (!driver)
      return refuse(driver.status());
    StatusOr<std::vector<GpuInfo>> gpus = (*driver)->listDevices();
    if (!gpus)
      return refuse(gpus.status());
    if (gpus->empty())
      return refuse(Status(StatusCode::kUnavailable, "the CUDA driver sees no GPU"));
    device = rank % int(gpus->size());
  }
  auto r = std::make_unique<ProcessRank>(group, *nccl, device);
  ACCEL_RT_RETURN_IF_ERROR(r->start(std::move(plan), options));
  return std::unique_ptr<Backend>(std::move(r));
}

} // namespace accel::rt::engine
