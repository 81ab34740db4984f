//===- BlockAllocator.h - ids and reference counts of KV blocks -*- C++ -*-===//
//
// The bookkeeping half of the paged KV cache: which of a fixed number of
// blocks are free, and how many owners each used block has. It holds no
// memory, so the same allocator serves the CPU pool (BlockPool) and a device
// pool.
//
// A block is owned by every sequence whose block table lists it. A fresh
// block has one owner; retain() adds one (a forked sequence, or later a
// prefix-cache hit sharing a full block by its hash); release() drops one and
// frees the block when none are left. Free blocks are handed out first in,
// first out (block 0, 1, 2, ... on a fresh allocator; a released block goes
// to the back of the queue), as vLLM does, so that a prefix cache can keep
// the contents of recently freed blocks alive the longest.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_KV_BLOCKALLOCATOR_H
#define ACCEL_RUNTIME_KV_BLOCKALLOCATOR_H

#include "runtime/support/Status.h"

#include <cstdint>
#include <deque>
#include <vector>

namespace accel::rt::kv {

/// The index of a block in the pool: slot = block * block_size + offset.
using BlockId = int32_t;

class BlockAllocator {
public:
  /// `numBlocks` blocks, all free. A negative count is treated as 0.
  explicit BlockAllocator(int64_t numBlocks = 0);

  int64_t numBlocks() const { return int64_t(refCounts_.size()); }
  int64_t numFree() const { return int64_t(free_.size()); }
  int64_t numUsed() const { return numBlocks() - numFree(); }
  bool canAllocate(int64_t n) const { return n <= numFree(); }

  /// One free block, now with one owner. kResourceExhausted when none is free.
  StatusOr<BlockId> allocate();
  /// `n` blocks appended to `out`, all or nothing: when fewer than `n` are
  /// free, nothing is allocated and the error says how many were asked for
  /// and how many are free.
  Status allocate(int64_t n, std::vector<BlockId> &out);

  /// Adds an owner to a used block (sharing). Fails on a free or unknown id.
  Status retain(BlockId id);
  /// Drops an owner; the block is free again when it had only one. Fails on
  /// a free block (a double free) or an unknown id, changing nothing.
  Status release(BlockId id);
  /// Releases every id in `ids` (last to first); the first error is
  /// returned after trying them all.
  Status release(const std::vector<BlockId> &ids);

  /// Owners of `id`: 0 when free or unknown.
  int32_t refCount(BlockId id) const;
  bool isValid(BlockId id) const { return id >= 0 && id < numBlocks(); }

private:
  Status checkUsed(BlockId id, const char *what) const;

  std::vector<int32_t> refCounts_;
  std::deque<BlockId> free_;
};

} // namespace accel::rt::kv

#endif // ACCEL_RUNTIME_KV_BLOCKALLOCATOR_H
