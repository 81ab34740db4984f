//===- GpuRotary.h - the GPU steps that rotate q and k ------------*- C++ -*-===//
//
// The `rotary` launch (one of q or k) and the fused QKV forms that
// accel-fuse-qkv-rotary produces (docs/plan-format.md): the `qkv_rotary`
// launch (a fused QKV projection's output split into q, k and v, q and k
// rotated) and the `kv_write` step `qkv_rotary` (the same, with k and v
// written straight into the paged KV pool and q the one result). All run
// runtime/cuda/kernels/Rotary.cu, one block per token.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_GPUROTARY_H
#define ACCEL_RUNTIME_CUDA_GPUROTARY_H

#include "runtime/cuda/GpuSteps.h"
#include "runtime/engine/StepAttrs.h"

namespace accel::rt::engine {

/// launch rotary(x [tokens, heads, head_dim], positions, cos?, sin?).
StatusOr<GpuKernel> prepareGpuRotary(const GpuPrepareContext &ctx, const accel::plan::Step &step,
                                     const StepAttrs &a);

/// qkv_rotary(qkv [tokens, (H + 2 Hkv) D], positions, cos?, sin?): as the
/// launch (results q, k, v) or, with `intoCache`, as the kv_write step
/// (k and v into layer `layer` of the pool at the step's slots; result q).
StatusOr<GpuKernel> prepareGpuQkvRotary(const GpuPrepareContext &ctx,
                                        const accel::plan::Step &step, const StepAttrs &a,
                                        bool intoCache);

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_CUDA_GPUROTARY_H
