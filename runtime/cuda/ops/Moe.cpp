//===- Moe.cpp - the mixture of experts on the GPU ------------------------===//
//
// `launch moe` (transformer.moe; the CPU kernel runtime/cpu/transformer/Moe
// has the reference numerics), with the kernels of runtime/cuda/kernels/Moe.cu:
//
//   1. moe_route: router logits in f32 (router, bias and shared expert gate
//      uploaded in f32, gpuOperandDType), softmax, top-k, routing weights,
//      each entry's rank within its expert (counts zeroed first);
//   2. moe_permute: per-expert offsets, the active experts, the rows in
//      expert order (all on the device);
//   3. the experts (in the compute dtype, or quantised: i8 / f8E4M3FN with
//      f32 scales per expert and row, as accel-quantize-weights writes
//      them), either
//      - the expert-batched GEMV (moe_expert_gate_up, moe_expert_down, and
//        their _q variants over quantised bytes, the row's scale applied to
//        its sum): a
//        grid of min(E, T * k) expert slots, each streaming its expert's
//        weight rows once per pass of 8 routed rows; no host round trip,
//        so CUDA graphs capture it. Steps being captured and eager steps of
//        at most GpuTuning::moeGemvMaxTokens tokens (default 64) take it;
//      - or, for larger eager steps (prefill; not captured: the executor
//        captures decode steps only), the per-expert offsets copied to the
//        host (one synchronisation per moe step) and cuBLASLt per expert
//        over its gathered rows (moe_gather), gated_act between the two
//        GEMMs; a quantised expert's slice is first dequantised into a
//        scratch matrix of the compute dtype (dequantize_rows);
//   4. the shared expert (denseGatedMlp) and moe_combine: the routing-weighted
//      sum of each token's k rows plus sigmoid(gate) times the shared expert,
//      in f32, into the step's output.
//
// Scratch comes from the step's allocator (GpuRunState::empty: the caching
// allocator, or the graph's private pool while capturing), as every step's.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/ops/Ops.h"

#include "runtime/cuda/kernels/MoeShape.h"

#include <algorithm>

namespace accel::rt::engine::ops {

namespace {

namespace ks = accel::rt::kernels;

bool computeFloat(const std::string &dtype) {
  return dtype == "f32" || dtype == "bf16" || dtype == "f16";
}

bool aligned16(CuDevicePtr p) { return p % 16 == 0; }

std::string shapeText(const Shape &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

Status needShape(const char *what, const DeviceTensor &t, const Shape &want) {
  if (t.shape == want)
    return Status::ok();
  return badInput(std::string("moe: ") + what + " " + t.describe() + " must be " +
                  shapeText(want));
}

struct MoeKernels {
  CuFunction route, permute, gather, gateUp, down, combine, gatedAct, gatedAct2;
  CuFunction gateUpQ = nullptr, downQ = nullptr, dequantize = nullptr; // quantised experts
  CuFunction mmaGateUp = nullptr, mmaDown = nullptr; // tensor-core GEMV path (bf16 / f16)
};

/// The kernels' code of a quantised expert weight (Dequantize.cu's and
/// moe_expert_*_q's `wkind`): i8 0, f8E4M3FN 1; -1: the compute dtype.
constexpr int kFloatExperts = -1;

struct MoeConfig {
  DType cdt = DType::kF32;
  int kind = 0;
  int renormalize = 1;
  int64_t experts = 0, topK = 0;
  int64_t gemvMaxTokens = kDefaultMoeGemvMaxTokens;
  int gateUpKind = kFloatExperts; // gate_up, or gate and up
  int downKind = kFloatExperts;
  bool mma = false; // float bf16/f16 experts: moe_mma_* for the GEMV path
};

/// A quantised expert weight's scale: f32 [E, rows].
Status needScale(const char *what, const DeviceTensor &s, int64_t e, int64_t rows) {
  if (s.dtype == DType::kF32 && s.shape == Shape{e, rows})
    return Status::ok();
  return badInput(std::string("moe: ") + what + "_scale " + s.describe() + " must be f32 [" +
                  std::to_string(e) + ", " + std::to_string(rows) + "]");
}

StatusOr<DeviceTensor> runMoe(GpuRunState &st, const MoeConfig &c, const MoeKernels &k,
                              Inputs &in) {
  const DType cdt = c.cdt;
  GpuValue *routerBias = at(in, 2), *gateUpV = at(in, 3), *gateV = at(in, 4), *upV = at(in, 5),
           *downV = at(in, 6), *sharedGateUpV = at(in, 7), *sharedDownV = at(in, 8),
           *sharedGateV = at(in, 9);
  if (!at(in, 1) || !downV)
    return badInput("moe needs a router and the experts' down projections");
  const bool fused = gateUpV != nullptr;
  if (fused ? (gateV || upV) : !(gateV && upV))
    return badInput("moe needs either gate_up, or both gate and up");
  if (bool(sharedGateUpV) != bool(sharedDownV))
    return badInput("moe: a shared expert needs both shared_gate_up and shared_down");
  if (sharedGateV && !sharedGateUpV)
    return badInput("moe: shared_expert_gate scales a shared expert, and there is none");

  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor x, st.toDevice(*in[0], cdt));
  if (x.rank() != 2)
    return badInput("moe: x " + x.describe() + " must be [tokens, hidden]");
  const int64_t tokens = x.dim(0), hidden = x.dim(1), e = c.experts, topK = c.topK;
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor router, st.toDevice(*in[1], DType::kF32));
  ACCEL_RT_RETURN_IF_ERROR(needShape("router", router, {e, hidden}));
  DeviceTensor bias;
  if (routerBias) {
    ACCEL_RT_ASSIGN_OR_RETURN(bias, st.toDevice(*routerBias, DType::kF32));
    if (bias.numElements() != e)
      return badInput("moe: router_bias " + bias.describe() + " must hold one value per expert (" +
                      std::to_string(e) + ")");
  }
  // Quantised experts stay as stored (bytes); float ones in the compute dtype.
  const bool qGateUp = c.gateUpKind != kFloatExperts, qDown = c.downKind != kFloatExperts;
  auto expertWeight = [&](GpuValue &v, bool quantised) {
    return quantised ? st.toDevice(v) : st.toDevice(v, cdt);
  };
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor down, expertWeight(*downV, qDown));
  if (down.rank() != 3)
    return badInput("moe: down " + down.describe() + " must be [experts, hidden, intermediate]");
  const int64_t inter = down.dim(2);
  ACCEL_RT_RETURN_IF_ERROR(needShape("down", down, {e, hidden, inter}));
  DeviceTensor gateUp, gate, up;
  if (fused) {
    ACCEL_RT_ASSIGN_OR_RETURN(gateUp, expertWeight(*gateUpV, qGateUp));
    ACCEL_RT_RETURN_IF_ERROR(needShape("gate_up", gateUp, {e, 2 * inter, hidden}));
  } else {
    ACCEL_RT_ASSIGN_OR_RETURN(gate, expertWeight(*gateV, qGateUp));
    ACCEL_RT_ASSIGN_OR_RETURN(up, expertWeight(*upV, qGateUp));
    ACCEL_RT_RETURN_IF_ERROR(needShape("gate", gate, {e, inter, hidden}));
    ACCEL_RT_RETURN_IF_ERROR(needShape("up", up, {e, inter, hidden}));
  }
  // Scales per expert and row (prepareMoe checked that they come exactly
  // with the quantised weights): gate_up [E, 2I], gate / up [E, I], down
  // [E, H].
  GpuValue *gateUpScaleV = at(in, 10), *gateScaleV = at(in, 11), *upScaleV = at(in, 12),
           *downScaleV = at(in, 13);
  DeviceTensor s0, s1, sDown; // gate (or gate_up), up, down
  if (qGateUp) {
    if (fused) {
      ACCEL_RT_ASSIGN_OR_RETURN(s0, st.toDevice(*gateUpScaleV, DType::kF32));
      ACCEL_RT_RETURN_IF_ERROR(needScale("gate_up", s0, e, 2 * inter));
    } else {
      ACCEL_RT_ASSIGN_OR_RETURN(s0, st.toDevice(*gateScaleV, DType::kF32));
      ACCEL_RT_ASSIGN_OR_RETURN(s1, st.toDevice(*upScaleV, DType::kF32));
      ACCEL_RT_RETURN_IF_ERROR(needScale("gate", s0, e, inter));
      ACCEL_RT_RETURN_IF_ERROR(needScale("up", s1, e, inter));
    }
  }
  if (qDown) {
    ACCEL_RT_ASSIGN_OR_RETURN(sDown, st.toDevice(*downScaleV, DType::kF32));
    ACCEL_RT_RETURN_IF_ERROR(needScale("down", sDown, e, hidden));
  }
  DeviceTensor sharedGateUp, sharedDown, sharedGate;
  if (sharedGateUpV) {
    ACCEL_RT_ASSIGN_OR_RETURN(sharedGateUp, st.toDevice(*sharedGateUpV, cdt));
    ACCEL_RT_ASSIGN_OR_RETURN(sharedDown, st.toDevice(*sharedDownV, cdt));
  }
  if (sharedGateV) {
    ACCEL_RT_ASSIGN_OR_RETURN(sharedGate, st.toDevice(*sharedGateV, DType::kF32));
    ACCEL_RT_RETURN_IF_ERROR(needShape("shared_expert_gate", sharedGate, {1, hidden}));
  }

  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor out, st.output(0, cdt, {tokens, hidden}));
  if (tokens == 0 || hidden == 0)
    return out;
  const int64_t entries = tokens * topK;
  const size_t es = dtypeSize(cdt);

  // Scratch: the ints (counts [E], offsets [E + 1], active [E], then per
  // entry: expert, rank, perm, rowOf) and the floats (weights per entry,
  // the shared expert's gate per token).
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor ints, st.empty(DType::kI32, {3 * e + 1 + 4 * entries}));
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor floats, st.empty(DType::kF32, {entries + tokens}));
  const CuDevicePtr counts = ints.ptr, offsets = counts + 4 * uint64_t(e),
                    active = offsets + 4 * uint64_t(e + 1), ids = active + 4 * uint64_t(e),
                    rank = ids + 4 * uint64_t(entries), perm = rank + 4 * uint64_t(entries),
                    rowOf = perm + 4 * uint64_t(entries);
  const CuDevicePtr topW = floats.ptr, gateOut = topW + 4 * uint64_t(entries);

  ACCEL_RT_RETURN_IF_ERROR(st.gpu->zero(counts, size_t(e) * 4));
  ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(
      k.route, Dim3{unsigned(tokens), 1, 1}, Dim3{unsigned(ks::kMoeRouteThreads), 1, 1},
      unsigned(e * 4), x.ptr, router.ptr, bias.defined() ? bias.ptr : CuDevicePtr(0),
      sharedGate.defined() ? sharedGate.ptr : CuDevicePtr(0), i64(tokens), i64(hidden), int(e),
      int(topK), c.renormalize, ids, topW, rank, counts, gateOut));
  ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(k.permute, Dim3{1, 1, 1},
                                          Dim3{unsigned(ks::kMoePermuteThreads), 1, 1}, 0, counts,
                                          ids, rank, i64(entries), int(topK), int(e), offsets,
                                          active, perm, rowOf));

  // act [entries, I] and y [entries, H]: the experts' rows in expert order.
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor act, st.empty(cdt, {entries, inter}));
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, st.empty(cdt, {entries, hidden}));
  const size_t wes = qGateUp ? 1 : es; // gate_up's (or gate's and up's) element size
  const CuDevicePtr w0 = fused ? gateUp.ptr : gate.ptr;
  const CuDevicePtr w1 = fused ? gateUp.ptr + uint64_t(inter * hidden) * wes : up.ptr;
  // The scales of w0's and w1's rows of expert 0, and their stride per expert.
  const CuDevicePtr sc0 = s0.defined() ? s0.ptr : CuDevicePtr(0);
  const CuDevicePtr sc1 = !qGateUp ? CuDevicePtr(0) : fused ? s0.ptr + 4 * uint64_t(inter) : s1.ptr;
  const int64_t scaleStride = fused ? 2 * inter : inter;
  // The expert-batched GEMV: device-side offsets, min(E, T * k) slots.
  auto gemvExperts = [&]() -> Status {
    const unsigned slots = unsigned(std::min(e, entries));
    // 8-element weight loads: 16 bytes of the compute dtype, 8 of bytes.
    auto wAligned = [](CuDevicePtr p, bool quantised) { return p % (quantised ? 8 : 16) == 0; };
    const int vecIn = hidden % 8 == 0 && aligned16(x.ptr) && wAligned(w0, qGateUp) &&
                      wAligned(w1, qGateUp);
    const int vecDown = inter % 8 == 0 && aligned16(act.ptr) && wAligned(down.ptr, qDown);
    const Dim3 block{unsigned(ks::kMoeWarps * 32), 1, 1};
    const Dim3 gridIn{ks::moeColumnBlocks(inter), slots, 1};
    const Dim3 gridDown{ks::moeColumnBlocks(hidden), slots, 1};
    const i64 strideIn = i64((fused ? 2 : 1) * inter * hidden);
    // The tensor-core form (GpuTuning::moeMma): float bf16/f16 experts, K a
    // multiple of 8, 16-byte aligned operands.
    if (c.mma && !qGateUp && !qDown && hidden % 8 == 0 && inter % 8 == 0 && vecIn && vecDown &&
        aligned16(y.ptr)) {
      const Dim3 mmaBlock{unsigned(ks::kMoeMmaThreads), 1, 1};
      if (inter > 0)
        ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(
            k.mmaGateUp, Dim3{ks::moeMmaColumnBlocks(inter), slots, 1}, mmaBlock, 0, x.ptr, perm,
            offsets, active, w0, w1, strideIn, act.ptr, i64(inter), i64(hidden), c.kind));
      return st.gpu->launch(k.mmaDown, Dim3{ks::moeMmaColumnBlocks(hidden), slots, 1}, mmaBlock,
                            0, act.ptr, offsets, active, down.ptr, i64(hidden * inter), y.ptr,
                            i64(hidden), i64(inter));
    }
    if (inter > 0) {
      if (qGateUp)
        ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(k.gateUpQ, gridIn, block, 0, x.ptr, perm, offsets,
                                                active, w0, w1, strideIn, sc0, sc1,
                                                i64(scaleStride), c.gateUpKind, act.ptr,
                                                i64(inter), i64(hidden), c.kind, vecIn));
      else
        ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(k.gateUp, gridIn, block, 0, x.ptr, perm, offsets,
                                                active, w0, w1, strideIn, act.ptr, i64(inter),
                                                i64(hidden), c.kind, vecIn));
    }
    if (qDown)
      return st.gpu->launch(k.downQ, gridDown, block, 0, act.ptr, offsets, active, down.ptr,
                            i64(hidden * inter), sDown.ptr, i64(hidden), c.downKind, y.ptr,
                            i64(hidden), i64(inter), vecDown);
    return st.gpu->launch(k.down, gridDown, block, 0, act.ptr, offsets, active, down.ptr,
                          i64(hidden * inter), y.ptr, i64(hidden), i64(inter), vecDown);
  };
  // cuBLASLt per expert over its rows gathered in expert order; the offsets
  // come to the host (an eager step: nothing is being captured).
  auto cublasExperts = [&]() -> Status {
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor xs, st.empty(cdt, {entries, hidden}));
    ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(k.gather, strideGrid(entries * hidden),
                                            Dim3{256, 1, 1}, 0, x.ptr, perm, xs.ptr,
                                            i64(entries), i64(hidden)));
    std::vector<int32_t> off(size_t(e + 1));
    ACCEL_RT_RETURN_IF_ERROR(st.gpu->download(off.data(), offsets, off.size() * 4));
    if (off[size_t(e)] != entries)
      return Status(StatusCode::kInternal,
                    "moe: the routing counted " + std::to_string(off[size_t(e)]) +
                        " entries where " + std::to_string(entries) + " were routed");
    int64_t most = 0;
    for (int64_t ex = 0; ex < e; ++ex)
      most = std::max<int64_t>(most, off[size_t(ex + 1)] - off[size_t(ex)]);
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor t0, st.empty(cdt, {most, (fused ? 2 : 1) * inter}));
    DeviceTensor t1;
    if (!fused) {
      ACCEL_RT_ASSIGN_OR_RETURN(t1, st.empty(cdt, {most, inter}));
    }
    // Quantised experts: each expert's slices dequantised (q * the row's
    // scale, in the compute dtype) into wq0 / wq1 (gate_up, or gate and up)
    // and wqDown before its GEMMs.
    DeviceTensor wq0, wq1, wqDown;
    if (qGateUp) {
      ACCEL_RT_ASSIGN_OR_RETURN(wq0, st.empty(cdt, {(fused ? 2 : 1) * inter, hidden}));
      if (!fused) {
        ACCEL_RT_ASSIGN_OR_RETURN(wq1, st.empty(cdt, {inter, hidden}));
      }
    }
    if (qDown) {
      ACCEL_RT_ASSIGN_OR_RETURN(wqDown, st.empty(cdt, {hidden, inter}));
    }
    // Expert ex's rows [rows, cols] of the stacked weight w (quantised of
    // `wkind` with scale [E, rows]) into `to`.
    auto dequantise = [&](CuDevicePtr w, int wkind, CuDevicePtr scale, int64_t ex, int64_t rows,
                          int64_t cols, const DeviceTensor &to) -> Status {
      if (rows * cols == 0)
        return Status::ok();
      return st.gpu->launch(k.dequantize, strideGrid(rows * cols), Dim3{256, 1, 1}, 0,
                            w + uint64_t(ex * rows * cols), wkind,
                            scale + 4 * uint64_t(ex * rows), /*perChannel=*/1, to.ptr, i64(rows),
                            i64(cols));
    };
    for (int64_t ex = 0; ex < e; ++ex) {
      const int64_t first = off[size_t(ex)], n = off[size_t(ex + 1)] - first;
      if (n <= 0)
        continue;
      const CuDevicePtr xe = xs.ptr + uint64_t(first * hidden) * es;
      const CuDevicePtr ae = act.ptr + uint64_t(first * inter) * es;
      if (fused) {
        CuDevicePtr we = gateUp.ptr + uint64_t(ex * 2 * inter * hidden) * es;
        if (qGateUp) {
          ACCEL_RT_RETURN_IF_ERROR(
              dequantise(gateUp.ptr, c.gateUpKind, s0.ptr, ex, 2 * inter, hidden, wq0));
          we = wq0.ptr;
        }
        ACCEL_RT_RETURN_IF_ERROR(st.blas->linear(xe, we, t0.ptr, n, 2 * inter, hidden, cdt, cdt,
                                                 /*autotune=*/false));
        if (n * inter != 0)
          ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(k.gatedAct, strideGrid(n * inter),
                                                  Dim3{256, 1, 1}, 0, t0.ptr, ae, i64(n),
                                                  i64(inter), c.kind));
      } else {
        const uint64_t we = uint64_t(ex * inter * hidden) * es;
        CuDevicePtr wg = gate.ptr + we, wu = up.ptr + we;
        if (qGateUp) {
          ACCEL_RT_RETURN_IF_ERROR(
              dequantise(gate.ptr, c.gateUpKind, s0.ptr, ex, inter, hidden, wq0));
          ACCEL_RT_RETURN_IF_ERROR(dequantise(up.ptr, c.gateUpKind, s1.ptr, ex, inter, hidden, wq1));
          wg = wq0.ptr;
          wu = wq1.ptr;
        }
        ACCEL_RT_RETURN_IF_ERROR(st.blas->linear(xe, wg, t0.ptr, n, inter, hidden, cdt, cdt,
                                                 /*autotune=*/false));
        ACCEL_RT_RETURN_IF_ERROR(st.blas->linear(xe, wu, t1.ptr, n, inter, hidden, cdt, cdt,
                                                 /*autotune=*/false));
        if (n * inter != 0)
          ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(k.gatedAct2, strideGrid(n * inter),
                                                  Dim3{256, 1, 1}, 0, t0.ptr, t1.ptr, ae,
                                                  i64(n * inter), c.kind));
      }
      CuDevicePtr wd = down.ptr + uint64_t(ex * hidden * inter) * es;
      if (qDown) {
        ACCEL_RT_RETURN_IF_ERROR(
            dequantise(down.ptr, c.downKind, sDown.ptr, ex, hidden, inter, wqDown));
        wd = wqDown.ptr;
      }
      ACCEL_RT_RETURN_IF_ERROR(st.blas->linear(ae, wd, y.ptr + uint64_t(first * hidden) * es, n,
                                               hidden, inter, cdt, cdt, /*autotune=*/false));
    }
    return Status::ok();
  };
  if (st.gpu->capturing() || tokens <= c.gemvMaxTokens) {
    ACCEL_RT_RETURN_IF_ERROR(gemvExperts());
  } else {
    Status s = cublasExperts();
    // cuBLASLt without an algorithm for a shape or an alignment (a stacked
    // weight's expert slices of odd sizes): the GEMV kernel computes every
    // row again, from the routing already on the device.
    if (s.code() == StatusCode::kUnimplemented)
      s = gemvExperts();
    ACCEL_RT_RETURN_IF_ERROR(s);
  }

  DeviceTensor shared;
  if (sharedGateUp.defined()) {
    ACCEL_RT_ASSIGN_OR_RETURN(shared, denseGatedMlp(st, x, sharedGateUp, sharedDown, c.kind));
  }
  ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(
      k.combine, strideGrid(tokens * hidden), Dim3{256, 1, 1}, 0, y.ptr, rowOf, topW,
      shared.defined() ? shared.ptr : CuDevicePtr(0),
      sharedGate.defined() ? gateOut : CuDevicePtr(0), out.ptr, i64(tokens), i64(hidden),
      int(topK)));
  return out;
}

} // namespace

StatusOr<GpuKernel> prepareMoe(const plan::PlanFile &plan, const pb::Step &step, const Attrs &a,
                               const GpuPrepareContext &ctx) {
  // x, router, router_bias, gate_up, gate, up, down, shared_gate_up,
  // shared_down, shared_expert_gate
  // ..., then the scales of quantised experts: gate_up_scale, gate_scale,
  // up_scale, down_scale
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 14));
  ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, 1));
  MoeConfig c;
  c.cdt = ctx.dtype;
  c.gemvMaxTokens = std::max<int64_t>(ctx.moeGemvMaxTokens, 0);
  ACCEL_RT_ASSIGN_OR_RETURN(c.kind, activationCode(a));
  ACCEL_RT_ASSIGN_OR_RETURN(std::string routing, a.s("routing"));
  if (routing != "renormalize" && routing != "softmax")
    return Status(StatusCode::kUnimplemented, "moe routing '" + routing + "' has no GPU kernel");
  c.renormalize = routing == "renormalize" ? 1 : 0;
  ACCEL_RT_ASSIGN_OR_RETURN(c.experts, a.i("num_experts"));
  ACCEL_RT_ASSIGN_OR_RETURN(c.topK, a.i("top_k"));
  if (c.experts < 1 || c.topK < 1 || c.topK > c.experts)
    return invalid("moe needs 1 <= top_k <= num_experts, got top_k = " + std::to_string(c.topK) +
                   " and num_experts = " + std::to_string(c.experts));
  if (c.experts > ks::kMoeMaxExperts)
    return Status(StatusCode::kUnimplemented,
                  "moe with " + std::to_string(c.experts) +
                      " experts has no GPU kernel (at most " +
                      std::to_string(ks::kMoeMaxExperts) + ")");
  // The router, its bias and the shared expert are float; the experts are
  // float or quantised (i8 / f8E4M3FN, as -precision=int8-weight, fp8,
  // w8a8 and w8a8-fp8 write them) with an f32 scale per expert and row.
  static const char *const kNames[] = {"x",          "router",      "router_bias",
                                       "gate_up",    "gate",        "up",
                                       "down",       "shared_gate_up", "shared_down",
                                       "shared_expert_gate", "gate_up_scale", "gate_scale",
                                       "up_scale",   "down_scale"};
  const auto &values = plan.schedule().values();
  auto dtypeOf = [&](int i) -> std::string {
    const int32_t id = i < step.inputs_size() ? step.inputs(i) : -1;
    return id < 0 || id >= values.size() ? std::string() : values.Get(id).dtype();
  };
  // The kernels' code of weight i: kFloatExperts, 0 (i8) or 1 (f8E4M3FN).
  auto weightKind = [&](int i) -> StatusOr<int> {
    const std::string dt = dtypeOf(i);
    if (dt.empty() || computeFloat(dt))
      return kFloatExperts;
    if (i >= 3 && i <= 6 && (dt == "i8" || dt == "f8E4M3FN"))
      return dt == "i8" ? 0 : 1;
    return Status(StatusCode::kUnimplemented,
                  std::string("the moe step's ") + kNames[i] + " is " + dt +
                      (i >= 3 && i <= 6
                           ? "; the GPU reads experts of f32, bf16 or f16, or quantised to i8 or "
                             "f8E4M3FN with f32 scales per expert and row"
                           : "; the GPU reads it in f32, bf16 or f16 only"));
  };
  for (int i : {1, 2, 7, 8, 9}) {
    ACCEL_RT_RETURN_IF_ERROR(weightKind(i).status());
  }
  ACCEL_RT_ASSIGN_OR_RETURN(int gateUpKind, weightKind(3));
  ACCEL_RT_ASSIGN_OR_RETURN(int gateKind, weightKind(4));
  ACCEL_RT_ASSIGN_OR_RETURN(int upKind, weightKind(5));
  ACCEL_RT_ASSIGN_OR_RETURN(c.downKind, weightKind(6));
  if (!dtypeOf(4).empty() && !dtypeOf(5).empty() && dtypeOf(4) != dtypeOf(5))
    return badInput("moe: gate is " + dtypeOf(4) + " and up is " + dtypeOf(5) +
                    "; the GPU needs both of one dtype");
  c.gateUpKind = dtypeOf(3).empty() ? std::max(gateKind, upKind) : gateUpKind;
  // A quantised weight comes with its f32 scale, and a float one without.
  for (auto [w, sc] : {std::pair<int, int>{3, 10}, {4, 11}, {5, 12}, {6, 13}}) {
    const bool quantised = !dtypeOf(w).empty() && !computeFloat(dtypeOf(w));
    const std::string scaleDt = dtypeOf(sc);
    if (quantised && scaleDt.empty())
      return badInput(std::string("moe: ") + kNames[w] + " is " + dtypeOf(w) + " and needs " +
                      kNames[sc] + " (f32 per expert and row)");
    if (!quantised && !scaleDt.empty())
      return badInput(std::string("moe: ") + kNames[sc] + " scales quantised experts, but " +
                      kNames[w] + (dtypeOf(w).empty() ? std::string(" is absent")
                                                      : " is " + dtypeOf(w)));
    if (!scaleDt.empty() && scaleDt != "f32")
      return badInput(std::string("moe: ") + kNames[sc] + " is " + scaleDt + "; it must be f32");
  }
  MoeKernels k;
  ACCEL_RT_ASSIGN_OR_RETURN(k.route, computeKernel(ctx, "moe_route"));
  ACCEL_RT_ASSIGN_OR_RETURN(k.permute, ctx.gpu->function("moe_permute"));
  ACCEL_RT_ASSIGN_OR_RETURN(k.gather, computeKernel(ctx, "moe_gather"));
  ACCEL_RT_ASSIGN_OR_RETURN(k.gateUp, computeKernel(ctx, "moe_expert_gate_up"));
  ACCEL_RT_ASSIGN_OR_RETURN(k.down, computeKernel(ctx, "moe_expert_down"));
  ACCEL_RT_ASSIGN_OR_RETURN(k.combine, computeKernel(ctx, "moe_combine"));
  ACCEL_RT_ASSIGN_OR_RETURN(k.gatedAct, computeKernel(ctx, "gated_act"));
  ACCEL_RT_ASSIGN_OR_RETURN(k.gatedAct2, computeKernel(ctx, "gated_act2"));
  c.mma = ctx.moeMma && (c.cdt == DType::kBF16 || c.cdt == DType::kF16) &&
          c.gateUpKind == kFloatExperts && c.downKind == kFloatExperts;
  if (c.mma) {
    ACCEL_RT_ASSIGN_OR_RETURN(k.mmaGateUp, computeKernel(ctx, "moe_mma_gate_up"));
    ACCEL_RT_ASSIGN_OR_RETURN(k.mmaDown, computeKernel(ctx, "moe_mma_down"));
  }
  if (c.gateUpKind != kFloatExperts || c.downKind != kFloatExperts) {
    ACCEL_RT_ASSIGN_OR_RETURN(k.gateUpQ, computeKernel(ctx, "moe_expert_gate_up_q"));
    ACCEL_RT_ASSIGN_OR_RETURN(k.downQ, computeKernel(ctx, "moe_expert_down_q"));
    ACCEL_RT_ASSIGN_OR_RETURN(k.dequantize, computeKernel(ctx, "dequantize_rows"));
  }
  return one([c, k](GpuRunState &st, Inputs &in) { return runMoe(st, c, k, in); });
}

} // namespace accel::rt::engine::ops
