//===- SequenceKV.h - one sequence's block table ----------------*- C++ -*-===//
//
// The KV-cache state of one sequence: its block table (the pool blocks that
// hold its tokens, in order) and its token count. Token `p` of the sequence
// lives at slot `blocks[p / block_size] * block_size + p % block_size` of
// every layer.
//
// appendSlots() reserves slots for new tokens, allocating blocks as they fill;
// it is all or nothing. A sequence may share blocks with others (fork(), or
// later a prefix-cache hit): before a new token is written into a partly
// filled block that another sequence also owns, the block is copied (copy on
// write), so shared blocks are never written.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_KV_SEQUENCEKV_H
#define ACCEL_RUNTIME_KV_SEQUENCEKV_H

#include "runtime/kv/BlockPool.h"

#include <vector>

namespace accel::rt::kv {

class SequenceKV {
public:
  SequenceKV() = default;

  /// Tokens whose K and V have a slot (cached, or being written this step).
  int64_t numTokens() const { return numTokens_; }
  /// The block table, in token order.
  const std::vector<BlockId> &blocks() const { return blocks_; }
  int64_t numBlocks() const { return int64_t(blocks_.size()); }

  /// Blocks appendSlots(pool, n) would take from the allocator, counting a
  /// copy-on-write block.
  int64_t blocksNeeded(const BlockPool &pool, int64_t n) const;
  /// Reserves slots for `n` new tokens (positions numTokens() ..
  /// numTokens() + n - 1), allocating blocks as needed, and appends their
  /// slots to `slots` when given. kResourceExhausted, with nothing changed,
  /// when the pool has too few free blocks.
  Status appendSlots(BlockPool &pool, int64_t n,
                     std::vector<int32_t> *slots = nullptr);
  /// The slot of token `position`, or -1 when the sequence has no such token.
  int64_t slotOf(int64_t position, int64_t blockSize) const;

  /// A sequence sharing all of this one's blocks (each gains an owner), as
  /// for parallel sampling or beam search.
  StatusOr<SequenceKV> fork(BlockPool &pool) const;
  /// Gives every block back (one owner less each) and empties the sequence.
  Status release(BlockPool &pool);

  /// Shortens the sequence to its first `numTokens` tokens, giving back the
  /// blocks no longer needed (an engine step that failed after its slots
  /// were reserved). Fails, changing nothing, when numTokens is negative or
  /// more than numTokens().
  Status truncate(BlockPool &pool, int64_t numTokens);

  /// Appends `ids`, full blocks whose K/V hold the sequence's next
  /// ids.size() * block_size tokens (a prefix-cache hit). The sequence takes
  /// over one owner of each, which the caller has taken (retain() or
  /// reclaim()). Fails, changing nothing, unless the sequence ends at a
  /// block boundary.
  Status adoptFullBlocks(const BlockPool &pool, const std::vector<BlockId> &ids);

  /// Writes the block table into `row` of `width` entries, padded with 0
  /// (a valid block id, so a kernel reading past the context stays in the
  /// pool). Fails when the table has more than `width` blocks.
  Status fillBlockTableRow(int32_t *row, int64_t width) const;

private:
  std::vector<BlockId> blocks_;
  int64_t numTokens_ = 0;
};

} // namespace accel::rt::kv

#endif // ACCEL_RUNTIME_KV_SEQUENCEKV_H
