//===- GraphBuckets.h - decode batch buckets and split-KV geometry -*- C++ -*-===//
//
// Pure arithmetic shared by the GPU executor's CUDA graphs and its eager
// path (header-only, so CPU unit tests check it without a GPU):
//
//   - the decode batch sizes graphs are captured for, and the bucket a batch
//     pads to;
//   - the split-KV geometry of a decode step, chosen by the same function on
//     both paths, so that a graph replay and an eager run of one step
//     partition each query's keys identically (and give identical logits).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_GRAPHBUCKETS_H
#define ACCEL_RUNTIME_CUDA_GRAPHBUCKETS_H

#include <algorithm>
#include <cstdint>
#include <vector>

namespace accel::rt::engine {

/// The decode batch sizes CUDA graphs are captured for, ascending: 1, 2, 4,
/// 8, 16, 24, 32, 48, 64, then multiples of 32, each below `maxBatch`, then
/// `maxBatch` itself (vLLM's list, cut at --max-num-seqs so that no graph is
/// larger than the largest batch). Empty when maxBatch < 1.
inline std::vector<int64_t> graphBatchBuckets(int64_t maxBatch) {
  std::vector<int64_t> out;
  if (maxBatch < 1)
    return out;
  for (int64_t b : {1, 2, 4, 8, 16, 24, 32, 48, 64})
    if (b < maxBatch)
      out.push_back(b);
  for (int64_t b = 96; b < maxBatch; b += 32)
    out.push_back(b);
  out.push_back(maxBatch);
  return out;
}

/// The smallest bucket that holds `batch` sequences, or 0 when none does
/// (the step then runs eagerly).
inline int64_t graphBucketFor(const std::vector<int64_t> &buckets, int64_t batch) {
  if (batch < 1)
    return 0;
  auto it = std::lower_bound(buckets.begin(), buckets.end(), batch);
  return it == buckets.end() ? 0 : *it;
}

/// How a decode step (one query per sequence) splits each query's keys:
/// `numSplits` chunks of `splitSize` keys (the last may be shorter; chunks
/// past a short sequence's end are empty). numSplits is 1 (no split) or a
/// power of two up to kMaxDecodeSplits, so that few graph variants cover
/// every context length.
struct DecodeSplit {
  int numSplits = 1;
  int64_t splitSize = 0;
  bool operator==(const DecodeSplit &o) const {
    return numSplits == o.numSplits && splitSize == o.splitSize;
  }
};

constexpr int kMaxDecodeSplits = 64;

/// The split of a decode step whose longest context is `maxSeqLen` keys,
/// aiming at chunks of `chunk` keys (GpuTuning::decodeSplit, default 256;
/// 0: never split). Contexts up to 2 * chunk are not split by length. When
/// the step has `blocks` attention blocks before splitting (sequences x KV
/// heads) and the GPU wants `targetBlocks` to be busy (two per
/// multiprocessor), short contexts split too, into chunks of at least
/// kMinSplitKeys keys: a batch-1 decode of 8 KV heads would otherwise run 8
/// blocks on a 132-multiprocessor H200. 16: decode_attention_d128's 4 warps
/// of 8 keys in flight read such a chunk in one round of loads.
constexpr int64_t kMinSplitKeys = 16;

inline DecodeSplit decodeSplitFor(int64_t maxSeqLen, int64_t chunk, int64_t blocks = 0,
                                  int64_t targetBlocks = 0) {
  DecodeSplit s;
  if (chunk <= 0 || maxSeqLen <= 0)
    return s;
  int64_t n = 1;
  if (maxSeqLen > 2 * chunk) {
    const int64_t chunks = (maxSeqLen + chunk - 1) / chunk;
    while (n < chunks && n < kMaxDecodeSplits)
      n *= 2;
  }
  if (blocks > 0 && targetBlocks > blocks) {
    const int64_t want = (targetBlocks + blocks - 1) / blocks;
    int64_t occ = 1;
    while (occ * 2 <= want && occ * 2 * kMinSplitKeys <= maxSeqLen && occ * 2 <= kMaxDecodeSplits)
      occ *= 2;
    n = std::max(n, occ);
  }
  if (n == 1)
    return s;
  s.numSplits = int(n);
  s.splitSize = (maxSeqLen + n - 1) / n;
  return s;
}

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_CUDA_GRAPHBUCKETS_H
