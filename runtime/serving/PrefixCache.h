//===- PrefixCache.h - full KV blocks shared by content hash ----*- C++ -*-===//
//
// Automatic prefix caching (vLLM's --enable-prefix-caching): every full
// block of a sequence is identified by a hash chain over the token ids of
// all blocks up to and including it,
//
//   h[0] = H(seed, tokens[0 .. B)),  h[i] = H(h[i-1], tokens[i*B .. (i+1)*B))
//
// so equal hashes mean equal prefixes, not only equal blocks. The hash is
// 128 bits (two independent 64-bit chains), so a false hit needs a 128-bit
// collision.
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

class PrefixCache {
public:
  explicit PrefixCache(kv::BlockAllocator &allocator) : allocator_(allocator) {}

  /// The blocks holding the longest cached prefix of `hashes` (at most
  /// `maxBlocks`), in order. Takes no reference.
  std::vector<kv::BlockId> match(const std::vector<BlockHash> &hashes, size_t maxBlocks);
  /// How many of `blocks` are free (acquire() takes them off the free queue).
  int64_t countFree(const std::vector<kv::BlockId> &blocks) const;
  /// One more owner for each of `blocks` (retain, or reclaim when free).
  Status acquire(const std::vector<kv::BlockId> &blocks);

  /// Records that the full block `block` (in use) holds the tokens hashed
  /// as `hash`. When another valid block already holds them, the first one
  /// stays the cached one.
  void insert(const BlockHash &hash, kv::BlockId block);

  /// Entries whose block still holds its tokens (used or free).
  int64_t numCachedBlocks() const;
  /// Forgets everything.
  void clear();

private:
  struct Entry {
    kv::BlockId block = -1;
    uint64_t generation = 0;
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
