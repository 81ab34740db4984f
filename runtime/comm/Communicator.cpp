//===- Communicator.cpp - the in-process tensor-parallel group ------------===//
//
// Each collective is two barriers: every rank posts a pointer to its input
// and waits for the others; then each rank computes the whole result from
// all inputs (reading them, never writing them) and waits again, so that no
// input is freed while another rank still reads it. Computing the result on
// every rank costs N times the arithmetic of one, which is nothing next to
// the GEMMs around it and keeps every rank's result bit-identical.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/Communicator.h"

#include <condition_variable>
#include <map>
#include <tuple>
#include <cstring>
#include <mutex>

namespace accel::rt::comm {

namespace {

struct Group {
  explicit Group(int n) : size(n), inputs(size_t(n), nullptr) {}

  /// Posts `x` as rank `rank`'s input (when non-null) and waits for every
  /// rank.
  Status barrier(int rank, const Tensor *x) {
    std::unique_lock<std::mutex> lock(mu);
    if (aborted)
      return why;
    if (x)
      inputs[size_t(rank)] = x;
    const uint64_t gen = generation;
    if (++arrived == size) {
      arrived = 0;
      ++generation;
      cv.notify_all();
      return Status::ok();
    }
    cv.wait(lock, [&] { return generation != gen || aborted; });
    if (generation != gen)
      return Status::ok();
    return why;
  }

  void abort(const Status &status) {
    std::lock_guard<std::mutex> lock(mu);
    if (aborted)
      return;
    aborted = true;
    why = Status(status.code(), "the tensor-parallel group stopped: " + status.message());
    cv.notify_all();
  }

  const int size;
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  uint64_t generation = 0;
  bool aborted = false;
  Status why = Status::ok();
  std::vector<const Tensor *> inputs;
};

Status sameTypes(const std::vector<const Tensor *> &inputs, int self, const char *what) {
  const Tensor &x = *inputs[size_t(self)];
  for (size_t r = 0; r < inputs.size(); ++r) {
    const Tensor *t = inputs[r];
    if (t->dtype() != x.dtype() || t->shape() != x.shape())
      return Status(StatusCode::kInvalidArgument,
                    std::string(what) + ": rank " + std::to_string(r) + " brings " +
                        t->describe() + " and rank " + std::to_string(self) + " " +
                        x.describe());
  }
  return Status::ok();
}

} // namespace

StatusOr<Tensor> sumInRankOrder(const std::vector<const Tensor *> &inputs, int self) {
  ACCEL_RT_RETURN_IF_ERROR(sameTypes(inputs, self, "all_reduce"));
  const Tensor &x = *inputs[size_t(self)];
  const int size = int(inputs.size());
  const DType dt = x.dtype();
  if (dt != DType::kF32 && dt != DType::kF64 && dt != DType::kF16 && dt != DType::kBF16)
    return Status(StatusCode::kUnimplemented,
                  "all_reduce of " + x.describe() + ": only float tensors are summed");
  const int64_t n = x.numElements();
  if (dt == DType::kF64) {
    ACCEL_RT_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(dt, x.shape()));
    double *o = out.data<double>();
    std::memcpy(o, inputs[0]->rawData(), x.byteSize());
    for (int r = 1; r < size; ++r) {
      const double *in = inputs[size_t(r)]->data<double>();
      for (int64_t i = 0; i < n; ++i)
        o[i] += in[i];
    }
    return out;
  }
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(DType::kF32, x.shape()));
  float *o = out.data<float>();
  for (int r = 0; r < size; ++r) {
    const Tensor *t = inputs[size_t(r)];
    Tensor f = t->dtype() == DType::kF32 ? *t : t->toF32();
    if (!f.defined() && n != 0)
      return Status(StatusCode::kResourceExhausted, "all_reduce: cannot convert to f32");
    const float *in = f.data<float>();
    if (r == 0)
      std::memcpy(o, in, size_t(n) * sizeof(float));
    else
      for (int64_t i = 0; i < n; ++i)
        o[i] += in[i];
  }
  if (dt == DType::kF32)
    return out;
  Tensor back = out.astype(dt);
  if (!back.defined() && n != 0)
    return Status(StatusCode::kResourceExhausted, "all_reduce: cannot convert the sum");
  return back;
}

StatusOr<Tensor> gatherInRankOrder(const std::vector<const Tensor *> &inputs, int64_t axis,
                                   int self) {
  ACCEL_RT_RETURN_IF_ERROR(sameTypes(inputs, self, "all_gather"));
  const Tensor &x = *inputs[size_t(self)];
  const int size = int(inputs.size());
  if (axis < 0 || axis >= x.rank())
    return Status(StatusCode::kInvalidArgument, "all_gather axis " + std::to_string(axis) +
                                                    " is out of range for " + x.describe());
  Shape shape(x.shape().begin(), x.shape().end());
  shape[size_t(axis)] *= size;
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(x.dtype(), shape));
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= x.dim(i);
  const size_t chunk = outer ? x.byteSize() / size_t(outer) : 0;
  char *o = static_cast<char *>(out.rawData());
  for (int64_t i = 0; i < outer; ++i)
    for (int r = 0; r < size; ++r)
      std::memcpy(o + (size_t(i) * size_t(size) + size_t(r)) * chunk,
                  static_cast<const char *>(inputs[size_t(r)]->rawData()) + size_t(i) * chunk,
                  chunk);
  return out;
}

namespace {

class InProcessCommunicator final : public Communicator {
public:
  InProcessCommunicator(std::shared_ptr<Group> group, int rank)
      : group_(std::move(group)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return group_->size; }
  void abort(const Status &why) override { group_->abort(why); }

  StatusOr<Tensor> allReduceSum(const Tensor &x) override {
    return collective(x, [&]() { return sumInRankOrder(group_->inputs, rank_); });
  }

  StatusOr<Tensor> allGather(const Tensor &x, int64_t axis) override {
    return collective(x, [&]() { return gatherInRankOrder(group_->inputs, axis, rank_); });
  }

private:
  template <typename Fn> StatusOr<Tensor> collective(const Tensor &x, Fn compute) {
    ACCEL_RT_RETURN_IF_ERROR(group_->barrier(rank_, &x));
    StatusOr<Tensor> result = compute();
    // Everyone has read every input before anyone returns (and frees its own).
    Status after = group_->barrier(rank_, nullptr);
    if (!after.isOk())
      return after;
    return result;
  }

  std::shared_ptr<Group> group_;
  int rank_;
};

} // namespace

std::vector<std::unique_ptr<Communicator>> createInProcessGroup(int size) {
  auto group = std::make_shared<Group>(size);
  std::vector<std::unique_ptr<Communicator>> comms;
  for (int r = 0; r < size; ++r)
    comms.push_back(std::make_unique<InProcessCommunicator>(group, r));
  return comms;
}

//===----------------------------------------------------------------------===//
// Pipeline links: one mailbox per (from stage, to stage, rank, tag), under
// one lock; a send copies its tensor in, the matching recv takes it out.
//===----------------------------------------------------------------------===//

namespace {

struct Pipeline {
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::tuple<int, int, int, int64_t>, Tensor> mail;
  bool aborted = false;
  Status why = Status::ok();
};

class InProcessLink final : public StageLink {
public:
  InProcessLink(std::shared_ptr<Pipeline> p, int stage, int rank, int stages)
      : p_(std::move(p)), stage_(stage), rank_(rank), stages_(stages) {}
  int stage() const override { return stage_; }

  Status send(const Tensor &x, int toStage, int64_t tag) override {
    if (toStage <= stage_ || toStage >= stages_)
      return Status(StatusCode::kInvalidArgument,
                    "stage " + std::to_string(stage_) + " cannot send to stage " +
                        std::to_string(toStage) + " of " + std::to_string(stages_));
    Tensor copy = x.clone();
    std::lock_guard<std::mutex> lock(p_->mu);
    if (p_->aborted)
      return p_->why;
    auto key = std::make_tuple(stage_, toStage, rank_, tag);
    if (p_->mail.count(key))
      return Status(StatusCode::kInternal, "stage " + std::to_string(stage_) +
                                               " sent transfer " + std::to_string(tag) +
                                               " twice");
    p_->mail.emplace(key, std::move(copy));
    p_->cv.notify_all();
    return Status::ok();
  }

  StatusOr<Tensor> recv(int fromStage, int64_t tag) override {
    if (fromStage < 0 || fromStage >= stage_)
      return Status(StatusCode::kInvalidArgument,
                    "stage " + std::to_string(stage_) + " cannot receive from stage " +
                        std::to_string(fromStage));
    auto key = std::make_tuple(fromStage, stage_, rank_, tag);
    std::unique_lock<std::mutex> lock(p_->mu);
    p_->cv.wait(lock, [&] { return p_->aborted || p_->mail.count(key) != 0; });
    auto it = p_->mail.find(key);
    if (it == p_->mail.end())
      return p_->why;
    Tensor t = std::move(it->second);
    p_->mail.erase(it);
    return t;
  }

  void abort(const Status &status) override {
    std::lock_guard<std::mutex> lock(p_->mu);
    if (p_->aborted)
      return;
    p_->aborted = true;
    p_->why = Status(status.code(), "the pipeline stopped: " + status.message());
    p_->cv.notify_all();
  }

private:
  std::shared_ptr<Pipeline> p_;
  const int stage_, rank_, stages_;
};

} // namespace

std::vector<std::unique_ptr<StageLink>> createInProcessPipeline(int stages, int tpSize) {
  auto p = std::make_shared<Pipeline>();
  std::vector<std::unique_ptr<StageLink>> links;
  for (int s = 0; s < stages; ++s)
    for (int r = 0; r < tpSize; ++r)
      links.push_back(std::make_unique<InProcessLink>(p, s, r, stages));
  return links;
}

} // namespace accel::rt::comm
