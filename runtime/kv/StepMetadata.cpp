//===- StepMetadata.cpp - the per-step tensors of a ragged batch ----------===//
#include "runtime/kv/StepMetadata.h"

#include <algorithm>
#include <set>
#include <climits>
#include <string>

namespace accel::rt::kv {

namespace {

Status checkStep(const std::vector<StepSequence> &step) {
  std::set<const SequenceKV *> seen;
  for (size_t i = 0; i < step.size(); ++i) {
    const std::string which = "step sequence " + std::to_string(i);
    if (!step[i].seq)
      return invalidArgument(which + " has no SequenceKV");
    if (step[i].numNewTokens < 1)
      return invalidArgument(which + " brings " +
                             std::to_string(step[i].numNewTokens) +
                             " tokens; every sequence of a step brings at least one");
    if (!seen.insert(step[i].seq).second)
      return invalidArgument(which + " appears twice in the step");
  }
  return Status::ok();
}

} // namespace

StatusOr<StepMetadata> prepareStep(BlockPool &pool,
                                   const std::vector<StepSequence> &step,
                                   int64_t maxBlocksPerSeq) {
  Status s = checkStep(step);
  if (!s.isOk())
    return s;
  int64_t need = 0;
  for (const StepSequence &e : step)
    need += e.seq->blocksNeeded(pool, e.numNewTokens);
  if (!pool.allocator().canAllocate(need))
    return Status(StatusCode::kResourceExhausted,
                  "KV cache exhausted: the step needs " + std::to_string(need) +
                      " new blocks, " + std::to_string(pool.numFreeBlocks()) +
                      " of " + std::to_string(pool.numBlocks()) + " free");
  for (const StepSequence &e : step) {
    s = e.seq->appendSlots(pool, e.numNewTokens);
    if (!s.isOk())
      return s; // unreachable: the blocks were counted above
  }
  return describeStep(pool, step, maxBlocksPerSeq);
}

StatusOr<StepMetadata> describeStep(const BlockPool &pool,
                                    const std::vector<StepSequence> &step,
                                    int64_t maxBlocksPerSeq) {
  Status s = checkStep(step);
  if (!s.isOk())
    return s;
  StepMetadata md;
  md.numSeqs = int64_t(step.size());
  int64_t widest = 0;
  for (const StepSequence &e : step) {
    if (e.numNewTokens > e.seq->numTokens())
      return invalidArgument("a step sequence brings " +
                             std::to_string(e.numNewTokens) +
                             " new tokens but has slots for only " +
                             std::to_string(e.seq->numTokens()));
    md.numTokens += e.numNewTokens;
    widest = std::max(widest, e.seq->numBlocks());
  }
  md.maxBlocksPerSeq = maxBlocksPerSeq > 0 ? maxBlocksPerSeq : std::max<int64_t>(widest, 1);
  if (md.numTokens > int64_t(INT32_MAX))
    return invalidArgument("a step of " + std::to_string(md.numTokens) +
                           " tokens is too large");

  md.queryStartLoc = Tensor::zeros(DType::kI32, {md.numSeqs + 1});
  md.seqLens = Tensor::zeros(DType::kI32, {md.numSeqs});
  md.positions = Tensor::zeros(DType::kI32, {md.numTokens});
  md.slotMapping = Tensor::zeros(DType::kI32, {md.numTokens});
  md.blockTables = Tensor::zeros(DType::kI32, {md.numSeqs, md.maxBlocksPerSeq});
  for (const Tensor *t : {&md.queryStartLoc, &md.seqLens, &md.positions,
                          &md.slotMapping, &md.blockTables})
    if (!t->defined() && t->numElements() != 0)
      return Status(StatusCode::kResourceExhausted,
                    "cannot allocate the step metadata");

  int32_t *qsl = md.queryStartLoc.data<int32_t>();
  int32_t *lens = md.seqLens.data<int32_t>();
  int32_t *pos = md.positions.data<int32_t>();
  int32_t *slots = md.slotMapping.data<int32_t>();
  int32_t *tables = md.blockTables.data<int32_t>();
  int64_t t = 0;
  qsl[0] = 0;
  for (int64_t i = 0; i < md.numSeqs; ++i) {
    const SequenceKV &seq = *step[size_t(i)].seq;
    const int64_t n = step[size_t(i)].numNewTokens;
    const int64_t len = seq.numTokens();
    for (int64_t p = len - n; p < len; ++p, ++t) {
      pos[t] = int32_t(p);
      slots[t] = int32_t(seq.slotOf(p, pool.blockSize()));
    }
    qsl[i + 1] = int32_t(t);
    lens[i] = int32_t(len);
    s = seq.fillBlockTableRow(tables + i * md.maxBlocksPerSeq, md.maxBlocksPerSeq);
    if (!s.isOk())
      return s;
  }
  return md;
}

Status checkStepTokenIds(const Tensor &tokenIds, const StepMetadata &meta) {
  if (tokenIds.rank() != 1 || !isInteger(tokenIds.dtype()))
    return Status(StatusCode::kInvalidArgument,
                  "the token ids must be a rank-1 integer tensor, got " + tokenIds.describe());
  if (tokenIds.dim(0) != meta.numTokens)
    return Status(StatusCode::kInvalidArgument,
                  "the step has " + std::to_string(meta.numTokens) + " tokens but " +
                      std::to_string(tokenIds.dim(0)) + " token ids");
  return Status::ok();
}

} // namespace accel::rt::kv
