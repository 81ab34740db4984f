//===- Linear.cpp - GEMMs on the GPU --------------------------------------===//
//
// The `gemm` steps (linear, weight-only quantised and W8A8 linears, the
// logits) and gated_mlp: batch-1 GEMVs (kernels/Gemv.cu) and cuBLASLt.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/ops/Ops.h"

#include "runtime/cpu/transformer/TransformerKernels.h"
#include "runtime/cuda/GpuPlanKernels.h"
#include "runtime/cuda/W4Prefetch.h"
#include "runtime/cuda/kernels/GemvShape.h"
#include "runtime/cuda/kernels/Int4Layout.h"

namespace accel::rt::engine::ops {

namespace tk = accel::rt::cpu::transformer;

namespace {

constexpr int64_t kGemvMaxRows = 1; // Gemv.cu builds M = 1 only

/// Batch-1 GEMMs run Gemv.cu's single-round kernels (gemv_m1_sr_*) at a
/// target of 49152 warps (kernels::gemvShape; Llama-3-8B: qkv and o_proj at
/// ks 4, gate_up 2, down 8, the LM head 1). Measured at 32 layers
/// (docs/performance.md): 4.73 ms per batch-1 step against 4.96 for the
/// double-buffered kernels at 8192 warps; cuBLASLt instead of any GEMV was
/// 0.2-0.25 ms slower. The weight-only and W8A8 GEMVs have one form each.
constexpr int64_t kGemvTargetWarps = 49152;

/// Launches a Gemv.cu kernel of `shape`: dependently (its first weight
/// loads before griddepcontrol.wait) when the weights are plan constants,
/// plainly when an earlier kernel of the step wrote them (dequantised).
template <typename... Args>
Status launchWeightReader(GpuRunState &st, bool constWeights, CuFunction fn, Dim3 grid,
                          Dim3 block, Args... args) {
  return constWeights ? st.gpu->launchDependent(fn, grid, block, 0, args...)
                      : st.gpu->launch(fn, grid, block, 0, args...);
}
template <typename... Args>
Status launchGemv(GpuRunState &st, bool constWeights, CuFunction fn,
                  const kernels::GemvShape &shape, Args... args) {
  return launchWeightReader(st, constWeights, fn, Dim3{shape.blocks, 1, 1},
                            Dim3{unsigned(kernels::kGemvWarps * 32), 1, 1}, args...);
}

/// Whether Gemv.cu runs y = x w^T: one row of x, bf16/f16 (y in that dtype
/// or f32), K a multiple of 8, 16-byte aligned operands.
bool gemvApplies(const DeviceTensor &x, const DeviceTensor &w, DType outType) {
  auto [rows, k] = rowsCols(x);
  return rows >= 1 && rows <= kGemvMaxRows && (x.dtype == DType::kBF16 || x.dtype == DType::kF16) &&
         x.dtype == w.dtype && (outType == x.dtype || outType == DType::kF32) && k % 8 == 0 &&
         x.ptr % 16 == 0 && w.ptr % 16 == 0 && w.dim(0) > 0;
}

/// act [1, I] = act_kind(x w_gate^T) * (x w_up^T) for a fused gate_up w
/// [2I, K] in one launch (Gemv.cu's gated epilogue), when Gemv.cu applies;
/// false, having launched nothing, when it does not.
StatusOr<bool> gatedGemv(GpuRunState &st, const DeviceTensor &x, const DeviceTensor &w,
                         const DeviceTensor &act, int kind) {
  if (!gemvApplies(x, w, x.dtype) || w.dim(0) % 2 != 0)
    return false;
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn, st.gpu->function(std::string("gemv_m1_gated_sr_") +
                                                            gpuDTypeSuffix(x.dtype)));
  const int64_t n = w.dim(0), k = w.dim(1);
  const kernels::GemvShape shape = kernels::gemvShape(n, k, kGemvTargetWarps, 0, true);
  ACCEL_RT_RETURN_IF_ERROR(launchGemv(st, w.constant, fn, shape, x.ptr, w.ptr, act.ptr,
                                      i64(n / 2), i64(k), int(shape.ks), kind));
  return true;
}

/// y [.., N] = x [.., K] @ w [N, K]^T, y in `outType`: Gemv.cu for one row
/// (batch-1 decode, bf16/f16), cuBLASLt otherwise.
/// y = x · wᵀ; y is the step's output `out` (its planned place) when
/// `out` >= 0, else a temporary.
StatusOr<DeviceTensor> gemm(GpuRunState &st, const DeviceTensor &x, const DeviceTensor &w,
                            DType outType, int out = -1) {
  if (w.rank() != 2)
    return badInput("the weight " + w.describe() + " must be [N, K]");
  if (x.rank() < 1 || x.dim(-1) != w.dim(1))
    return badInput("x " + x.describe() + " and the weight " + w.describe() +
                    " disagree on K");
  if (x.dtype != w.dtype)
    return Status(StatusCode::kInternal,
                  "x " + x.describe() + " and the weight " + w.describe() + " differ in dtype");
  auto [rows, k] = rowsCols(x);
  Shape shape = x.shape;
  shape.back() = w.dim(0);
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, out >= 0 ? st.output(size_t(out), outType, shape)
                                                      : st.empty(outType, shape));
  const int64_t n = w.dim(0);
  // Batch-1 decode GEMMs in bf16/f16: Gemv.cu.
  if (gemvApplies(x, w, outType)) {
    ACCEL_RT_ASSIGN_OR_RETURN(
        CuFunction fn, st.gpu->function(std::string("gemv_m1_sr_") + gpuDTypeSuffix(x.dtype) +
                                        (outType == DType::kF32 ? "_f32out" : "")));
    const kernels::GemvShape shape = kernels::gemvShape(n, k, kGemvTargetWarps);
    ACCEL_RT_RETURN_IF_ERROR(launchGemv(st, w.constant, fn, shape, x.ptr, w.ptr, y.ptr, i64(n),
                                        i64(k), int(shape.ks)));
    return y;
  }
  ACCEL_RT_RETURN_IF_ERROR(st.blas->linear(x.ptr, w.ptr, y.ptr, rows, n, k, x.dtype, outType));
  return y;
}

/// The kernels' code of an 8-bit quantised weight type (Dequantize.cu's
/// `kind`, Gemv.cu's gemv_m1_q_<name>), or nullopt for other types.
std::optional<std::pair<int, const char *>> quantWeightKind(DType t) {
  if (t == DType::kI8)
    return std::pair<int, const char *>{0, "i8"};
  if (t == DType::kF8E4M3FN)
    return std::pair<int, const char *>{1, "e4m3"};
  if (t == DType::kF8E5M2)
    return std::pair<int, const char *>{2, "e5m2"};
  return std::nullopt;
}

/// y [.., N] = x [.., K] @ (w [N, K] * scale)^T for a weight-only quantised
/// w (i8, f8E4M3FN, f8E5M2; scale f32 [N] per channel or [] / [1] per
/// tensor): gemv_m1_q_* reads the 8-bit weight for one row of bf16/f16 x;
/// otherwise the weight is dequantised into a scratch buffer in the compute
/// dtype and multiplied by cuBLASLt.
StatusOr<DeviceTensor> quantGemm(GpuRunState &st, const DeviceTensor &x, const DeviceTensor &w,
                                 const DeviceTensor &scale, DType outType, int out = -1) {
  auto kind = quantWeightKind(w.dtype);
  if (!kind)
    return Status(StatusCode::kUnimplemented,
                  "the GPU backend runs i8, f8E4M3FN and f8E5M2 quantised weights; this one is " +
                      w.describe());
  if (w.rank() != 2 || x.rank() < 1 || x.dim(-1) != w.dim(1))
    return badInput("x " + x.describe() + " and the quantised weight " + w.describe() +
                    " disagree on K");
  const int64_t n = w.dim(0), k = w.dim(1);
  const int64_t scales = scale.numElements();
  if (scales != 1 && scales != n)
    return badInput("the weight scale " + scale.describe() + " must have one entry per output (" +
                    std::to_string(n) + ") or one in all");
  const int perChannel = scales == n && n != 1 ? 1 : 0;
  auto [rows, kx] = rowsCols(x);
  if (rows == 1 && (x.dtype == DType::kBF16 || x.dtype == DType::kF16) && outType == x.dtype &&
      k % 16 == 0 && x.ptr % 16 == 0 && w.ptr % 16 == 0) {
    Shape shape = x.shape;
    shape.back() = n;
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, out >= 0 ? st.output(size_t(out), outType, shape)
                                                        : st.empty(outType, shape));
    ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn,
                              st.gpu->function(std::string("gemv_m1_q_") + kind->second + "_" +
                                               gpuDTypeSuffix(x.dtype)));
    // 16 weights per 16-byte chunk: the shape of a bf16 weight of half the K.
    const kernels::GemvShape sh = kernels::gemvShape(n, k / 2, kGemvTargetWarps);
    ACCEL_RT_RETURN_IF_ERROR(launchGemv(st, w.constant && scale.constant, fn, sh, x.ptr, w.ptr,
                                        scale.ptr, perChannel, y.ptr, i64(n), i64(k),
                                        int(sh.ks)));
    return y;
  }
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor wd, st.empty(x.dtype, {n, k}));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction dq, st.gpu->function(std::string("dequantize_rows_") +
                                                            gpuDTypeSuffix(x.dtype)));
  if (n * k != 0)
    ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(dq, strideGrid(n * k), Dim3{256, 1, 1}, 0, w.ptr,
                                            kind->first, scale.ptr, perChannel, wd.ptr, i64(n),
                                            i64(k)));
  return gemm(st, x, wd, outType, out);
}

/// y [.., N] = x [.., K] @ ((w - off) * scale)^T for a 4-bit weight (i4 or
/// u4 [N, K], packed at load: Int4Layout.h) with f32 scales per group of
/// `group` columns ([N, K / group]), per channel ([N]) or per tensor, and
/// optional zero points of the weight's type laid out as the scales (off =
/// zeroPoint - qmin, or -qmin without). Up to kW4MaxRows rows of bf16/f16 x
/// run GemvInt4.cu's tensor-core kernel; more rows (prefill), and f32 x,
/// dequantise w into a scratch buffer for cuBLASLt.
StatusOr<DeviceTensor> int4Gemm(GpuRunState &st, const DeviceTensor &x, const DeviceTensor &w,
                                const DeviceTensor &scale, const DeviceTensor *zp, int64_t group,
                                DType outType, int64_t unroll, int out = -1) {
  if (!w.packedInt4 || w.rank() != 2)
    return Status(StatusCode::kInternal,
                  "the 4-bit weight " + w.describe() + " was not packed at load");
  if (x.rank() < 1 || x.dim(-1) != w.dim(1))
    return badInput("x " + x.describe() + " and the 4-bit weight " + w.describe() +
                    " disagree on K");
  const int64_t n = w.dim(0), k = w.dim(1);
  ACCEL_RT_ASSIGN_OR_RETURN(const W4Dequant d, w4Dequant(w, scale, zp, group));
  const int64_t scaleRow = d.scaleRow, groupChunks = d.groupChunks;
  const int qmin = d.qmin;
  const CuDevicePtr zpPtr = d.zp;
  auto [rows, kx] = rowsCols(x);
  const int nt = kernels::w4Tiles(rows);
  if (nt && (x.dtype == DType::kBF16 || x.dtype == DType::kF16) && outType == x.dtype &&
      x.ptr % 4 == 0) {
    Shape shape = x.shape;
    shape.back() = n;
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, out >= 0 ? st.output(size_t(out), outType, shape)
                                                        : st.empty(outType, shape));
    ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn,
                              st.gpu->function(std::string("gemm_w4_") + gpuDTypeSuffix(x.dtype) +
                                               "_nt" + std::to_string(nt) +
                                               (unroll == 8 && nt <= 2 ? "_u8" : "")));
    const kernels::W4Shape sh = kernels::w4Shape(n, k);
    ACCEL_RT_RETURN_IF_ERROR(launchWeightReader(
        st, w.constant && scale.constant && (!zp || zp->constant), fn, Dim3{sh.blocks, 1, 1},
        Dim3{unsigned(kernels::kW4Warps * 32), 1, 1}, x.ptr, w.ptr, scale.ptr, zpPtr, qmin, y.ptr,
        i64(rows), i64(n), i64(k), i64(scaleRow), i64(groupChunks), int(sh.ks)));
    return y;
  }
  // Eager steps of a plan with a prefetcher (W4Prefetch.h): the weight comes
  // dequantised, or is dequantised now, into one of its two buffers, and the
  // next 4-bit weight is dequantised beside this GEMM.
  if (st.w4 && !st.gpu->capturing() && x.dtype == st.w4->dtype() && n * k != 0) {
    ACCEL_RT_ASSIGN_OR_RETURN(const CuDevicePtr buf, st.w4->acquire(d));
    if (buf) {
      DeviceTensor wd;
      wd.ptr = buf;
      wd.dtype = x.dtype;
      wd.shape = {n, k};
      StatusOr<DeviceTensor> y = gemm(st, x, wd, outType, out);
      Status released = st.w4->release();
      if (!y)
        return y.status();
      ACCEL_RT_RETURN_IF_ERROR(released);
      return y;
    }
  }
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor wd, st.empty(x.dtype, {n, k}));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction dq, st.gpu->function(std::string("dequantize_w4_") +
                                                            gpuDTypeSuffix(x.dtype)));
  if (n * k != 0)
    ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(dq, strideGrid(d.packedBytes / 4), Dim3{256, 1, 1},
                                            0, w.ptr, scale.ptr, zpPtr, qmin, wd.ptr, i64(n),
                                            i64(k), i64(scaleRow), i64(groupChunks)));
  return gemm(st, x, wd, outType, out);
}

/// W8A8 (accelc -precision=w8a8 / w8a8-fp8): y [.., N] = (q(x) [.., K] @
/// w [N, K]^T) * xs * scale, w i8 or f8E4M3FN with per-channel or per-tensor
/// f32 scales, x quantised to w's type here (QuantizeActivations.cu) with
/// `inputScale` (one f32: static, from calibration) or, when it is null,
/// one scale per row (dynamic per token). One row runs gemv_m1_w8a8_*; more
/// go to cuBLASLt's tensor cores: FP8 with outer-vector scales from
/// `outerScalesMinRows` rows (where the library has them), otherwise (and
/// for i8) exact i32 / f32 sums rescaled by w8a8_rescale_*.
///
/// FP8 GEMMs of at least `outerScalesMinRows` rows
/// (GpuTuning::fp8OuterScalesMinRows, default 129, fixed when the step is
/// prepared; GpuTuning.h has the measurement) let cuBLASLt scale the sums
/// itself (outer-vector scales, bf16 out); smaller ones write f32 sums and
/// rescale them as i8 GEMMs do (cuBLASLt's scaled FP8 kernels are slow at
/// small M; so are PyTorch's _scaled_mm there, docs/performance.md).
StatusOr<DeviceTensor> w8a8Gemm(GpuRunState &st, const DeviceTensor &x, const DeviceTensor &w,
                                const DeviceTensor &scale, const DeviceTensor *inputScale,
                                DType outType, int64_t outerScalesMinRows, int out = -1) {
  if (w.dtype != DType::kI8 && w.dtype != DType::kF8E4M3FN)
    return Status(StatusCode::kUnimplemented,
                  "W8A8 on the GPU runs i8 and f8E4M3FN weights; this one is " + w.describe());
  const bool fp8 = w.dtype == DType::kF8E4M3FN;
  if (w.rank() != 2 || x.rank() < 1 || x.dim(-1) != w.dim(1))
    return badInput("x " + x.describe() + " and the quantised weight " + w.describe() +
                    " disagree on K");
  const int64_t n = w.dim(0), k = w.dim(1);
  if (k % 16 != 0)
    return Status(StatusCode::kUnimplemented,
                  "W8A8 on the GPU needs K to be a multiple of 16; the weight " + w.describe() +
                      " has K = " + std::to_string(k));
  const int64_t scales = scale.numElements();
  if (scales != 1 && scales != n)
    return badInput("the weight scale " + scale.describe() + " must have one entry per output (" +
                    std::to_string(n) + ") or one in all");
  if (inputScale && inputScale->numElements() != 1)
    return badInput("the input scale " + inputScale->describe() + " must be one f32 (per tensor)");
  const int perChannel = scales == n && n != 1 ? 1 : 0;
  auto [rows, kx] = rowsCols(x);
  Shape shape = x.shape;
  shape.back() = n;
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, out >= 0 ? st.output(size_t(out), outType, shape)
                                                      : st.empty(outType, shape));
  if (rows == 0 || n == 0)
    return y;
  const char *q = fp8 ? "e4m3" : "i8";
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor xq, st.empty(w.dtype, {rows, k}));
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor xs, st.empty(DType::kF32, {rows}));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction quant,
                            st.gpu->function(std::string("quantize_rows_") + q + "_" +
                                             gpuDTypeSuffix(x.dtype)));
  ACCEL_RT_RETURN_IF_ERROR(st.gpu->launchDependent(
      quant, Dim3{unsigned(rows), 1, 1}, Dim3{256, 1, 1}, 0, x.ptr,
      inputScale ? inputScale->ptr : CuDevicePtr(0), xq.ptr, xs.ptr, i64(rows), i64(k)));
  if (rows == 1 && w.ptr % 16 == 0) {
    ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn,
                              st.gpu->function(std::string("gemv_m1_w8a8_") + q + "_" +
                                               gpuDTypeSuffix(outType)));
    // 16 weights per 16-byte chunk: the shape of a bf16 weight of half the K.
    const kernels::GemvShape sh = kernels::gemvShape(n, k / 2, kGemvTargetWarps);
    ACCEL_RT_RETURN_IF_ERROR(launchGemv(st, w.constant && scale.constant, fn, sh, xq.ptr, xs.ptr,
                                        w.ptr, scale.ptr, perChannel, y.ptr, i64(n), i64(k),
                                        int(sh.ks)));
    return y;
  }
  if (fp8 && perChannel && rows >= outerScalesMinRows) {
    Status direct = st.blas->scaledLinearFp8(xq.ptr, w.ptr, xs.ptr, scale.ptr, y.ptr, rows, n, k,
                                             outType);
    if (direct.isOk() || direct.code() != StatusCode::kUnimplemented)
      return direct.isOk() ? StatusOr<DeviceTensor>(y) : StatusOr<DeviceTensor>(direct);
  }
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor acc,
                            st.empty(fp8 ? DType::kF32 : DType::kI32, {rows, n}));
  ACCEL_RT_RETURN_IF_ERROR(st.blas->linear8(xq.ptr, w.ptr, acc.ptr, rows, n, k, w.dtype));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction rescale,
                            st.gpu->function(std::string("w8a8_rescale_") +
                                             (fp8 ? "f32_" : "i32_") + gpuDTypeSuffix(outType)));
  ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(rescale, strideGrid(rows * n), Dim3{256, 1, 1}, 0,
                                          acc.ptr, xs.ptr, scale.ptr, perChannel, y.ptr,
                                          i64(rows), i64(n)));
  return y;
}

/// y = act(y + bias) in place, one launch (either may be absent: a null
/// bias, act < 0).
Status biasAct(GpuRunState &st, const DeviceTensor &y, const DeviceTensor *bias, int act) {
  auto [rows, cols] = rowsCols(y);
  if (bias && bias->numElements() != cols)
    return badInput("the bias " + bias->describe() + " does not match " + y.describe());
  if (rows * cols == 0 || (!bias && act < 0))
    return Status::ok();
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn,
                            st.gpu->function(std::string("bias_act_") + gpuDTypeSuffix(y.dtype)));
  return st.gpu->launch(fn, strideGrid(rows * cols), Dim3{256, 1, 1}, 0, y.ptr,
                        bias ? bias->ptr : CuDevicePtr(0), i64(rows), i64(cols), act);
}

} // namespace

StatusOr<DeviceTensor> denseGatedMlp(GpuRunState &st, const DeviceTensor &x,
                                     const DeviceTensor &gateUp, const DeviceTensor &down,
                                     int kind) {
  if (x.rank() != 2 || gateUp.rank() != 2 || gateUp.dim(0) % 2 != 0 ||
      gateUp.dim(1) != x.dim(1) || down.rank() != 2 || down.dim(0) != x.dim(1) ||
      down.dim(1) != gateUp.dim(0) / 2)
    return badInput("a gated MLP of x " + x.describe() + " needs gate_up [2S, " +
                    std::to_string(x.rank() == 2 ? x.dim(1) : 0) + "] and down [H, S], not " +
                    gateUp.describe() + " and " + down.describe());
  const int64_t rows = x.dim(0), inter = gateUp.dim(0) / 2;
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor act, st.empty(x.dtype, {rows, inter}));
  // Batch 1 (bf16/f16): the gate_up GEMV with the gated activation fused.
  ACCEL_RT_ASSIGN_OR_RETURN(bool fused, gatedGemv(st, x, gateUp, act, kind));
  if (!fused) {
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor gu, gemm(st, x, gateUp, x.dtype));
    ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn, st.gpu->function(std::string("gated_act_") +
                                                              gpuDTypeSuffix(x.dtype)));
    if (rows * inter != 0)
      ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(fn, strideGrid(rows * inter), Dim3{256, 1, 1}, 0,
                                              gu.ptr, act.ptr, i64(rows), i64(inter), kind));
  }
  return gemm(st, act, down, x.dtype);
}

StatusOr<GpuKernel> prepareGemm(const GpuPrepareContext &ctx, const pb::Step &step,
                                const Attrs &a) {
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 6));
  ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, 1));
  const DType cdt = ctx.dtype;
  if (step.kind() == pb::GEMM) {
    // An activation epilogue (accel-fuse-linear-activation): with the bias,
    // one launch after the GEMM.
    int act = -1;
    ACCEL_RT_ASSIGN_OR_RETURN(std::string kind, a.s("activation", std::string("none")));
    if (kind != "none") {
      std::optional<tk::ActivationKind> k = tk::activationKindFromName(kind);
      if (!k)
        return Status(StatusCode::kUnimplemented, "activation '" + kind + "' has no GPU kernel");
      act = int(*k);
    }
    // A weight-only quantised weight (operand 3: its scale) stays in its
    // 8-bit type on the device, or packed (4-bit: GpuExecutor::create packs
    // it, with optional zero points, operand 4, and per-group scales).
    const bool quantised = step.inputs_size() > 3 && step.inputs(3) >= 0;
    ACCEL_RT_ASSIGN_OR_RETURN(int64_t group, a.i("group_size", 0));
    // W8A8: a static input scale (operand 5) or dynamic per-token scales.
    ACCEL_RT_ASSIGN_OR_RETURN(std::string inputQuant, a.s("input_quant", std::string("none")));
    if (inputQuant != "none" && inputQuant != "dynamic_per_token")
      return invalid("gemm input_quant '" + inputQuant + "' is not none or dynamic_per_token");
    const bool staticX = step.inputs_size() > 5 && step.inputs(5) >= 0;
    const bool w8a8 = staticX || inputQuant == "dynamic_per_token";
    if (w8a8 && (!quantised || staticX == (inputQuant == "dynamic_per_token")))
      return invalid("a W8A8 gemm needs a weight scale and either an input scale or "
                     "input_quant = dynamic_per_token");
    const int64_t outerScalesMinRows = ctx.fp8OuterScalesMinRows;
    const int64_t w4Unroll = ctx.w4Unroll; // 4 or 8 (GpuExecutor::create checks it)
    return one([cdt, act, quantised, w8a8, outerScalesMinRows, group, w4Unroll](
                   GpuRunState &st, Inputs &in) -> StatusOr<DeviceTensor> {
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor x, st.toDevice(*in[0], cdt));
      DeviceTensor y;
      if (w8a8) {
        ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor w, st.toDevice(*in[1]));
        ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor scale, st.toDevice(*in[3], DType::kF32));
        DeviceTensor xs;
        if (GpuValue *s = at(in, 5)) {
          ACCEL_RT_ASSIGN_OR_RETURN(xs, st.toDevice(*s, DType::kF32));
        }
        ACCEL_RT_ASSIGN_OR_RETURN(
            y, w8a8Gemm(st, x, w, scale, xs.defined() ? &xs : nullptr, cdt, outerScalesMinRows,
                        /*out=*/0));
      } else if (quantised) {
        ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor w, st.toDevice(*in[1]));
        ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor scale, st.toDevice(*in[3], DType::kF32));
        if (w.packedInt4) {
          DeviceTensor zp;
          if (GpuValue *z = at(in, 4)) {
            ACCEL_RT_ASSIGN_OR_RETURN(zp, st.toDevice(*z));
          }
          ACCEL_RT_ASSIGN_OR_RETURN(
              y, int4Gemm(st, x, w, scale, zp.defined() ? &zp : nullptr, group, cdt, w4Unroll,
                          /*out=*/0));
        } else {
          ACCEL_RT_ASSIGN_OR_RETURN(y, quantGemm(st, x, w, scale, cdt, /*out=*/0));
        }
      } else {
        ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor w, st.toDevice(*in[1], cdt));
        ACCEL_RT_ASSIGN_OR_RETURN(y, gemm(st, x, w, cdt, /*out=*/0));
      }
      DeviceTensor bias;
      if (GpuValue *b = at(in, 2)) {
        ACCEL_RT_ASSIGN_OR_RETURN(bias, st.toDevice(*b, cdt));
      }
      ACCEL_RT_RETURN_IF_ERROR(biasAct(st, y, bias.defined() ? &bias : nullptr, act));
      return y;
    });
  }
  // LOGITS: the LM head.
  ACCEL_RT_ASSIGN_OR_RETURN(double softcap, a.f("softcap", 0.0));
  ACCEL_RT_ASSIGN_OR_RETURN(int64_t selectLast, a.i("select_last", 0));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction gather, computeKernel(ctx, "gather_last_rows"));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction cap, ctx.gpu->function("softcap_f32"));
  // The logits are f32 whatever the compute dtype (cuBLASLt writes f32 from
  // bf16/f16 operands with f32 accumulation).
  return one([=](GpuRunState &st, Inputs &in) -> StatusOr<DeviceTensor> {
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor x, st.toDevice(*in[0], cdt));
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor w, st.toDevice(*in[1], cdt));
    if (selectLast || st.meta->lastRowsOnly) {
      auto [rows, cols] = rowsCols(x);
      // Each sequence's last row, or the rows meta->logitsRowEnds picks
      // (speculative verification), ends in query_start_loc's form.
      const bool picked = st.meta->logitsRowEnds.defined() && st.logitsRowEnds.defined();
      const int64_t seqs = picked ? st.meta->numLogitsRows() : st.meta->numSeqs;
      const DeviceTensor &ends = picked ? st.logitsRowEnds : st.queryStartLoc;
      if (rows != st.meta->numTokens)
        return badInput("select_last: the hidden states " + x.describe() + " do not have the " +
                        std::to_string(st.meta->numTokens) + " tokens of the step");
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor last, st.empty(cdt, {seqs, cols}));
      if (seqs * cols != 0)
        ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(gather, strideGrid(seqs * cols), Dim3{256, 1, 1},
                                                0, x.ptr, ends.ptr, last.ptr,
                                                i64(seqs), i64(cols)));
      x = last;
    }
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, gemm(st, x, w, DType::kF32, /*out=*/0));
    if (GpuValue *b = at(in, 2)) {
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor bias, st.toDevice(*b, DType::kF32));
      ACCEL_RT_RETURN_IF_ERROR(biasAct(st, y, &bias, -1));
    }
    if (softcap > 0.0 && y.numElements())
      ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(cap, strideGrid(y.numElements()), Dim3{256, 1, 1},
                                              0, y.ptr, i64(y.numElements()), float(softcap)));
    return y;
  });
}

/// `launch gated_mlp`: the gate/up GEMMs (or the batch-1 gated GEMV), the
/// gated activation and the down GEMM.
StatusOr<GpuKernel> prepareGatedMlp(const plan::PlanFile &, const pb::Step &step, const Attrs &a,
                                    const GpuPrepareContext &ctx) {
  const DType cdt = ctx.dtype;
  // x, gate_up, gate, up, down
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 5));
  ACCEL_RT_ASSIGN_OR_RETURN(int kind, activationCode(a));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fused, computeKernel(ctx, "gated_act"));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction split, computeKernel(ctx, "gated_act2"));
  ACCEL_RT_ASSIGN_OR_RETURN(const PlanKernel *gen, gatedMlpPlanKernel(step, ctx));
  return one([=](GpuRunState &st, Inputs &in) -> StatusOr<DeviceTensor> {
    GpuValue *gateUp = at(in, 1), *gate = at(in, 2), *up = at(in, 3), *down = at(in, 4);
    if (!down || (gateUp ? (gate || up) : !(gate && up)))
      return badInput("gated_mlp needs either gate_up, or both gate and up, and down");
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor x, st.toDevice(*in[0], cdt));
    DeviceTensor act;
    if (gateUp) {
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor w, st.toDevice(*gateUp, cdt));
      if (w.rank() == 2 && w.dim(0) % 2 == 0 && x.rank() >= 1 && x.dim(-1) == w.dim(1)) {
        // Batch 1: the gate_up GEMV with gated_act as its epilogue.
        Shape shape = x.shape;
        shape.back() = w.dim(0) / 2;
        ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor a1, st.empty(cdt, shape));
        ACCEL_RT_ASSIGN_OR_RETURN(bool fused, gatedGemv(st, x, w, a1, kind));
        if (fused) {
          ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor wd, st.toDevice(*down, cdt));
          return gemm(st, a1, wd, cdt, /*out=*/0);
        }
      }
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor gu, gemm(st, x, w, cdt));
      auto [rows, cols] = rowsCols(gu);
      if (cols % 2)
        return badInput("gate_up " + w.describe() + " must have an even number of rows");
      ACCEL_RT_ASSIGN_OR_RETURN(act, st.empty(cdt, {rows, cols / 2}));
      if (gen)
        ACCEL_RT_RETURN_IF_ERROR(launchGatedAct(st, *gen, gu, act));
      else if (rows * cols != 0)
        ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(fused, strideGrid(rows * cols / 2),
                                                Dim3{256, 1, 1}, 0, gu.ptr, act.ptr, i64(rows),
                                                i64(cols / 2), kind));
    } else {
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor wg, st.toDevice(*gate, cdt));
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor wu, st.toDevice(*up, cdt));
      if (wg.shape != wu.shape)
        return badInput("gate " + wg.describe() + " and up " + wu.describe() +
                        " differ in shape");
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor g, gemm(st, x, wg, cdt));
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor u, gemm(st, x, wu, cdt));
      ACCEL_RT_ASSIGN_OR_RETURN(act, st.empty(cdt, g.shape));
      const int64_t n = act.numElements();
      if (n)
        ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(split, strideGrid(n), Dim3{256, 1, 1}, 0, g.ptr,
                                                u.ptr, act.ptr, i64(n), kind));
    }
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor wd, st.toDevice(*down, cdt));
    return gemm(st, act, wd, cdt, /*out=*/0);
  });
}

} // namespace accel::rt::engine::ops
