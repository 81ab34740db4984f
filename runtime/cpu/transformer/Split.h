//===- Split.h - column splits and head views -------------------*- C++ -*-===//
//
// transformer.split, transformer.split_heads and transformer.merge_heads on
// the CPU.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_SPLIT_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_SPLIT_H

#include "core/Tensor.h"

#include <vector>

namespace accel::rt::cpu::transformer {

/// Cuts `x` [tokens, f] into consecutive column blocks [tokens, sizes[i]]
/// (q, k and v after a fused QKV linear); the sizes must add up to f.
StatusOr<std::vector<Tensor>> splitColumns(const Tensor &x,
                                           const std::vector<int64_t> &sizes);

/// [tokens, heads * headDim] viewed as [tokens, heads, headDim] (shares
/// storage).
StatusOr<Tensor> splitHeads(const Tensor &x, int64_t heads);
/// [tokens, heads, headDim] viewed as [tokens, heads * headDim] (shares
/// storage).
StatusOr<Tensor> mergeHeads(const Tensor &x);

} // namespace accel::rt::cpu::transformer

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_SPLIT_H
