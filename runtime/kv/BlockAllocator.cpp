//===- BlockAllocator.cpp - ids and reference counts of KV blocks ---------===//
#include "runtime/kv/BlockAllocator.h"

#include <string>

namespace accel::rt::kv {

BlockAllocator::BlockAllocator(int64_t numBlocks)
    : refCounts_(size_t(numBlocks > 0 ? numBlocks : 0), 0),
      generations_(refCounts_.size(), 0), next_(refCounts_.size(), -1),
      prev_(refCounts_.size(), -1) {
  for (int64_t i = 0; i < this->numBlocks(); ++i)
    pushBack(BlockId(i));
}

void BlockAllocator::pushBack(BlockId id) {
  prev_[size_t(id)] = tail_;
  next_[size_t(id)] = -1;
  if (tail_ >= 0)
    next_[size_t(tail_)] = id;
  else
    head_ = id;
  tail_ = id;
  ++numFree_;
}

void BlockAllocator::unlink(BlockId id) {
  const BlockId p = prev_[size_t(id)], n = next_[size_t(id)];
  if (p >= 0)
    next_[size_t(p)] = n;
  else
    head_ = n;
  if (n >= 0)
    prev_[size_t(n)] = p;
  else
    tail_ = p;
  prev_[size_t(id)] = next_[size_t(id)] = -1;
  --numFree_;
}

BlockId BlockAllocator::popFront() {
  const BlockId id = head_;
  unlink(id);
  refCounts_[size_t(id)] = 1;
  ++generations_[size_t(id)];
  return id;
}

StatusOr<BlockId> BlockAllocator::allocate() {
  if (numFree_ == 0)
    return Status(StatusCode::kResourceExhausted,
                  "KV cache exhausted: all " + std::to_string(numBlocks()) +
                      " blocks are in use");
  return popFront();
}

Status BlockAllocator::reclaim(BlockId id) {
  if (!isValid(id))
    return invalidArgument("KV cache: cannot reclaim block " + std::to_string(id) +
                           ": the pool has " + std::to_string(numBlocks()) + " blocks");
  if (refCounts_[size_t(id)] != 0)
    return invalidArgument("KV cache: cannot reclaim block " + std::to_string(id) +
                           ": it is in use");
  unlink(id);
  refCounts_[size_t(id)] = 1;
  return Status::ok();
}

Status BlockAllocator::allocate(int64_t n, std::vector<BlockId> &out) {
  if (n < 0)
    return invalidArgument("KV cache: cannot allocate " + std::to_string(n) +
                           " blocks");
  if (n > numFree())
    return Status(StatusCode::kResourceExhausted,
                  "KV cache exhausted: " + std::to_string(n) +
                      " blocks requested, " + std::to_string(numFree()) +
                      " of " + std::to_string(numBlocks()) + " free");
  for (int64_t i = 0; i < n; ++i)
    out.push_back(popFront());
  return Status::ok();
}

Status BlockAllocator::checkUsed(BlockId id, const char *what) const {
  if (!isValid(id))
    return invalidArgument(std::string("KV cache: cannot ") + what +
                           " block " + std::to_string(id) + ": the pool has " +
                           std::to_string(numBlocks()) + " blocks");
  if (refCounts_[size_t(id)] == 0)
    return invalidArgument(std::string("KV cache: cannot ") + what +
                           " block " + std::to_string(id) + ": it is free");
  return Status::ok();
}

Status BlockAllocator::retain(BlockId id) {
  Status s = checkUsed(id, "retain");
  if (!s.isOk())
    return s;
  ++refCounts_[size_t(id)];
  return Status::ok();
}

Status BlockAllocator::release(BlockId id) {
  Status s = checkUsed(id, "release");
  if (!s.isOk())
    return s;
  if (--refCounts_[size_t(id)] == 0)
    pushBack(id);
  return Status::ok();
}

Status BlockAllocator::release(const std::vector<BlockId> &ids) {
  Status first;
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
    Status s = release(*it);
    if (!s.isOk() && first.isOk())
      first = s;
  }
  return first;
}

int32_t BlockAllocator::refCount(BlockId id) const {
  return isValid(id) ? refCounts_[size_t(id)] : 0;
}

} // namespace accel::rt::kv
