//===- GpuRotary.cpp - the GPU steps that rotate q and k ------------------===//
#include "runtime/cuda/GpuRotary.h"

#include "runtime/cpu/transformer/TransformerKernels.h"

#include <algorithm>
#include <memory>

namespace accel::rt::engine {

namespace pb = accel::plan;
namespace tk = accel::rt::cpu::transformer;
using gpu::CuDevicePtr;
using gpu::CuFunction;
using gpu::Dim3;
using Inputs = std::vector<GpuValue *>;
using Outputs = std::vector<GpuValue>;
using i64 = long long;

namespace {

Status badInput(const std::string &msg) { return Status(StatusCode::kInvalidArgument, msg); }

/// Where a rotation's angles come from, resolved per call: the f32 inverse
/// frequencies (computed on the host with the CPU's function, scaling
/// included, and uploaded at the first call), or the step's cos/sin tables
/// (operands 2 and 3).
class RotaryAngles {
public:
  explicit RotaryAngles(const tk::RotaryParams &p, bool tables)
      : params_(p), tables_(tables), state_(std::make_shared<State>()) {}

  struct Resolved {
    CuDevicePtr invFreq = 0, cos = 0, sin = 0;
    DeviceTensor cosT, sinT; // keep the tables alive for the launch
  };

  /// Checks the positions (host copies: count and table range) and returns
  /// the device pointers for a rotation of `rot` channels of `tokens` tokens.
  StatusOr<Resolved> resolve(GpuRunState &st, Inputs &in, int64_t tokens, int64_t rot) const {
    Resolved r;
    GpuValue &pv = *in[1];
    if (pv.host.defined()) {
      if (pv.host.numElements() != tokens)
        return badInput("the positions " + pv.host.describe() + " must have one entry per token (" +
                        std::to_string(tokens) + ")");
      if (pv.host.dtype() != DType::kI64 && pv.host.dtype() != DType::kI32)
        pv.host = pv.host.astype(DType::kI64);
    }
    if (tables_) {
      if (in.size() < 4 || !in[2] || !in[3])
        return badInput("explicit rotary tables need both cos and sin");
      ACCEL_RT_ASSIGN_OR_RETURN(r.cosT, st.toDevice(*in[2], DType::kF32));
      ACCEL_RT_ASSIGN_OR_RETURN(r.sinT, st.toDevice(*in[3], DType::kF32));
      if (r.cosT.rank() != 2 || r.cosT.dim(1) != rot / 2 || r.sinT.shape != r.cosT.shape)
        return badInput("the cos/sin tables " + r.cosT.describe() + ", " + r.sinT.describe() +
                        " must be [max_position, " + std::to_string(rot / 2) + "]");
      if (pv.host.defined())
        for (int64_t p : pv.host.toInt64s())
          if (p < 0 || p >= r.cosT.dim(0))
            return badInput("position " + std::to_string(p) + " is outside the " +
                            std::to_string(r.cosT.dim(0)) + " rows of the cos/sin tables");
      r.cos = r.cosT.ptr;
      r.sin = r.sinT.ptr;
      return r;
    }
    State &s = *state_;
    if (int64_t(s.invFreq.size()) != rot / 2) {
      ACCEL_RT_ASSIGN_OR_RETURN(s.invFreq, tk::rotaryInvFreq(rot, params_.theta, params_.scaling));
    }
    if (!s.dev.defined() || s.dev.numElements() != rot / 2) {
      ACCEL_RT_ASSIGN_OR_RETURN(s.dev, st.empty(DType::kF32, {rot / 2}));
      ACCEL_RT_RETURN_IF_ERROR(
          st.gpu->upload(s.dev.ptr, s.invFreq.data(), s.invFreq.size() * sizeof(float)));
    }
    r.invFreq = s.dev.ptr;
    return r;
  }

  /// The channels that rotate for head_dim `d`, or why not.
  StatusOr<int64_t> rotaryDim(int64_t d) const {
    const int64_t rot = params_.rotaryDim == 0 ? d : params_.rotaryDim;
    if (rot <= 0 || rot % 2 != 0 || rot > d)
      return badInput("rotary_dim " + std::to_string(rot) +
                      " must be even, positive and at most head_dim " + std::to_string(d));
    return rot;
  }

  bool interleaved() const { return params_.style == tk::RotaryStyle::kInterleaved; }

private:
  struct State {
    std::vector<float> invFreq;
    DeviceTensor dev;
  };
  tk::RotaryParams params_;
  bool tables_;
  std::shared_ptr<State> state_; // shared by the step's copies of the closure
};

bool hasTables(const pb::Step &step) { return step.inputs_size() > 2 && step.inputs(2) >= 0; }

/// qkv_rotary: below this many tokens a token gets several blocks (at most
/// this many blocks in all).
constexpr int64_t kQkvRotaryTokensPerGrid = 64;

unsigned blockThreads(int64_t n) {
  return unsigned(std::clamp<int64_t>((n + 31) / 32 * 32, 32, 512));
}

} // namespace

StatusOr<GpuKernel> prepareGpuRotary(const GpuPrepareContext &ctx, const pb::Step &step,
                                     const StepAttrs &a) {
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 4));
  ACCEL_RT_ASSIGN_OR_RETURN(tk::RotaryParams rp, readRotaryParams(a));
  const RotaryAngles angles(rp, hasTables(step));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn, computeKernel(ctx, "rotary"));
  const DType cdt = ctx.dtype;
  return one([=](GpuRunState &st, Inputs &in) -> StatusOr<DeviceTensor> {
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor x, st.toDevice(*in[0], cdt));
    if (x.rank() != 3)
      return badInput("the input " + x.describe() + " must be [tokens, heads, head_dim]");
    const int64_t tokens = x.dim(0), heads = x.dim(1), d = x.dim(2);
    ACCEL_RT_ASSIGN_OR_RETURN(int64_t rot, angles.rotaryDim(d));
    ACCEL_RT_ASSIGN_OR_RETURN(RotaryAngles::Resolved r, angles.resolve(st, in, tokens, rot));
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor pos, st.toDevice(*in[1]));
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, st.output(0, cdt, x.shape));
    if (tokens && heads)
      ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(
          fn, Dim3{unsigned(tokens), 1, 1}, Dim3{blockThreads(heads * (d - rot / 2)), 1, 1}, 0,
          x.ptr, y.ptr, pos.ptr, int(pos.dtype == DType::kI64), r.invFreq, r.cos, r.sin,
          i64(heads), i64(d), i64(rot), int(angles.interleaved())));
    return y;
  });
}

StatusOr<GpuKernel> prepareGpuQkvRotary(const GpuPrepareContext &ctx, const pb::Step &step,
                                        const StepAttrs &a, bool intoCache) {
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 4));
  ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, intoCache ? 1 : 3));
  ACCEL_RT_ASSIGN_OR_RETURN(tk::RotaryParams rp, readRotaryParams(a));
  ACCEL_RT_ASSIGN_OR_RETURN(int64_t heads, a.i("num_heads"));
  ACCEL_RT_ASSIGN_OR_RETURN(int64_t kvHeads, a.i("num_kv_heads"));
  ACCEL_RT_ASSIGN_OR_RETURN(int64_t d, a.i("head_dim"));
  if (heads <= 0 || kvHeads <= 0 || d <= 0)
    return Status(StatusCode::kDataLoss, "num_heads, num_kv_heads and head_dim must be positive");
  int64_t layer = -1;
  kernels::KvScales kvScales; // an f8E4M3FN cache's (stored = value / scale)
  if (intoCache) {
    ACCEL_RT_ASSIGN_OR_RETURN(layer, a.i("layer"));
    if (layer < 0 || layer >= ctx.numLayers)
      return Status(StatusCode::kDataLoss,
                    "layer " + std::to_string(layer) + " is not in the plan's KV cache");
    ACCEL_RT_ASSIGN_OR_RETURN(kvScales, gpuKvScales(a));
  }
  const RotaryAngles angles(rp, hasTables(step));
  ACCEL_RT_ASSIGN_OR_RETURN(int64_t rot, angles.rotaryDim(d));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn, computeKernel(ctx, "qkv_rotary"));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn8, ctx.gpu->function(std::string("qkv_rotary_") +
                                                              gpuDTypeSuffix(ctx.dtype) + "_kv8"));
  const DType cdt = ctx.dtype;
  const int64_t width = (heads + 2 * kvHeads) * d;
  return GpuKernel([=](GpuRunState &st, Inputs &in, Outputs &out) -> Status {
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor qkv, st.toDevice(*in[0], cdt));
    if (qkv.rank() != 2 || qkv.dim(1) != width)
      return badInput("the packed qkv " + qkv.describe() + " must be [tokens, " +
                      std::to_string(width) + "] ((" + std::to_string(heads) + " + 2 x " +
                      std::to_string(kvHeads) + ") heads of " + std::to_string(d) + ")");
    const int64_t tokens = qkv.dim(0);
    if (intoCache && (kvHeads != st.numKvHeads || d != st.headDim))
      return badInput("k and v have " + std::to_string(kvHeads) + " heads of " +
                      std::to_string(d) + ", the KV pool " + std::to_string(st.numKvHeads) +
                      " of " + std::to_string(st.headDim));
    if (intoCache && tokens != st.meta->numTokens)
      return badInput("the packed qkv " + qkv.describe() + " does not have the step's " +
                      std::to_string(st.meta->numTokens) + " tokens");
    ACCEL_RT_ASSIGN_OR_RETURN(RotaryAngles::Resolved r, angles.resolve(st, in, tokens, rot));
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor pos, st.toDevice(*in[1]));
    GpuValue q, k, v;
    ACCEL_RT_ASSIGN_OR_RETURN(q.dev, st.output(0, cdt, {tokens, heads, d}));
    CuDevicePtr kOut = 0, vOut = 0, kCache = 0, vCache = 0, slots = 0;
    bool fp8 = false;
    if (intoCache) {
      fp8 = (*st.keys)[size_t(layer)].dtype == DType::kF8E4M3FN;
      if (std::string bad = kvScalesMismatch(kvScales, kvHeads); fp8 && !bad.empty())
        return badInput(bad);
      kCache = (*st.keys)[size_t(layer)].ptr;
      vCache = (*st.values)[size_t(layer)].ptr;
      slots = st.slotMapping.ptr;
    } else {
      ACCEL_RT_ASSIGN_OR_RETURN(k.dev, st.output(1, cdt, {tokens, kvHeads, d}));
      ACCEL_RT_ASSIGN_OR_RETURN(v.dev, st.output(2, cdt, {tokens, kvHeads, d}));
      kOut = k.dev.ptr;
      vOut = v.dev.ptr;
    }
    // Items per token: rotated pairs, pass-through channels, v's channels.
    const int64_t items = std::max((heads + kvHeads) * std::max(rot / 2, d - rot), kvHeads * d);
    const unsigned threads = blockThreads(items);
    // Few tokens (decode): several blocks per token, about one item per thread.
    const int64_t perToken = tokens >= kQkvRotaryTokensPerGrid
                                 ? 1
                                 : std::min<int64_t>((items + threads - 1) / threads,
                                                     kQkvRotaryTokensPerGrid / tokens);
    if (tokens)
      ACCEL_RT_RETURN_IF_ERROR(st.gpu->launchDependent(
          fp8 ? fn8 : fn, Dim3{unsigned(tokens), unsigned(std::max<int64_t>(perToken, 1)), 1},
          Dim3{threads, 1, 1}, 0, qkv.ptr, q.dev.ptr, kOut,
          vOut, slots, kCache, vCache, fp8 ? kvScales : kernels::KvScales{}, pos.ptr,
          int(pos.dtype == DType::kI64), r.invFreq, r.cos, r.sin, i64(heads), i64(kvHeads), i64(d),
          i64(rot), int(angles.interleaved())));
    out.push_back(std::move(q));
    if (!intoCache) {
      out.push_back(std::move(k));
      out.push_back(std::move(v));
    }
    return Status::ok();
  });
}

} // namespace accel::rt::engine
