//===- Embedding.h - embedding-table lookup ---------------------*- C++ -*-===//
//
// transformer.embedding on the CPU.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_EMBEDDING_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_EMBEDDING_H

#include "runtime/tensor/Tensor.h"

namespace accel::rt::cpu::transformer {

/// result[t, :] = table[ids[t], :] * scale. `table` is [vocab, hidden] f32,
/// f16 or bf16; `ids` [tokens] i32 or i64; the result is [tokens, hidden] of
/// the table's dtype (rows copied bit for bit when scale is 1). An id
/// outside [0, vocab) fails, naming the id, its token and the vocabulary
/// size. Learned position embeddings use it with positions as ids.
StatusOr<Tensor> embedding(const Tensor &table, const Tensor &ids,
                           float scale = 1.0f);

} // namespace accel::rt::cpu::transformer

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_EMBEDDING_H
