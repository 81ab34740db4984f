//===- StepMetadata.h - the per-step tensors of a ragged batch --*- C++ -*-===//
//
// What the kernels of one engine step read about its batch (the runtime side
// of !transformer.batch and of exec.step_input): the sequences of the step,
// in order, each contributing `numNewTokens` query tokens (a prefill chunk,
// or one decode token) to one flat, token-major list.
//
//   query_start_loc [seqs + 1] i32: sequence i's tokens are rows
//                   [query_start_loc[i], query_start_loc[i + 1]).
//   seq_lens        [seqs] i32: context length after this step (cached +
//                   new tokens).
//   positions       [tokens] i32: each token's position in its sequence.
//   slot_mapping    [tokens] i32: each new token's cache slot.
//   block_tables    [seqs, max_blocks] i32: row i is sequence i's block
//                   table, padded with 0.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_KV_STEPMETADATA_H
#define ACCEL_RUNTIME_KV_STEPMETADATA_H

#include "runtime/kv/SequenceKV.h"

namespace accel::rt::kv {

/// One sequence of a step and how many new tokens it brings.
struct StepSequence {
  SequenceKV *seq = nullptr;
  int64_t numNewTokens = 0;
};

struct StepMetadata {
  int64_t numSeqs = 0;
  int64_t numTokens = 0;
  int64_t maxBlocksPerSeq = 0;
  Tensor queryStartLoc; // i32 [seqs + 1]
  Tensor seqLens;       // i32 [seqs]
  Tensor positions;     // i32 [tokens]
  Tensor slotMapping;   // i32 [tokens]
  Tensor blockTables;   // i32 [seqs, maxBlocksPerSeq]
  /// The caller reads only each sequence's last logits row: the LM head
  /// may compute just those rows, as `select_last` does (Engine::stepBatch
  /// with LogitsRows::kLast sets it; a 2048-token prefill then computes 1
  /// row of logits, not 2048).
  bool lastRowsOnly = false;
  /// With lastRowsOnly: the caller wants each sequence's greedy token. A
  /// backend that can pick it where the logits are (the GPU) returns i64
  /// [seqs] token ids instead of logits; one that cannot returns the logits
  /// and Engine::stepBatch takes the argmax on the host.
  bool greedy = false;
  /// With lastRowsOnly, when defined: the rows whose logits the caller
  /// wants are not only each sequence's last but, per sequence, its last
  /// few (a speculative verification step reads all K+1 of a sequence's
  /// rows). i32 [rows + 1], in query_start_loc's form: wanted row j is
  /// logitsRowEnds[j + 1] - 1 (increasing, the last the step's last token),
  /// so the LM head gathers them with query_start_loc's kernel. Undefined:
  /// query_start_loc (one row per sequence).
  Tensor logitsRowEnds;
  /// The logits rows a lastRowsOnly step returns.
  int64_t numLogitsRows() const {
    return logitsRowEnds.defined() ? logitsRowEnds.numElements() - 1 : numSeqs;
  }
};

/// Reserves cache slots for every sequence's new tokens (SequenceKV::
/// appendSlots), then describes the step. All or nothing: when the pool
/// cannot hold the step, kResourceExhausted and no sequence changes. Every
/// sequence brings at least one token and appears once. `maxBlocksPerSeq`
/// fixes the block-table width (a plan's bound); 0 uses the batch's largest
/// table.
StatusOr<StepMetadata> prepareStep(BlockPool &pool,
                                   const std::vector<StepSequence> &step,
                                   int64_t maxBlocksPerSeq = 0);

/// kInvalidArgument unless `tokenIds` is a rank-1 integer tensor of the
/// step's numTokens ids (what every executor's run() checks first).
Status checkStepTokenIds(const Tensor &tokenIds, const StepMetadata &meta);

/// Describes a step whose slots are already reserved: the last
/// `numNewTokens` tokens of each sequence are the step's queries.
StatusOr<StepMetadata> describeStep(const BlockPool &pool,
                                    const std::vector<StepSequence> &step,
                                    int64_t maxBlocksPerSeq = 0);

} // namespace accel::rt::kv

#endif // ACCEL_RUNTIME_KV_STEPMETADATA_H
