//===- PrefixCache.cpp - full KV blocks shared by content hash ------------===//
#include "runtime/serving/PrefixCache.h"

#include <algorithm>

namespace accel::rt::serve {

namespace {
// splitmix64's finaliser: a bijective 64-bit mix.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x;
}
} // namespace

BlockHash hashBlock(const BlockHash &parent, const int64_t *tokens, int64_t n) {
  BlockHash h;
  h.a = mix(parent.a ^ 0x243F6A8885A308D3ull) + uint64_t(n);
  h.b = mix(parent.b ^ 0x13198A2E03707344ull) ^ (uint64_t(n) << 32);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t t = uint64_t(tokens[i]);
    h.a = mix(h.a ^ (t + 0x9E3779B97F4A7C15ull));
    h.b = mix((h.b + 0xA4093822299F31D0ull) ^ (t * 0xC2B2AE3D27D4EB4Full));
  }
  return h;
}

std::vector<kv::BlockId> PrefixCache::match(const std::vector<BlockHash> &hashes,
                                            const int64_t *tokens, int64_t blockSize,
                                            size_t maxBlocks) {
  std::vector<kv::BlockId> out;
  for (size_t i = 0; i < hashes.size() && i < maxBlocks; ++i) {
    auto it = map_.find(hashes[i]);
    if (it == map_.end())
      break;
    const Entry &e = it->second;
    if (!valid(e)) { // evicted: its block was handed out again
      auto b = byBlock_.find(e.block);
      if (b != byBlock_.end() && b->second == hashes[i])
        byBlock_.erase(b);
      map_.erase(it);
      break;
    }
    // Equal hashes are only a candidate: the entry must hold these very
    // tokens, computed after the block this walk matched last.
    const int64_t *mine = tokens + int64_t(i) * blockSize;
    if (int64_t(e.tokens.size()) != blockSize ||
        !std::equal(e.tokens.begin(), e.tokens.end(), mine))
      break;
    const kv::BlockId parent = i ? out[i - 1] : kv::BlockId(-1);
    if (e.parent != parent || (parent >= 0 && e.parentGeneration != allocator_.generation(parent)))
      break;
    out.push_back(e.block);
  }
  return out;
}

int64_t PrefixCache::countFree(const std::vector<kv::BlockId> &blocks) const {
  int64_t n = 0;
  for (kv::BlockId b : blocks)
    if (allocator_.refCount(b) == 0)
      ++n;
  return n;
}

Status PrefixCache::acquire(const std::vector<kv::BlockId> &blocks) {
  for (size_t i = 0; i < blocks.size(); ++i) {
    const kv::BlockId b = blocks[i];
    Status s = allocator_.refCount(b) == 0 ? allocator_.reclaim(b) : allocator_.retain(b);
    if (!s.isOk()) {
      for (size_t j = 0; j < i; ++j)
        (void)allocator_.release(blocks[j]);
      return s;
    }
  }
  return Status::ok();
}

void PrefixCache::insert(const BlockHash &hash, kv::BlockId block, kv::BlockId parent,
                         const int64_t *tokens, int64_t n) {
  auto it = map_.find(hash);
  if (it != map_.end() && it->second.block != block && valid(it->second))
    return; // these tokens (or a colliding block) are cached in another block already
  // The block's previous identity (if any) is gone: its contents changed.
  auto old = byBlock_.find(block);
  if (old != byBlock_.end()) {
    if (!(old->second == hash)) {
      auto e = map_.find(old->second);
      if (e != map_.end() && e->second.block == block)
        map_.erase(e);
    }
    byBlock_.erase(old);
  }
  Entry &e = map_[hash];
  e.block = block;
  e.generation = allocator_.generation(block);
  e.parent = parent;
  e.parentGeneration = parent >= 0 ? allocator_.generation(parent) : 0;
  e.tokens.assign(tokens, tokens + n);
  byBlock_[block] = hash;
}

int64_t PrefixCache::numCachedBlocks() const {
  int64_t n = 0;
  for (const auto &[h, e] : map_)
    if (valid(e))
      ++n;
  return n;
}

void PrefixCache::clear() {
  map_.clear();
  byBlock_.clear();
}

} // namespace accel::rt::serve
