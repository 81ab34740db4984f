//===- BlockPool.h - the paged KV cache in host memory ----------*- C++ -*-===//
//
// A fixed number of KV blocks for every attention layer of a model, and the
// allocator that hands them out. For each layer, K and V are each stored
// [num_blocks, block_size, kv_heads, head_dim] of the cache dtype (exec.kv_pool's
// layout), so the token at slot `s = block * block_size + offset` of layer
// `l` has its K row at keys(l)[s] and its V row at values(l)[s], each
// kv_heads * head_dim elements.
//
// A KvStorage::kDevice pool has no host storage: a GPU backend keeps the
// cache in device memory with this layout, and the pool is its block
// allocator (copyBlock queues the copy for the backend).
//
// Float caches (f32, f16, bf16) store the values as they are; an FP8 cache
// (f8E4M3FN, f8E5M2) stores value / scale, with per-layer scales given to
// kvWrite and pagedAttention (runtime/cpu/transformer).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_KV_BLOCKPOOL_H
#define ACCEL_RUNTIME_KV_BLOCKPOOL_H

#include "core/Tensor.h"
#include "runtime/kv/BlockAllocator.h"

#include <memory>

namespace accel::rt::kv {

/// The geometry of a KV pool (exec.kv_pool plus the block count the runtime
/// chooses at load time).
struct KVCacheConfig {
  int64_t numLayers = 1;
  int64_t numKvHeads = 1;
  int64_t headDim = 1;
  /// Tokens per block, a power of two (vLLM's --block-size).
  int64_t blockSize = 16;
  int64_t numBlocks = 0;
  /// f32, f16, bf16, f8E4M3FN or f8E5M2 (vLLM's --kv-cache-dtype).
  DType dtype = DType::kF32;

  /// Bytes one block takes across all layers, K and V.
  int64_t bytesPerBlock() const;
  /// The number of blocks `bytes` hold (0 when the geometry is invalid).
  int64_t blocksForBytes(int64_t bytes) const;
  /// Elements of one token's K (or V) row: kv_heads * head_dim.
  int64_t rowElements() const { return numKvHeads * headDim; }
  /// Checks the geometry; the error names the bad field.
  Status validate() const;
};

/// Where a pool's K/V live: in host memory (the CPU backend), or in a GPU
/// backend's device memory, the BlockPool then being the block allocator
/// only (no host storage: keys()/values() are undefined tensors).
enum class KvStorage { kHost, kDevice };

/// A copy-on-write block copy a device-storage pool leaves to its backend.
struct BlockCopy {
  BlockId src = 0, dst = 0;
};

class BlockPool {
public:
  /// Allocates (zero-filled) storage for `config`, all blocks free. Fails on
  /// an invalid geometry or when the memory cannot be allocated. A kDevice
  /// pool allocates no storage.
  static StatusOr<std::unique_ptr<BlockPool>> create(const KVCacheConfig &config,
                                                     KvStorage storage = KvStorage::kHost);

  BlockPool(const BlockPool &) = delete;
  BlockPool &operator=(const BlockPool &) = delete;

  const KVCacheConfig &config() const { return config_; }
  int64_t numLayers() const { return config_.numLayers; }
  int64_t numKvHeads() const { return config_.numKvHeads; }
  int64_t headDim() const { return config_.headDim; }
  int64_t blockSize() const { return config_.blockSize; }
  int64_t numBlocks() const { return config_.numBlocks; }
  DType dtype() const { return config_.dtype; }
  /// num_blocks * block_size: slots are in [0, numSlots()).
  int64_t numSlots() const { return config_.numBlocks * config_.blockSize; }

  /// The block allocator (free list and reference counts).
  BlockAllocator &allocator() { return allocator_; }
  const BlockAllocator &allocator() const { return allocator_; }
  int64_t numFreeBlocks() const { return allocator_.numFree(); }

  /// K and V storage of `layer`, [num_blocks, block_size, kv_heads,
  /// head_dim]. Unchecked layer index.
  Tensor &keys(int64_t layer) { return keys_[size_t(layer)]; }
  Tensor &values(int64_t layer) { return values_[size_t(layer)]; }
  const Tensor &keys(int64_t layer) const { return keys_[size_t(layer)]; }
  const Tensor &values(int64_t layer) const { return values_[size_t(layer)]; }

  /// The start of `slot`'s K (V) row in `layer`. Unchecked.
  void *keyRow(int64_t layer, int64_t slot);
  void *valueRow(int64_t layer, int64_t slot);
  const void *keyRow(int64_t layer, int64_t slot) const;
  const void *valueRow(int64_t layer, int64_t slot) const;

  /// Copies the contents of block `src` to block `dst` in every layer (the
  /// copy-on-write of a shared, partly filled block). A kDevice pool queues
  /// the copy: its backend applies the queue, in order, on the device
  /// before the next step's kernels (takePendingCopies).
  Status copyBlock(BlockId src, BlockId dst);

  KvStorage storage() const { return storage_; }
  /// The queued copies of a kDevice pool, oldest first; the queue empties.
  std::vector<BlockCopy> takePendingCopies();
  /// A kHost pool also queues each copy it made (for takePendingCopies):
  /// what a serving rank 0 sends the other ranks, whose KV shards need the
  /// same copies (Engine, EngineOptions::tpServing).
  void recordHostCopies(bool on) { recordHostCopies_ = on; }

private:
  explicit BlockPool(const KVCacheConfig &config);

  KVCacheConfig config_;
  KvStorage storage_ = KvStorage::kHost;
  std::vector<BlockCopy> pending_;
  bool recordHostCopies_ = false;
  BlockAllocator allocator_;
  std::vector<Tensor> keys_, values_;
};

} // namespace accel::rt::kv

#endif // ACCEL_RUNTIME_KV_BLOCKPOOL_H
