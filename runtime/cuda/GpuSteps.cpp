//===- GpuSteps.cpp - the GPU backend's values and step dispatch ----------===//
//
// The values of GpuSteps.h and prepareGpuStep, which hands each step to the
// prepare function of its op family in runtime/cuda/ops (Ops.h).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/GpuSteps.h"

#include "runtime/cuda/GpuPlanKernels.h"
#include "runtime/cuda/GpuRotary.h"
#include "runtime/cuda/ops/Ops.h"
#include "runtime/engine/StepAttrs.h"

#include <cstdio>

namespace accel::rt::engine {

namespace pb = accel::plan;
using gpu::CuFunction;
using gpu::Dim3;
using ops::Attrs;
using ops::badInput;
using ops::i64;
using ops::strideGrid;

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

int64_t DeviceTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string DeviceTensor::describe() const {
  return std::string(dtypeName(dtype)) + shapeToString(shape) + " (device)";
}

std::string GpuValue::describe() const {
  return host.defined() ? host.describe() : dev.defined() ? dev.describe() : "(undefined)";
}

const char *gpuDTypeSuffix(DType dtype) {
  return dtype == DType::kBF16 ? "bf16" : dtype == DType::kF16 ? "f16" : "f32";
}

namespace {

int castCode(DType t) { return t == DType::kF16 ? 1 : t == DType::kBF16 ? 2 : 0; }
bool isComputeFloat(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16;
}

} // namespace

StatusOr<DeviceTensor> GpuRunState::empty(DType dt, Shape shape) {
  DeviceTensor t;
  t.dtype = dt;
  t.shape = std::move(shape);
  for (int64_t d : t.shape)
    if (d < 0)
      return badInput("negative dimension in " + t.describe());
  ACCEL_RT_ASSIGN_OR_RETURN(t.mem, gpu->allocate(t.byteSize()));
  t.ptr = t.mem->ptr;
  return t;
}

StatusOr<DeviceTensor> GpuRunState::output(size_t index, DType dt, Shape shape) {
  if (index < slots.size() && slots[index].ptr) {
    DeviceTensor t;
    t.dtype = dt;
    t.shape = std::move(shape);
    for (int64_t d : t.shape)
      if (d < 0)
        return badInput("negative dimension in " + t.describe());
    if (t.byteSize() <= slots[index].bytes) {
      t.mem = slots[index].mem;
      t.ptr = slots[index].ptr;
      return t;
    }
    return empty(t.dtype, std::move(t.shape));
  }
  return empty(dt, std::move(shape));
}

StatusOr<DeviceTensor> GpuRunState::toDevice(GpuValue &v, std::optional<DType> want) {
  if (!v.defined())
    return Status(StatusCode::kInternal, "a value the step reads was never written");
  if (v.dev.defined()) {
    if (!want || !isFloat(v.dev.dtype) || v.dev.dtype == *want)
      return v.dev;
    if (!isComputeFloat(v.dev.dtype) || !isComputeFloat(*want))
      return badInput("cannot convert " + v.dev.describe() + " to " + dtypeName(*want));
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor out, empty(*want, v.dev.shape));
    const int64_t n = out.numElements();
    if (n) {
      ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn, gpu->function("cast_kernel"));
      ACCEL_RT_RETURN_IF_ERROR(gpu->launch(fn, strideGrid(n), Dim3{256, 1, 1}, 0, v.dev.ptr,
                                           castCode(v.dev.dtype), out.ptr, castCode(*want),
                                           i64(n)));
    }
    return out; // not kept: v keeps its own dtype
  }
  Tensor h = v.host;
  if (want && isFloat(h.dtype()) && h.dtype() != *want) {
    h = h.astype(*want);
    if (!h.defined() && v.host.numElements() != 0)
      return Status(StatusCode::kResourceExhausted, "cannot convert " + v.host.describe());
  }
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor out, empty(h.dtype(), h.shape()));
  ACCEL_RT_RETURN_IF_ERROR(gpu->upload(out.ptr, h.rawData(), h.byteSize()));
  v.dev = out;
  return out;
}

StatusOr<Tensor> GpuRunState::toHost(GpuValue &v, bool *copied) {
  if (copied)
    *copied = false;
  if (v.host.defined())
    return v.host;
  if (!v.dev.defined())
    return Status(StatusCode::kInternal, "a value the step reads was never written");
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(v.dev.dtype, v.dev.shape));
  ACCEL_RT_RETURN_IF_ERROR(gpu->download(t.rawData(), v.dev.ptr, t.byteSize()));
  if (t.dtype() == DType::kBF16 || t.dtype() == DType::kF16)
    t = t.toF32();
  if (copied)
    *copied = true;
  v.host = t;
  return t;
}

void GpuRunState::noteFallback(const std::string &op) {
  if (!fallbacks || !fallbacks->insert(op).second)
    return;
  if (logFallbacks)
    std::fprintf(stderr,
                 "accel: GPU backend: %s has no GPU kernel; it runs on the CPU (its inputs are "
                 "copied to the host and back)\n",
                 op.c_str());
}

std::pair<int64_t, int64_t> rowsCols(const DeviceTensor &t) {
  const int64_t cols = t.rank() ? t.dim(-1) : 1;
  return {cols ? t.numElements() / cols : 0, cols};
}

StatusOr<CuFunction> computeKernel(const GpuPrepareContext &ctx, const std::string &base) {
  return ctx.gpu->function(base + "_" + gpuDTypeSuffix(ctx.dtype));
}

std::optional<DType> gpuOperandDType(const pb::Step &step, int operand, DType compute) {
  switch (step.kind()) {
  case pb::ONNX:
    return std::nullopt; // the host fallback reads its operands on the host
  case pb::RMS_NORM:
    return operand == 1 ? DType::kF32 : compute;
  case pb::ADD_RMS_NORM:
    return operand == 2 ? DType::kF32 : compute;
  case pb::LAYER_NORM:
    return operand >= 1 ? DType::kF32 : compute;
  case pb::ROTARY:
  case pb::QKV_ROTARY:
  case pb::QKV_ROTARY_KV_WRITE:
    return operand >= 2 ? DType::kF32 : compute; // cos/sin tables in f32
  case pb::GEMM:
    return operand == 3 ? DType::kF32 : compute; // a quantised weight's scale
  case pb::LOGITS:
    return operand == 2 ? DType::kF32 : compute; // the LM head's bias
  case pb::MOE:
    // The router, its bias and the shared expert's gate in f32 (they decide
    // the routing, as on the CPU), and quantised experts' scales; the
    // experts in the compute dtype (quantised ones stay as stored).
    return operand == 1 || operand == 2 || operand == 9 || operand >= 10 ? DType::kF32 : compute;
  default:
    return compute;
  }
}

//===----------------------------------------------------------------------===//
// Step dispatch
//===----------------------------------------------------------------------===//

StatusOr<GpuKernel> prepareGpuStep(const plan::PlanFile &plan, const pb::Step &step,
                                   const GpuPrepareContext &ctx) {
  Attrs a(plan, step, ctx.tpRank);
  // A step that names a kernel the compiler generated runs it (GpuPlanKernels).
  ACCEL_RT_ASSIGN_OR_RETURN(std::optional<GpuKernel> generated,
                            prepareGeneratedStep(plan, step, ctx));
  if (generated)
    return std::move(*generated);
  switch (step.kind()) {
  case pb::EMBEDDING:
    return ops::prepareEmbedding(plan, step, a, ctx);
  case pb::RMS_NORM:
  case pb::ADD_RMS_NORM:
    return ops::prepareRmsNorm(plan, step, a, ctx);
  case pb::LAYER_NORM:
    return ops::prepareLayerNorm(plan, step, a, ctx);
  case pb::RESIDUAL_ADD:
    return ops::prepareResidualAdd(plan, step, a, ctx);
  case pb::ACTIVATION:
  case pb::GATED_ACT:
    return ops::prepareActivation(plan, step, a, ctx);
  case pb::GATED_MLP:
    return ops::prepareGatedMlp(plan, step, a, ctx);
  case pb::MOE:
    return ops::prepareMoe(plan, step, a, ctx);
  case pb::ROTARY:
    return prepareGpuRotary(ctx, step, a);
  case pb::QKV_ROTARY:
    return prepareGpuQkvRotary(ctx, step, a, /*intoCache=*/false);
  case pb::QKV_ROTARY_KV_WRITE:
    return prepareGpuQkvRotary(ctx, step, a, /*intoCache=*/true);
  case pb::KV_WRITE:
    return ops::prepareKvWrite(ctx, step, a);
  case pb::ATTENTION:
    return ops::prepareAttention(ctx, step, a);
  case pb::GEMM:
  case pb::LOGITS:
    return ops::prepareGemm(ctx, step, a);
  case pb::SPLIT:
    return ops::prepareSplit(plan, step, a, ctx);
  case pb::COPY:
    return ops::prepareCopy(step);
  case pb::COLLECTIVE:
    return ops::prepareCollective(plan, step, a);
  case pb::PP_TRANSFER:
    return ops::preparePpTransfer(plan, step, a, ctx);
  case pb::ONNX:
    return ops::prepareOnnx(plan, step, a);
  default:
    return Status(StatusCode::kUnimplemented,
                  "the GPU backend has no kernel for step kind " + plan::stepKindName(step.kind()));
  }
}

} // namespace accel::rt::engine
