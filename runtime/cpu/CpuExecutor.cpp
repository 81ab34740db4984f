//===- CpuExecutor.cpp - run a plan's schedule on the CPU ------------------===//
#include "runtime/cpu/CpuExecutor.h"

#include "runtime/cpu/CpuSteps.h"

namespace accel::rt::engine {

namespace pb = accel::plan;

StatusOr<std::unique_ptr<CpuExecutor>>
CpuExecutor::create(std::shared_ptr<const plan::PlanFile> plan, int rank, int stage) {
  std::unique_ptr<CpuExecutor> ex(new CpuExecutor());
  const pb::Schedule &s = plan->schedule();
  const int32_t n = s.values_size();
  ex->constants_.resize(size_t(n));
  for (int32_t id = 0; id < n; ++id)
    if (s.values(id).is_constant())
      ex->constants_[size_t(id)] = plan->constant(id, rank);
  ex->tokenDType_ = *dtypeFromName(s.values(s.token_ids()).dtype());

  const int pp = plan->ppSize();
  if (stage < 0 || stage >= pp)
    return Status(StatusCode::kInvalidArgument,
                  plan->path() + ": stage " + std::to_string(stage) + " of a plan with " +
                      std::to_string(pp) + " pipeline stages");
  ex->returnsLogits_ = stage == pp - 1;

  // Last reader of every non-constant value (among this stage's steps); the
  // logits are never freed.
  std::vector<int> lastUse(size_t(n), -1);
  for (int i = 0; i < s.steps_size(); ++i) {
    const pb::Step &step = s.steps(i);
    Prepared p;
    p.what = "step " + std::to_string(i) + " (" + plan::stepKindName(step.kind()) +
             (step.kind() == pb::ONNX ? " " + step.onnx_op() : "") +
             (step.location().empty() ? "" : " at '" + step.location() + "'") + ")";
    if (step.kind() == pb::PP_TRANSFER) {
      // The loader checked from_stage < to_stage = step.stage().
      int fromStage = -1;
      for (const pb::Attribute &a : step.attributes())
        if (a.name() == "from_stage")
          fromStage = int(a.i());
      const int toStage = step.stage();
      const int64_t tag = i;
      if (stage == fromStage) {
        p.kernel = [toStage, tag](const StepContext &ctx, const std::vector<const Tensor *> &in,
                                  std::vector<Tensor> &) -> Status {
          if (!ctx.link)
            return Status(StatusCode::kInvalidArgument, "a pp_transfer needs a pipeline link");
          return ctx.link->send(*in[0], toStage, tag);
        };
        p.inputs.assign(step.inputs().begin(), step.inputs().end());
      } else if (stage == toStage) {
        p.kernel = [fromStage, tag](const StepContext &ctx, const std::vector<const Tensor *> &,
                                    std::vector<Tensor> &out) -> Status {
          if (!ctx.link)
            return Status(StatusCode::kInvalidArgument, "a pp_transfer needs a pipeline link");
          ACCEL_RT_ASSIGN_OR_RETURN(Tensor t, ctx.link->recv(fromStage, tag));
          out.push_back(std::move(t));
          return Status::ok();
        };
        p.outputs.assign(step.outputs().begin(), step.outputs().end());
      } else {
        continue;
      }
    } else {
      if (step.stage() != stage)
        continue;
      StatusOr<Kernel> k = prepareCpuStep(*plan, step, rank);
      if (!k)
        return Status(k.status().code(),
                      plan->path() + ": " + p.what + ": " + k.status().message());
      p.kernel = std::move(*k);
      p.inputs.assign(step.inputs().begin(), step.inputs().end());
      p.outputs.assign(step.outputs().begin(), step.outputs().end());
    }
    // A view's bytes are its root's: the root lives until its views' last reader.
    for (int32_t in : p.inputs)
      if (in >= 0)
        lastUse[size_t(plan->rootOf(in))] = int(ex->steps_.size());
    ex->steps_.push_back(std::move(p));
  }
  const int32_t logitsRoot = plan->rootOf(s.logits());
  for (int32_t id = 0; id < n; ++id)
    if (lastUse[size_t(id)] >= 0 && s.values(id).placement() == pb::Value::ARENA &&
        id != logitsRoot)
      ex->steps_[size_t(lastUse[size_t(id)])].freeAfter.push_back(id);
  ex->plan_ = std::move(plan);
  return ex;
}

StatusOr<Tensor> CpuExecutor::run(const Tensor &tokenIds, kv::BlockPool &pool,
                                  const kv::StepMetadata &meta, comm::Communicator *comm,
                                  comm::StageLink *link) {
  const pb::Schedule &s = plan_->schedule();
  ACCEL_RT_RETURN_IF_ERROR(kv::checkStepTokenIds(tokenIds, meta));
  // Values by id; a view's bytes are held by its root (PlanFile::rootOf)
  // and read with the view's own shape.
  std::vector<Tensor> values = constants_;
  values[size_t(s.token_ids())] =
      tokenIds.dtype() == tokenDType_ ? tokenIds : tokenIds.astype(tokenDType_);
  if (s.positions() >= 0) {
    const DType dt = *dtypeFromName(s.values(s.positions()).dtype());
    values[size_t(s.positions())] = meta.positions.astype(dt);
    if (!values[size_t(s.positions())].defined() && meta.numTokens != 0)
      return Status(StatusCode::kResourceExhausted, "cannot allocate the positions");
  }
  // `id` as its declared shape (a view of its root's tensor).
  std::vector<Tensor> viewed;
  auto read = [&](int32_t id) -> StatusOr<const Tensor *> {
    const int32_t root = plan_->rootOf(id);
    const Tensor &t = values[size_t(root)];
    if (id == root || !t.defined())
      return &t;
    std::optional<Shape> shape = plan_->shapeFor(id, t.numElements());
    if (!shape)
      return Status(StatusCode::kInternal,
                    "value " + std::to_string(id) + " cannot view " + t.describe());
    ACCEL_RT_ASSIGN_OR_RETURN(Tensor v, t.reshaped(*shape));
    viewed.push_back(std::move(v));
    return &viewed.back();
  };

  StepContext ctx{&pool, &meta, comm, link};
  std::vector<const Tensor *> inputs;
  std::vector<Tensor> outputs;
  for (Prepared &p : steps_) {
    inputs.clear();
    viewed.clear();
    viewed.reserve(p.inputs.size());
    for (int32_t in : p.inputs) {
      if (in < 0) {
        inputs.push_back(nullptr);
        continue;
      }
      StatusOr<const Tensor *> t = read(in);
      if (!t)
        return Status(t.status().code(), p.what + ": " + t.status().message());
      inputs.push_back(*t);
    }
    outputs.clear();
    Status st = p.kernel(ctx, inputs, outputs);
    if (!st.isOk())
      return Status(st.code(), p.what + ": " + st.message());
    if (outputs.size() != p.outputs.size())
      return Status(StatusCode::kInternal, p.what + ": the kernel returned " +
                                               std::to_string(outputs.size()) + " results, the plan expects " +
                                               std::to_string(p.outputs.size()));
    for (size_t i = 0; i < outputs.size(); ++i)
      if (p.outputs[i] >= 0)
        values[size_t(plan_->rootOf(p.outputs[i]))] = std::move(outputs[i]);
    for (int32_t id : p.freeAfter)
      values[size_t(id)] = Tensor();
  }
  if (!returnsLogits_)
    return Tensor();
  StatusOr<const Tensor *> logits = read(s.logits());
  if (!logits)
    return logits.status();
  return Tensor(**logits);
}

} // namespace accel::rt::engine
