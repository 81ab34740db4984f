//===- Pointwise.cpp - activations and residual adds on the GPU -----------===//
//
// Elementwise steps (kernels/Elementwise.cu): activation, gated_act and
// residual_add.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/ops/Ops.h"

#include "runtime/cpu/transformer/TransformerKernels.h"

namespace accel::rt::engine::ops {

namespace tk = accel::rt::cpu::transformer;

StatusOr<int> activationCode(const Attrs &a) {
  ACCEL_RT_ASSIGN_OR_RETURN(std::string kind, a.s("kind"));
  if (std::optional<tk::ActivationKind> k = tk::activationKindFromName(kind))
    return int(*k);
  return Status(StatusCode::kUnimplemented, "activation '" + kind + "' has no GPU kernel");
}

/// `launch residual_add`.
StatusOr<GpuKernel> prepareResidualAdd(const plan::PlanFile &, const pb::Step &step, const Attrs &,
                                       const GpuPrepareContext &ctx) {
  const DType cdt = ctx.dtype;
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 2));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn, computeKernel(ctx, "residual_add"));
  return one([=](GpuRunState &st, Inputs &in) -> StatusOr<DeviceTensor> {
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor r, st.toDevice(*in[0], cdt));
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor b, st.toDevice(*in[1], cdt));
    if (r.numElements() != b.numElements())
      return badInput("the residual " + r.describe() + " and the branch " + b.describe() +
                      " differ in size");
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, st.output(0, cdt, r.shape));
    const int64_t n = y.numElements();
    if (n)
      ACCEL_RT_RETURN_IF_ERROR(
          st.gpu->launch(fn, strideGrid(n), Dim3{256, 1, 1}, 0, r.ptr, b.ptr, y.ptr, i64(n)));
    return y;
  });
}

/// `launch activation` and `launch gated_act`.
StatusOr<GpuKernel> prepareActivation(const plan::PlanFile &, const pb::Step &step, const Attrs &a,
                                      const GpuPrepareContext &ctx) {
  const DType cdt = ctx.dtype;
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
  ACCEL_RT_ASSIGN_OR_RETURN(int kind, activationCode(a));
  if (step.kind() == pb::ACTIVATION) {
    ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn, computeKernel(ctx, "activation"));
    return one([=](GpuRunState &st, Inputs &in) -> StatusOr<DeviceTensor> {
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor x, st.toDevice(*in[0], cdt));
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, st.output(0, cdt, x.shape));
      const int64_t n = y.numElements();
      if (n)
        ACCEL_RT_RETURN_IF_ERROR(
            st.gpu->launch(fn, strideGrid(n), Dim3{256, 1, 1}, 0, x.ptr, y.ptr, i64(n), kind));
      return y;
    });
  }
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn, computeKernel(ctx, "gated_act"));
  return one([=](GpuRunState &st, Inputs &in) -> StatusOr<DeviceTensor> {
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor x, st.toDevice(*in[0], cdt));
    if (x.rank() != 2 || x.dim(1) % 2 != 0)
      return badInput("the input " + x.describe() +
                      " must be [tokens, 2 * intermediate] (gate, then up)");
    const int64_t rows = x.dim(0), inter = x.dim(1) / 2;
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, st.output(0, cdt, {rows, inter}));
    if (rows * inter != 0)
      ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(fn, strideGrid(rows * inter), Dim3{256, 1, 1}, 0,
                                              x.ptr, y.ptr, i64(rows), i64(inter), kind));
    return y;
  });
}

} // namespace accel::rt::engine::ops
