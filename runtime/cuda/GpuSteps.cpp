//===- GpuSteps.cpp - one prepared GPU call per plan step ------------------===//
//
// Each prepare function reads the step's attributes once, looks up its
// kernels in the module, and returns a closure. Operand positions follow the
// step table in docs/plan-format.md (as runtime/cpu/CpuSteps.cpp does);
// absent optional operands arrive as null.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/GpuSteps.h"

#include "runtime/cuda/GpuFlashPrefill.h"
#include "runtime/cuda/GpuPlanKernels.h"
#include "runtime/cuda/GpuRotary.h"
#include "runtime/cuda/kernels/GemvShape.h"
#include "runtime/engine/StepAttrs.h"

#include "runtime/cpu/onnx/OnnxKernels.h"
#include "runtime/cpu/transformer/TransformerKernels.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <tuple>

namespace accel::rt::engine {

namespace pb = accel::plan;
namespace tk = accel::rt::cpu::transformer;
using gpu::CuDevicePtr;
using gpu::CuFunction;
using gpu::Dim3;
using Inputs = std::vector<GpuValue *>;
using Outputs = std::vector<GpuValue>;
using i64 = long long;

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

StatusOr<Tensor> greedyTokensOnDevice(gpu::GpuContext &gpu, gpu::CuDevicePtr logits,
                                      DType dtype, int64_t rows, int64_t vocab) {
  if (rows < 1 || vocab < 1 || vocab > int64_t(INT32_MAX) ||
      (dtype != DType::kF32 && dtype != DType::kBF16 && dtype != DType::kF16))
    return Status(StatusCode::kInvalidArgument,
                  "greedy selection needs float logits of at least one row and column, got " +
                      std::string(dtypeName(dtype)) + " [" + std::to_string(rows) + ", " +
                      std::to_string(vocab) + "]");
  ACCEL_RT_ASSIGN_OR_RETURN(gpu::CuFunction fn,
                            gpu.function(std::string("argmax_chunks_") + gpuDTypeSuffix(dtype)));
  // Sampling.cu's blocks each scan a chunk of 2048 values of a row (256
  // threads, 8 loads in flight each) and leave its best; the host reduces
  // the row's partials (63 for a 128256-value row).
  constexpr int64_t kChunk = 2048;
  const int64_t chunks = (vocab + kChunk - 1) / kChunk;
  const int64_t parts = rows * chunks;
  ACCEL_RT_ASSIGN_OR_RETURN(gpu::DeviceBuffer part, gpu.allocate(size_t(parts) * 8));
  const gpu::CuDevicePtr partV = part->ptr, partI = part->ptr + gpu::CuDevicePtr(parts) * 4;
  ACCEL_RT_RETURN_IF_ERROR(gpu.launchDependent(fn, gpu::Dim3{unsigned(chunks), unsigned(rows), 1},
                                               gpu::Dim3{256, 1, 1}, 0, logits, vocab, kChunk,
                                               partV, partI));
  std::vector<unsigned char> back(size_t(parts) * 8); // values, then indices: one copy
  ACCEL_RT_RETURN_IF_ERROR(gpu.download(back.data(), partV, back.size()));
  std::vector<float> v(static_cast<size_t>(parts));
  std::vector<int32_t> idx(static_cast<size_t>(parts));
  std::memcpy(v.data(), back.data(), size_t(parts) * 4);
  std::memcpy(idx.data(), back.data() + size_t(parts) * 4, size_t(parts) * 4);
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DType::kI64, {rows}));
  for (int64_t r = 0; r < rows; ++r) {
    float best = -std::numeric_limits<float>::infinity();
    int64_t at = vocab; // no finite value yet
    bool bad = false;
    for (int64_t c = 0; c < chunks; ++c) {
      const size_t p = size_t(r * chunks + c);
      if (idx[p] == -2)
        bad = true;
      else if (idx[p] < vocab && (v[p] > best || (v[p] == best && idx[p] < at))) {
        best = v[p];
        at = idx[p];
      }
    }
    // A NaN or +inf, or every value -inf: the host sampler's refusals.
    t.data<int64_t>()[r] = bad || at >= vocab ? -1 : at;
  }
  return t;
}

namespace {

Status invalid(const std::string &msg) { return Status(StatusCode::kDataLoss, msg); }
Status badInput(const std::string &msg) { return Status(StatusCode::kInvalidArgument, msg); }

int castCode(DType t) { return t == DType::kF16 ? 1 : t == DType::kBF16 ? 2 : 0; }
bool isComputeFloat(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16;
}

/// Grid of a grid-stride loop over n elements.
Dim3 strideGrid(int64_t n, unsigned threads = 256) {
  int64_t blocks = (n + threads - 1) / threads;
  return Dim3{unsigned(std::clamp<int64_t>(blocks, 1, 1 << 20)), 1, 1};
}
/// Threads for a block that loops over `n` items: a multiple of 32 in [32, 1024].
unsigned rowThreads(int64_t n) {
  return unsigned(std::clamp<int64_t>((n + 31) / 32 * 32, 32, 1024));
}

/// The same data under another shape.
DeviceTensor viewAs(const DeviceTensor &t, Shape shape) {
  DeviceTensor v = t;
  v.shape = std::move(shape);
  return v;
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

namespace {

using Attrs = StepAttrs;

GpuValue *at(const Inputs &in, size_t i) { return i < in.size() ? in[i] : nullptr; }



StatusOr<int> activationCode(const Attrs &a) {
  ACCEL_RT_ASSIGN_OR_RETURN(std::string kind, a.s("kind"));
  if (std::optional<tk::ActivationKind> k = tk::activationKindFromName(kind))
    return int(*k);
  return Status(StatusCode::kUnimplemented, "activation '" + kind + "' has no GPU kernel");
}

/// Rows and the last dimension of a tensor seen as [rows, cols].

//===----------------------------------------------------------------------===//
// GEMMs
//===----------------------------------------------------------------------===//

constexpr int64_t kGemvMaxRows = 1; // Gemv.cu builds M = 1 only

/// $ACCEL_GPU_GEMV=0 sends batch-1 GEMMs to cuBLASLt too (an A/B switch);
/// Gemv.cu's single-round variant runs with a target of 49152 warps
/// (Llama-3-8B: qkv and o_proj at ks 4, gate_up 2, down 8, the LM head 1;
/// measured at 32 layers, docs/performance.md), and
/// $ACCEL_GPU_GEMV_SINGLE_ROUND=0 runs the double-buffered one at 8192 (the
/// earlier default); $ACCEL_GPU_GEMV_KS=1|2|4|8 fixes the split-K, and
/// $ACCEL_GPU_GEMV_WARPS the target warp count (kernels::gemvShape).
struct GemvSettings {
  bool wanted = true;
  const char *variant = "sr_"; // "" with $ACCEL_GPU_GEMV_SINGLE_ROUND=0 (Gemv.cu)
  int forceKs = 0;
  int64_t targetWarps = 49152;
};
const GemvSettings &gemvSettings() {
  static const GemvSettings s = [] {
    GemvSettings g;
    const char *e = std::getenv("ACCEL_GPU_GEMV");
    g.wanted = !(e && std::string(e) == "0");
    if (const char *sr = std::getenv("ACCEL_GPU_GEMV_SINGLE_ROUND"); sr && std::string(sr) == "0") {
      g.variant = "";
      g.targetWarps = 8192;
    }
    if (const char *ks = std::getenv("ACCEL_GPU_GEMV_KS"))
      g.forceKs = std::atoi(ks);
    if (const char *w = std::getenv("ACCEL_GPU_GEMV_WARPS"); w && std::atoll(w) > 0)
      g.targetWarps = std::atoll(w);
    return g;
  }();
  return s;
}

/// Launches a Gemv.cu kernel of `shape`: dependently (its first weight
/// loads before griddepcontrol.wait) when the weights are plan constants,
/// plainly when an earlier kernel of the step wrote them (dequantised).
template <typename... Args>
Status launchGemv(GpuRunState &st, bool constWeights, CuFunction fn,
                  const kernels::GemvShape &shape, Args... args) {
  const Dim3 grid{shape.blocks, 1, 1}, block{unsigned(kernels::kGemvWarps * 32), 1, 1};
  return constWeights ? st.gpu->launchDependent(fn, grid, block, 0, args...)
                      : st.gpu->launch(fn, grid, block, 0, args...);
}

/// Whether Gemv.cu runs y = x w^T: one row of x, bf16/f16 (y in that dtype
/// or f32), K a multiple of 8, 16-byte aligned operands.
bool gemvApplies(const DeviceTensor &x, const DeviceTensor &w, DType outType) {
  auto [rows, k] = rowsCols(x);
  return rows >= 1 && rows <= kGemvMaxRows && (x.dtype == DType::kBF16 || x.dtype == DType::kF16) &&
         x.dtype == w.dtype && (outType == x.dtype || outType == DType::kF32) && k % 8 == 0 &&
         x.ptr % 16 == 0 && w.ptr % 16 == 0 && w.dim(0) > 0 && gemvSettings().wanted;
}

/// act [1, I] = act_kind(x w_gate^T) * (x w_up^T) for a fused gate_up w
/// [2I, K] in one launch (Gemv.cu's gated epilogue), when Gemv.cu applies;
/// false, having launched nothing, when it does not.
StatusOr<bool> gatedGemv(GpuRunState &st, const DeviceTensor &x, const DeviceTensor &w,
                         const DeviceTensor &act, int kind) {
  if (!gemvApplies(x, w, x.dtype) || w.dim(0) % 2 != 0)
    return false;
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn,
                            st.gpu->function(std::string("gemv_m1_gated_") +
                                             gemvSettings().variant + gpuDTypeSuffix(x.dtype)));
  const int64_t n = w.dim(0), k = w.dim(1);
  const GemvSettings &g = gemvSettings();
  const kernels::GemvShape shape = kernels::gemvShape(n, k, g.targetWarps, g.forceKs, true);
  ACCEL_RT_RETURN_IF_ERROR(launchGemv(st, w.constant, fn, shape, x.ptr, w.ptr, act.ptr,
                                      i64(n / 2), i64(k), int(shape.ks), kind));
  return true;
}

/// y [.., N] = x [.., K] @ w [N, K]^T, y in `outType`: Gemv.cu for one row
/// (batch-1 decode, bf16/f16), cuBLASLt otherwise.
StatusOr<DeviceTensor> gemm(GpuRunState &st, const DeviceTensor &x, const DeviceTensor &w,
                            DType outType) {
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
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, st.empty(outType, shape));
  const int64_t n = w.dim(0);
  // Batch-1 decode GEMMs in bf16/f16: Gemv.cu.
  if (gemvApplies(x, w, outType)) {
    ACCEL_RT_ASSIGN_OR_RETURN(
        CuFunction fn, st.gpu->function(std::string("gemv_m1_") + gemvSettings().variant +
                                        gpuDTypeSuffix(x.dtype) +
                                        (outType == DType::kF32 ? "_f32out" : "")));
    const GemvSettings &g = gemvSettings();
    const kernels::GemvShape shape = kernels::gemvShape(n, k, g.targetWarps, g.forceKs);
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
                                 const DeviceTensor &scale, DType outType) {
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
      k % 16 == 0 && x.ptr % 16 == 0 && w.ptr % 16 == 0 && gemvSettings().wanted) {
    Shape shape = x.shape;
    shape.back() = n;
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, st.empty(outType, shape));
    ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn,
                              st.gpu->function(std::string("gemv_m1_q_") + kind->second + "_" +
                                               gpuDTypeSuffix(x.dtype)));
    const GemvSettings &g = gemvSettings();
    // 16 weights per 16-byte chunk: the shape of a bf16 weight of half the K.
    const kernels::GemvShape sh = kernels::gemvShape(n, k / 2, g.targetWarps, g.forceKs);
    ACCEL_RT_RETURN_IF_ERROR(launchGemv(st, w.constant && scale.constant, fn, sh, x.ptr, w.ptr,
                                        scale.ptr, perChannel, y.ptr, i64(n), i64(k),
                                        int(sh.ks)));
    return y;
  }
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor wd, st.empty(x.dtype, {n, k}));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction dq, st.gpu->function(std::string("dequantize_rows_") +
                                                            gpuDTypeSuffix(x.dtype)));
  if (n * k)
    ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(dq, strideGrid(n * k), Dim3{256, 1, 1}, 0, w.ptr,
                                            kind->first, scale.ptr, perChannel, wd.ptr, i64(n),
                                            i64(k)));
  return gemm(st, x, wd, outType);
}

/// FP8 W8A8 GEMMs of more than kFp8OuterScalesMinRows - 1 rows let
/// cuBLASLt scale the sums itself (outer-vector scales, bf16 out); smaller
/// ones write f32 sums and rescale them in a kernel of their own, as i8
/// GEMMs do. On the H200 (32-layer Llama-3-8B shapes, 2026-11-30) the scaled
/// GEMMs made a 2048-token prefill 39.8 ms against 48.7, but a batch-16
/// decode step 6.33 ms against 5.03 (cuBLASLt's scaled FP8 kernels are slow
/// at small M; so are PyTorch's _scaled_mm there, docs/performance.md).
/// $ACCEL_GPU_FP8_OUTER_SCALES=0 never uses them, =1 always (A/B switches,
/// read when the step is prepared).
int64_t fp8OuterScalesMinRows() {
  const char *e = std::getenv("ACCEL_GPU_FP8_OUTER_SCALES");
  if (e && std::string(e) == "0")
    return std::numeric_limits<int64_t>::max();
  if (e && std::string(e) == "1")
    return 1;
  return 129;
}

/// W8A8 (accelc -precision=w8a8 / w8a8-fp8): y [.., N] = (q(x) [.., K] @
/// w [N, K]^T) * xs * scale, w i8 or f8E4M3FN with per-channel or per-tensor
/// f32 scales, x quantised to w's type here (QuantizeActivations.cu) with
/// `inputScale` (one f32: static, from calibration) or, when it is null,
/// one scale per row (dynamic per token). One row runs gemv_m1_w8a8_*; more
/// go to cuBLASLt's tensor cores: FP8 with outer-vector scales above 128
/// rows (where the library has them), otherwise (and for i8) exact i32 /
/// f32 sums rescaled by w8a8_rescale_*.
StatusOr<DeviceTensor> w8a8Gemm(GpuRunState &st, const DeviceTensor &x, const DeviceTensor &w,
                                const DeviceTensor &scale, const DeviceTensor *inputScale,
                                DType outType, int64_t outerScalesMinRows) {
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
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, st.empty(outType, shape));
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
  if (rows == 1 && w.ptr % 16 == 0 && gemvSettings().wanted) {
    ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn,
                              st.gpu->function(std::string("gemv_m1_w8a8_") + q + "_" +
                                               gpuDTypeSuffix(outType)));
    const GemvSettings &g = gemvSettings();
    // 16 weights per 16-byte chunk: the shape of a bf16 weight of half the K.
    const kernels::GemvShape sh = kernels::gemvShape(n, k / 2, g.targetWarps, g.forceKs);
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

StatusOr<GpuKernel> prepareGemm(const GpuPrepareContext &ctx, const pb::Step &step,
                                const Attrs &a) {
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 6));
  ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, 1));
  ACCEL_RT_ASSIGN_OR_RETURN(std::string epilogue, a.s("epilogue", std::string("none")));
  const DType cdt = ctx.dtype;
  if (epilogue == "none") {
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
    // 8-bit type on the device; zero points and per-group scales are
    // refused by GpuExecutor::create.
    const bool quantised = step.inputs_size() > 3 && step.inputs(3) >= 0;
    // W8A8: a static input scale (operand 5) or dynamic per-token scales.
    ACCEL_RT_ASSIGN_OR_RETURN(std::string inputQuant, a.s("input_quant", std::string("none")));
    if (inputQuant != "none" && inputQuant != "dynamic_per_token")
      return invalid("gemm input_quant '" + inputQuant + "' is not none or dynamic_per_token");
    const bool staticX = step.inputs_size() > 5 && step.inputs(5) >= 0;
    const bool w8a8 = staticX || inputQuant == "dynamic_per_token";
    if (w8a8 && (!quantised || staticX == (inputQuant == "dynamic_per_token")))
      return invalid("a W8A8 gemm needs a weight scale and either an input scale or "
                     "input_quant = dynamic_per_token");
    const int64_t outerScalesMinRows = fp8OuterScalesMinRows();
    return one([cdt, act, quantised, w8a8, outerScalesMinRows](
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
            y, w8a8Gemm(st, x, w, scale, xs.defined() ? &xs : nullptr, cdt, outerScalesMinRows));
      } else if (quantised) {
        ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor w, st.toDevice(*in[1]));
        ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor scale, st.toDevice(*in[3], DType::kF32));
        ACCEL_RT_ASSIGN_OR_RETURN(y, quantGemm(st, x, w, scale, cdt));
      } else {
        ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor w, st.toDevice(*in[1], cdt));
        ACCEL_RT_ASSIGN_OR_RETURN(y, gemm(st, x, w, cdt));
      }
      DeviceTensor bias;
      if (GpuValue *b = at(in, 2)) {
        ACCEL_RT_ASSIGN_OR_RETURN(bias, st.toDevice(*b, cdt));
      }
      ACCEL_RT_RETURN_IF_ERROR(biasAct(st, y, bias.defined() ? &bias : nullptr, act));
      return y;
    });
  }
  if (epilogue != "logits")
    return invalid("unknown gemm epilogue '" + epilogue + "'");
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
      const int64_t seqs = st.meta->numSeqs;
      if (rows != st.meta->numTokens)
        return badInput("select_last: the hidden states " + x.describe() + " do not have the " +
                        std::to_string(st.meta->numTokens) + " tokens of the step");
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor last, st.empty(cdt, {seqs, cols}));
      if (seqs * cols != 0)
        ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(gather, strideGrid(seqs * cols), Dim3{256, 1, 1},
                                                0, x.ptr, st.queryStartLoc.ptr, last.ptr,
                                                i64(seqs), i64(cols)));
      x = last;
    }
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, gemm(st, x, w, DType::kF32));
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

//===----------------------------------------------------------------------===//
// Attention and the KV cache
//===----------------------------------------------------------------------===//

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

} // namespace

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

namespace {

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

constexpr int kAttentionThreads = 128; // Attention.cu's kThreads
constexpr int kAttentionTile = 64;     // Attention.cu's kTile
constexpr int kDecodeThreads = 128;    // DecodeAttention.cu's kDecodeWarps * 32
constexpr int64_t kDecodeMaxGroup = 8; // DecodeAttention.cu's kDecodeMaxGroup

StatusOr<GpuKernel> prepareAttention(const GpuPrepareContext &ctx, const pb::Step &step,
                                     const Attrs &a) {
  ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
  ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, 1));
  ACCEL_RT_ASSIGN_OR_RETURN(AttentionParams p, attentionParams(ctx, a));
  ACCEL_RT_ASSIGN_OR_RETURN(KvKernels attn, kvKernels(ctx, "paged_attention"));
  ACCEL_RT_ASSIGN_OR_RETURN(CuFunction combine, computeKernel(ctx, "attention_combine"));
  // Decode steps: DecodeAttention.cu, one block per (sequence, KV head).
  // $ACCEL_GPU_DECODE_ATTENTION=0 keeps paged_attention for decode steps
  // (an A/B switch for measurements).
  std::map<int64_t, KvKernels> decodeKernels;
  const char *decodeEnv = std::getenv("ACCEL_GPU_DECODE_ATTENTION");
  const bool decodeKernelWanted = !(decodeEnv && std::string(decodeEnv) == "0");
  for (int64_t d : {64, 128, 256}) {
    if (!decodeKernelWanted)
      break;
    ACCEL_RT_ASSIGN_OR_RETURN(decodeKernels[d],
                              kvKernels(ctx, "decode_attention_d" + std::to_string(d)));
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
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor out, st.empty(cdt, q.shape));
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
    if (tokens == st.meta->numSeqs && decodeKernel != decodeKernels.end() &&
        heads / kvHeads <= kDecodeMaxGroup) {
      ACCEL_RT_RETURN_IF_ERROR(st.gpu->launchDependent(
          decodeKernel->second.pick(st, p.layer),
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

//===----------------------------------------------------------------------===//
// Copies along one axis (Split, Slice, Concat, split)
//===----------------------------------------------------------------------===//

/// Copies x[..., begin:begin+len, ...] (along `axis`) into dst's
/// [..., dstBegin:dstBegin+len, ...]; both contiguous.
Status copyAlongAxis(GpuRunState &st, const DeviceTensor &dst, int64_t dstBegin,
                     const DeviceTensor &src, int64_t srcBegin, int64_t len, int64_t axis) {
  int64_t outer = 1, inner = int64_t(dtypeSize(src.dtype));
  for (int64_t i = 0; i < axis; ++i)
    outer *= src.dim(i);
  for (int64_t i = axis + 1; i < src.rank(); ++i)
    inner *= src.dim(i);
  return st.gpu->copy2D(dst.ptr + CuDevicePtr(dstBegin * inner), size_t(dst.dim(axis) * inner),
                        src.ptr + CuDevicePtr(srcBegin * inner), size_t(src.dim(axis) * inner),
                        size_t(len * inner), size_t(outer));
}

StatusOr<DeviceTensor> sliceAxis(GpuRunState &st, const DeviceTensor &x, int64_t axis,
                                 int64_t begin, int64_t len) {
  Shape shape = x.shape;
  shape[size_t(axis)] = len;
  ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor out, st.empty(x.dtype, shape));
  ACCEL_RT_RETURN_IF_ERROR(copyAlongAxis(st, out, 0, x, begin, len, axis));
  return out;
}

//===----------------------------------------------------------------------===//
// ONNX glue
//===----------------------------------------------------------------------===//

/// A host tensor with `like`'s dtype and shape whose data must never be
/// read: the CPU kernels of shape-only and view operators take it.
Tensor shapeProxy(const DeviceTensor &like) {
  static const unsigned char dummy[64] = {0};
  return Tensor::view(like.dtype, like.shape, dummy, nullptr);
}

bool anyOnDeviceOnly(const Inputs &in) {
  for (GpuValue *v : in)
    if (v && !v->host.defined() && v->dev.defined())
      return true;
  return false;
}

int64_t normAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

/// The ONNX op on the host: inputs brought to the host (a fallback, logged,
/// when one had to be downloaded), the CPU kernel, host outputs.
Status runOnHost(GpuRunState &st, const std::string &name, const std::string &type,
                 const std::string &domain, const onnx::AttrMap &attrs, int64_t numOutputs,
                 Inputs &in, Outputs &out) {
  std::vector<Tensor> hosts(in.size());
  std::vector<const Tensor *> ptrs(in.size(), nullptr);
  bool anyCopied = false;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i])
      continue;
    bool copied = false;
    ACCEL_RT_ASSIGN_OR_RETURN(hosts[i], st.toHost(*in[i], &copied));
    anyCopied |= copied;
    ptrs[i] = &hosts[i];
  }
  if (anyCopied)
    st.noteFallback(name);
  while (!ptrs.empty() && !ptrs.back())
    ptrs.pop_back();
  std::vector<Tensor> results;
  ACCEL_RT_RETURN_IF_ERROR(onnx::runOp(type, domain, attrs, ptrs, size_t(numOutputs), results));
  results.resize(size_t(numOutputs));
  for (Tensor &t : results) {
    GpuValue v;
    v.host = std::move(t);
    out.push_back(std::move(v));
  }
  return Status::ok();
}

StatusOr<GpuKernel> prepareOnnx(const plan::PlanFile &, const pb::Step &step, const Attrs &a) {
  const std::string name = step.op();
  std::string type = name.substr(5), domain;
  if (type.rfind("com.microsoft.", 0) == 0) {
    domain = "com.microsoft";
    type = type.substr(14);
  }
  if (!onnx::isSupported(type, domain))
    return Status(StatusCode::kUnimplemented,
                  "the GPU backend has no kernel for ONNX operator '" + name.substr(5) +
                      "' (nor has its CPU fallback)");
  ACCEL_RT_ASSIGN_OR_RETURN(onnx::AttrMap attrs, a.onnxAttrs());
  ACCEL_RT_ASSIGN_OR_RETURN(int64_t numOutputs, a.i("accel.num_outputs", step.outputs_size()));
  const bool isView = domain.empty() && (type == "Reshape" || type == "Flatten" ||
                                         type == "Squeeze" || type == "Unsqueeze" ||
                                         type == "Identity");
  const bool isShape = domain.empty() && (type == "Shape" || type == "Size");
  auto intAttr = [attrs](const char *key, int64_t dflt) {
    auto it = attrs.find(key);
    return it != attrs.end() && std::holds_alternative<int64_t>(it->second)
               ? std::get<int64_t>(it->second)
               : dflt;
  };

  return GpuKernel([=](GpuRunState &st, Inputs &in, Outputs &out) -> Status {
    GpuValue *x = at(in, 0);
    // Shape arithmetic: only the shape of the data input matters.
    if ((isShape || isView) && x && !x->host.defined() && x->dev.defined()) {
      Tensor proxy = shapeProxy(x->dev);
      std::vector<Tensor> hosts(in.size());
      std::vector<const Tensor *> ptrs(in.size(), nullptr);
      ptrs[0] = &proxy;
      for (size_t i = 1; i < in.size(); ++i)
        if (in[i]) {
          ACCEL_RT_ASSIGN_OR_RETURN(hosts[i], st.toHost(*in[i]));
          ptrs[i] = &hosts[i];
        }
      while (!ptrs.empty() && !ptrs.back())
        ptrs.pop_back();
      std::vector<Tensor> results;
      ACCEL_RT_RETURN_IF_ERROR(onnx::runOp(type, domain, attrs, ptrs, size_t(numOutputs), results));
      results.resize(size_t(numOutputs));
      GpuValue v;
      if (isShape)
        v.host = std::move(results[0]);
      else
        v.dev = viewAs(x->dev, results[0].shape());
      out.push_back(std::move(v));
      return Status::ok();
    }
    // Data movement of device tensors: copies on the device.
    if (anyOnDeviceOnly(in) && domain.empty()) {
      if (type == "Split" && x) {
        const DeviceTensor &d = x->dev;
        const int64_t axis = normAxis(intAttr("axis", 0), d.rank());
        if (axis >= 0 && axis < d.rank()) {
          std::vector<int64_t> sizes;
          if (GpuValue *sv = at(in, 1)) {
            ACCEL_RT_ASSIGN_OR_RETURN(Tensor s, st.toHost(*sv));
            sizes = s.toInt64s();
          } else {
            const int64_t n = intAttr("num_outputs", numOutputs), dim = d.dim(axis);
            const int64_t chunk = n > 0 ? (dim + n - 1) / n : 0;
            for (int64_t i = 0; i < n; ++i)
              sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
          }
          int64_t total = 0;
          for (int64_t s : sizes)
            total += s;
          if (total == d.dim(axis) && int64_t(sizes.size()) == numOutputs) {
            int64_t begin = 0;
            for (int64_t s : sizes) {
              GpuValue v;
              ACCEL_RT_ASSIGN_OR_RETURN(v.dev, sliceAxis(st, d, axis, begin, s));
              out.push_back(std::move(v));
              begin += s;
            }
            return Status::ok();
          }
        }
      } else if (type == "Slice" && x && x->dev.defined() && in.size() >= 3) {
        const DeviceTensor &d = x->dev;
        std::vector<int64_t> starts, ends, axes, steps;
        ACCEL_RT_ASSIGN_OR_RETURN(Tensor ts, st.toHost(*in[1]));
        ACCEL_RT_ASSIGN_OR_RETURN(Tensor te, st.toHost(*in[2]));
        starts = ts.toInt64s();
        ends = te.toInt64s();
        if (GpuValue *av = at(in, 3)) {
          ACCEL_RT_ASSIGN_OR_RETURN(Tensor t, st.toHost(*av));
          axes = t.toInt64s();
        } else {
          for (size_t i = 0; i < starts.size(); ++i)
            axes.push_back(int64_t(i));
        }
        if (GpuValue *sv = at(in, 4)) {
          ACCEL_RT_ASSIGN_OR_RETURN(Tensor t, st.toHost(*sv));
          steps = t.toInt64s();
        } else {
          steps.assign(starts.size(), 1);
        }
        bool ok = starts.size() == ends.size() && axes.size() == starts.size() &&
                  steps.size() == starts.size();
        int64_t cutAxis = -1, cutBegin = 0, cutLen = 0, cuts = 0;
        for (size_t i = 0; ok && i < starts.size(); ++i) {
          const int64_t ax = normAxis(axes[i], d.rank());
          if (ax < 0 || ax >= d.rank() || steps[i] != 1) {
            ok = false;
            break;
          }
          const int64_t dim = d.dim(ax);
          int64_t b = starts[i] < 0 ? starts[i] + dim : starts[i];
          int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
          b = std::clamp<int64_t>(b, 0, dim);
          e = std::clamp<int64_t>(e, 0, dim);
          const int64_t len = std::max<int64_t>(0, e - b);
          if (b == 0 && len == dim)
            continue;
          ++cuts;
          cutAxis = ax;
          cutBegin = b;
          cutLen = len;
        }
        if (ok && cuts <= 1) {
          GpuValue v;
          if (cuts == 0)
            v.dev = d;
          else {
            ACCEL_RT_ASSIGN_OR_RETURN(v.dev, sliceAxis(st, d, cutAxis, cutBegin, cutLen));
          }
          out.push_back(std::move(v));
          return Status::ok();
        }
      } else if (type == "Concat") {
        // Every input on the device (or brought there), one float dtype.
        std::vector<DeviceTensor> parts;
        bool ok = !in.empty();
        for (GpuValue *v : in) {
          if (!v) {
            ok = false;
            break;
          }
          std::optional<DType> want;
          if (v->dev.defined())
            want = v->dev.dtype;
          else if (isFloat(v->host.dtype()))
            want = st.dtype;
          ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor t, st.toDevice(*v, want));
          parts.push_back(t);
        }
        if (ok) {
          const DeviceTensor &p0 = parts[0];
          const int64_t axis = normAxis(intAttr("axis", 0), p0.rank());
          int64_t total = 0;
          for (const DeviceTensor &p : parts) {
            if (p.dtype != p0.dtype || p.rank() != p0.rank() || axis < 0 || axis >= p0.rank()) {
              ok = false;
              break;
            }
            for (int64_t i = 0; i < p0.rank(); ++i)
              if (i != axis && p.dim(i) != p0.dim(i))
                ok = false;
            total += p.dim(axis);
          }
          if (ok) {
            Shape shape = p0.shape;
            shape[size_t(axis)] = total;
            GpuValue v;
            ACCEL_RT_ASSIGN_OR_RETURN(v.dev, st.empty(p0.dtype, shape));
            int64_t begin = 0;
            for (const DeviceTensor &p : parts) {
              ACCEL_RT_RETURN_IF_ERROR(copyAlongAxis(st, v.dev, begin, p, 0, p.dim(axis), axis));
              begin += p.dim(axis);
            }
            out.push_back(std::move(v));
            return Status::ok();
          }
        }
      }
    }
    // Everything else, and anything whose data is on the host: the CPU.
    return runOnHost(st, name, type, domain, attrs, numOutputs, in, out);
  });
}

//===----------------------------------------------------------------------===//
// launch
//===----------------------------------------------------------------------===//

/// A view step that works on either copy of a value.
template <typename ShapeFn> GpuKernel viewStep(ShapeFn shapeOf) {
  return [shapeOf](GpuRunState &, Inputs &in, Outputs &out) -> Status {
    GpuValue &x = *in[0];
    const GpuValue *like = at(in, 1);
    ACCEL_RT_ASSIGN_OR_RETURN(Shape shape, shapeOf(x.shape(), like ? &like->shape() : nullptr));
    GpuValue v;
    if (x.host.defined()) {
      ACCEL_RT_ASSIGN_OR_RETURN(v.host, x.host.reshaped(shape));
    }
    if (x.dev.defined()) {
      int64_t n = 1;
      for (int64_t d : shape)
        n *= d;
      if (n != x.dev.numElements())
        return badInput("cannot view " + x.dev.describe() + " as " + shapeToString(shape));
      v.dev = viewAs(x.dev, shape);
    }
    out.push_back(std::move(v));
    return Status::ok();
  };
}

StatusOr<GpuKernel> prepareLaunch(const plan::PlanFile &plan, const pb::Step &step,
                                  const Attrs &a, const GpuPrepareContext &ctx) {
  const std::string &op = step.op();
  const DType cdt = ctx.dtype;

  if (op.rfind("onnx.", 0) == 0)
    return prepareOnnx(plan, step, a);
  // A step that names a kernel the compiler generated runs it (GpuPlanKernels).
  ACCEL_RT_ASSIGN_OR_RETURN(std::optional<GpuKernel> generated,
                            prepareGeneratedStep(plan, step, ctx));
  if (generated)
    return std::move(*generated);

  if (op == "positions") {
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 0, 0));
    ACCEL_RT_ASSIGN_OR_RETURN(std::string dn, a.s("dtype"));
    std::optional<DType> dt = dtypeFromName(dn);
    if (!dt)
      return invalid("attribute 'dtype' names unknown element type '" + dn + "'");
    const DType d = *dt;
    return GpuKernel([d](GpuRunState &st, Inputs &, Outputs &out) -> Status {
      GpuValue v;
      // A CUDA-graph step has its positions on the device already.
      if (d == DType::kI64 && st.positionsI64.defined()) {
        v.dev = st.positionsI64;
        out.push_back(std::move(v));
        return Status::ok();
      }
      if (d == DType::kI32 && st.positionsI32.defined()) {
        v.dev = st.positionsI32;
        out.push_back(std::move(v));
        return Status::ok();
      }
      v.host = st.meta->positions.astype(d);
      if (!v.host.defined() && st.meta->numTokens != 0)
        return Status(StatusCode::kResourceExhausted, "cannot allocate the positions");
      out.push_back(std::move(v));
      return Status::ok();
    });
  }
  if (op == "embedding") {
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 2));
    ACCEL_RT_ASSIGN_OR_RETURN(double scale, a.f("scale", 1.0));
    // Vocabulary-parallel (accelc -tp=N): the table is this rank's block of
    // rows, whose first row is rank * rows; other ids give zero rows, and
    // the all_reduce after the step sums the ranks' lookups.
    ACCEL_RT_ASSIGN_OR_RETURN(int64_t vocabShards, a.i("vocab_shards", 1));
    if (vocabShards < 1 || (vocabShards != 1 && vocabShards != plan.metadata().tp_size()))
      return badInput("a vocabulary-parallel embedding over " + std::to_string(vocabShards) +
                      " ranks in a plan for " + std::to_string(plan.metadata().tp_size()));
    // A padded vocabulary: the last rows are padding, ids stop at vocab_size.
    ACCEL_RT_ASSIGN_OR_RETURN(int64_t realVocab, a.i("vocab_size", 0));
    ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn, computeKernel(ctx, "embedding"));
    return one([=](GpuRunState &st, Inputs &in) -> StatusOr<DeviceTensor> {
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor table, st.toDevice(*in[0], cdt));
      if (table.rank() != 2)
        return badInput("the embedding table " + table.describe() + " must be [vocab, hidden]");
      int64_t first = 0, vocabSize = table.dim(0);
      if (vocabShards > 1) {
        if (!st.comm || st.comm->size() != vocabShards)
          return Status(StatusCode::kInternal,
                        "a vocabulary-parallel embedding over " + std::to_string(vocabShards) +
                            " ranks needs every rank running (the tensor-parallel executor)");
        first = int64_t(st.comm->rank()) * table.dim(0);
        vocabSize = vocabShards * table.dim(0);
      }
      if (realVocab > 0)
        vocabSize = std::min(vocabSize, realVocab);
      GpuValue &idv = *in[1];
      if (idv.host.defined()) {
        if (!isInteger(idv.host.dtype()))
          return badInput("the ids " + idv.host.describe() + " must be integers");
        std::vector<int64_t> ids = idv.host.toInt64s();
        for (size_t t = 0; t < ids.size(); ++t)
          if (ids[t] < 0 || ids[t] >= vocabSize)
            return badInput("token " + std::to_string(t) + " has id " + std::to_string(ids[t]) +
                            ", outside the vocabulary of " + std::to_string(vocabSize) +
                            " entries");
        if (idv.host.dtype() != DType::kI64 && idv.host.dtype() != DType::kI32)
          idv.host = idv.host.astype(DType::kI64);
      }
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor ids, st.toDevice(idv));
      if (ids.dtype != DType::kI64 && ids.dtype != DType::kI32)
        return badInput("the ids " + ids.describe() + " must be i32 or i64");
      const int64_t tokens = ids.numElements(), hidden = table.dim(1);
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor out, st.empty(cdt, {tokens, hidden}));
      if (tokens)
        ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(fn, Dim3{unsigned(tokens), 1, 1},
                                                Dim3{rowThreads(hidden), 1, 1}, 0, table.ptr,
                                                ids.ptr, int(ids.dtype == DType::kI64), out.ptr,
                                                i64(hidden), i64(table.dim(0)), i64(first),
                                                float(scale)));
      return out;
    });
  }
  if (op == "rms_norm" || op == "add_rms_norm") {
    const bool add = op == "add_rms_norm";
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
      ACCEL_RT_ASSIGN_OR_RETURN(normed.dev, st.empty(cdt, x.shape));
      if (add) {
        ACCEL_RT_ASSIGN_OR_RETURN(sum.dev, st.empty(cdt, x.shape));
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
  if (op == "layer_norm") {
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
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, st.empty(cdt, x.shape));
      if (rows)
        ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(fn, Dim3{unsigned(rows), 1, 1},
                                                Dim3{rowThreads(hidden), 1, 1}, 0, x.ptr, w.ptr,
                                                b.defined() ? b.ptr : CuDevicePtr(0), y.ptr,
                                                i64(hidden), float(eps)));
      return y;
    });
  }
  if (op == "residual_add") {
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 2));
    ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn, computeKernel(ctx, "residual_add"));
    return one([=](GpuRunState &st, Inputs &in) -> StatusOr<DeviceTensor> {
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor r, st.toDevice(*in[0], cdt));
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor b, st.toDevice(*in[1], cdt));
      if (r.numElements() != b.numElements())
        return badInput("the residual " + r.describe() + " and the branch " + b.describe() +
                        " differ in size");
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, st.empty(cdt, r.shape));
      const int64_t n = y.numElements();
      if (n)
        ACCEL_RT_RETURN_IF_ERROR(
            st.gpu->launch(fn, strideGrid(n), Dim3{256, 1, 1}, 0, r.ptr, b.ptr, y.ptr, i64(n)));
      return y;
    });
  }
  if (op == "rotary")
    return prepareGpuRotary(ctx, step, a);
  if (op == "qkv_rotary")
    return prepareGpuQkvRotary(ctx, step, a, /*intoCache=*/false);
  if (op == "activation" || op == "gated_act") {
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
    ACCEL_RT_ASSIGN_OR_RETURN(int kind, activationCode(a));
    if (op == "activation") {
      ACCEL_RT_ASSIGN_OR_RETURN(CuFunction fn, computeKernel(ctx, "activation"));
      return one([=](GpuRunState &st, Inputs &in) -> StatusOr<DeviceTensor> {
        ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor x, st.toDevice(*in[0], cdt));
        ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, st.empty(cdt, x.shape));
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
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor y, st.empty(cdt, {rows, inter}));
      if (rows * inter != 0)
        ACCEL_RT_RETURN_IF_ERROR(st.gpu->launch(fn, strideGrid(rows * inter), Dim3{256, 1, 1}, 0,
                                                x.ptr, y.ptr, i64(rows), i64(inter), kind));
      return y;
    });
  }
  if (op == "gated_mlp") {
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
            return gemm(st, a1, wd, cdt);
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
      return gemm(st, act, wd, cdt);
    });
  }
  if (op == "split") {
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
    ACCEL_RT_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, a.ints("sizes"));
    ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, sizes.size()));
    return GpuKernel([=](GpuRunState &st, Inputs &in, Outputs &out) -> Status {
      ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor x, st.toDevice(*in[0], cdt));
      int64_t total = 0;
      for (int64_t s : sizes)
        total += s;
      if (x.rank() != 2 || total != x.dim(1))
        return badInput("cannot split " + x.describe() + " into columns of " +
                        std::to_string(total) + " in all");
      int64_t begin = 0;
      for (int64_t s : sizes) {
        GpuValue v;
        ACCEL_RT_ASSIGN_OR_RETURN(v.dev, sliceAxis(st, x, 1, begin, s));
        out.push_back(std::move(v));
        begin += s;
      }
      return Status::ok();
    });
  }
  if (op == "split_heads") {
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
    ACCEL_RT_ASSIGN_OR_RETURN(int64_t heads, a.i("num_heads"));
    return viewStep([heads](const Shape &s, const Shape *) -> StatusOr<Shape> {
      if (s.size() != 2 || heads <= 0 || s[1] % heads != 0)
        return badInput("cannot split " + shapeToString(s) + " into " + std::to_string(heads) +
                        " heads");
      return Shape{s[0], heads, s[1] / heads};
    });
  }
  if (op == "merge_heads") {
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
    return viewStep([](const Shape &s, const Shape *) -> StatusOr<Shape> {
      if (s.size() != 3)
        return badInput("merge_heads needs [tokens, heads, head_dim], got " + shapeToString(s));
      return Shape{s[0], s[1] * s[2]};
    });
  }
  if (op == "flatten_tokens") {
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
    ACCEL_RT_ASSIGN_OR_RETURN(int64_t rank, a.i("rank"));
    return viewStep([rank](const Shape &s, const Shape *) -> StatusOr<Shape> {
      int64_t n = 1;
      for (int64_t d : s)
        n *= d;
      if (rank == 1)
        return Shape{n};
      if (s.empty())
        return badInput("cannot flatten a scalar into [tokens, features]");
      return Shape{s.back() ? n / s.back() : 0, s.back()};
    });
  }
  if (op == "unflatten_tokens") {
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 2, 2));
    ACCEL_RT_ASSIGN_OR_RETURN(int64_t tokenDims, a.i("num_token_dims"));
    return viewStep([tokenDims](const Shape &s, const Shape *like) -> StatusOr<Shape> {
      if (!like || tokenDims < 0 || tokenDims > int64_t(like->size()))
        return badInput("cannot take " + std::to_string(tokenDims) + " token dimensions");
      Shape shape(like->begin(), like->begin() + tokenDims);
      int64_t tokens = 1;
      for (int64_t d : shape)
        tokens *= d;
      if (s.empty() || tokens != s[0])
        return badInput("the input " + shapeToString(s) + " does not have the " +
                        std::to_string(tokens) + " tokens of " + shapeToString(*like));
      for (size_t i = 1; i < s.size(); ++i)
        shape.push_back(s[i]);
      return shape;
    });
  }
  return Status(StatusCode::kUnimplemented, "the GPU backend has no kernel for launch '" + op + "'");
}

} // namespace

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

namespace {

/// A `collective` step across the plan's tensor-parallel ranks: NCCL on
/// the rank's stream (GpuRunState::comm, TpGpuExecutor), into a new device
/// tensor of the input's dtype. all_gather along a non-leading axis gathers
/// rank-major ([ranks, outer, inner], NCCL's layout) into a scratch buffer,
/// then one 2D copy per rank puts its [outer, inner] block at column
/// rank * inner of the [outer, ranks * inner] result.
StatusOr<GpuKernel> prepareCollective(const plan::PlanFile &plan, const pb::Step &step,
                                      const Attrs &a) {
  ACCEL_RT_ASSIGN_OR_RETURN(CollectiveParams cp,
                            readCollectiveParams(plan, step, a, /*allowSingle=*/true));
  const int64_t group = cp.group, axisAttr = cp.axis;
  const bool gather = cp.gather;
  return GpuKernel([group, gather, axisAttr](GpuRunState &st, Inputs &in,
                                             Outputs &out) -> Status {
    if (group == 1) {
      out.push_back(*in[0]);
      return Status::ok();
    }
    if (!st.comm || st.comm->size() != group)
      return Status(StatusCode::kInternal,
                    "a collective over " + std::to_string(group) +
                        " ranks needs every rank running (the tensor-parallel executor)");
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor x, st.toDevice(*in[0]));
    const size_t count = size_t(x.numElements());
    void *stream = st.gpu->stream();
    st.gpu->noteForeignWork(); // NCCL's kernels: the next launch is a plain one
    GpuValue v;
    if (!gather) {
      ACCEL_RT_ASSIGN_OR_RETURN(v.dev, st.empty(x.dtype, x.shape));
      if (count && st.p2p && gpu::P2pAllReduce::takes(count, x.dtype))
        ACCEL_RT_RETURN_IF_ERROR(st.p2p->run(st.comm->rank(), x.ptr, v.dev.ptr, count, x.dtype));
      else if (count)
        ACCEL_RT_RETURN_IF_ERROR(
            st.comm->allReduceSum(x.ptr, v.dev.ptr, count, x.dtype, stream));
      out.push_back(std::move(v));
      return Status::ok();
    }
    const int64_t axis = axisAttr < 0 ? axisAttr + x.rank() : axisAttr;
    if (axis < 0 || axis >= x.rank())
      return badInput("all_gather axis " + std::to_string(axisAttr) + " is out of range for " +
                      x.describe());
    Shape shape = x.shape;
    shape[size_t(axis)] *= group;
    ACCEL_RT_ASSIGN_OR_RETURN(v.dev, st.empty(x.dtype, shape));
    int64_t outer = 1;
    for (int64_t i = 0; i < axis; ++i)
      outer *= x.dim(i);
    if (count == 0) {
      out.push_back(std::move(v));
      return Status::ok();
    }
    if (outer == 1) { // rank-major is the result's layout
      ACCEL_RT_RETURN_IF_ERROR(st.comm->allGather(x.ptr, v.dev.ptr, count, x.dtype, stream));
      out.push_back(std::move(v));
      return Status::ok();
    }
    ACCEL_RT_ASSIGN_OR_RETURN(DeviceTensor ranks, st.empty(x.dtype, {group * int64_t(count)}));
    ACCEL_RT_RETURN_IF_ERROR(st.comm->allGather(x.ptr, ranks.ptr, count, x.dtype, stream));
    const size_t elem = dtypeSize(x.dtype);
    const size_t block = count * elem;                         // one rank's [outer, inner]
    const size_t width = block / size_t(outer);                // one row of it (inner)
    const size_t pitch = width * size_t(group);                // a row of the result
    for (int64_t r = 0; r < group; ++r) {
      const gpu::CuDevicePtr src = ranks.ptr + gpu::CuDevicePtr(size_t(r) * block);
      const gpu::CuDevicePtr dst = v.dev.ptr + gpu::CuDevicePtr(size_t(r) * width);
      if (pitch < (size_t(1) << 31)) {
        ACCEL_RT_RETURN_IF_ERROR(st.gpu->copy2D(dst, pitch, src, width, width, size_t(outer)));
      } else {
        for (int64_t i = 0; i < outer; ++i)
          ACCEL_RT_RETURN_IF_ERROR(st.gpu->copy(dst + gpu::CuDevicePtr(size_t(i) * pitch),
                                                src + gpu::CuDevicePtr(size_t(i) * width),
                                                width));
      }
    }
    out.push_back(std::move(v));
    return Status::ok();
  });
}

} // namespace

StatusOr<GpuKernel> prepareGpuStep(const plan::PlanFile &plan, const pb::Step &step,
                                   const GpuPrepareContext &ctx) {
  Attrs a(plan, step, ctx.tpRank);
  const std::string &kind = step.kind();
  if (kind == "launch")
    return prepareLaunch(plan, step, a, ctx);
  if (kind == "gemm")
    return prepareGemm(ctx, step, a);
  if (kind == "kv_write" && step.op() == "qkv_rotary")
    return prepareGpuQkvRotary(ctx, step, a, /*intoCache=*/true);
  if (kind == "kv_write")
    return prepareKvWrite(ctx, step, a);
  if (kind == "attention_prefill" || kind == "attention_decode")
    return prepareAttention(ctx, step, a);
  if (kind == "copy") {
    ACCEL_RT_RETURN_IF_ERROR(needInputs(step, 1, 1));
    ACCEL_RT_RETURN_IF_ERROR(needOutputs(step, 1));
    return GpuKernel([](GpuRunState &st, Inputs &in, Outputs &out) -> Status {
      GpuValue v;
      if (in[0]->dev.defined()) {
        ACCEL_RT_ASSIGN_OR_RETURN(v.dev, st.empty(in[0]->dev.dtype, in[0]->dev.shape));
        ACCEL_RT_RETURN_IF_ERROR(st.gpu->copy(v.dev.ptr, in[0]->dev.ptr, v.dev.byteSize()));
      } else {
        v.host = in[0]->host.clone();
      }
      out.push_back(std::move(v));
      return Status::ok();
    });
  }
  if (kind == "collective")
    return prepareCollective(plan, step, a);
  return Status(StatusCode::kUnimplemented, "unknown step kind '" + kind + "'");
}

} // namespace accel::rt::engine
