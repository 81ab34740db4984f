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
  const std::string &kind = step.kind(), &op = step.op();
  if (kind == "launch") {
    if (op.rfind("onnx.", 0) == 0 || op == "positions")
      return std::nullopt;
    if ((op == "rms_norm" && operand == 1) || (op == "add_rms_norm" && operand == 2) ||
        (op == "layer_norm" && operand >= 1) ||
        ((op == "rotary" || op == "qkv_rotary") && operand >= 2))
      return DType::kF32;
    return compute;
  }
  if (kind == "gemm") {
    if (operand == 3)
      return DType::kF32; // a quantised weight's scale
    for (const pb::Attribute &a : step.attributes())
      if (a.name() == "epilogue" && a.s() == "logits" && operand == 2)
        return DType::kF32;
    return compute;
  }
  if (kind == "kv_write" && op == "qkv_rotary")
    return operand >= 2 ? std::optional<DType>(DType::kF32) : compute; // cos/sin tables in f32
  if (kind == "kv_write" || kind == "attention_prefill" || kind == "attention_decode" ||
      kind == "copy" || kind == "collective")
    return compute;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Step dispatch
//===----------------------------------------------------------------------===//

namespace {

StatusOr<GpuKernel> prepareLaunch(const plan::PlanFile &plan, const pb::Step &step,
                                  const Attrs &a, const GpuPrepareContext &ctx) {
  const std::string &op = step.op();

  if (op.rfind("onnx.", 0) == 0)
    return ops::prepareOnnx(plan, step, a);
  // A step that names a kernel the compiler generated runs it (GpuPlanKernels).
  ACCEL_RT_ASSIGN_OR_RETURN(std::optional<GpuKernel> generated,
                            prepareGeneratedStep(plan, step, ctx));
  if (generated)
    return std::move(*generated);

  if (op == "positions")
    return ops::preparePositions(plan, step, a, ctx);
  if (op == "embedding")
    return ops::prepareEmbedding(plan, step, a, ctx);
  if (op == "rms_norm" || op == "add_rms_norm")
    return ops::prepareRmsNorm(plan, step, a, ctx);
  if (op == "layer_norm")
    return ops::prepareLayerNorm(plan, step, a, ctx);
  if (op == "residual_add")
    return ops::prepareResidualAdd(plan, step, a, ctx);
  if (op == "rotary")
    return prepareGpuRotary(ctx, step, a);
  if (op == "qkv_rotary")
    return prepareGpuQkvRotary(ctx, step, a, /*intoCache=*/false);
  if (op == "activation" || op == "gated_act")
    return ops::prepareActivation(plan, step, a, ctx);
  if (op == "gated_mlp")
    return ops::prepareGatedMlp(plan, step, a, ctx);
  if (op == "split")
    return ops::prepareSplit(plan, step, a, ctx);
  if (op == "split_heads")
    return ops::prepareSplitHeads(plan, step, a, ctx);
  if (op == "merge_heads")
    return ops::prepareMergeHeads(plan, step, a, ctx);
  if (op == "flatten_tokens")
    return ops::prepareFlattenTokens(plan, step, a, ctx);
  if (op == "unflatten_tokens")
    return ops::prepareUnflattenTokens(plan, step, a, ctx);
  return Status(StatusCode::kUnimplemented, "the GPU backend has no kernel for launch '" + op + "'");
}

} // namespace

StatusOr<GpuKernel> prepareGpuStep(const plan::PlanFile &plan, const pb::Step &step,
                                   const GpuPrepareContext &ctx) {
  Attrs a(plan, step, ctx.tpRank);
  const std::string &kind = step.kind();
  if (kind == "launch")
    return prepareLaunch(plan, step, a, ctx);
  if (kind == "gemm")
    return ops::prepareGemm(ctx, step, a);
  if (kind == "kv_write" && step.op() == "qkv_rotary")
    return prepareGpuQkvRotary(ctx, step, a, /*intoCache=*/true);
  if (kind == "kv_write")
    return ops::prepareKvWrite(ctx, step, a);
  if (kind == "attention_prefill" || kind == "attention_decode")
    return ops::prepareAttention(ctx, step, a);
  if (kind == "copy")
    return ops::prepareCopy(step);
  if (kind == "collective")
    return ops::prepareCollective(plan, step, a);
  return Status(StatusCode::kUnimplemented, "unknown step kind '" + kind + "'");
}

} // namespace accel::rt::engine
