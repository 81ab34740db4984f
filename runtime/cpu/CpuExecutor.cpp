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
    p.what = "step " + std::to_string(i) + " (" + step.kind() + " " + step.op() +
             (step.location().empty() ? "" : " at '" + step.location() + "'") + ")";
    if (step.kind() == "collective" && step.op() == "pp_transfer") {
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
    for (int32_t in : p.inputs)
      if (in >= 0)
        lastUse[size_t(in)] = int(ex->steps_.size());
    ex->steps_.push_back(std::move(p));
  }
  for (int32_t id = 0; id < n; ++id)
    if (lastUse[size_t(id)] >= 0 && !s.values(id).is_constant() && id != s.logits())
      ex->steps_[size_t(lastUse[size_t(id)])].freeAfter.push_back(id);
  ex->plan_ = std::move(plan);
  return ex;
}

StatusOr<Tensor> CpuExecutor::run(const Tensor &tokenIds, kv::BlockPool &pool,
                                  const kv::StepMetadata &meta, comm::Communicator *comm,
                                  comm::StageLink *link) {
  const pb::Schedule &s = plan_->schedule();
  ACCEL_RT_RETURN_IF_ERROR(kv::checkStepTokenIds(tokenIds, meta));
  std::vector<Tensor> values = constants_;
  values[size_t(s.token_ids())] =
      tokenIds.dtype() == tokenDType_ ? tokenIds : tokenIds.astype(tokenDType_);

  StepContext ctx{&pool, &meta, comm, link};
  std::vector<const Tensor *> inputs;
  std::vector<Tensor> outputs;
  for (Prepared &p : steps_) {
    inputs.clear();
    for (int32_t in : p.inputs)
      inputs.push_back(in < 0 ? nullptr : &values[size_t(in)]);
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
        values[size_t(p.outputs[i])] = std::move(outputs[i]);
    for (int32_t id : p.freeAfter)
      values[size_t(id)] = Tensor();
  }
  if (!returnsLogits_)
    return Tensor();
  return std::move(values[size_t(s.logits())]);
}

} // namespace accel::rt::engine
