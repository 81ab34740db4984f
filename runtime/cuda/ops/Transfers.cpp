//===- Transfers.cpp - pp_transfer steps on the GPU -----------------------===//
//
// A pipelined plan's hand-over from one stage to a later one, between the
// GpuExecutors of one process (runtime/cuda/GpuPipeline.h): the sending
// stage copies its value into the transfer's staging buffer on the
// receiving stage's GPU; the receiving stage, whose stream already waits
// for that copy (GpuPipeline::await before the step), copies it into its
// own activations. Both copies are stream-ordered, so CUDA graphs capture
// them. The transfer's key is the step's output value (one per
// pp_transfer), its rank and the micro-batch.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/ops/Ops.h"

namespace accel::rt::engine::ops {

namespace {

/// The receiver's value as this step has it: the plan's shape with its one
/// dynamic dimension the step's tokens (or sequences, by the value's arena
/// region), the compute dtype for floats.
StatusOr<std::pair<DType, Shape>> receivedType(const pb::Value &v, DType compute,
                                               const kv::StepMetadata &meta) {
  std::optional<DType> d = dtypeFromName(v.dtype());
  if (!d)
    return invalid("a pp_transfer carries an unknown dtype '" + v.dtype() + "'");
  const DType dt = isFloat(*d) && *d != DType::kF8E4M3FN && *d != DType::kF8E5M2 ? compute : *d;
  Shape shape(v.shape().begin(), v.shape().end());
  int dynamic = 0;
  for (int64_t &dim : shape)
    if (dim < 0) {
      ++dynamic;
      dim = v.region() == pb::Value::SEQS ? meta.numSeqs : meta.numTokens;
    }
  if (dynamic > 1)
    return Status(StatusCode::kUnimplemented,
                  "a pp_transfer of a value with " + std::to_string(dynamic) +
                      " dynamic dimensions; the GPU pipeline hands over [tokens, ...] or "
                      "[sequences, ...] values");
  return std::make_pair(dt, std::move(shape));
}

} // namespace

StatusOr<GpuKernel> preparePpTransfer(const plan::PlanFile &plan, const pb::Step &step,
                                      const Attrs &a, const GpuPrepareContext &ctx) {
  ACCEL_RT_ASSIGN_OR_RETURN(int64_t from, a.i("from_stage"));
  const int64_t to = step.stage();
  if (step.inputs_size() != 1 || step.outputs_size() != 1 || step.inputs(0) < 0 ||
      step.outputs(0) < 0)
    return invalid("a pp_transfer takes one value and gives one");
  const int64_t tag = step.outputs(0);
  const int rank = ctx.tpRank;
  if (ctx.ppStage == from) {
    return GpuKernel([tag, to, rank](GpuRunState &st, Inputs &in, Outputs &out) -> Status {
      if (!st.pipeline)
        return Status(StatusCode::kInternal, "a pp_transfer needs the pipeline of its stages");
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor x, st.toDevice(*in[0]));
      const gpu::TransferKey key{tag, rank, st.ppPart};
      ACCEL_RT_ASSIGN_OR_RETURN(gpu::CuDevicePtr dst,
                                st.pipeline->staging(key, int(to), x.byteSize(), *st.gpu));
      gpu::GpuContext *receiver = st.pipeline->context(int(to), rank);
      if (!receiver)
        return Status(StatusCode::kInternal, "stage " + std::to_string(to) + " has no GPU");
      ACCEL_RT_RETURN_IF_ERROR(st.gpu->copyTo(*receiver, dst, x.ptr, x.byteSize()));
      out.emplace_back(); // the value is the receiver's
      return Status::ok();
    });
  }
  if (ctx.ppStage != to)
    return Status(StatusCode::kInternal, "stage " + std::to_string(ctx.ppStage) +
                                             " prepared a pp_transfer from stage " +
                                             std::to_string(from) + " to stage " +
                                             std::to_string(to));
  const pb::Value value = plan.schedule().values(step.outputs(0));
  return GpuKernel([tag, to, rank, value](GpuRunState &st, Inputs &, Outputs &out) -> Status {
    if (!st.pipeline || !st.meta)
      return Status(StatusCode::kInternal, "a pp_transfer needs the pipeline of its stages");
    ACCEL_RT_ASSIGN_OR_RETURN(auto type, receivedType(value, st.dtype, *st.meta));
    GpuValue v;
    ACCEL_RT_ASSIGN_OR_RETURN(v.dev, st.output(0, type.first, type.second));
    const gpu::TransferKey key{tag, rank, st.ppPart};
    ACCEL_RT_ASSIGN_OR_RETURN(gpu::CuDevicePtr src,
                              st.pipeline->staging(key, int(to), v.dev.byteSize(), *st.gpu));
    ACCEL_RT_RETURN_IF_ERROR(st.gpu->copy(v.dev.ptr, src, v.dev.byteSize()));
    out.push_back(std::move(v));
    return Status::ok();
  });
}

} // namespace accel::rt::engine::ops
