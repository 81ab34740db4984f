//===- KVCacheTest.cpp - block allocator, pool, sequences, step metadata --===//
#include "runtime/kv/StepMetadata.h"

#include "TransformerTestUtil.h"

#include <algorithm>

using namespace accel::rt;
using namespace accel::rt::kv;

namespace {

std::unique_ptr<BlockPool> makePool(int64_t blocks, int64_t blockSize = 4,
                                    DType dt = DType::kF32, int64_t layers = 2) {
  KVCacheConfig c;
  c.numLayers = layers;
  c.numKvHeads = 2;
  c.headDim = 3;
  c.blockSize = blockSize;
  c.numBlocks = blocks;
  c.dtype = dt;
  auto p = BlockPool::create(c);
  EXPECT_TRUE(p.isOk()) << p.status().toString();
  return p.isOk() ? std::move(p).value() : nullptr;
}

std::vector<int32_t> ints(const Tensor &t) {
  std::vector<int32_t> v(size_t(t.numElements()));
  std::copy(t.data<int32_t>(), t.data<int32_t>() + t.numElements(), v.begin());
  return v;
}

} // namespace

// --- BlockAllocator ---------------------------------------------------------

TEST(BlockAllocator, HandsOutBlocksInOrderAndCountsThem) {
  BlockAllocator a(4);
  EXPECT_EQ(a.numBlocks(), 4);
  EXPECT_EQ(a.numFree(), 4);
  for (BlockId want = 0; want < 4; ++want) {
    StatusOr<BlockId> id = a.allocate();
    ASSERT_TRUE(id.isOk());
    EXPECT_EQ(*id, want);
    EXPECT_EQ(a.refCount(*id), 1);
  }
  EXPECT_EQ(a.numFree(), 0);
  EXPECT_EQ(a.numUsed(), 4);
}

TEST(BlockAllocator, ExhaustionIsAClearError) {
  BlockAllocator a(2);
  ASSERT_TRUE(a.allocate().isOk());
  ASSERT_TRUE(a.allocate().isOk());
  StatusOr<BlockId> none = a.allocate();
  ASSERT_FALSE(none.isOk());
  EXPECT_EQ(none.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(none.status().message().find("all 2 blocks are in use"), std::string::npos)
      << none.status().message();
}

TEST(BlockAllocator, BulkAllocationIsAllOrNothing) {
  BlockAllocator a(5);
  std::vector<BlockId> got;
  TT_OK(a.allocate(3, got));
  EXPECT_EQ(got, (std::vector<BlockId>{0, 1, 2}));
  Status s = a.allocate(3, got);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("3 blocks requested, 2 of 5 free"), std::string::npos)
      << s.message();
  EXPECT_EQ(got.size(), 3u);
  EXPECT_EQ(a.numFree(), 2);
}

TEST(BlockAllocator, ReferenceCountsKeepSharedBlocksAlive) {
  BlockAllocator a(2);
  BlockId id = a.allocate().value();
  TT_OK(a.retain(id));
  EXPECT_EQ(a.refCount(id), 2);
  TT_OK(a.release(id));
  EXPECT_EQ(a.refCount(id), 1);
  EXPECT_EQ(a.numFree(), 1);
  TT_OK(a.release(id));
  EXPECT_EQ(a.refCount(id), 0);
  EXPECT_EQ(a.numFree(), 2);
}

TEST(BlockAllocator, FreedBlocksGoToTheBackOfTheQueue) {
  BlockAllocator a(3);
  std::vector<BlockId> got;
  TT_OK(a.allocate(2, got)); // 0, 1; block 2 still free
  TT_OK(a.release(0));
  EXPECT_EQ(a.allocate().value(), 2);
  EXPECT_EQ(a.allocate().value(), 0);
}

TEST(BlockAllocator, DoubleFreeAndUnknownIdsFail) {
  BlockAllocator a(2);
  BlockId id = a.allocate().value();
  TT_OK(a.release(id));
  Status s = a.release(id);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("it is free"), std::string::npos) << s.message();
  EXPECT_FALSE(a.retain(1).isOk()); // free
  Status u = a.release(7);
  EXPECT_FALSE(u.isOk());
  EXPECT_NE(u.message().find("the pool has 2 blocks"), std::string::npos) << u.message();
  EXPECT_EQ(a.numFree(), 2);
}

// --- BlockPool ----------------------------------------------------------------

TEST(BlockPool, ValidatesItsGeometry) {
  KVCacheConfig c;
  c.numKvHeads = 2;
  c.headDim = 4;
  c.numBlocks = 8;
  c.blockSize = 12;
  EXPECT_NE(BlockPool::create(c).status().message().find("power of two"), std::string::npos);
  c.blockSize = 16;
  c.dtype = DType::kI8;
  EXPECT_FALSE(BlockPool::create(c).isOk());
  c.dtype = DType::kBF16;
  c.numKvHeads = 0;
  EXPECT_NE(BlockPool::create(c).status().message().find("kv_heads"), std::string::npos);
}

TEST(BlockPool, LayoutAndSizes) {
  auto pool = makePool(6, 4, DType::kBF16, 3);
  ASSERT_TRUE(pool);
  EXPECT_EQ(pool->numSlots(), 24);
  // 2 (K, V) * 3 layers * 4 tokens * 2 heads * 3 dims * 2 bytes.
  EXPECT_EQ(pool->config().bytesPerBlock(), 2 * 3 * 4 * 2 * 3 * 2);
  EXPECT_EQ(pool->config().blocksForBytes(pool->config().bytesPerBlock() * 10 + 5), 10);
  EXPECT_EQ(pool->keys(1).shape(), (Shape{6, 4, 2, 3}));
  EXPECT_EQ(pool->keys(1).dtype(), DType::kBF16);
  // Slot s of layer l starts s * kv_heads * head_dim elements in.
  EXPECT_EQ(static_cast<char *>(pool->keyRow(2, 5)) -
                static_cast<char *>(pool->keys(2).rawData()),
            5 * 2 * 3 * 2);
  EXPECT_EQ(pool->numFreeBlocks(), 6);
}

TEST(BlockPool, CopyBlockCopiesEveryLayer) {
  auto pool = makePool(3);
  ASSERT_TRUE(pool);
  for (int64_t l = 0; l < 2; ++l)
    for (int64_t i = 0; i < 4 * 6; ++i) {
      static_cast<float *>(pool->keyRow(l, 4))[i] = float(100 * l + i);
      static_cast<float *>(pool->valueRow(l, 4))[i] = float(-100 * l - i);
    }
  TT_OK(pool->copyBlock(1, 2));
  for (int64_t l = 0; l < 2; ++l)
    for (int64_t i = 0; i < 4 * 6; ++i) {
      EXPECT_EQ(static_cast<float *>(pool->keyRow(l, 8))[i], float(100 * l + i));
      EXPECT_EQ(static_cast<float *>(pool->valueRow(l, 8))[i], float(-100 * l - i));
    }
  EXPECT_FALSE(pool->copyBlock(1, 3).isOk());
}

// --- SequenceKV ---------------------------------------------------------------

TEST(SequenceKV, AppendSlotsFillsBlocksAndMapsSlots) {
  auto pool = makePool(8);
  ASSERT_TRUE(pool);
  // Another sequence takes block 0 first, so ours starts at block 1.
  SequenceKV other, seq;
  TT_OK(other.appendSlots(*pool, 1));
  std::vector<int32_t> slots;
  TT_OK(seq.appendSlots(*pool, 6, &slots));
  EXPECT_EQ(seq.numTokens(), 6);
  EXPECT_EQ(seq.blocks(), (std::vector<BlockId>{1, 2}));
  EXPECT_EQ(slots, (std::vector<int32_t>{4, 5, 6, 7, 8, 9}));
  // The other sequence grows into block 3; ours continues in block 2, then 4.
  TT_OK(other.appendSlots(*pool, 4));
  slots.clear();
  TT_OK(seq.appendSlots(*pool, 3, &slots));
  EXPECT_EQ(slots, (std::vector<int32_t>{10, 11, 16}));
  EXPECT_EQ(seq.blocks(), (std::vector<BlockId>{1, 2, 4}));
  EXPECT_EQ(seq.slotOf(8, 4), 16);
  EXPECT_EQ(seq.slotOf(9, 4), -1);
  EXPECT_EQ(pool->numFreeBlocks(), 3);
}

TEST(SequenceKV, ExhaustionChangesNothing) {
  auto pool = makePool(2);
  ASSERT_TRUE(pool);
  SequenceKV seq;
  TT_OK(seq.appendSlots(*pool, 5));
  Status s = seq.appendSlots(*pool, 4);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("need 1 blocks, 0 of 2 free"), std::string::npos) << s.message();
  EXPECT_EQ(seq.numTokens(), 5);
  EXPECT_EQ(seq.numBlocks(), 2);
  TT_OK(seq.appendSlots(*pool, 3)); // fits in the last block's room
  EXPECT_EQ(seq.numTokens(), 8);
}

TEST(SequenceKV, ReleaseReturnsBlocks) {
  auto pool = makePool(4);
  ASSERT_TRUE(pool);
  SequenceKV seq;
  TT_OK(seq.appendSlots(*pool, 9));
  EXPECT_EQ(pool->numFreeBlocks(), 1);
  TT_OK(seq.release(*pool));
  EXPECT_EQ(pool->numFreeBlocks(), 4);
  EXPECT_EQ(seq.numTokens(), 0);
  EXPECT_TRUE(seq.blocks().empty());
}

TEST(SequenceKV, ForkSharesBlocksAndCopiesOnWrite) {
  auto pool = makePool(6);
  ASSERT_TRUE(pool);
  SequenceKV parent;
  std::vector<int32_t> slots;
  TT_OK(parent.appendSlots(*pool, 6, &slots)); // blocks 0 (full), 1 (half)
  for (int32_t s : slots)
    for (int64_t l = 0; l < 2; ++l)
      static_cast<float *>(pool->keyRow(l, s))[0] = float(s + 1);
  TT_ASSIGN(SequenceKV child, parent.fork(*pool));
  EXPECT_EQ(pool->allocator().refCount(0), 2);
  EXPECT_EQ(pool->allocator().refCount(1), 2);
  EXPECT_EQ(pool->numFreeBlocks(), 4);
  EXPECT_EQ(child.blocksNeeded(*pool, 1), 1); // the copy of block 1
  slots.clear();
  TT_OK(child.appendSlots(*pool, 1, &slots));
  // The child's half-full block was copied to block 2; the full one stays shared.
  EXPECT_EQ(child.blocks(), (std::vector<BlockId>{0, 2}));
  EXPECT_EQ(slots, (std::vector<int32_t>{10}));
  EXPECT_EQ(pool->allocator().refCount(0), 2);
  EXPECT_EQ(pool->allocator().refCount(1), 1);
  for (int64_t l = 0; l < 2; ++l) {
    EXPECT_EQ(static_cast<float *>(pool->keyRow(l, 8))[0], 5.0f);
    EXPECT_EQ(static_cast<float *>(pool->keyRow(l, 9))[0], 6.0f);
  }
  // The parent still writes in place into its own block 1.
  slots.clear();
  TT_OK(parent.appendSlots(*pool, 1, &slots));
  EXPECT_EQ(slots, (std::vector<int32_t>{6}));
  TT_OK(child.release(*pool));
  TT_OK(parent.release(*pool));
  EXPECT_EQ(pool->numFreeBlocks(), 6);
}

TEST(SequenceKV, BlockTableRowIsPadded) {
  auto pool = makePool(4);
  ASSERT_TRUE(pool);
  SequenceKV a, b;
  TT_OK(a.appendSlots(*pool, 1));
  TT_OK(b.appendSlots(*pool, 5));
  std::vector<int32_t> row(4, -7);
  TT_OK(b.fillBlockTableRow(row.data(), 4));
  EXPECT_EQ(row, (std::vector<int32_t>{1, 2, 0, 0}));
  EXPECT_FALSE(b.fillBlockTableRow(row.data(), 1).isOk());
}

// --- StepMetadata -------------------------------------------------------------

TEST(StepMetadata, DescribesAMixedStep) {
  auto pool = makePool(16);
  ASSERT_TRUE(pool);
  SequenceKV a, b;
  TT_OK(a.appendSlots(*pool, 5)); // a: 5 cached tokens, blocks 0, 1
  TT_ASSIGN(StepMetadata md, prepareStep(*pool, {{&a, 1}, {&b, 6}}));
  EXPECT_EQ(md.numSeqs, 2);
  EXPECT_EQ(md.numTokens, 7);
  EXPECT_EQ(ints(md.queryStartLoc), (std::vector<int32_t>{0, 1, 7}));
  EXPECT_EQ(ints(md.seqLens), (std::vector<int32_t>{6, 6}));
  EXPECT_EQ(ints(md.positions), (std::vector<int32_t>{5, 0, 1, 2, 3, 4, 5}));
  // a's 6th token: block 1, offset 1; b: blocks 2 and 3.
  EXPECT_EQ(ints(md.slotMapping), (std::vector<int32_t>{5, 8, 9, 10, 11, 12, 13}));
  EXPECT_EQ(md.blockTables.shape(), (Shape{2, 2}));
  EXPECT_EQ(ints(md.blockTables), (std::vector<int32_t>{0, 1, 2, 3}));
  TT_ASSIGN(StepMetadata wide, describeStep(*pool, {{&a, 1}}, 8));
  EXPECT_EQ(wide.blockTables.shape(), (Shape{1, 8}));
}

TEST(StepMetadata, AStepThatDoesNotFitChangesNothing) {
  auto pool = makePool(3);
  ASSERT_TRUE(pool);
  SequenceKV a, b;
  TT_OK(a.appendSlots(*pool, 4));
  StatusOr<StepMetadata> md = prepareStep(*pool, {{&a, 1}, {&b, 5}});
  ASSERT_FALSE(md.isOk());
  EXPECT_EQ(md.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(md.status().message().find("needs 3 new blocks, 2 of 3 free"), std::string::npos)
      << md.status().message();
  EXPECT_EQ(a.numTokens(), 4);
  EXPECT_EQ(b.numTokens(), 0);
  EXPECT_EQ(pool->numFreeBlocks(), 2);
}

TEST(StepMetadata, RejectsBadSteps) {
  auto pool = makePool(3);
  ASSERT_TRUE(pool);
  SequenceKV a;
  EXPECT_NE(prepareStep(*pool, {{&a, 1}, {&a, 1}}).status().message().find("twice"),
            std::string::npos);
  EXPECT_NE(prepareStep(*pool, {{&a, 0}}).status().message().find("at least one"),
            std::string::npos);
  EXPECT_FALSE(describeStep(*pool, {{&a, 2}}).isOk()); // no slots reserved
}

// A pool whose cache lives on a GPU backend's device: the allocator only,
// no host storage; copy-on-write copies are queued for the backend.
TEST(BlockPool, DeviceStoragePoolQueuesCopies) {
  KVCacheConfig c;
  c.numLayers = 2;
  c.numKvHeads = 2;
  c.headDim = 3;
  c.blockSize = 4;
  c.numBlocks = 6;
  TT_ASSIGN(std::unique_ptr<BlockPool> pool, BlockPool::create(c, KvStorage::kDevice));
  EXPECT_EQ(pool->storage(), KvStorage::kDevice);
  EXPECT_FALSE(pool->keys(0).defined());
  EXPECT_FALSE(pool->values(1).defined());
  SequenceKV parent;
  TT_OK(parent.appendSlots(*pool, 6)); // blocks 0 (full), 1 (half)
  TT_ASSIGN(SequenceKV child, parent.fork(*pool));
  TT_OK(child.appendSlots(*pool, 1)); // copies block 1 to 2
  EXPECT_EQ(child.blocks(), (std::vector<BlockId>{0, 2}));
  std::vector<BlockCopy> copies = pool->takePendingCopies();
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].src, 1);
  EXPECT_EQ(copies[0].dst, 2);
  EXPECT_TRUE(pool->takePendingCopies().empty());
  EXPECT_FALSE(pool->copyBlock(0, 6).isOk()); // outside the pool
  EXPECT_TRUE(pool->takePendingCopies().empty());
}
