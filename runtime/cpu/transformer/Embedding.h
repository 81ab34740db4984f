//===- Embedding.h - embedding-table lookup ---------------------*- C++ -*-===//
//
// transformer.embedding on the CPU.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_EMBEDDING_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_EMBEDDING_H

#include "core/Tensor.h"

namespace accel::rt::cpu::transformer {

/// result[t, :] = table[ids[t], :] * scale. `table` is [vocab, hidden] f32,
/// f16 or bf16; `ids` [tokens] i32 or i64; the result is [tokens, hidden] of
/// the table's dtype (rows copied bit for bit when scale is 1). An id
/// outside [0, vocab) fails, naming the id, its token and the vocabulary
/// size. Learned position embeddings use it with positions as ids.
///
/// Vocabulary-parallel (a tensor-parallel rank's shard, `vocabSize` > 0):
/// `table` holds rows [vocabOffset, vocabOffset + table.dim(0)) of a
/// vocabulary of `vocabSize` entries; an id in that block gives its row
/// (times scale), any other id in [0, vocabSize) a row of zeros, so that
/// the sum over the ranks is the whole lookup. Ids are checked against
/// `vocabSize`; rows past it are a padded vocabulary's (accelc -tp with a
/// vocabulary the ranks do not divide) and are never read. With
/// vocabOffset 0, the same bounds a whole table's ids below its rows.
StatusOr<Tensor> embedding(const Tensor &table, const Tensor &ids,
                           float scale = 1.0f, int64_t vocabOffset = 0,
                           int64_t vocabSize = 0);

} // namespace accel::rt::cpu::transformer

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_EMBEDDING_H
