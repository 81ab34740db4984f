//===- Nccl.cpp - NCCL, opened at run time; a GPU tensor-parallel group ---===//
#include "runtime/comm/Nccl.h"

#include "runtime/Env.h"

#include <chrono>
#include <dlfcn.h>
#include <thread>
#include <type_traits>

namespace accel::rt::comm {

namespace {
/// Where NCCL is on a machine whose NCCL came with PyTorch (pip's
/// nvidia-nccl-cu13), for the message of a failed load.
constexpr const char *kWhereIsNccl =
    "python3 -c \"import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])\"";
} // namespace

StatusOr<std::unique_ptr<Nccl>> Nccl::open(const std::string &path) {
  std::unique_ptr<Nccl> n(new Nccl());
  n->path_ = path;
  n->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!n->handle_) {
    const char *why = dlerror();
    return unavailable("tensor-parallel plans on the GPU need NCCL, and " + path +
                       " cannot be opened (" + (why ? why : "unknown reason") +
                       "); set ACCEL_LIBNCCL to the path of libnccl.so.2 (where PyTorch's "
                       "nvidia-nccl-cu13 package is installed: the lib/libnccl.so.2 under the "
                       "directory that " +
                       kWhereIsNccl + " prints)");
  }
  auto sym = [&](auto &fn, const char *name) -> bool {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(n->handle_, name));
    return fn != nullptr;
  };
  NcclApi &a = n->api_;
  const char *missing = nullptr;
  auto need = [&](auto &fn, const char *name) {
    if (!sym(fn, name) && !missing)
      missing = name;
  };
  need(a.ncclGetVersion, "ncclGetVersion");
  need(a.ncclGetUniqueId, "ncclGetUniqueId");
  need(a.ncclCommInitRank, "ncclCommInitRank");
  need(a.ncclCommInitAll, "ncclCommInitAll");
  need(a.ncclCommDestroy, "ncclCommDestroy");
  need(a.ncclCommAbort, "ncclCommAbort");
  need(a.ncclAllReduce, "ncclAllReduce");
  need(a.ncclAllGather, "ncclAllGather");
  need(a.ncclGroupStart, "ncclGroupStart");
  need(a.ncclGroupEnd, "ncclGroupEnd");
  need(a.ncclGetErrorString, "ncclGetErrorString");
  if (missing)
    return unavailable(path + " is not a usable NCCL library: it lacks " + missing +
                       "; set ACCEL_LIBNCCL to the path of NCCL's libnccl.so.2");
  if (Status s = n->check(a.ncclGetVersion(&n->version_), "ncclGetVersion"); !s.isOk())
    return s;
  // bf16 all-reduce and CUDA-graph capture of collectives need NCCL 2.10+.
  if (n->version_ < 21000)
    return unavailable(path + " is NCCL " + n->versionString() +
                       "; accel needs NCCL 2.10 or later (set ACCEL_LIBNCCL to a newer one)");
  return n;
}

Nccl::~Nccl() {
  // The library stays loaded: NCCL's threads may outlive this object.
}

StatusOr<const Nccl *> Nccl::get() {
  static std::once_flag once;
  static std::unique_ptr<Nccl> nccl;
  static Status loaded;
  std::call_once(once, [] {
    StatusOr<std::unique_ptr<Nccl>> n = open(env().libnccl);
    if (n)
      nccl = std::move(*n);
    else
      loaded = n.status();
  });
  if (!loaded.isOk())
    return loaded;
  return static_cast<const Nccl *>(nccl.get());
}

StatusOr<NcclUniqueId> Nccl::uniqueId() const {
  NcclUniqueId id{};
  ACCEL_RT_RETURN_IF_ERROR(check(api_.ncclGetUniqueId(&id), "ncclGetUniqueId"));
  return id;
}

std::string Nccl::versionString() const {
  // NCCL_VERSION(X, Y, Z): X * 10000 + Y * 100 + Z since 2.9, X * 1000 +
  // Y * 100 + Z before.
  const int v = version_;
  if (v >= 20900)
    return std::to_string(v / 10000) + "." + std::to_string(v % 10000 / 100) + "." +
           std::to_string(v % 100);
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 100) + "." +
         std::to_string(v % 100);
}

Status Nccl::check(int result, const char *call) const {
  if (result == 0)
    return Status::ok();
  const char *text = api_.ncclGetErrorString ? api_.ncclGetErrorString(result) : nullptr;
  return unavailable(std::string(call) + " failed with NCCL error " + std::to_string(result) +
                     (text ? std::string(" (") + text + ")" : std::string()));
}

StatusOr<int> ncclDataType(DType dtype) {
  switch (dtype) {
  case DType::kF32:
    return int(kNcclFloat32);
  case DType::kF16:
    return int(kNcclFloat16);
  case DType::kBF16:
    return int(kNcclBfloat16);
  case DType::kF64:
    return int(kNcclFloat64);
  case DType::kI32:
    return int(kNcclInt32);
  case DType::kI64:
    return int(kNcclInt64);
  case DType::kI8:
    return int(kNcclInt8);
  case DType::kU8:
    return int(kNcclUint8);
  default:
    return Status(StatusCode::kUnimplemented,
                  std::string("NCCL has no collectives of ") + dtypeName(dtype));
  }
}

//===----------------------------------------------------------------------===//
// NcclGroup
//===----------------------------------------------------------------------===//

StatusOr<std::unique_ptr<NcclGroup>> NcclGroup::create(const Nccl &nccl,
                                                       const std::vector<int> &devices) {
  std::unique_ptr<NcclGroup> g(new NcclGroup());
  g->nccl_ = &nccl;
  const int n = int(devices.size());
  g->comms_.assign(size_t(n), nullptr);
  ACCEL_RT_RETURN_IF_ERROR(nccl.check(
      nccl.api().ncclCommInitAll(g->comms_.data(), n, devices.data()), "ncclCommInitAll"));
  g->size_ = n;
  g->locks_ = std::make_unique<std::timed_mutex[]>(size_t(n));
  g->ranks_.resize(size_t(n));
  for (int r = 0; r < n; ++r) {
    g->ranks_[size_t(r)].group_ = g.get();
    g->ranks_[size_t(r)].rank_ = r;
    g->ranks_[size_t(r)].local_ = r;
  }
  return g;
}

StatusOr<std::unique_ptr<NcclGroup>> NcclGroup::createRank(const Nccl &nccl, int rank, int size,
                                                           const NcclUniqueId &id) {
  if (size < 1 || rank < 0 || rank >= size)
    return Status(StatusCode::kInvalidArgument, "NCCL rank " + std::to_string(rank) +
                                                    " is not in a group of " +
                                                    std::to_string(size));
  std::unique_ptr<NcclGroup> g(new NcclGroup());
  g->nccl_ = &nccl;
  g->size_ = size;
  g->comms_.assign(1, nullptr);
  ACCEL_RT_RETURN_IF_ERROR(nccl.check(nccl.api().ncclCommInitRank(&g->comms_[0], size, id, rank),
                                      "ncclCommInitRank"));
  g->locks_ = std::make_unique<std::timed_mutex[]>(1);
  g->ranks_.resize(1);
  g->ranks_[0].group_ = g.get();
  g->ranks_[0].rank_ = rank;
  g->ranks_[0].local_ = 0;
  return g;
}

NcclGroup::~NcclGroup() {
  // One thread per communicator: destroying one may wait for its peers
  // (NCCL finalizes a communicator with the others of its clique).
  std::vector<std::thread> threads;
  const bool abortThem = aborted();
  for (NcclCommHandle &c : comms_)
    if (c)
      threads.emplace_back([this, abortThem, c] {
        if (abortThem)
          (void)nccl_->api().ncclCommAbort(c);
        else
          (void)nccl_->api().ncclCommDestroy(c);
      });
  for (std::thread &t : threads)
    t.join();
  comms_.clear();
}

void NcclGroup::abort(const Status &why) {
  {
    std::lock_guard<std::mutex> lock(whyMu_);
    if (aborted_.load())
      return;
    why_ = Status(why.code(), "the tensor-parallel group stopped: " + why.message());
  }
  aborted_.store(true);
}

Status NcclGroup::stopped() {
  if (!aborted_.load())
    return Status::ok();
  std::lock_guard<std::mutex> lock(whyMu_);
  return why_;
}

void NcclGroup::abortCommunicators() {
  for (size_t r = 0; r < comms_.size(); ++r) {
    // A rank inside an NCCL call holds its lock; enqueueing returns at
    // once, so a lock not had within seconds is a call that waits for a
    // rank that will not come: abort under it (what NCCL's abort is for).
    const bool locked = locks_[r].try_lock_for(std::chrono::seconds(5));
    if (comms_[r]) {
      (void)nccl_->api().ncclCommAbort(comms_[r]);
      comms_[r] = nullptr;
    }
    if (locked)
      locks_[r].unlock();
  }
}

template <typename Fn> Status NcclGroup::onComm(int local, const char *what, Fn call) {
  std::unique_lock<std::timed_mutex> lock(locks_[size_t(local)]);
  if (aborted_.load() || !comms_[size_t(local)]) {
    std::lock_guard<std::mutex> w(whyMu_);
    if (!why_.isOk())
      return why_;
    return Status(StatusCode::kUnavailable,
                  std::string("the tensor-parallel group stopped before ") + what);
  }
  return nccl_->check(call(comms_[size_t(local)]), what);
}

int NcclRank::size() const { return group_->size(); }

Status NcclRank::allReduceSum(unsigned long long send, unsigned long long recv,
                              std::size_t count, DType dtype, void *stream) {
  ACCEL_RT_ASSIGN_OR_RETURN(int type, ncclDataType(dtype));
  const NcclApi &a = group_->nccl_->api();
  return group_->onComm(local_, "ncclAllReduce", [&](NcclCommHandle c) {
    return a.ncclAllReduce(reinterpret_cast<const void *>(send), reinterpret_cast<void *>(recv),
                           count, type, kNcclSum, c, stream);
  });
}

Status NcclRank::allGather(unsigned long long send, unsigned long long recv, std::size_t count,
                           DType dtype, void *stream) {
  ACCEL_RT_ASSIGN_OR_RETURN(int type, ncclDataType(dtype));
  const NcclApi &a = group_->nccl_->api();
  return group_->onComm(local_, "ncclAllGather", [&](NcclCommHandle c) {
    return a.ncclAllGather(reinterpret_cast<const void *>(send), reinterpret_cast<void *>(recv),
                           count, type, c, stream);
  });
}

} // namespace accel::rt::comm
