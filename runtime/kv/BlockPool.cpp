//===- BlockPool.cpp - the paged KV cache in host memory ------------------===//
#include "runtime/kv/BlockPool.h"

#include <climits>
#include <cstring>
#include <string>

namespace accel::rt::kv {

namespace {

bool isCacheType(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 ||
         t == DType::kF8E4M3FN || t == DType::kF8E5M2;
}

} // namespace

int64_t KVCacheConfig::bytesPerBlock() const {
  if (numLayers <= 0 || numKvHeads <= 0 || headDim <= 0 || blockSize <= 0 ||
      !isCacheType(dtype))
    return 0;
  return 2 * numLayers * blockSize * numKvHeads * headDim *
         int64_t(dtypeSize(dtype));
}

int64_t KVCacheConfig::blocksForBytes(int64_t bytes) const {
  const int64_t per = bytesPerBlock();
  return per > 0 && bytes > 0 ? bytes / per : 0;
}

Status KVCacheConfig::validate() const {
  auto bad = [](const std::string &what, int64_t v, const char *why) {
    return invalidArgument("KV cache: " + what + " " + std::to_string(v) + " " + why);
  };
  if (numLayers <= 0)
    return bad("layer count", numLayers, "must be positive");
  if (numKvHeads <= 0)
    return bad("kv_heads", numKvHeads, "must be positive");
  if (headDim <= 0)
    return bad("head_dim", headDim, "must be positive");
  if (blockSize <= 0 || (blockSize & (blockSize - 1)) != 0)
    return bad("block size", blockSize, "must be a power of two");
  if (numBlocks < 0)
    return bad("block count", numBlocks, "must not be negative");
  if (numBlocks > INT32_MAX / blockSize)
    return bad("block count", numBlocks,
               "is too large: slots must fit in int32");
  if (!isCacheType(dtype))
    return invalidArgument(std::string("KV cache: dtype ") + dtypeName(dtype) +
                           " is not one of f32, f16, bf16, f8E4M3FN, f8E5M2");
  return Status::ok();
}

BlockPool::BlockPool(const KVCacheConfig &config)
    : config_(config), allocator_(config.numBlocks) {}

StatusOr<std::unique_ptr<BlockPool>> BlockPool::create(const KVCacheConfig &config,
                                                       KvStorage storage) {
  Status s = config.validate();
  if (!s.isOk())
    return s;
  std::unique_ptr<BlockPool> pool(new BlockPool(config));
  pool->storage_ = storage;
  if (storage == KvStorage::kDevice) {
    // The backend holds the cache; keys()/values() stay undefined tensors.
    pool->keys_.resize(size_t(config.numLayers));
    pool->values_.resize(size_t(config.numLayers));
    return pool;
  }
  const Shape shape{config.numBlocks, config.blockSize, config.numKvHeads,
                    config.headDim};
  for (int64_t l = 0; l < config.numLayers; ++l) {
    for (std::vector<Tensor> *store : {&pool->keys_, &pool->values_}) {
      StatusOr<Tensor> t = Tensor::allocate(config.dtype, shape);
      if (!t)
        return Status(StatusCode::kResourceExhausted,
                      "KV cache: cannot allocate " +
                          std::to_string(config.numBlocks) + " blocks of layer " +
                          std::to_string(l) + ": " + t.status().message());
      std::memset(t->rawData(), 0, t->byteSize());
      store->push_back(std::move(*t));
    }
  }
  return pool;
}

void *BlockPool::keyRow(int64_t layer, int64_t slot) {
  return static_cast<char *>(keys_[size_t(layer)].rawData()) +
         size_t(slot * config_.rowElements()) * dtypeSize(config_.dtype);
}
void *BlockPool::valueRow(int64_t layer, int64_t slot) {
  return static_cast<char *>(values_[size_t(layer)].rawData()) +
         size_t(slot * config_.rowElements()) * dtypeSize(config_.dtype);
}
const void *BlockPool::keyRow(int64_t layer, int64_t slot) const {
  return const_cast<BlockPool *>(this)->keyRow(layer, slot);
}
const void *BlockPool::valueRow(int64_t layer, int64_t slot) const {
  return const_cast<BlockPool *>(this)->valueRow(layer, slot);
}

Status BlockPool::copyBlock(BlockId src, BlockId dst) {
  if (!allocator_.isValid(src) || !allocator_.isValid(dst))
    return invalidArgument("KV cache: cannot copy block " + std::to_string(src) +
                           " to block " + std::to_string(dst) + ": the pool has " +
                           std::to_string(numBlocks()) + " blocks");
  if (src == dst)
    return Status::ok();
  if (storage_ == KvStorage::kDevice) {
    pending_.push_back({src, dst});
    return Status::ok();
  }
  const size_t bytes = size_t(config_.blockSize * config_.rowElements()) *
                       dtypeSize(config_.dtype);
  for (int64_t l = 0; l < numLayers(); ++l) {
    std::memcpy(keyRow(l, int64_t(dst) * blockSize()),
                keyRow(l, int64_t(src) * blockSize()), bytes);
    std::memcpy(valueRow(l, int64_t(dst) * blockSize()),
                valueRow(l, int64_t(src) * blockSize()), bytes);
  }
  if (recordHostCopies_)
    pending_.push_back({src, dst});
  return Status::ok();
}

std::vector<BlockCopy> BlockPool::takePendingCopies() {
  std::vector<BlockCopy> out;
  out.swap(pending_);
  return out;
}

} // namespace accel::rt::kv
