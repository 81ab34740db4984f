//===- KVWrite.h - storing this step's K and V in the paged cache -*- C++ -*-===//
//
// exec.kv_write on the CPU.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_KVWRITE_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_KVWRITE_H

#include "runtime/kv/BlockPool.h"

#include <string>
#include <vector>

namespace accel::rt::cpu::transformer {

/// Dequantisation scales of an FP8 cache, per layer or per KV head: stored
/// = value / scale. Float caches ignore them.
struct KVScales {
  float k = 1.0f;
  float v = 1.0f;
  /// Per KV head (calibrated, accelc -kv-cache-dtype=fp8 -calibration):
  /// when set, one entry per KV head of the pool, used instead of k / v.
  std::vector<float> kHeads, vHeads;
  float kFor(int64_t head) const { return kHeads.empty() ? k : kHeads[size_t(head)]; }
  float vFor(int64_t head) const { return vHeads.empty() ? v : vHeads[size_t(head)]; }
  /// Empty when every scale is positive and the per-head lists (if any)
  /// have `kvHeads` entries each; else what is wrong, in one sentence.
  std::string check(int64_t kvHeads) const;
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
