//===- BlockAllocator.cpp - ids and reference counts of KV blocks ---------===//
#include "runtime/kv/BlockAllocator.h"

#include <string>

namespace accel::rt::kv {

BlockAllocator::BlockAllocator(int64_t numBlocks)
    : refCounts_(size_t(numBlocks > 0 ? numBlocks : 0), 0) {
  for (int64_t i = 0; i < this->numBlocks(); ++i)
    free_.push_back(BlockId(i));
}

StatusOr<BlockId> BlockAllocator::allocate() {
  if (free_.empty())
    return Status(StatusCode::kResourceExhausted,
                  "KV cache exhausted: all " + std::to_string(numBlocks()) +
                      " blocks are in use");
  const BlockId id = free_.front();
  free_.pop_front();
  refCounts_[size_t(id)] = 1;
  return id;
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
  for (int64_t i = 0; i < n; ++i) {
    const BlockId id = free_.front();
    free_.pop_front();
    refCounts_[size_t(id)] = 1;
    out.push_back(id);
  }
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
    free_.push_back(id);
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
