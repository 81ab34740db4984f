//===- KVWrite.h - storing this step's K and V in the paged cache -*- C++ -*-===//
//
// exec.kv_write on the CPU.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_KVWRITE_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_KVWRITE_H

#include "runtime/kv/BlockPool.h"

namespace accel::rt::cpu::transformer {

/// Per-layer dequantisation scales of an FP8 cache: stored = value / scale.
/// Float caches ignore them.
struct KVScales {
  float k = 1.0f;
  float v = 1.0f;
};

/// Stores row t of `k` and `v` ([tokens, kv_heads, head_dim], f32/f16/bf16)
/// at slot slotMapping[t] (i32 or i64, [tokens]) of layer `layer` of
/// `pool`, converted to the pool's dtype (divided by `scales` for an FP8
/// pool). A negative slot skips its token (padding); a slot past the pool,
/// a wrong layer or a shape that disagrees with the pool fails, writing
/// nothing.
Status kvWrite(kv::BlockPool &pool, int64_t layer, const Tensor &k,
               const Tensor &v, const Tensor &slotMapping, KVScales scales = {});

} // namespace accel::rt::cpu::transformer

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_KVWRITE_H
