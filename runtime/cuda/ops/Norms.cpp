//===- Norms.cpp - rms_norm, add_rms_norm and layer_norm on the GPU -------===//
//
// The norms' operands (normOperands, GpuSteps.h, which the generated norm
// kernels share) and their hand-written kernels (kernels/Norm.cu).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/ops/Ops.h"

#include <tuple>

namespace accel::rt::engine {

StatusOr<NormOperands> normOperands(GpuRunState &st, std::vector<GpuValue *> &in, bool add,
                                    DType dtype) {
  NormOperands o;
  ACCEL_RT_ASSIGN_OR_RETURN(o.x, st.toDevice(*in[0], dtype));
  if (add) {
    ACCEL_RT_ASSIGN_OR_RETURN(o.residual, st.toDevice(*in[1], dtype));
    if (o.residual.shape != o.x.shape)
      return Status(StatusCode::kInvalidArgument, "x " + o.x.describe() + " and the residual " +
                                                      o.residual.describe() + " differ in shape");
  }
  ACCEL_RT_ASSIGN_OR_RETURN(o.weight, st.toDevice(*in[add ? 2 : 1], DType::kF32));
  std::tie(o.rows, o.hidden) = rowsCols(o.x);
  return o;
}

} // namespace accel::rt::engine

namespace accel::rt::engine::ops {

/// `launch rms_norm` and `launch add_rms_norm`.
StatusOr<GpuKernel> prepareRmsNorm(const plan::PlanFile &, const pb::Step &step, const Attrs &a,
                                   const GpuPrepareContext &ctx) {
  const DType cdt = ctx.dtype;
  const bool add = step.kind() == pb::ADD_RMS_NORM;
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, add ? 3 : 2, add ? 3 : 2));
  ACCEL_RT_ASSIGN_OR_RETURN(double eps, a.f("epsilon"));
  ACCEL_RT_ASSIGN_OR_RETURN(double offset, a.f("weight_offset", 0.0));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn, computeKernel(ctx, "rms_norm"));
  return GpuKernel([=](GpuRunState &st, Inputs &in, Outputs &out) -> Status {
    ACCEL_RT_ASSIGN_OR_RETURN(NormOperands o, normOperands(st, in, add, cdt));
    const DeviceTensor &x = o.x, &res = o.residual, &w = o.weight;
    const int64_t rows = o.rows, hidden = o.hidden;
    if (w.numElements() != hidden)
      return badInput("the weight " + w.describe() + " must be [" + std::to_string(hidden) +
                      "], the last dimension of x " + x.describe());
    GpuValue normed, sum;
    ACCEL_RT_ASSIGN_OR_RETURN(normed.dev, st.output(0, cdt, x.shape));
    if (add) {
      ACCEL_RT_ASSIGN_OR_RETURN(sum.dev, st.output(1, cdt, x.shape));
    }
    if (rows)
      ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(
          fn, Dim3{unsigned(rows), 1, 1}, Dim3{rowThreads(hidden), 1, 1}, 0, x.ptr,
          add ? res.ptr : CuDevicePtr(0), w.ptr, normed.dev.ptr,
          add ? sum.dev.ptr : CuDevicePtr(0), i64(hidden), float(eps), float(offset)));
    out.push_back(std::move(normed));
    if (add)
      out.push_back(std::move(sum));
    return Status::ok();
  });
}

/// `launch layer_norm`.
StatusOr<GpuKernel> prepareLayerNorm(const plan::PlanFile &, const pb::Step &step, const Attrs &a,
                                     const GpuPrepareContext &ctx) {
  const DType cdt = ctx.dtype;
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 3));
  ACCEL_RT_ASSIGN_OR_RETURN(double eps, a.f("epsilon"));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn, computeKernel(ctx, "layer_norm"));
  return one([=](GpuRunState &st, Inputs &in) -> StatusOr<DeviceTensor> {
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor x, st.toDevice(*in[0], cdt));
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor w, st.toDevice(*in[1], DType::kF32));
    DeviceTensor b;
    if (GpuValue *bv = at(in, 2)) {
      ACCEL_RT_ASSIGN_OR_RETURN(b, st.toDevice(*bv, DType::kF32));
    }
    auto [rows, hidden] = rowsCols(x);
    if (w.numElements() != hidden || (b.defined() && b.numElements() != hidden))
      return badInput("the weight " + w.describe() + " and bias must be [" +
                      std::to_string(hidden) + "], the last dimension of x " + x.describe());
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, st.output(0, cdt, x.shape));
    if (rows)
      ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(fn, Dim3{unsigned(rows), 1, 1},
                                              Dim3{rowThreads(hidden), 1, 1}, 0, x.ptr, w.ptr,
                                              b.defined() ? b.ptr : CuDevicePtr(0), y.ptr,
                                              i64(hidden), float(eps)));
    return y;
  });
}

} // namespace accel::rt::engine::ops
