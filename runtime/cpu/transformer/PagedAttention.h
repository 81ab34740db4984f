//===- PagedAttention.h - attention over the paged KV cache -----*- C++ -*-===//
//
// exec.attention_prefill / exec.attention_decode (and, with kvWrite,
// transformer.attention) on the CPU, for a ragged batch of sequences.
//
// Sequence i's query tokens are rows [query_start_loc[i],
// query_start_loc[i+1]) of q; its context is its seq_lens[i] tokens in the
// cache (this step's K and V already written), found through row i of
// block_tables: token p is at slot block_tables[i][p / block_size] *
// block_size + p % block_size. With n query tokens and context L, query j
// sits at position L - n + j, and sees key positions
//   lo = max(0, pos - W + 1) (W the sliding window, else lo = 0)
//   hi = pos when causal, L - 1 otherwise.
// Scores are (q . k) * scale, then softcap * tanh(score / softcap) when a
// softcap is set; softmax (max-subtracted, f32) over [lo, hi]; the output
// is the weighted sum of V, accumulated in f32. Query head h reads KV head
// h / (num_heads / num_kv_heads) (GQA, MQA).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_PAGEDATTENTION_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_PAGEDATTENTION_H

#include "runtime/cpu/transformer/KVWrite.h"
#include "runtime/kv/StepMetadata.h"

namespace accel::rt::cpu::transformer {

struct PagedAttentionParams {
  /// The layer of the KV pool to read.
  int64_t layer = 0;
  /// Multiplies q . k; 0 means 1 / sqrt(head_dim).
  float scale = 0.0f;
  bool causal = true;
  /// W > 0: a query at position p sees keys (p - W, p]. 0: no window.
  int64_t slidingWindow = 0;
  /// c > 0: scores become c * tanh(scores / c). 0: no softcap.
  float softcap = 0.0f;
  /// Dequantisation scales of an FP8 pool (ignored for float pools).
  KVScales kvScales;
};

/// Attention of `q` [tokens, num_heads, head_dim] (f32/f16/bf16) over the
/// paged cache, as described above; the result has q's shape and dtype.
/// `queryStartLoc` [seqs + 1] (i32/i64, from 0 to tokens, non-decreasing),
/// `seqLens` [seqs] (each at least its query count) and `blockTables`
/// [seqs, max_blocks] (i32/i64; the first ceil(seq_len / block_size)
/// entries of each row are valid block ids). Every violation fails naming
/// the sequence.
StatusOr<Tensor> pagedAttention(const Tensor &q, const kv::BlockPool &pool,
                                const Tensor &queryStartLoc,
                                const Tensor &seqLens, const Tensor &blockTables,
                                const PagedAttentionParams &params);

/// transformer.attention: kvWrite(k, v) at the step's slots, then
/// pagedAttention(q) with the step's metadata.
StatusOr<Tensor> attention(const Tensor &q, const Tensor &k, const Tensor &v,
                           kv::BlockPool &pool, const kv::StepMetadata &step,
                           const PagedAttentionParams &params);

} // namespace accel::rt::cpu::transformer

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_PAGEDATTENTION_H
