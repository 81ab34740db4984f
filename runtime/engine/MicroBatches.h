//===- MicroBatches.h - one engine step as micro-batches --------*- C++ -*-===//
//
// What a pipelined backend (TpCpuExecutor on the CPU, the GPU's pipeline)
// runs instead of a step as one piece: the step's tokens split into a few
// micro-batches, so that stage s runs part i while stage s + 1 runs part
// i - 1. Each part is a step of its own (its token ids, its metadata over
// the same KV blocks); its output rows are put back together by joinParts.
//
// A cut may fall inside a sequence's new tokens: the earlier piece is a
// prefill chunk of its own (seq_len shortened by the tokens after it), and
// the later piece reads the earlier one's K/V from the cache, which holds
// them as long as every stage runs its parts in order. Slices of the step's
// tensors are views (no copy); queryStartLoc, seqLens and logitsRowEnds are
// new.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_ENGINE_MICROBATCHES_H
#define ACCEL_RUNTIME_ENGINE_MICROBATCHES_H

#include "core/Status.h"
#include "core/Tensor.h"
#include "runtime/kv/StepMetadata.h"

#include <cstdint>
#include <vector>

namespace accel::rt::engine {

struct MicroBatch {
  Tensor tokenIds;          // this part's ids (a slice of the step's)
  kv::StepMetadata meta;    // this part's metadata (see below)
  std::vector<int64_t> keepRows; // rows of this part's output that belong to the step's output, in order
};

/// Splits one engine step into at most `parts` micro-batches of about equal token counts
/// (never fewer than `minTokens` tokens each, unless the step has fewer), in token order.
/// A part boundary may cut a sequence's new tokens (a prefill chunk becomes two chunks): the
/// earlier piece gets seq_len = the original seq_len minus the tokens of that sequence after it,
/// so attention of the later piece reads the earlier piece's K/V from the cache (each stage runs
/// its micro-batches in order). Cut only at sequence boundaries when meta.logitsRowEnds is defined.
/// With lastRowsOnly, a sequence cut in two yields a logits row only from the piece holding its
/// last token (the other piece's row for it is left out of keepRows); without lastRowsOnly every
/// token row is kept. `greedy` and `lastRowsOnly` carry over. parts <= 1 or a step too small: one
/// part equal to the step (keepRows all its rows).
/// kInvalidArgument for token ids that are not the step's (checkStepTokenIds), metadata whose
/// tensors disagree with its counts, or minTokens < 1.
StatusOr<std::vector<MicroBatch>> splitStep(const Tensor &tokenIds, const kv::StepMetadata &meta,
                                            int parts, int64_t minTokens = 1);

/// The step's output from the parts' outputs (logits [rows, vocab] f32, or greedy i64 [rows]):
/// each part's keepRows, concatenated in order.
/// Any dtype; [1, rows, vocab] (a graph that kept its batch dimension) is joined along its
/// rows too. One part keeping all its rows returns its output as it is. kInvalidArgument when
/// the counts differ, an output is undefined, the outputs' other dimensions or dtypes differ,
/// or a kept row is not in its part's output.
StatusOr<Tensor> joinParts(const std::vector<MicroBatch> &parts, const std::vector<Tensor> &outputs);

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_ENGINE_MICROBATCHES_H
