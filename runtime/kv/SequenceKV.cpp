//===- SequenceKV.cpp - one sequence's block table ------------------------===//
#include "runtime/kv/SequenceKV.h"

#include <climits>
#include <string>

namespace accel::rt::kv {

namespace {

struct AppendPlan {
  bool copyLast = false; // the partly filled last block is shared
  int64_t newBlocks = 0; // fresh blocks past the last one
};

AppendPlan planAppend(const BlockPool &pool, const std::vector<BlockId> &blocks,
                      int64_t numTokens, int64_t n) {
  AppendPlan p;
  if (n <= 0)
    return p;
  const int64_t bs = pool.blockSize();
  const int64_t room = int64_t(blocks.size()) * bs - numTokens;
  if (room > 0 && pool.allocator().refCount(blocks.back()) > 1)
    p.copyLast = true;
  if (n > room)
    p.newBlocks = (n - room + bs - 1) / bs;
  return p;
}

} // namespace

int64_t SequenceKV::blocksNeeded(const BlockPool &pool, int64_t n) const {
  AppendPlan p = planAppend(pool, blocks_, numTokens_, n);
  return p.newBlocks + (p.copyLast ? 1 : 0);
}

Status SequenceKV::appendSlots(BlockPool &pool, int64_t n,
                               std::vector<int32_t> *slots) {
  if (n < 0)
    return invalidArgument("KV cache: cannot append " + std::to_string(n) +
                           " tokens to a sequence");
  const int64_t bs = pool.blockSize();
  if (numTokens_ + n > int64_t(INT32_MAX))
    return invalidArgument("KV cache: a sequence of " +
                           std::to_string(numTokens_ + n) + " tokens is too long");
  AppendPlan p = planAppend(pool, blocks_, numTokens_, n);
  const int64_t need = p.newBlocks + (p.copyLast ? 1 : 0);
  if (!pool.allocator().canAllocate(need))
    return Status(StatusCode::kResourceExhausted,
                  "KV cache exhausted: " + std::to_string(n) +
                      " more tokens of a sequence need " + std::to_string(need) +
                      " blocks, " + std::to_string(pool.numFreeBlocks()) + " of " +
                      std::to_string(pool.numBlocks()) + " free");
  std::vector<BlockId> fresh;
  Status s = pool.allocator().allocate(need, fresh);
  if (!s.isOk())
    return s;
  size_t next = 0;
  if (p.copyLast) {
    const BlockId copy = fresh[next++];
    s = pool.copyBlock(blocks_.back(), copy);
    if (s.isOk())
      s = pool.allocator().release(blocks_.back());
    if (!s.isOk())
      return s;
    blocks_.back() = copy;
  }
  for (; next < fresh.size(); ++next)
    blocks_.push_back(fresh[next]);
  if (slots)
    for (int64_t pos = numTokens_; pos < numTokens_ + n; ++pos)
      slots->push_back(int32_t(int64_t(blocks_[size_t(pos / bs)]) * bs + pos % bs));
  numTokens_ += n;
  return Status::ok();
}

int64_t SequenceKV::slotOf(int64_t position, int64_t blockSize) const {
  if (position < 0 || position >= numTokens_ || blockSize <= 0)
    return -1;
  return int64_t(blocks_[size_t(position / blockSize)]) * blockSize +
         position % blockSize;
}

StatusOr<SequenceKV> SequenceKV::fork(BlockPool &pool) const {
  for (size_t i = 0; i < blocks_.size(); ++i) {
    Status s = pool.allocator().retain(blocks_[i]);
    if (!s.isOk()) {
      for (size_t j = 0; j < i; ++j)
        (void)pool.allocator().release(blocks_[j]);
      return s;
    }
  }
  SequenceKV child;
  child.blocks_ = blocks_;
  child.numTokens_ = numTokens_;
  return child;
}

Status SequenceKV::release(BlockPool &pool) {
  Status s = pool.allocator().release(blocks_);
  blocks_.clear();
  numTokens_ = 0;
  return s;
}

Status SequenceKV::truncate(BlockPool &pool, int64_t numTokens) {
  if (numTokens < 0 || numTokens > numTokens_)
    return invalidArgument("KV cache: cannot truncate a sequence of " +
                           std::to_string(numTokens_) + " tokens to " +
                           std::to_string(numTokens));
  const int64_t bs = pool.blockSize();
  const size_t keep = size_t((numTokens + bs - 1) / bs);
  Status first;
  while (blocks_.size() > keep) {
    Status s = pool.allocator().release(blocks_.back());
    if (!s.isOk() && first.isOk())
      first = s;
    blocks_.pop_back();
  }
  numTokens_ = numTokens;
  return first;
}

Status SequenceKV::adoptFullBlocks(const BlockPool &pool,
                                   const std::vector<BlockId> &ids) {
  const int64_t bs = pool.blockSize();
  if (numTokens_ != numBlocks() * bs)
    return invalidArgument("KV cache: cannot append shared blocks to a sequence of " +
                           std::to_string(numTokens_) +
                           " tokens, which does not end at a block boundary");
  for (BlockId id : ids)
    if (!pool.allocator().isValid(id) || pool.allocator().refCount(id) < 1)
      return invalidArgument("KV cache: cannot append block " + std::to_string(id) +
                             " to a sequence: it is not a used block of the pool");
  blocks_.insert(blocks_.end(), ids.begin(), ids.end());
  numTokens_ += int64_t(ids.size()) * bs;
  return Status::ok();
}

Status SequenceKV::fillBlockTableRow(int32_t *row, int64_t width) const {
  if (numBlocks() > width)
    return invalidArgument("KV cache: a sequence of " + std::to_string(numTokens_) +
                           " tokens has " + std::to_string(numBlocks()) +
                           " blocks, more than the block table's " +
                           std::to_string(width) + " columns");
  for (int64_t i = 0; i < width; ++i)
    row[i] = i < numBlocks() ? blocks_[size_t(i)] : 0;
  return Status::ok();
}

} // namespace accel::rt::kv
