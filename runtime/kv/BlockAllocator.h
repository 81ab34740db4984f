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
// Prefix caching (runtime/serving/PrefixCache.h) keeps using the contents of
// a free block: reclaim() takes a given free block off the queue again,
// contents intact, and generation() tells whether a block was handed out by
// allocate() since its contents were recorded (allocate() is the only
// operation that may overwrite a block's contents). The free queue is thus
// the LRU list of cached blocks: the least recently freed is evicted first.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_KV_BLOCKALLOCATOR_H
#define ACCEL_RUNTIME_KV_BLOCKALLOCATOR_H

#include "core/Status.h"

#include <cstdint>
#include <vector>

namespace accel::rt::kv {

/// The index of a block in the pool: slot = block * block_size + offset.
using BlockId = int32_t;

class BlockAllocator {
public:
  /// `numBlocks` blocks, all free. A negative count is treated as 0.
  explicit BlockAllocator(int64_t numBlocks = 0);

  int64_t numBlocks() const { return int64_t(refCounts_.size()); }
  int64_t numFree() const { return numFree_; }
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

  /// Takes the free block `id` off the free queue (wherever it is), now
  /// with one owner, its generation unchanged: a prefix-cache hit on the
  /// contents a block kept after it was freed. Fails on a used or unknown id.
  Status reclaim(BlockId id);

  /// Owners of `id`: 0 when free or unknown.
  int32_t refCount(BlockId id) const;
  bool isValid(BlockId id) const { return id >= 0 && id < numBlocks(); }
  /// How many times allocate() has handed `id` out (0 for an unknown id).
  /// Its contents are those written since the last allocate(): a record of
  /// them taken at generation g is still true while generation() == g.
  uint64_t generation(BlockId id) const {
    return isValid(id) ? generations_[size_t(id)] : 0;
  }

private:
  Status checkUsed(BlockId id, const char *what) const;
  BlockId popFront();
  void pushBack(BlockId id);
  void unlink(BlockId id);

  std::vector<int32_t> refCounts_;
  std::vector<uint64_t> generations_;
  // The free queue, a doubly linked list through the block ids (-1 ends it),
  // so that reclaim() takes a block out of its middle in O(1).
  std::vector<BlockId> next_, prev_;
  BlockId head_ = -1, tail_ = -1;
  int64_t numFree_ = 0;
};

} // namespace accel::rt::kv

#endif // ACCEL_RUNTIME_KV_BLOCKALLOCATOR_H
