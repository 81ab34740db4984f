//===- CpuSteps.cpp - one prepared CPU call per plan step ------------------===//
//
// Each prepare function reads the step's attributes into a parameter struct
// and returns a closure over it. Operand positions follow the step table in
// docs/plan-format.md; absent optional operands arrive as null.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CpuSteps.h"

#include "runtime/engine/StepAttrs.h"

#include "runtime/cpu/onnx/OnnxKernels.h"
#include "runtime/cpu/transformer/TransformerKernels.h"

#include <algorithm>
#include <map>

namespace accel::rt::engine {

namespace pb = accel::plan;
namespace tk = accel::rt::cpu::transformer;
using Kernel = CpuExecutor::Kernel;
using Inputs = std::vector<const Tensor *>;
using Outputs = std::vector<Tensor>;

namespace {

Status invalid(const std::string &msg) { return Status(StatusCode::kDataLoss, msg); }

using Attrs = StepAttrs;

/// A kernel of one result.
template <typename Fn> Kernel one(Fn fn) {
  return [fn](const StepContext &ctx, const Inputs &in, Outputs &out) -> Status {
    StatusOr<Tensor> t = fn(ctx, in);
    if (!t)
      return t.status();
    out.push_back(std::move(*t));
    return Status::ok();
  };
}

StatusOr<tk::ActivationKind> activationKind(const Attrs &a) {
  ACCEL_RT_ASSIGN_OR_RETURN(std::string kind, a.s("kind"));
  if (std::optional<tk::ActivationKind> k = tk::activationKindFromName(kind))
    return *k;
  return Status(StatusCode::kUnimplemented, "activation '" + kind + "' has no CPU kernel");
}

StatusOr<tk::PagedAttentionParams> attentionParams(const Attrs &a) {
  tk::PagedAttentionParams p;
  ACCEL_RT_ASSIGN_OR_RETURN(p.layer, a.i("layer"));
  ACCEL_RT_ASSIGN_OR_RETURN(double scale, a.f("scale", 0.0));
  ACCEL_RT_ASSIGN_OR_RETURN(int64_t causal, a.i("causal", 1));
  ACCEL_RT_ASSIGN_OR_RETURN(p.slidingWindow, a.i("sliding_window", 0));
  ACCEL_RT_ASSIGN_OR_RETURN(double softcap, a.f("softcap", 0.0));
  ACCEL_RT_ASSIGN_OR_RETURN(p.kvScales, readKvScales(a));
  p.scale = float(scale);
  p.causal = causal != 0;
  p.softcap = float(softcap);
  return p;
}

/// A qkv_rotary step's num_heads, num_kv_heads and head_dim.
StatusOr<tk::QkvHeads> qkvHeads(const Attrs &a) {
  tk::QkvHeads h;
  ACCEL_RT_ASSIGN_OR_RETURN(h.numHeads, a.i("num_heads"));
  ACCEL_RT_ASSIGN_OR_RETURN(h.numKvHeads, a.i("num_kv_heads"));
  ACCEL_RT_ASSIGN_OR_RETURN(h.headDim, a.i("head_dim"));
  if (h.numHeads <= 0 || h.numKvHeads <= 0 || h.headDim <= 0)
    return invalid("num_heads " + std::to_string(h.numHeads) + ", num_kv_heads " +
                   std::to_string(h.numKvHeads) + " and head_dim " +
                   std::to_string(h.headDim) + " must be positive");
  return h;
}

/// qkv_rotary of a step's inputs (qkv, positions, cos_cache, sin_cache).
StatusOr<tk::QkvRotaryResult> runQkvRotary(const Inputs &in, const tk::QkvHeads &heads,
                                           tk::RotaryParams p) {
  p.cosTable = in.size() > 2 ? in[2] : nullptr;
  p.sinTable = in.size() > 3 ? in[3] : nullptr;
  return tk::qkvRotary(*in[0], *in[1], heads, p);
}

//===----------------------------------------------------------------------===//
// launch
//===----------------------------------------------------------------------===//

/// An ONNX operator raising left (exec.onnx): the reference kernel.
StatusOr<Kernel> prepareOnnx(const pb::Step &step, const Attrs &a) {
  {
    const std::string &type = step.onnx_op(), &domain = step.onnx_domain();
    if (!onnx::isSupported(type, domain))
      return Status(StatusCode::kUnimplemented,
                    "the CPU backend has no kernel for ONNX operator '" +
                        (domain.empty() ? "" : domain + ".") + type + "'");
    ACCEL_RT_ASSIGN_OR_RETURN(onnx::AttrMap attrs, a.onnxAttrs());
    ACCEL_RT_ASSIGN_OR_RETURN(int64_t numOutputs, a.i("accel.num_outputs", step.outputs_size()));
    // outputs[i] of the step is ONNX output i; absent optional ones are -1.
    return Kernel([type, domain, attrs, numOutputs](const StepContext &, const Inputs &in,
                                                     Outputs &out) -> Status {
      std::vector<const Tensor *> inputs = in;
      while (!inputs.empty() && !inputs.back())
        inputs.pop_back();
      ACCEL_RT_RETURN_IF_ERROR(onnx::runOp(type, domain, attrs, inputs, size_t(numOutputs), out));
      out.resize(size_t(numOutputs));
      return Status::ok();
    });
  }
}

/// The steps of the transformer-level families.
StatusOr<Kernel> prepareLayerStep(const plan::PlanFile &plan, const pb::Step &step,
                                  const Attrs &a) {
  switch (step.kind()) {
  case pb::EMBEDDING: {
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 2));
    ACCEL_RT_ASSIGN_OR_RETURN(double scale, a.f("scale", 1.0));
    // Vocabulary-parallel (accel-partition): the table is this rank's block
    // of rows, whose first row is rank * rows; the all_reduce after the step
    // sums the ranks' lookups.
    ACCEL_RT_ASSIGN_OR_RETURN(int64_t shards, a.i("vocab_shards", 1));
    if (shards < 1 || (shards != 1 && shards != plan.metadata().tp_size()))
      return invalid("a vocabulary-parallel embedding over " + std::to_string(shards) +
                     " ranks in a plan for " + std::to_string(plan.metadata().tp_size()));
    // A padded vocabulary: the last rows are padding, ids stop at vocab_size.
    ACCEL_RT_ASSIGN_OR_RETURN(int64_t realVocab, a.i("vocab_size", 0));
    if (realVocab < 0)
      return invalid("an embedding with vocab_size " + std::to_string(realVocab));
    // A bf16/f16 table under f32 activations (accelc -precision): the rows
    // are widened to the result's dtype.
    std::optional<DType> outType;
    if (step.outputs_size() == 1 && step.outputs(0) >= 0 &&
        step.outputs(0) < plan.schedule().values_size())
      outType = dtypeFromName(plan.schedule().values(step.outputs(0)).dtype());
    return one([scale, shards, realVocab, outType](const StepContext &ctx,
                                                   const Inputs &in) -> StatusOr<Tensor> {
      int64_t offset = 0, vocab = 0;
      const int64_t height = in[0]->rank() == 2 ? in[0]->dim(0) : 0; // the kernel checks
      if (shards > 1) {
        if (!ctx.comm || ctx.comm->size() != shards)
          return Status(StatusCode::kInternal,
                        "a vocabulary-parallel embedding over " + std::to_string(shards) +
                            " ranks needs every rank running (the tensor-parallel executor)");
        offset = int64_t(ctx.comm->rank()) * height;
        vocab = shards * height;
      }
      if (realVocab > 0)
        vocab = std::min(realVocab, shards * height);
      StatusOr<Tensor> rows = tk::embedding(*in[0], *in[1], float(scale), offset, vocab);
      if (!rows || !outType || rows->dtype() == *outType)
        return rows;
      return rows->astype(*outType);
    });
  }
  case pb::RMS_NORM:
  case pb::ADD_RMS_NORM: {
    bool add = step.kind() == pb::ADD_RMS_NORM;
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, add ? 3 : 2, add ? 3 : 2));
    ACCEL_RT_ASSIGN_OR_RETURN(double eps, a.f("epsilon"));
    ACCEL_RT_ASSIGN_OR_RETURN(double offset, a.f("weight_offset", 0.0));
    if (!add)
      return one([eps, offset](const StepContext &, const Inputs &in) {
        return tk::rmsNorm(*in[0], *in[1], float(eps), float(offset));
      });
    return Kernel([eps, offset](const StepContext &, const Inputs &in, Outputs &out) -> Status {
      ACCEL_RT_ASSIGN_OR_RETURN(tk::AddRmsNormResult r,
                                tk::addRmsNorm(*in[0], *in[1], *in[2], float(eps), float(offset)));
      out.push_back(std::move(r.normed));
      out.push_back(std::move(r.sum));
      return Status::ok();
    });
  }
  case pb::LAYER_NORM: {
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 3));
    ACCEL_RT_ASSIGN_OR_RETURN(double eps, a.f("epsilon"));
    return one([eps](const StepContext &, const Inputs &in) {
      return tk::layerNorm(*in[0], *in[1], in.size() > 2 ? in[2] : nullptr, float(eps));
    });
  }
  case pb::RESIDUAL_ADD: {
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 2));
    return one([](const StepContext &, const Inputs &in) {
      return tk::residualAdd(*in[0], *in[1]);
    });
  }
  case pb::ROTARY: {
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 4));
    ACCEL_RT_ASSIGN_OR_RETURN(tk::RotaryParams p, readRotaryParams(a));
    return one([p](const StepContext &, const Inputs &in) {
      tk::RotaryParams q = p;
      q.cosTable = in.size() > 2 ? in[2] : nullptr;
      q.sinTable = in.size() > 3 ? in[3] : nullptr;
      return tk::rotary(*in[0], *in[1], q);
    });
  }
  case pb::QKV_ROTARY: {
    // qkv, positions, cos_cache, sin_cache -> q, k, v (the unfused form:
    // k and v go on to an attention's kv_write).
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 4));
    ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, 3));
    ACCEL_RT_ASSIGN_OR_RETURN(tk::QkvHeads heads, qkvHeads(a));
    ACCEL_RT_ASSIGN_OR_RETURN(tk::RotaryParams p, readRotaryParams(a));
    return Kernel([heads, p](const StepContext &, const Inputs &in, Outputs &out) -> Status {
      ACCEL_RT_ASSIGN_OR_RETURN(tk::QkvRotaryResult r, runQkvRotary(in, heads, p));
      out.push_back(std::move(r.q));
      out.push_back(std::move(r.k));
      out.push_back(std::move(r.v));
      return Status::ok();
    });
  }
  case pb::ACTIVATION:
  case pb::GATED_ACT: {
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
    ACCEL_RT_ASSIGN_OR_RETURN(tk::ActivationKind kind, activationKind(a));
    if (step.kind() == pb::ACTIVATION)
      return one([kind](const StepContext &, const Inputs &in) {
        return tk::activation(*in[0], kind);
      });
    return one([kind](const StepContext &, const Inputs &in) {
      return tk::gatedAct(*in[0], kind);
    });
  }
  case pb::GATED_MLP: {
    // x, gate_up, gate, up, down
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 5));
    ACCEL_RT_ASSIGN_OR_RETURN(tk::ActivationKind kind, activationKind(a));
    return one([kind](const StepContext &, const Inputs &in) {
      auto at = [&](size_t i) { return i < in.size() ? in[i] : nullptr; };
      tk::GatedMlpWeights w;
      w.gateUp = at(1);
      w.gate = at(2);
      w.up = at(3);
      w.down = at(4);
      return tk::gatedMlp(*in[0], w, kind);
    });
  }
  case pb::MOE: {
    // x, router, router_bias, gate_up, gate, up, down, shared_gate_up,
    // shared_down, shared_expert_gate, then the scales of quantised experts:
    // gate_up_scale, gate_scale, up_scale, down_scale
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 14));
    tk::MoeParams p;
    ACCEL_RT_ASSIGN_OR_RETURN(p.kind, activationKind(a));
    ACCEL_RT_ASSIGN_OR_RETURN(std::string routing, a.s("routing"));
    std::optional<tk::MoeRouting> r = tk::moeRoutingFromName(routing);
    if (!r)
      return Status(StatusCode::kUnimplemented, "moe routing '" + routing + "' has no CPU kernel");
    p.routing = *r;
    ACCEL_RT_ASSIGN_OR_RETURN(p.numExperts, a.i("num_experts"));
    ACCEL_RT_ASSIGN_OR_RETURN(p.topK, a.i("top_k"));
    return one([p](const StepContext &, const Inputs &in) {
      auto at = [&](size_t i) { return i < in.size() ? in[i] : nullptr; };
      tk::MoeWeights w;
      w.router = at(1);
      w.routerBias = at(2);
      w.gateUp = at(3);
      w.gate = at(4);
      w.up = at(5);
      w.down = at(6);
      w.sharedGateUp = at(7);
      w.sharedDown = at(8);
      w.sharedExpertGate = at(9);
      w.gateUpScale = at(10);
      w.gateScale = at(11);
      w.upScale = at(12);
      w.downScale = at(13);
      return tk::moe(*in[0], w, p);
    });
  }
  case pb::SPLIT: {
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
    ACCEL_RT_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, a.ints("sizes"));
    ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, sizes.size()));
    return Kernel([sizes](const StepContext &, const Inputs &in, Outputs &out) -> Status {
      ACCEL_RT_ASSIGN_OR_RETURN(std::vector<Tensor> parts, tk::splitColumns(*in[0], sizes));
      for (Tensor &t : parts)
        out.push_back(std::move(t));
      return Status::ok();
    });
  }
  default:
    break;
  }
  return Status(StatusCode::kUnimplemented, "the CPU backend has no kernel for step kind " +
                                                plan::stepKindName(step.kind()));
}

} // namespace

StatusOr<Kernel> prepareCpuStep(const plan::PlanFile &plan, const pb::Step &step, int tpRank) {
  Attrs a(plan, step, tpRank);
  switch (step.kind()) {
  case pb::ONNX:
    return prepareOnnx(step, a);
  case pb::GEMM: {
    // x [tokens, K] @ w [N, K]^T (+ bias [N]); a quantised w (i8, i4, fp8)
    // has its weight_scale as a fourth operand and an optional zero point as
    // a fifth; `group_size` for per_group scales (docs/precision.md). An
    // `activation` (accel-fuse-linear-activation) applies to the result, in
    // out_dtype, as a `launch activation` step would. A sixth operand is a
    // W8A8 linear's static input scale: x (float) is quantised to i8 here.
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 6));
    ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, 1));
    ACCEL_RT_ASSIGN_OR_RETURN(DType outType, a.dtype("out_dtype"));
    ACCEL_RT_ASSIGN_OR_RETURN(int64_t groupSize, a.i("group_size", 0));
    ACCEL_RT_ASSIGN_OR_RETURN(std::string actName, a.s("activation", std::string("none")));
    // "dynamic_per_token": a W8A8 linear whose x is quantised here with one
    // scale per token, computed from the token's values (no sixth operand).
    ACCEL_RT_ASSIGN_OR_RETURN(std::string inputQuant, a.s("input_quant", std::string("none")));
    if (inputQuant != "none" && inputQuant != "dynamic_per_token")
      return invalid("gemm input_quant '" + inputQuant +
                     "' is not none or dynamic_per_token");
    const bool dynamicX = inputQuant == "dynamic_per_token";
    std::optional<tk::ActivationKind> act;
    if (actName != "none") {
      act = tk::activationKindFromName(actName);
      if (!act)
        return Status(StatusCode::kUnimplemented,
                      "gemm activation '" + actName + "' has no CPU kernel");
    }
    return one([outType, groupSize, act, dynamicX](const StepContext &, const Inputs &in) {
        StatusOr<Tensor> y = [&]() -> StatusOr<Tensor> {
          if (dynamicX) {
            if (!(in.size() > 3 && in[3]) || (in.size() > 4 && in[4]) || (in.size() > 5 && in[5]))
              return Status(StatusCode::kDataLoss,
                            "linear: dynamic input quantisation needs a weight scale, and no "
                            "zero point or input scale");
            return tk::w8a8LinearDynamic(*in[0], *in[1], *in[3], in[2], outType);
          }
          if (in.size() > 5 && in[5]) {
            if (!(in.size() > 3 && in[3]) || in[4])
              return Status(StatusCode::kDataLoss,
                            "linear: an input scale needs a weight scale and no zero point");
            return tk::w8a8Linear(*in[0], *in[1], *in[3], *in[5], in[2], outType);
          }
          if (in.size() > 3 && in[3])
            return tk::quantLinear(*in[0], *in[1], *in[3], in[2], outType,
                                   in.size() > 4 ? in[4] : nullptr, groupSize);
          if (in.size() > 4 && in[4])
            return Status(StatusCode::kDataLoss, "linear: a zero point without a weight scale");
          return tk::linear(*in[0], *in[1], in.size() > 2 ? in[2] : nullptr, outType);
        }();
        if (!y || !act)
          return y;
        return tk::activation(*y, *act);
      });
  }
  case pb::LOGITS: {
    // The LM head: an optional softcap, optionally only each sequence's
    // last token.
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 3));
    ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, 1));
    ACCEL_RT_ASSIGN_OR_RETURN(DType outType, a.dtype("out_dtype"));
    ACCEL_RT_ASSIGN_OR_RETURN(double softcap, a.f("softcap", 0.0));
    ACCEL_RT_ASSIGN_OR_RETURN(int64_t selectLast, a.i("select_last", 0));
    return one([=](const StepContext &ctx, const Inputs &in) {
      tk::LogitsOptions o;
      o.bias = in.size() > 2 ? in[2] : nullptr;
      o.softcap = float(softcap);
      o.outType = outType;
      if (selectLast || ctx.meta->lastRowsOnly)
        o.queryStartLoc = ctx.meta->logitsRowEnds.defined() ? &ctx.meta->logitsRowEnds
                                                            : &ctx.meta->queryStartLoc;
      return tk::logits(*in[0], *in[1], o);
    });
  }
  case pb::QKV_ROTARY_KV_WRITE: {
    // The fused form: qkv, positions, cos_cache, sin_cache -> q; k and v
    // (rotated, split as the launch does) go into layer `layer` at the
    // step's slots.
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 4));
    ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, 1));
    ACCEL_RT_ASSIGN_OR_RETURN(tk::PagedAttentionParams p, attentionParams(a));
    if (p.layer < 0 || p.layer >= plan.metadata().kv_cache().num_layers())
      return invalid("layer " + std::to_string(p.layer) + " is not in the plan's KV cache");
    ACCEL_RT_ASSIGN_OR_RETURN(tk::QkvHeads heads, qkvHeads(a));
    ACCEL_RT_ASSIGN_OR_RETURN(tk::RotaryParams rp, readRotaryParams(a));
    return one([p, heads, rp](const StepContext &ctx, const Inputs &in) -> StatusOr<Tensor> {
      ACCEL_RT_ASSIGN_OR_RETURN(tk::QkvRotaryResult r, runQkvRotary(in, heads, rp));
      ACCEL_RT_RETURN_IF_ERROR(
          tk::kvWrite(*ctx.pool, p.layer, r.k, r.v, ctx.meta->slotMapping, p.kvScales));
      return std::move(r.q);
    });
  }
  case pb::KV_WRITE: {
    // k, v [tokens, kv_heads, head_dim] into layer `layer` at the step's slots.
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 2));
    ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, 0));
    ACCEL_RT_ASSIGN_OR_RETURN(tk::PagedAttentionParams p, attentionParams(a));
    if (p.layer < 0 || p.layer >= plan.metadata().kv_cache().num_layers())
      return invalid("layer " + std::to_string(p.layer) + " is not in the plan's KV cache");
    return Kernel([p](const StepContext &ctx, const Inputs &in, Outputs &) -> Status {
      return tk::kvWrite(*ctx.pool, p.layer, *in[0], *in[1], ctx.meta->slotMapping, p.kvScales);
    });
  }
  case pb::ATTENTION: {
    // q [tokens, heads, head_dim] over the paged cache (this step's K/V
    // already written by kv_write).
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
    ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, 1));
    ACCEL_RT_ASSIGN_OR_RETURN(tk::PagedAttentionParams p, attentionParams(a));
    if (p.layer < 0 || p.layer >= plan.metadata().kv_cache().num_layers())
      return invalid("layer " + std::to_string(p.layer) + " is not in the plan's KV cache");
    return one([p](const StepContext &ctx, const Inputs &in) {
      return tk::pagedAttention(*in[0], *ctx.pool, ctx.meta->queryStartLoc, ctx.meta->seqLens,
                                ctx.meta->blockTables, p);
    });
  }
  case pb::COPY: {
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
    ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, 1));
    return one([](const StepContext &, const Inputs &in) -> StatusOr<Tensor> {
      return in[0]->clone();
    });
  }
  case pb::COLLECTIVE: {
    // Across the plan's tensor-parallel ranks (runtime/comm): each rank's
    // executor runs this step with its own group handle.
    ACCEL_RT_ASSIGN_OR_RETURN(CollectiveParams cp,
                              readCollectiveParams(plan, step, a, /*allowSingle=*/false));
    const int64_t group = cp.group, axis = cp.axis;
    const bool gather = cp.gather;
    return one([group, gather, axis](const StepContext &ctx,
                                     const Inputs &in) -> StatusOr<Tensor> {
      if (group == 1)
        return *in[0];
      if (!ctx.comm || ctx.comm->size() != group)
        return Status(StatusCode::kInternal,
                      "a collective over " + std::to_string(group) +
                          " ranks needs every rank running (the tensor-parallel executor)");
      return gather ? ctx.comm->allGather(*in[0], axis) : ctx.comm->allReduceSum(*in[0]);
    });
  }
  case pb::PP_TRANSFER:
    // The executor runs it (CpuExecutor: a send and a receive between stages).
    return Status(StatusCode::kInternal, "a pp_transfer step is the executor's, not a kernel");
  default:
    return prepareLayerStep(plan, step, a);
  }
}

} // namespace accel::rt::engine
