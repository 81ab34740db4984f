//===- Attention.cpp - the KV cache and attention on the GPU --------------===//
//
// kv_write (kernels/KVCache.cu) and attention: decode steps on
// kernels/DecodeAttentionKP.cu (bf16/f16, at most 4 query heads per KV head)
// or kernels/DecodeAttention.cu, prefill chunks on the tensor-core kernel
// (GpuFlashPrefill.h) when it applies, else kernels/Attention.cu; split-KV
// partials combined by attention_combine. FP8 caches' scales (gpuKvScales).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/ops/Ops.h"

#include "runtime/cpu/transformer/TransformerKernels.h"
#include "runtime/cuda/GpuFlashPrefill.h"

#include <cmath>
#include <map>

namespace accel::rt::engine {

namespace tk = accel::rt::cpu::transformer;

StatusOr<kernels::KvScales> gpuKvScales(const StepAttrs &a) {
  ACCEL_RT_ASSIGN_OR_RETURN(tk::KVScales kv, readKvScales(a));
  kernels::KvScales s;
  if (kv.kHeads.empty()) {
    s.k[0] = kv.k;
    s.v[0] = kv.v;
    return s;
  }
  if (kv.kHeads.size() > size_t(kernels::kMaxKvScaleHeads))
    return Status(StatusCode::kUnimplemented,
                  "the GPU kernels take FP8 KV-cache scales for at most " +
                      std::to_string(kernels::kMaxKvScaleHeads) + " KV heads; this plan has " +
                      std::to_string(kv.kHeads.size()) + " per-head scales");
  s.heads = int(kv.kHeads.size());
  for (size_t h = 0; h < kv.kHeads.size(); ++h) {
    s.k[h] = kv.kHeads[h];
    s.v[h] = kv.vHeads[h];
  }
  return s;
}

std::string kvScalesMismatch(const kernels::KvScales &s, int64_t numKvHeads) {
  if (s.heads == 1 || s.heads == numKvHeads)
    return "";
  return "the step has FP8 KV-cache scales for " + std::to_string(s.heads) +
         " KV heads, the KV pool " + std::to_string(numKvHeads);
}

} // namespace accel::rt::engine

namespace accel::rt::engine::ops {

namespace {

struct AttentionParams {
  int64_t layer = 0;
  float scale = 0.0f;
  bool causal = true;
  int64_t window = 0;
  float softcap = 0.0f;
  // An f8E4M3FN cache's scales (stored = value / scale), per layer or per
  // KV head; float caches pass kernels::KvScales{} (ones).
  kernels::KvScales kv;
};

/// Whether the device KV pool of `layer` is f8E4M3FN (the *_kv8 kernels).
bool fp8Cache(const GpuRunState &st, int64_t layer) {
  return (*st.keys)[size_t(layer)].dtype == DType::kF8E4M3FN;
}

/// The compute-dtype kernel `base` and its f8E4M3FN-cache variant.
struct KvKernels {
  CuFunction plain = nullptr, fp8 = nullptr;
  CuFunction pick(const GpuRunState &st, int64_t layer) const {
    return fp8Cache(st, layer) ? fp8 : plain;
  }
};
StatusOr<KvKernels> kvKernels(const GpuPrepareContext &ctx, const std::string &base) {
  KvKernels k;
  ACCEL_RT_ASSIGN_OR_RETURN(k.plain, computeKernel(ctx, base));
  ACCEL_RT_ASSIGN_OR_RETURN(
      k.fp8, ctx.gpu->function(base + "_" + gpuDTypeSuffix(ctx.dtype) + "_kv8"));
  return k;
}

StatusOr<AttentionParams> attentionParams(const GpuPrepareContext &ctx, const Attrs &a) {
  AttentionParams p;
  ACCEL_RT_ASSIGN_OR_RETURN(p.layer, a.i("layer"));
  ACCEL_RT_ASSIGN_OR_RETURN(double scale, a.f("scale", 0.0));
  ACCEL_RT_ASSIGN_OR_RETURN(int64_t causal, a.i("causal", 1));
  ACCEL_RT_ASSIGN_OR_RETURN(p.window, a.i("sliding_window", 0));
  ACCEL_RT_ASSIGN_OR_RETURN(double softcap, a.f("softcap", 0.0));
  ACCEL_RT_ASSIGN_OR_RETURN(p.kv, gpuKvScales(a));
  p.scale = float(scale);
  p.causal = causal != 0;
  p.softcap = float(softcap);
  if (p.layer < 0 || p.layer >= ctx.numLayers)
    return invalid("layer " + std::to_string(p.layer) + " is not in the plan's KV cache");
  if (p.window < 0 || p.softcap < 0.0f || p.scale < 0.0f)
    return invalid("sliding_window, scale and softcap must not be negative");
  return p;
}

constexpr int kAttentionThreads = 128; // Attention.cu's kThreads
constexpr int kAttentionTile = 64;     // Attention.cu's kTile
constexpr int kDecodeThreads = 128;    // DecodeAttention.cu's kDecodeWarps * 32
constexpr int64_t kDecodeMaxGroup = 8; // DecodeAttention.cu's kDecodeMaxGroup

} // namespace

StatusOr<GpuKernel> prepareKvWrite(const GpuPrepareContext &ctx, const pb::Step &step,
                                   const Attrs &a) {
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 2));
  ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, 0));
  ACCEL_RT_ASSIGN_OR_RETURN(AttentionParams p, attentionParams(ctx, a));
  ACCEL_RT_ASSIGN_OR_RETURN(KvKernels fns, kvKernels(ctx, "kv_write"));
  const DType cdt = ctx.dtype;
  return GpuKernel([=](GpuRunState &st, Inputs &in, Outputs &) -> Status {
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor k, st.toDevice(*in[0], cdt));
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor v, st.toDevice(*in[1], cdt));
    const int64_t row = st.numKvHeads * st.headDim;
    const int64_t tokens = st.meta->numTokens;
    if (k.numElements() != tokens * row || v.numElements() != tokens * row)
      return badInput("k " + k.describe() + " and v " + v.describe() + " must be [" +
                      std::to_string(tokens) + ", " + std::to_string(st.numKvHeads) + ", " +
                      std::to_string(st.headDim) + "], the step's tokens and the KV pool's heads");
    if (tokens == 0)
      return Status::ok();
    const bool fp8 = fp8Cache(st, p.layer);
    if (std::string bad = kvScalesMismatch(p.kv, st.numKvHeads); fp8 && !bad.empty())
      return badInput(bad);
    return st.gpu->launch(fns.pick(st, p.layer), Dim3{unsigned(tokens), 1, 1},
                          Dim3{rowThreads(row), 1, 1}, 0, k.ptr, v.ptr, st.slotMapping.ptr,
                          (*st.keys)[size_t(p.layer)].ptr, (*st.values)[size_t(p.layer)].ptr,
                          i64(row), i64(st.headDim), fp8 ? p.kv : kernels::KvScales{});
  });
}

StatusOr<GpuKernel> prepareAttention(const GpuPrepareContext &ctx, const pb::Step &step,
                                     const Attrs &a) {
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
  ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, 1));
  ACCEL_RT_ASSIGN_OR_RETURN(AttentionParams p, attentionParams(ctx, a));
  ACCEL_RT_ASSIGN_OR_RETURN(KvKernels attn, kvKernels(ctx, "paged_attention"));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction combine, computeKernel(ctx, "attention_combine"));
  // Decode steps: DecodeAttention.cu, one block per (sequence, KV head)
  // (32 layers at batch 1 / 64: 5.27 / 7.47 ms against 5.46 / 9.94 with
  // paged_attention, docs/performance.md).
  std::map<int64_t, KvKernels> decodeKernels;
  for (int64_t d : {64, 128, 256}) {
    ACCEL_RT_ASSIGN_OR_RETURN(decodeKernels[d],
                              kvKernels(ctx, "decode_attention_d" + std::to_string(d)));
  }
  // bf16/f16 decode steps whose KV heads serve one query head, or two to
  // four: DecodeAttentionKP.cu (GpuTuning::decodeKeyParallel), keyed by
  // (G, head_dim) with G = 1 or 4.
  std::map<std::pair<int64_t, int64_t>, KvKernels> kpKernels;
  if (ctx.decodeKeyParallel && (ctx.dtype == DType::kBF16 || ctx.dtype == DType::kF16)) {
    if (ctx.decodeKpVariant < 0 || ctx.decodeKpVariant > 3)
      return Status(StatusCode::kInvalidArgument,
                    "ACCEL_GPU_DECODE_KP_VARIANT is " + std::to_string(ctx.decodeKpVariant) +
                        "; decode_attention_kp has variants 0 to 3");
    const std::string variant =
        ctx.decodeKpVariant ? "v" + std::to_string(ctx.decodeKpVariant) + "_" : "";
    for (int64_t g : {1, 4})
      for (int64_t d : {64, 128, 256}) {
        KvKernels &k = kpKernels[std::make_pair(g, d)];
        ACCEL_RT_ASSIGN_OR_RETURN(k, kvKernels(ctx, "decode_attention_kp_" + variant + "g" +
                                                        std::to_string(g) + "_d" +
                                                        std::to_string(d)));
      }
  }
  const DType cdt = ctx.dtype;
  return one([=](GpuRunState &st, Inputs &in) -> StatusOr<DeviceTensor> {
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor q, st.toDevice(*in[0], cdt));
    const int64_t d = st.headDim, kvHeads = st.numKvHeads;
    if (q.rank() != 3 || q.dim(2) != d)
      return badInput("q " + q.describe() + " must be [tokens, heads, " + std::to_string(d) + "]");
    const int64_t tokens = q.dim(0), heads = q.dim(1);
    if (tokens != st.meta->numTokens)
      return badInput("q " + q.describe() + " does not have the step's " +
                      std::to_string(st.meta->numTokens) + " tokens");
    if (heads % kvHeads != 0)
      return badInput("q's " + std::to_string(heads) + " heads are not a multiple of the " +
                      std::to_string(kvHeads) + " KV heads");
    if (d > 4 * kAttentionThreads)
      return Status(StatusCode::kUnimplemented,
                    "head_dim " + std::to_string(d) + " is over the GPU attention kernel's 512");
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor out, st.output(0, cdt, q.shape));
    if (tokens == 0 || heads == 0)
      return out;
    // Split-KV for decode steps (one query per sequence) over long contexts:
    // the executor's choice (GraphBuckets.h), the same for graphs and eager.
    int numSplits = 1;
    int64_t splitSize = 0;
    if (st.meta->numTokens == st.meta->numSeqs && st.split.numSplits > 1) {
      numSplits = st.split.numSplits;
      splitSize = st.split.splitSize;
    }
    DeviceTensor partials;
    CuDevicePtr pm = 0, pl = 0, pacc = 0;
    if (numSplits > 1) {
      const int64_t n = tokens * heads * numSplits;
      ACCEL_RT_ASSIGN_OR_RETURN(partials, st.empty(DType::kF32, {n * (d + 2)}));
      pm = partials.ptr;
      pl = pm + CuDevicePtr(n) * 4;
      pacc = pl + CuDevicePtr(n) * 4;
    }
    const float scale = p.scale > 0.0f ? p.scale : 1.0f / std::sqrt(float(d));
    // An f8E4M3FN cache holds K / k_scale and V / v_scale (per layer or per
    // KV head): the kernels multiply the score scale by k_scale and the
    // result by v_scale.
    const bool fp8 = fp8Cache(st, p.layer);
    if (std::string bad = kvScalesMismatch(p.kv, kvHeads); fp8 && !bad.empty())
      return badInput(bad);
    const kernels::KvScales kvs = fp8 ? p.kv : kernels::KvScales{};
    auto decodeKernel = decodeKernels.find(d);
    const int64_t group = heads / kvHeads;
    auto kpKernel = kpKernels.find({group == 1 ? 1 : 4, d});
    if (group > 4)
      kpKernel = kpKernels.end();
    if (tokens == st.meta->numSeqs && decodeKernel != decodeKernels.end() &&
        group <= kDecodeMaxGroup) {
      const KvKernels &k = kpKernel != kpKernels.end() ? kpKernel->second : decodeKernel->second;
      ACCEL_RT_RETURN_IF_ERROR(st.gpu->launchDependent(
          k.pick(st, p.layer),
          Dim3{unsigned(st.meta->numSeqs), unsigned(kvHeads), unsigned(numSplits)},
          Dim3{kDecodeThreads, 1, 1}, 0, q.ptr, (*st.keys)[size_t(p.layer)].ptr,
          (*st.values)[size_t(p.layer)].ptr, st.queryStartLoc.ptr, st.seqLens.ptr,
          st.blockTables.ptr, i64(st.blockTables.dim(1)), out.ptr, pm, pl, pacc, i64(heads),
          i64(kvHeads), i64(st.blockSize), scale, i64(p.window), p.softcap, numSplits,
          i64(splitSize), st.splitSizeDev, kvs));
      if (numSplits > 1)
        ACCEL_RT_RETURN_IF_ERROR(st.gpu->launchDependent(
            combine, Dim3{unsigned(tokens), unsigned(heads), 1}, Dim3{rowThreads(d), 1, 1}, 0,
            pm, pl, pacc, out.ptr, i64(heads), i64(d), numSplits));
      return out;
    }
    if (numSplits == 1 && !fp8) { // prefill chunks: the tensor-core kernel when it applies
      ACCEL_RT_ASSIGN_OR_RETURN(bool flash, runFlashPrefill(st, q, out, p.layer, scale, p.causal,
                                                            p.window, p.softcap));
      if (flash)
        return out;
    }
    const unsigned smem = unsigned(kAttentionTile * 8 + (d + kAttentionTile) * 4);
    ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(
        attn.pick(st, p.layer), Dim3{unsigned(tokens), unsigned(heads), unsigned(numSplits)},
        Dim3{kAttentionThreads, 1, 1}, smem, q.ptr, (*st.keys)[size_t(p.layer)].ptr,
        (*st.values)[size_t(p.layer)].ptr, st.queryStartLoc.ptr, st.seqLens.ptr,
        st.blockTables.ptr, i64(st.blockTables.dim(1)), out.ptr, pm, pl, pacc,
        i64(st.meta->numSeqs), i64(heads), i64(kvHeads), i64(d), i64(st.blockSize),
        scale, int(p.causal), i64(p.window), p.softcap, numSplits, i64(splitSize),
        st.splitSizeDev, kvs));
    if (numSplits > 1)
      ACCEL_RT_RETURN_IF_ERROR(st.gpu->launchDependent(combine, Dim3{unsigned(tokens), unsigned(heads), 1},
                                              Dim3{rowThreads(d), 1, 1}, 0, pm, pl, pacc, out.ptr,
                                              i64(heads), i64(d), numSplits));
    return out;
  });
}

} // namespace accel::rt::engine::ops
