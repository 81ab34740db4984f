//===- Ops.h - what the GPU op families share -------------------*- C++ -*-===//
//
// runtime/cuda/ops holds the GPU backend's step calls, one file per op
// family; prepareGpuStep (runtime/cuda/GpuSteps.cpp) hands each step to the
// prepare function of its family, declared here. Each prepare function
// reads the step's attributes once, looks up its kernels in the module, and
// returns a closure. Operand positions follow the step table in
// docs/plan-format.md (as runtime/cpu/CpuSteps.cpp does); absent optional
// operands arrive as null.
//
// Internal to the GPU backend, whose interface is runtime/cuda/GpuSteps.h.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_OPS_OPS_H
#define ACCEL_RUNTIME_CUDA_OPS_OPS_H

#include "runtime/cuda/GpuSteps.h"
#include "runtime/engine/StepAttrs.h"

#include <algorithm>
#include <string>
#include <vector>

namespace accel::rt::engine::ops {

namespace pb = accel::plan;
using gpu::CuDevicePtr;
using gpu::CuFunction;
using gpu::Dim3;
using Inputs = std::vector<GpuValue *>;
using Outputs = std::vector<GpuValue>;
using i64 = long long;
using Attrs = StepAttrs;

inline Status invalid(const std::string &msg) { return Status(StatusCode::kDataLoss, msg); }
inline Status badInput(const std::string &msg) {
  return Status(StatusCode::kInvalidArgument, msg);
}

/// Grid of a grid-stride loop over n elements.
inline Dim3 strideGrid(int64_t n, unsigned threads = 256) {
  int64_t blocks = (n + threads - 1) / threads;
  return Dim3{unsigned(std::clamp<int64_t>(blocks, 1, 1 << 20)), 1, 1};
}
/// Threads for a block that loops over `n` items: a multiple of 32 in [32, 1024].
inline unsigned rowThreads(int64_t n) {
  return unsigned(std::clamp<int64_t>((n + 31) / 32 * 32, 32, 1024));
}

/// The same data under another shape.
inline DeviceTensor viewAs(const DeviceTensor &t, Shape shape) {
  DeviceTensor v = t;
  v.shape = std::move(shape);
  return v;
}

inline GpuValue *at(const Inputs &in, size_t i) { return i < in.size() ? in[i] : nullptr; }

/// The kernels' code of an activation step's `kind` (Pointwise.cpp).
StatusOr<int> activationCode(const Attrs &a);

/// Copies along one axis (Views.cpp), for split and the ONNX glue: `len`
/// entries of `src` from `srcBegin` into `dst` from `dstBegin`, and a new
/// tensor of x's entries [begin, begin + len) along `axis` (the step's
/// output `out` when out >= 0, else a temporary).
Status copyAlongAxis(GpuRunState &st, const DeviceTensor &dst, int64_t dstBegin,
                     const DeviceTensor &src, int64_t srcBegin, int64_t len, int64_t axis);
StatusOr<DeviceTensor> sliceAxis(GpuRunState &st, const DeviceTensor &x, int64_t axis,
                                 int64_t begin, int64_t len, int out = -1);

//===----------------------------------------------------------------------===//
// The prepare functions, by family (file)
//===----------------------------------------------------------------------===//

// Embedding.cpp

/// `launch embedding` (vocabulary-parallel with vocab_shards > 1).
StatusOr<GpuKernel> prepareEmbedding(const plan::PlanFile &plan, const pb::Step &step,
                                     const Attrs &a, const GpuPrepareContext &ctx);

// Norms.cpp
/// `launch rms_norm` and `launch add_rms_norm`.
StatusOr<GpuKernel> prepareRmsNorm(const plan::PlanFile &plan, const pb::Step &step,
                                   const Attrs &a, const GpuPrepareContext &ctx);

/// `launch layer_norm`.
StatusOr<GpuKernel> prepareLayerNorm(const plan::PlanFile &plan, const pb::Step &step,
                                     const Attrs &a, const GpuPrepareContext &ctx);

// Pointwise.cpp
/// `launch residual_add`.
StatusOr<GpuKernel> prepareResidualAdd(const plan::PlanFile &plan, const pb::Step &step,
                                       const Attrs &a, const GpuPrepareContext &ctx);

/// `launch activation` and `launch gated_act`.
StatusOr<GpuKernel> prepareActivation(const plan::PlanFile &plan, const pb::Step &step,
                                      const Attrs &a, const GpuPrepareContext &ctx);

// Linear.cpp
/// A `gemm` step: linear (float, weight-only quantised, W8A8; bias and
/// activation epilogue) or the logits (select_last, bias, softcap).
StatusOr<GpuKernel> prepareGemm(const GpuPrepareContext &ctx, const pb::Step &step,
                                const Attrs &a);

/// `launch gated_mlp`: the gate/up GEMMs (or the batch-1 gated GEMV), the
/// gated activation and the down GEMM.
StatusOr<GpuKernel> prepareGatedMlp(const plan::PlanFile &plan, const pb::Step &step,
                                    const Attrs &a, const GpuPrepareContext &ctx);

/// act(x gate^T) * (x up^T) down^T for x [T, H], a fused gate_up [2S, H]
/// (gate rows first) and down [H, S], all in x's dtype, into a temporary
/// [T, H] (the batch-1 gated GEMV where it applies, else cuBLASLt and
/// gated_act): the moe step's shared expert.
StatusOr<DeviceTensor> denseGatedMlp(GpuRunState &st, const DeviceTensor &x,
                                     const DeviceTensor &gateUp, const DeviceTensor &down,
                                     int kind);

// Moe.cpp
/// `launch moe`: routing, the experts (an expert-batched GEMV kernel for
/// small steps and inside CUDA graphs, cuBLASLt per expert otherwise), the
/// weighted sum and the shared expert.
StatusOr<GpuKernel> prepareMoe(const plan::PlanFile &plan, const pb::Step &step, const Attrs &a,
                               const GpuPrepareContext &ctx);

// Attention.cpp
/// A `kv_write` step (k and v into the paged cache).
StatusOr<GpuKernel> prepareKvWrite(const GpuPrepareContext &ctx, const pb::Step &step,
                                   const Attrs &a);

/// An `attention_prefill` or `attention_decode` step.
StatusOr<GpuKernel> prepareAttention(const GpuPrepareContext &ctx, const pb::Step &step,
                                     const Attrs &a);

// Views.cpp
/// `launch split`: columns copied out on the device.
StatusOr<GpuKernel> prepareSplit(const plan::PlanFile &plan, const pb::Step &step,
                                 const Attrs &a, const GpuPrepareContext &ctx);





/// A `copy` step: a new buffer with the input's contents.
StatusOr<GpuKernel> prepareCopy(const pb::Step &step);

// Onnx.cpp
/// `launch onnx.<Op>`: the ONNX glue raising left in place.
StatusOr<GpuKernel> prepareOnnx(const plan::PlanFile &plan, const pb::Step &step,
                                const Attrs &a);

// Collectives.cpp
/// A `collective` step (all_reduce, all_gather) across the tensor-parallel
/// ranks.
StatusOr<GpuKernel> prepareCollective(const plan::PlanFile &plan, const pb::Step &step,
                                      const Attrs &a);

// Transfers.cpp
/// A `pp_transfer` step of a pipelined plan, on the side of stage
/// ctx.ppStage: the sending stage copies its value into the transfer's
/// staging buffer (GpuPipeline.h), the receiving one copies it out.
StatusOr<GpuKernel> preparePpTransfer(const plan::PlanFile &plan, const pb::Step &step,
                                      const Attrs &a, const GpuPrepareContext &ctx);

} // namespace accel::rt::engine::ops

#endif // ACCEL_RUNTIME_CUDA_OPS_OPS_H
