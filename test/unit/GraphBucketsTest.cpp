//===- GraphBucketsTest.cpp - CUDA-graph buckets, split-KV, KV memory budget ===//
//
// The pure arithmetic behind the GPU backend's CUDA graphs and its
// --gpu-memory-utilization sizing (runtime/cuda/GraphBuckets.h,
// MemoryBudget.h); no GPU needed.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/GraphBuckets.h"
#include "runtime/engine/MemoryBudget.h"

#include <gtest/gtest.h>

using namespace accel::rt;
using namespace accel::rt::engine;

namespace {

constexpr int64_t kGiB = int64_t(1) << 30;

TEST(GraphBuckets, FollowVllmsListUpToTheLargestBatch) {
  EXPECT_EQ(graphBatchBuckets(64), (std::vector<int64_t>{1, 2, 4, 8, 16, 24, 32, 48, 64}));
  EXPECT_EQ(graphBatchBuckets(256),
            (std::vector<int64_t>{1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 160, 192, 224, 256}));
  // The largest batch is a bucket of its own, never rounded past.
  EXPECT_EQ(graphBatchBuckets(100),
            (std::vector<int64_t>{1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 100}));
  EXPECT_EQ(graphBatchBuckets(3), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(graphBatchBuckets(1), (std::vector<int64_t>{1}));
  EXPECT_TRUE(graphBatchBuckets(0).empty());
}

TEST(GraphBuckets, ABatchPadsToTheSmallestBucketThatHoldsIt) {
  const std::vector<int64_t> b = graphBatchBuckets(64);
  EXPECT_EQ(graphBucketFor(b, 1), 1);
  EXPECT_EQ(graphBucketFor(b, 3), 4);
  EXPECT_EQ(graphBucketFor(b, 4), 4);
  EXPECT_EQ(graphBucketFor(b, 17), 24);
  EXPECT_EQ(graphBucketFor(b, 33), 48);
  EXPECT_EQ(graphBucketFor(b, 64), 64);
  EXPECT_EQ(graphBucketFor(b, 65), 0); // eager
  EXPECT_EQ(graphBucketFor(b, 0), 0);
}

TEST(DecodeSplit, SplitsOnlyLongContextsIntoPowersOfTwo) {
  EXPECT_EQ(decodeSplitFor(512, 256).numSplits, 1); // up to 2 chunks: no split
  EXPECT_EQ(decodeSplitFor(100, 0).numSplits, 1);   // 0: never
  DecodeSplit s = decodeSplitFor(513, 256);         // 3 chunks -> 4 splits
  EXPECT_EQ(s.numSplits, 4);
  EXPECT_EQ(s.splitSize, 129);
  s = decodeSplitFor(4096, 256); // 16 chunks
  EXPECT_EQ(s.numSplits, 16);
  EXPECT_EQ(s.splitSize, 256);
  s = decodeSplitFor(131072, 256); // capped at 64 splits
  EXPECT_EQ(s.numSplits, kMaxDecodeSplits);
  EXPECT_EQ(s.splitSize, 2048);
  // The splits cover the context (trailing ones may be empty: the kernel
  // skips them), in chunks no longer than asked unless capped.
  for (int64_t len : {11, 52, 600, 1000, 5000, 70000})
    for (int64_t chunk : {4, 5, 256}) {
      DecodeSplit d = decodeSplitFor(len, chunk);
      if (d.numSplits == 1)
        continue;
      EXPECT_GE(d.numSplits * d.splitSize, len) << len << " " << chunk;
      if (d.numSplits < kMaxDecodeSplits)
        EXPECT_LE(d.splitSize, chunk) << len << " " << chunk;
    }
}

// Few attention blocks (small batches): short contexts split too, so that
// the GPU's multiprocessors have work, in chunks of at least kMinSplitKeys.
TEST(DecodeSplit, SmallBatchesSplitForOccupancy) {
  // Batch 1, 8 KV heads on a 132-SM H200 (target 264 blocks): 33 splits
  // wanted, but 192 keys allow 8 chunks of >= 16 keys (16 would be 12).
  DecodeSplit s = decodeSplitFor(192, 256, 8, 264);
  EXPECT_EQ(s.numSplits, 8);
  EXPECT_EQ(s.splitSize, 24);
  EXPECT_GE(s.splitSize, kMinSplitKeys);
  // A long context: occupancy wants 32 (the largest power of two <= 33).
  s = decodeSplitFor(8192, 256, 8, 264);
  EXPECT_EQ(s.numSplits, 32);
  EXPECT_EQ(s.splitSize, 256);
  // Batch 64 x 8 KV heads = 512 blocks already fill the GPU: no split.
  EXPECT_EQ(decodeSplitFor(192, 256, 512, 264).numSplits, 1);
  // Too short to split at all.
  EXPECT_EQ(decodeSplitFor(20, 256, 8, 264).numSplits, 1);
  EXPECT_EQ(decodeSplitFor(40, 256, 8, 264).numSplits, 2);
  // Length-based splitting still applies (and wins when larger).
  EXPECT_EQ(decodeSplitFor(4096, 256, 512, 264).numSplits, 16);
  EXPECT_EQ(decodeSplitFor(4096, 0, 8, 264).numSplits, 1); // 0: never
}

TEST(MemoryBudget, TheKvCacheGetsWhatUtilizationLeaves) {
  MemoryBudgetInput in;
  in.totalBytes = 80 * kGiB;
  in.freeBytes = 60 * kGiB; // 20 GiB in use: weights, activations, graphs
  in.utilization = 0.9;     // 72 GiB allowed: 52 GiB for the cache
  in.bytesPerBlock = 2 * 32 * 16 * 8 * 128 * 2; // Llama 3 8B, bf16: 2 MiB
  in.blockSize = 16;
  in.maxModelLen = 8192;
  StatusOr<MemoryBudget> b = kvMemoryBudget(in);
  ASSERT_TRUE(b) << b.status().message();
  EXPECT_EQ(b->numBlocks, 52 * kGiB / in.bytesPerBlock);
  EXPECT_EQ(b->kvBytes, b->numBlocks * in.bytesPerBlock);
  EXPECT_EQ(b->maxTokens, b->numBlocks * 16);
  // A reserve still to be taken comes off the cache.
  in.reserveBytes = 2 * kGiB;
  b = kvMemoryBudget(in);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->numBlocks, 50 * kGiB / in.bytesPerBlock);
}

TEST(MemoryBudget, TooLittleForOneSequenceIsOneClearSentence) {
  MemoryBudgetInput in;
  in.totalBytes = 80 * kGiB;
  in.freeBytes = 9 * kGiB; // 71 GiB used: 1 GiB left at 0.9
  in.utilization = 0.9;
  in.bytesPerBlock = 2 * 32 * 16 * 8 * 128 * 2; // 2 MiB: 1 GiB holds 512 blocks = 8192 tokens
  in.blockSize = 16;
  in.maxModelLen = 8192;
  ASSERT_TRUE(kvMemoryBudget(in)); // exactly one sequence
  in.maxModelLen = 8193;
  StatusOr<MemoryBudget> b = kvMemoryBudget(in);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(b.status().message().find("8193 tokens"), std::string::npos) << b.status().message();
  EXPECT_NE(b.status().message().find("--gpu-memory-utilization"), std::string::npos);
  // More in use than the utilization allows: nothing left, same sentence.
  in.freeBytes = 1 * kGiB;
  b = kvMemoryBudget(in);
  ASSERT_FALSE(b);
  EXPECT_NE(b.status().message().find("has 0 bytes left"), std::string::npos)
      << b.status().message();
  EXPECT_NE(b.status().message().find("less than the 1.00 GiB one sequence of 8193 tokens needs"),
            std::string::npos)
      << b.status().message();
  // A small model's sizes keep their digits (MiB, KiB), not "0.00 GiB".
  in.bytesPerBlock = 4096; // 128 blocks of 4 KiB: 512 KiB
  in.maxModelLen = 2048;
  b = kvMemoryBudget(in);
  ASSERT_FALSE(b);
  EXPECT_NE(b.status().message().find("less than the 512.00 KiB one sequence of 2048 tokens"),
            std::string::npos)
      << b.status().message();
  in.utilization = 1.5;
  EXPECT_EQ(kvMemoryBudget(in).status().code(), StatusCode::kInvalidArgument);
}

TEST(MemoryBudget, SlotsStayWithinInt32) {
  MemoryBudgetInput in;
  in.totalBytes = int64_t(1) << 50;
  in.freeBytes = in.totalBytes;
  in.utilization = 1.0;
  in.bytesPerBlock = 256;
  in.blockSize = 16;
  in.maxModelLen = 16;
  StatusOr<MemoryBudget> b = kvMemoryBudget(in);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->numBlocks, int64_t(INT32_MAX) / 16);
}

} // namespace
