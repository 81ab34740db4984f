//===- GpuPlanKernels.cpp - the kernels a plan carries, on the GPU ---------===//
//
// The launch side of docs/codegen.md. Each family's call checks the step's
// shapes against what its kernel was specialised for, then launches the
// variant of the compute dtype with the parameters the plan recorded (and
// load() checked): the same semantics as the hand-written kernels'
// calls in runtime/cuda/ops.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/GpuPlanKernels.h"

#include "runtime/Env.h"
#include "runtime/cpu/transformer/TransformerKernels.h"
#include "runtime/engine/StepAttrs.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace accel::rt::engine {

namespace pb = accel::plan;
namespace tk = accel::rt::cpu::transformer;
using gpu::CuDevicePtr;
using gpu::Dim3;
using Inputs = std::vector<GpuValue *>;
using Outputs = std::vector<GpuValue>;
using i64 = long long;

namespace {

// cuda.h's CUjit_option values.
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSizeBytes = 6;

Status badInput(const std::string &msg) { return Status(StatusCode::kInvalidArgument, msg); }
Status badPlan(const std::string &msg) { return Status(StatusCode::kDataLoss, msg); }

int smNumber(const std::string &sm) {
  return sm.rfind("sm_", 0) == 0 ? std::atoi(sm.c_str() + 3) : 0;
}

/// The parameters this runtime passes to a family's kernel (the contract
/// lib/Codegen/KernelSpec.cpp writes into the plan).
std::vector<std::string> expectedParams(const PlanKernel &k) {
  const std::string &f = k.family;
  if (f == "rms_norm")
    return {"x:act*", "weight:f32*", "out:act*", "eps:f32", "offset:f32"};
  if (f == "add_rms_norm")
    return {"x:act*", "residual:act*", "weight:f32*", "out:act*", "sum:act*", "eps:f32",
            "offset:f32"};
  if (f == "residual_add")
    return {"a:act*", "b:act*", "out:act*", "n:i64"};
  if (f == "activation")
    return {"x:act*", "out:act*", "n:i64"};
  if (f == "gated_act")
    return {"x:act*", "out:act*", "rows:i64"};
  if (f == "rotary") {
    std::vector<std::string> p = {"x:act*", "out:act*",
                                  k.spec("positions_i64") ? "positions:i64*" : "positions:i32*"};
    if (k.spec("tables")) {
      p.push_back("cos:f32*");
      p.push_back("sin:f32*");
    } else {
      p.push_back("inv_freq:f32*");
    }
    return p;
  }
  return {};
}

std::string joined(const std::vector<std::string> &v) {
  std::string s;
  for (const std::string &x : v)
    s += (s.empty() ? "" : ", ") + x;
  return "(" + s + ")";
}

/// Grid of a grid-stride loop over `vectors` with `threads` a block (as
/// ops/Ops.h's strideGrid).
Dim3 strideGrid(int64_t vectors, unsigned threads) {
  const int64_t blocks = (vectors + threads - 1) / threads;
  return Dim3{unsigned(std::clamp<int64_t>(blocks, 1, 1 << 20)), 1, 1};
}

/// Launches generated kernel `k` (its block size): dependently when the
/// plan says its kernels wait for the previous one (sm_90+), else plainly.
template <typename... Args>
Status launchKernel(GpuRunState &st, const PlanKernel &k, Dim3 grid, Args... args) {
  const Dim3 block{k.blockSize, 1, 1};
  return k.dependent ? st.gpu->launchDependent(k.fn, grid, block, 0, args...)
                     : st.gpu->launch(k.fn, grid, block, 0, args...);
}

/// Vectorised variants need every pointer aligned to their access.
Status checkAligned(const PlanKernel &k, DType dtype, std::initializer_list<CuDevicePtr> ptrs) {
  const CuDevicePtr align = CuDevicePtr(k.vectorWidth) * dtypeSize(dtype);
  for (CuDevicePtr p : ptrs)
    if (align > 1 && p % align != 0)
      return Status(StatusCode::kInternal,
                    "a buffer of generated kernel '" + k.name + "' is not " +
                        std::to_string(align) + "-byte aligned");
  return Status::ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

StatusOr<std::unique_ptr<GpuPlanKernels>> GpuPlanKernels::load(const plan::PlanFile &plan,
                                                               gpu::GpuContext &gpu, DType dtype) {
  std::unique_ptr<GpuPlanKernels> pk(new GpuPlanKernels());
  const pb::PlanMetadata &m = plan.metadata();
  if (m.kernels_size() == 0)
    return pk;
  const std::string where = plan.path() + ": ";
  const pb::KernelModule &km = m.kernel_module();
  const int planSm = smNumber(km.sm());
  const int haveSm = gpu.info().smMajor * 10 + gpu.info().smMinor;
  const std::string have = "sm_" + std::to_string(haveSm);
  auto section = [&](int index) -> StatusOr<std::string_view> {
    if (index < 0 || index >= m.sections_size() ||
        m.sections(index).kind() != pb::Section::KERNEL_IMAGE)
      return badPlan(where + "the kernel module names section " + std::to_string(index) +
                     ", which is not a kernel image of the plan");
    return plan.section(index);
  };
  if (planSm == 0)
    return badPlan(where + "the generated kernels are for '" + km.sm() + "', not an SM");
  if (planSm > haveSm)
    return Status(StatusCode::kUnavailable,
                  where + "the generated kernels are for " + km.sm() + " and the GPU (" +
                      gpu.info().name + ") is " + have + "; recompile with a matching -target");
  const bool forcePtx = env().gpuForcePtx;
  std::string bytes; // the image, NUL-terminated for the PTX JIT
  if (planSm == haveSm && km.cubin_section() >= 0 && !forcePtx) {
    ACCEL_RT_ASSIGN_OR_RETURN(std::string_view cubin, section(km.cubin_section()));
    bytes.assign(cubin.data(), cubin.size());
    pk->image_ = "cubin for " + km.sm();
  } else {
    if (km.ptx_section() < 0)
      return Status(StatusCode::kUnavailable,
                    where + "the plan carries a cubin for " + km.sm() + " but no PTX, and the GPU is " +
                        have);
    ACCEL_RT_ASSIGN_OR_RETURN(std::string_view ptx, section(km.ptx_section()));
    bytes.assign(ptx.data(), ptx.size());
    bytes.push_back('\0');
    pk->image_ = "PTX for " + km.sm() + (planSm == haveSm ? "" : ", compiled by the driver for " + have);
  }
  pk->api_ = &gpu.api();
  if (!pk->api_->cuModuleLoadDataEx)
    return Status(StatusCode::kUnavailable, "the CUDA driver lacks cuModuleLoadDataEx");
  char log[4096] = {0};
  int opts[] = {kJitErrorLogBuffer, kJitErrorLogBufferSizeBytes};
  void *vals[] = {log, reinterpret_cast<void *>(uintptr_t(sizeof(log) - 1))};
  if (Status s = gpu.check(pk->api_->cuModuleLoadDataEx(&pk->module_, bytes.data(), 2, opts, vals),
                           "cuModuleLoadDataEx");
      !s.isOk())
    return Status(StatusCode::kUnavailable, where + "cannot load the generated kernels (" +
                                                pk->image_ + ") on " + gpu.info().name + ": " +
                                                s.message() + (log[0] ? std::string(": ") + log : ""));

  const char *suffix = gpuDTypeSuffix(dtype);
  for (const pb::Kernel &k : m.kernels()) {
    PlanKernel p;
    p.name = k.name();
    p.family = k.family();
    p.rowsGrid = k.grid() == pb::Kernel::ROWS;
    p.dependent = km.dependent_launch();
    for (const pb::Attribute &a : k.specialization()) {
      if (a.value_case() == pb::Attribute::kI)
        p.ints[a.name()] = a.i();
      else if (a.name() == "activation")
        p.activation = a.s();
    }
    const pb::KernelVariant *variant = nullptr;
    for (const pb::KernelVariant &v : k.variants())
      if (v.dtype() == suffix)
        variant = &v;
    if (!variant)
      return badPlan(where + "generated kernel '" + k.name() + "' has no " + suffix + " variant");
    std::vector<std::string> want = expectedParams(p);
    std::vector<std::string> got(k.params().begin(), k.params().end());
    if (want.empty())
      return badPlan(where + "generated kernel '" + k.name() + "' is of family '" + k.family() +
                     "', which this accel-run cannot launch");
    if (want != got)
      return badPlan(where + "generated kernel '" + k.name() + "' takes " + joined(got) +
                     " but this accel-run passes " + joined(want) +
                     "; recompile the plan with the matching accelc");
    if (variant->vector_width() < 1 || variant->block_size() < 32 ||
        variant->block_size() > 1024 || variant->block_size() % 32 != 0)
      return badPlan(where + "generated kernel '" + k.name() + "' has an invalid launch shape");
    p.vectorWidth = unsigned(variant->vector_width());
    p.blockSize = unsigned(variant->block_size());
    if (Status s = gpu.check(pk->api_->cuModuleGetFunction(&p.fn, pk->module_,
                                                           variant->symbol().c_str()),
                             "cuModuleGetFunction");
        !s.isOk())
      return badPlan(where + "generated kernel '" + k.name() + "': its entry '" +
                     variant->symbol() + "' is not in the module: " + s.message());
    pk->kernels_.emplace(p.name, std::move(p));
  }
  return pk;
}

GpuPlanKernels::~GpuPlanKernels() {
  if (module_ && api_)
    api_->cuModuleUnload(module_);
}

const PlanKernel *GpuPlanKernels::find(const std::string &name) const {
  auto it = kernels_.find(name);
  return it == kernels_.end() ? nullptr : &it->second;
}

StatusOr<const PlanKernel *> stepPlanKernel(const pb::Step &step, const GpuPrepareContext &ctx,
                                            const char *family) {
  const pb::Attribute *attr = nullptr;
  for (const pb::Attribute &a : step.attributes())
    if (a.name() == "kernel")
      attr = &a;
  if (!attr || !ctx.planKernels)
    return static_cast<const PlanKernel *>(nullptr);
  const PlanKernel *k = ctx.planKernels->find(attr->s());
  if (!k)
    return badPlan("the step names generated kernel '" + attr->s() +
                   "', which the plan does not define");
  if (k->family != family)
    return badPlan("the step names generated kernel '" + k->name + "', a " + k->family +
                   " kernel, where a " + family + " kernel is needed");
  return k;
}

StatusOr<const PlanKernel *> gatedMlpPlanKernel(const pb::Step &step,
                                                const GpuPrepareContext &ctx) {
  ACCEL_RT_ASSIGN_OR_RETURN(const PlanKernel *k, stepPlanKernel(step, ctx, "gated_act"));
  if (!k)
    return k;
  for (const pb::Attribute &a : step.attributes())
    if (a.name() == "kind" && a.s() != k->activation)
      return badPlan("the step's activation '" + a.s() + "' is not generated kernel '" +
                     k->name + "''s '" + k->activation + "'");
  return k;
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

Status launchGatedAct(GpuRunState &st, const PlanKernel &k, const DeviceTensor &x,
                      const DeviceTensor &out) {
  auto [rows, cols] = rowsCols(x);
  const int64_t inter = k.spec("intermediate");
  if (cols != 2 * inter)
    return badInput("the input " + x.describe() + " of generated kernel '" + k.name +
                    "' must have " + std::to_string(2 * inter) + " columns");
  if (rows == 0)
    return Status::ok();
  ACCEL_RT_RETURN_IF_ERROR(checkAligned(k, x.dtype, {x.ptr, out.ptr}));
  return launchKernel(st, k, strideGrid(rows * inter / k.vectorWidth, k.blockSize), x.ptr, out.ptr, i64(rows));
}

namespace {

StatusOr<GpuKernel> prepareNorm(const PlanKernel &k, const pb::Step &step, const StepAttrs &a,
                                DType cdt) {
  const bool add = k.family == "add_rms_norm";
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, add ? 3 : 2, add ? 3 : 2));
  ACCEL_RT_ASSIGN_OR_RETURN(double eps, a.f("epsilon"));
  ACCEL_RT_ASSIGN_OR_RETURN(double offset, a.f("weight_offset", 0.0));
  const PlanKernel *kp = &k;
  return GpuKernel([=](GpuRunState &st, Inputs &in, Outputs &out) -> Status {
    const PlanKernel &k = *kp;
    ACCEL_RT_ASSIGN_OR_RETURN(NormOperands o, normOperands(st, in, add, cdt));
    const DeviceTensor &x = o.x, &res = o.residual, &w = o.weight;
    const int64_t rows = o.rows, hidden = o.hidden;
    if (hidden != k.spec("hidden") || w.numElements() != hidden)
      return badInput("x " + x.describe() + " and the weight " + w.describe() +
                      " must have the " + std::to_string(k.spec("hidden")) +
                      " channels generated kernel '" + k.name + "' was built for");
    GpuValue normed, sum;
    ACCEL_RT_ASSIGN_OR_RETURN(normed.dev, st.output(0, cdt, x.shape));
    if (add) {
      ACCEL_RT_ASSIGN_OR_RETURN(sum.dev, st.output(1, cdt, x.shape));
    }
    if (rows) {
      ACCEL_RT_RETURN_IF_ERROR(checkAligned(k, cdt, {x.ptr, normed.dev.ptr}));
      if (add) {
        ACCEL_RT_RETURN_IF_ERROR(checkAligned(k, cdt, {res.ptr, sum.dev.ptr}));
        ACCEL_RT_RETURN_IF_ERROR(launchKernel(st, k, Dim3{unsigned(rows), 1, 1}, x.ptr, res.ptr,
                                                w.ptr, normed.dev.ptr, sum.dev.ptr, float(eps),
                                                float(offset)));
      } else {
        ACCEL_RT_RETURN_IF_ERROR(launchKernel(st, k, Dim3{unsigned(rows), 1, 1}, x.ptr, w.ptr,
                                                normed.dev.ptr, float(eps), float(offset)));
      }
    }
    out.push_back(std::move(normed));
    if (add)
      out.push_back(std::move(sum));
    return Status::ok();
  });
}

/// residual_add, activation: grid-stride over n elements.
StatusOr<GpuKernel> preparePointwise(const PlanKernel &k, const pb::Step &step, DType cdt) {
  const bool binary = k.family == "residual_add";
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, binary ? 2 : 1, binary ? 2 : 1));
  const PlanKernel *kp = &k;
  return one([=](GpuRunState &st, Inputs &in) -> StatusOr<DeviceTensor> {
    const PlanKernel &k = *kp;
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor x, st.toDevice(*in[0], cdt));
    DeviceTensor b;
    if (binary) {
      ACCEL_RT_ASSIGN_OR_RETURN(b, st.toDevice(*in[1], cdt));
      if (b.numElements() != x.numElements())
        return badInput("the residual " + x.describe() + " and the branch " + b.describe() +
                        " differ in size");
    }
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, st.output(0, cdt, x.shape));
    const int64_t n = y.numElements();
    if (n % k.vectorWidth != 0)
      return badInput("the " + std::to_string(n) + " elements of " + x.describe() +
                      " are not a multiple of generated kernel '" + k.name + "''s vectors of " +
                      std::to_string(k.vectorWidth));
    if (n == 0)
      return y;
    const Dim3 grid = strideGrid(n / k.vectorWidth, k.blockSize);
    if (binary) {
      ACCEL_RT_RETURN_IF_ERROR(checkAligned(k, cdt, {x.ptr, b.ptr, y.ptr}));
      ACCEL_RT_RETURN_IF_ERROR(
          launchKernel(st, k, grid, x.ptr, b.ptr, y.ptr, i64(n)));
    } else {
      ACCEL_RT_RETURN_IF_ERROR(checkAligned(k, cdt, {x.ptr, y.ptr}));
      ACCEL_RT_RETURN_IF_ERROR(
          launchKernel(st, k, grid, x.ptr, y.ptr, i64(n)));
    }
    return y;
  });
}

StatusOr<GpuKernel> prepareGatedAct(const PlanKernel &k, const pb::Step &step, DType cdt) {
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
  const PlanKernel *kp = &k;
  return one([=](GpuRunState &st, Inputs &in) -> StatusOr<DeviceTensor> {
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor x, st.toDevice(*in[0], cdt));
    if (x.rank() != 2)
      return badInput("the input " + x.describe() +
                      " must be [tokens, 2 * intermediate] (gate, then up)");
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y,
                              st.output(0, cdt, {x.dim(0), kp->spec("intermediate")}));
    ACCEL_RT_RETURN_IF_ERROR(launchGatedAct(st, *kp, x, y));
    return y;
  });
}

StatusOr<GpuKernel> prepareRotary(const PlanKernel &k, const pb::Step &step, const StepAttrs &a,
                                  const GpuPrepareContext &ctx) {
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 4));
  ACCEL_RT_ASSIGN_OR_RETURN(tk::RotaryParams rp, readRotaryParams(a));
  const DType cdt = ctx.dtype;
  const bool tables = k.spec("tables") != 0;
  const bool pos64 = k.spec("positions_i64") != 0;
  const int64_t heads = k.spec("heads"), d = k.spec("head_dim"), rot = k.spec("rotary_dim");
  if (rp.style != tk::RotaryStyle::kHalfSplit)
    return badPlan("generated kernel '" + k.name + "' is half_split; the step is not");
  if (tables != (step.inputs_size() > 2 && step.inputs(2) >= 0))
    return badPlan("generated kernel '" + k.name + "' and the step disagree on cos/sin tables");
  // inv_freq (theta and scaling, the CPU's function), uploaded once here.
  auto invDev = std::make_shared<DeviceTensor>();
  if (!tables) {
    ACCEL_RT_ASSIGN_OR_RETURN(std::vector<float> inv, tk::rotaryInvFreq(rot, rp.theta, rp.scaling));
    invDev->dtype = DType::kF32;
    invDev->shape = {int64_t(inv.size())};
    ACCEL_RT_ASSIGN_OR_RETURN(invDev->mem, ctx.gpu->allocate(inv.size() * sizeof(float)));
    invDev->ptr = invDev->mem->ptr;
    ACCEL_RT_RETURN_IF_ERROR(ctx.gpu->upload(invDev->ptr, inv.data(), inv.size() * sizeof(float)));
  }
  const PlanKernel *kp = &k;
  const DType posType = pos64 ? DType::kI64 : DType::kI32;
  return one([=](GpuRunState &st, Inputs &in) -> StatusOr<DeviceTensor> {
    const PlanKernel &k = *kp;
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor x, st.toDevice(*in[0], cdt));
    if (x.rank() != 3 || x.dim(1) != heads || x.dim(2) != d)
      return badInput("the input " + x.describe() + " must be [tokens, " + std::to_string(heads) +
                      ", " + std::to_string(d) + "], as generated kernel '" + k.name +
                      "' was built for");
    const int64_t tokens = x.dim(0);
    GpuValue &pv = *in[1];
    if (pv.host.defined()) {
      if (pv.host.numElements() != tokens)
        return badInput("the positions " + pv.host.describe() +
                        " must have one entry per token of " + x.describe());
      if (pv.host.dtype() != posType)
        pv.host = pv.host.astype(posType);
    }
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor pos, st.toDevice(pv));
    if (pos.dtype != posType || pos.numElements() != tokens)
      return badInput("the positions " + pos.describe() + " must be " + dtypeName(posType) +
                      " [" + std::to_string(tokens) + "] for generated kernel '" + k.name + "'");
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, st.output(0, cdt, x.shape));
    if (tokens == 0)
      return y;
    ACCEL_RT_RETURN_IF_ERROR(checkAligned(k, cdt, {x.ptr, y.ptr}));
    if (tables) {
      if (!in[3])
        return badInput("explicit rotary tables need both cos and sin");
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor cosT, st.toDevice(*in[2], DType::kF32));
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor sinT, st.toDevice(*in[3], DType::kF32));
      if (cosT.rank() != 2 || cosT.dim(1) != rot / 2 || sinT.shape != cosT.shape)
        return badInput("the cos/sin tables " + cosT.describe() + ", " + sinT.describe() +
                        " must be [max_position, " + std::to_string(rot / 2) + "]");
      if (pv.host.defined())
        for (int64_t p : pv.host.toInt64s())
          if (p < 0 || p >= cosT.dim(0))
            return badInput("position " + std::to_string(p) + " is outside the " +
                            std::to_string(cosT.dim(0)) + " rows of the cos/sin tables");
      ACCEL_RT_RETURN_IF_ERROR(launchKernel(st, k, Dim3{unsigned(tokens), 1, 1}, x.ptr, y.ptr, pos.ptr,
                                              cosT.ptr, sinT.ptr));
      return y;
    }
    ACCEL_RT_RETURN_IF_ERROR(launchKernel(st, k, Dim3{unsigned(tokens), 1, 1}, x.ptr, y.ptr, pos.ptr,
                                            invDev->ptr));
    return y;
  });
}

} // namespace

StatusOr<std::optional<GpuKernel>> prepareGeneratedStep(const plan::PlanFile &plan,
                                                        const pb::Step &step,
                                                        const GpuPrepareContext &ctx) {
  // The families generated kernels implement (lib/Codegen): a step of
  // another kind (gated_mlp's activation: Linear.cpp) ignores `kernel`.
  const char *family = nullptr;
  switch (step.kind()) {
  case pb::RMS_NORM: family = "rms_norm"; break;
  case pb::ADD_RMS_NORM: family = "add_rms_norm"; break;
  case pb::RESIDUAL_ADD: family = "residual_add"; break;
  case pb::ACTIVATION: family = "activation"; break;
  case pb::GATED_ACT: family = "gated_act"; break;
  case pb::ROTARY: family = "rotary"; break;
  default: return std::optional<GpuKernel>();
  }
  ACCEL_RT_ASSIGN_OR_RETURN(const PlanKernel *k, stepPlanKernel(step, ctx, family));
  if (!k)
    return std::optional<GpuKernel>();
  StepAttrs a(plan, step);
  auto wrap = [](StatusOr<GpuKernel> call) -> StatusOr<std::optional<GpuKernel>> {
    if (!call)
      return call.status();
    return std::optional<GpuKernel>(std::move(*call));
  };
  if (step.kind() == pb::RMS_NORM || step.kind() == pb::ADD_RMS_NORM)
    return wrap(prepareNorm(*k, step, a, ctx.dtype));
  if (step.kind() == pb::RESIDUAL_ADD)
    return wrap(preparePointwise(*k, step, ctx.dtype));
  if (step.kind() == pb::ROTARY)
    return wrap(prepareRotary(*k, step, a, ctx));
  ACCEL_RT_ASSIGN_OR_RETURN(std::string kind, a.s("kind"));
  if (kind != k->activation)
    return badPlan("the step's activation '" + kind + "' is not generated kernel '" + k->name +
                   "''s '" + k->activation + "'");
  return wrap(step.kind() == pb::ACTIVATION ? preparePointwise(*k, step, ctx.dtype)
                                            : prepareGatedAct(*k, step, ctx.dtype));
}

} // namespace accel::rt::engine
