//===- PrefixCache.h - full KV blocks shared by content hash ----*- C++ -*-===//
//
// Automatic prefix caching (vLLM's --enable-prefix-caching): every full
// block of a sequence is looked up by a hash chain over the token ids of
// all blocks up to and including it,
//
//   h[0] = H(seed, tokens[0 .. B)),  h[i] = H(h[i-1], tokens[i*B .. (i+1)*B))
//
// The hash (128 bits, unseeded, not cryptographic) only finds a candidate;
// a hit is never trusted on it. Each entry records what its K/V were
// computed from: the block's own token ids and the block that held the
// tokens before them (its parent, at the parent's generation; none for a
// first block). match() walks the prefix block by block and takes an entry
// only when its token ids equal the sequence's and its parent is the block
// it matched one step before. By induction a hit's K/V were computed from
// exactly the sequence's prefix, so a crafted collision can cost a hit
// but can never hand one prompt's K/V to another.
//
// The cache maps a hash to the pool block that holds those K/V, and keeps no
// reference of its own: a cached block is either in use (shared by the
// sequences whose tables list it: a hit adds an owner) or free, waiting in
// the allocator's free queue with its contents intact (a hit takes it back
// with BlockAllocator::reclaim). The free queue is the LRU list: the block
// freed longest ago is the first one allocate() hands out again, which
// evicts it (its generation changes, so the entry no longer matches and is
// dropped when seen).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_PREFIXCACHE_H
#define ACCEL_RUNTIME_SERVING_PREFIXCACHE_H

#include "runtime/kv/BlockAllocator.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace accel::rt::serve {

struct BlockHash {
  uint64_t a = 0, b = 0;
  bool operator==(const BlockHash &o) const { return a == o.a && b == o.b; }
};

/// The hash of the block of `n` tokens that follows the blocks hashed as
/// `parent` (use `BlockHash{}` for the first block).
BlockHash hashBlock(const BlockHash &parent, const int64_t *tokens, int64_t n);
/// hashBlock's signature: tests put a weak one in its place
/// (SchedulerOptions::prefixCacheHashForTesting) to force collisions.
using BlockHashFn = BlockHash (*)(const BlockHash &parent, const int64_t *tokens, int64_t n);

class PrefixCache {
public:
  explicit PrefixCache(kv::BlockAllocator &allocator) : allocator_(allocator) {}

  /// The blocks holding the longest cached prefix of the sequence whose
  /// full blocks hash to `hashes` and hold `tokens` (blockSize ids per
  /// block), at most `maxBlocks`, in order. Every block returned was
  /// verified: its entry's token ids are the sequence's and its parent is
  /// the block returned before it. Takes no reference.
  std::vector<kv::BlockId> match(const std::vector<BlockHash> &hashes, const int64_t *tokens,
                                 int64_t blockSize, size_t maxBlocks);
  /// How many of `blocks` are free (acquire() takes them off the free queue).
  int64_t countFree(const std::vector<kv::BlockId> &blocks) const;
  /// One more owner for each of `blocks` (retain, or reclaim when free).
  Status acquire(const std::vector<kv::BlockId> &blocks);

  /// Records that the full block `block` (in use) holds the K/V of the
  /// `n` token ids `tokens`, hashed as `hash`, computed after the block
  /// `parent` (in use too; -1 for a sequence's first block). When another
  /// valid block already holds that hash, the first one stays the cached
  /// one.
  void insert(const BlockHash &hash, kv::BlockId block, kv::BlockId parent,
              const int64_t *tokens, int64_t n);

  /// Entries whose block still holds its tokens (used or free).
  int64_t numCachedBlocks() const;
  /// Forgets everything.
  void clear();

private:
  struct Entry {
    kv::BlockId block = -1;
    uint64_t generation = 0;
    kv::BlockId parent = -1; // the block before it when it was computed
    uint64_t parentGeneration = 0;
    std::vector<int64_t> tokens; // the block's token ids
  };
  struct Hasher {
    size_t operator()(const BlockHash &h) const { return size_t(h.a ^ (h.b * 0x9E3779B97F4A7C15ull)); }
  };
  bool valid(const Entry &e) const { return allocator_.generation(e.block) == e.generation; }

  kv::BlockAllocator &allocator_;
  std::unordered_map<BlockHash, Entry, Hasher> map_;
  // The hash each block was last cached under, to drop stale entries.
  std::unordered_map<kv::BlockId, BlockHash> byBlock_;
};

} // namespace accel::rt::serve

#endif // ACCEL_RUNTIME_SERVING_PREFIXCACHE_H
