//===- MicroBatchesTest.cpp - one engine step as micro-batches ------------===//
//
// runtime/engine/MicroBatches.h on real step metadata (kv::prepareStep over
// a block pool): a step of prefill chunks and decode tokens split in 2..5
// parts, cuts inside a sequence (the earlier piece's seq_len), logits rows
// picked by logitsRowEnds (cuts only between sequences), keepRows and
// joinParts. That a plan run part by part gives the whole step's logits is
// test/unit/PipelineTest.cpp's (the demo model through CpuExecutor).
//
//===----------------------------------------------------------------------===//
#include "runtime/engine/MicroBatches.h"

#include "TransformerTestUtil.h"

#include <numeric>

using namespace accel::rt;
using namespace accel::rt::kv;
using accel::rt::engine::joinParts;
using accel::rt::engine::MicroBatch;
using accel::rt::engine::splitStep;

namespace {

std::vector<int32_t> ints(const Tensor &t) {
  return std::vector<int32_t>(t.data<int32_t>(), t.data<int32_t>() + t.numElements());
}

/// A ragged step over blocks of 4 tokens: A continues a prefill (5 cached,
/// 7 new: seq_len 12), B decodes (3 cached + 1), C starts a prefill of 6, D
/// decodes (9 cached + 1): 15 tokens, query_start_loc 0 7 8 14 15.
struct RaggedStep {
  std::unique_ptr<BlockPool> pool;
  SequenceKV a, b, c, d;
  StepMetadata meta;
  Tensor ids; // i64 100, 101, ... (token t is 100 + t)

  RaggedStep() {
    KVCacheConfig cfg;
    cfg.numLayers = 1;
    cfg.numKvHeads = 1;
    cfg.headDim = 2;
    cfg.blockSize = 4;
    cfg.numBlocks = 32;
    pool = std::move(BlockPool::create(cfg)).value();
    EXPECT_TRUE(a.appendSlots(*pool, 5).isOk());
    EXPECT_TRUE(b.appendSlots(*pool, 3).isOk());
    EXPECT_TRUE(d.appendSlots(*pool, 9).isOk());
    meta = std::move(prepareStep(*pool, {{&a, 7}, {&b, 1}, {&c, 6}, {&d, 1}})).value();
    std::vector<int64_t> v(15);
    std::iota(v.begin(), v.end(), int64_t(100));
    ids = std::move(Tensor::fromVector<int64_t>({15}, v)).value();
  }
};

/// What every split must keep: the parts cover the step's tokens in order;
/// each piece of a sequence brings tokens at positions [seq_len - n,
/// seq_len) (so its attention sees exactly the tokens before it); block
/// table rows, slots and positions are the step's; the pieces of a
/// sequence add up to its new tokens and the last ends at its seq_len.
void expectConsistent(const StepMetadata &whole, const Tensor &ids,
                      const std::vector<MicroBatch> &parts) {
  const std::vector<int32_t> qsl = ints(whole.queryStartLoc), lens = ints(whole.seqLens),
                             pos = ints(whole.positions), slots = ints(whole.slotMapping),
                             tables = ints(whole.blockTables);
  const int64_t width = whole.maxBlocksPerSeq;
  int64_t at = 0; // the step's token where this part starts
  int64_t seq = 0;
  std::vector<int64_t> seen(size_t(whole.numSeqs), 0);
  for (size_t p = 0; p < parts.size(); ++p) {
    const StepMetadata &m = parts[p].meta;
    SCOPED_TRACE("part " + std::to_string(p));
    ASSERT_EQ(parts[p].tokenIds.numElements(), m.numTokens);
    EXPECT_EQ(m.maxBlocksPerSeq, width);
    EXPECT_EQ(m.lastRowsOnly, whole.lastRowsOnly);
    EXPECT_EQ(m.greedy, whole.greedy);
    const std::vector<int32_t> q = ints(m.queryStartLoc), l = ints(m.seqLens),
                               mp = ints(m.positions), ms = ints(m.slotMapping),
                               mt = ints(m.blockTables);
    ASSERT_EQ(int64_t(q.size()), m.numSeqs + 1);
    EXPECT_EQ(q.front(), 0);
    EXPECT_EQ(q.back(), m.numTokens);
    for (int64_t t = 0; t < m.numTokens; ++t) {
      EXPECT_EQ(parts[p].tokenIds.data<int64_t>()[t], ids.data<int64_t>()[at + t]);
      EXPECT_EQ(mp[size_t(t)], pos[size_t(at + t)]);
      EXPECT_EQ(ms[size_t(t)], slots[size_t(at + t)]);
    }
    for (int64_t i = 0; i < m.numSeqs; ++i) {
      // The piece's sequence in the step: the one holding its first token.
      const int64_t first = at + q[size_t(i)];
      while (qsl[size_t(seq + 1)] <= first)
        ++seq;
      const int64_t n = q[size_t(i + 1)] - q[size_t(i)];
      ASSERT_GT(n, 0);
      EXPECT_EQ(mp[size_t(q[size_t(i)])], l[size_t(i)] - n) << "sequence " << seq;
      for (int64_t c = 0; c < width; ++c)
        EXPECT_EQ(mt[size_t(i * width + c)], tables[size_t(seq * width + c)]);
      seen[size_t(seq)] += n;
      if (seen[size_t(seq)] == qsl[size_t(seq + 1)] - qsl[size_t(seq)])
        EXPECT_EQ(l[size_t(i)], lens[size_t(seq)]) << "sequence " << seq;
    }
    at += m.numTokens;
  }
  EXPECT_EQ(at, whole.numTokens);
  for (int64_t s = 0; s < whole.numSeqs; ++s)
    EXPECT_EQ(seen[size_t(s)], qsl[size_t(s + 1)] - qsl[size_t(s)]) << "sequence " << s;
}

/// An output of `rows` rows of 3 floats, row r holding tag * 100 + r.
Tensor labelled(int64_t rows, float tag) {
  std::vector<float> v;
  for (int64_t r = 0; r < rows; ++r)
    for (int c = 0; c < 3; ++c)
      v.push_back(tag * 100 + float(r));
  return std::move(Tensor::fromVector<float>({rows, 3}, v)).value();
}

/// joinParts of labelled outputs: the (part, row) pairs it kept, in order.
std::vector<std::pair<int, int>> joinedRows(const std::vector<MicroBatch> &parts, int64_t rowsOf) {
  std::vector<Tensor> outs;
  for (size_t p = 0; p < parts.size(); ++p)
    outs.push_back(labelled(parts[p].meta.lastRowsOnly ? parts[p].meta.numLogitsRows()
                                                       : parts[p].meta.numTokens,
                            float(p)));
  StatusOr<Tensor> j = joinParts(parts, outs);
  EXPECT_TRUE(j.isOk()) << j.status().message();
  std::vector<std::pair<int, int>> got;
  if (!j.isOk())
    return got;
  EXPECT_EQ(j->dim(0), rowsOf);
  for (int64_t r = 0; r < j->dim(0); ++r) {
    const int v = int(j->data<float>()[r * 3]);
    got.push_back({v / 100, v % 100});
  }
  return got;
}

} // namespace

TEST(MicroBatches, SplitsARaggedStepInTwoToFiveParts) {
  RaggedStep s;
  for (int parts = 2; parts <= 5; ++parts) {
    SCOPED_TRACE(std::to_string(parts) + " parts");
    TT_ASSIGN(std::vector<MicroBatch> mb, splitStep(s.ids, s.meta, parts));
    ASSERT_EQ(int(mb.size()), parts);
    // About equal: floor(k * 15 / parts) boundaries.
    for (int p = 0; p < parts; ++p)
      EXPECT_EQ(mb[size_t(p)].meta.numTokens, (p + 1) * 15 / parts - p * 15 / parts);
    expectConsistent(s.meta, s.ids, mb);
    // Every token's row is kept, in order.
    std::vector<std::pair<int, int>> rows = joinedRows(mb, 15);
    for (size_t p = 0, k = 0; p < mb.size(); ++p)
      for (int64_t r = 0; r < mb[p].meta.numTokens; ++r, ++k)
        EXPECT_EQ(rows[k], std::make_pair(int(p), int(r)));
  }
}

// Three parts cut at tokens 5 and 10: A's chunk of 7 becomes 5 (seq_len 12
// - 2 = 10) and 2 (seq_len 12); C's prefill of 6 becomes 2 (seq_len 2) and
// 4 (seq_len 6).
TEST(MicroBatches, ACutInsideASequenceShortensTheEarlierPiece) {
  RaggedStep s;
  TT_ASSIGN(std::vector<MicroBatch> mb, splitStep(s.ids, s.meta, 3));
  ASSERT_EQ(mb.size(), 3u);
  EXPECT_EQ(ints(mb[0].meta.queryStartLoc), (std::vector<int32_t>{0, 5}));
  EXPECT_EQ(ints(mb[0].meta.seqLens), (std::vector<int32_t>{10}));
  EXPECT_EQ(ints(mb[1].meta.queryStartLoc), (std::vector<int32_t>{0, 2, 3, 5}));
  EXPECT_EQ(ints(mb[1].meta.seqLens), (std::vector<int32_t>{12, 4, 2}));
  EXPECT_EQ(ints(mb[2].meta.queryStartLoc), (std::vector<int32_t>{0, 4, 5}));
  EXPECT_EQ(ints(mb[2].meta.seqLens), (std::vector<int32_t>{6, 10}));
  EXPECT_EQ(ints(mb[1].meta.positions), (std::vector<int32_t>{10, 11, 3, 0, 1}));
  // The parts view the step's token ids (no copy).
  EXPECT_EQ(mb[1].tokenIds.data<int64_t>(), s.ids.data<int64_t>() + 5);
  expectConsistent(s.meta, s.ids, mb);
}

// lastRowsOnly: one row per piece comes back; a piece that is not its
// sequence's last is left out, so the joined rows are A, B, C, D's last.
TEST(MicroBatches, LastRowsOnlyKeepsEachSequencesFinalPiece) {
  RaggedStep s;
  s.meta.lastRowsOnly = true;
  s.meta.greedy = true;
  TT_ASSIGN(std::vector<MicroBatch> mb, splitStep(s.ids, s.meta, 3));
  ASSERT_EQ(mb.size(), 3u);
  EXPECT_EQ(mb[0].keepRows, (std::vector<int64_t>{}));     // A's first 5
  EXPECT_EQ(mb[1].keepRows, (std::vector<int64_t>{0, 1})); // A, B (not C's first 2)
  EXPECT_EQ(mb[2].keepRows, (std::vector<int64_t>{0, 1})); // C, D
  expectConsistent(s.meta, s.ids, mb);
  EXPECT_EQ(joinedRows(mb, 4),
            (std::vector<std::pair<int, int>>{{1, 0}, {1, 1}, {2, 0}, {2, 1}}));
  // Greedy token ids (i64 [rows]) join the same way.
  std::vector<Tensor> ids;
  for (size_t p = 0; p < mb.size(); ++p) {
    std::vector<int64_t> v;
    for (int64_t r = 0; r < mb[p].meta.numSeqs; ++r)
      v.push_back(int64_t(p) * 10 + r);
    ids.push_back(std::move(Tensor::fromVector<int64_t>({int64_t(v.size())}, v)).value());
  }
  TT_ASSIGN(Tensor joined, joinParts(mb, ids));
  EXPECT_EQ(joined.dtype(), DType::kI64);
  EXPECT_EQ(std::vector<int64_t>(joined.data<int64_t>(), joined.data<int64_t>() + 4),
            (std::vector<int64_t>{10, 11, 20, 21}));
  for (int parts = 2; parts <= 5; ++parts) {
    TT_ASSIGN(std::vector<MicroBatch> more, splitStep(s.ids, s.meta, parts));
    expectConsistent(s.meta, s.ids, more);
    std::vector<std::pair<int, int>> rows = joinedRows(more, 4);
    ASSERT_EQ(rows.size(), 4u) << parts;
    // Each kept row is its part's row of the sequence whose last token the
    // part holds: the last tokens are 6, 7, 13, 14.
    for (size_t k = 0; k < 4; ++k) {
      const int64_t last = std::vector<int64_t>{6, 7, 13, 14}[k];
      int64_t at = 0;
      for (int p = 0; p < rows[k].first; ++p)
        at += more[size_t(p)].meta.numTokens;
      const std::vector<int32_t> q = ints(more[size_t(rows[k].first)].meta.queryStartLoc);
      EXPECT_EQ(at + q[size_t(rows[k].second) + 1] - 1, last) << parts << " parts, row " << k;
    }
  }
}

// Rows picked by logitsRowEnds (a speculative verification step: A wants
// its last 2 rows): cuts fall only between sequences, at a row's end, and
// each part's ends are its own.
TEST(MicroBatches, LogitsRowEndsCutOnlyBetweenSequences) {
  RaggedStep s;
  s.meta.lastRowsOnly = true;
  s.meta.logitsRowEnds = std::move(Tensor::fromVector<int32_t>({6}, {0, 6, 7, 8, 14, 15})).value();
  TT_ASSIGN(std::vector<MicroBatch> two, splitStep(s.ids, s.meta, 2));
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(ints(two[0].meta.logitsRowEnds), (std::vector<int32_t>{0, 6, 7}));
  EXPECT_EQ(ints(two[1].meta.logitsRowEnds), (std::vector<int32_t>{0, 1, 7, 8}));
  EXPECT_EQ(two[0].keepRows, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(two[1].keepRows, (std::vector<int64_t>{0, 1, 2}));
  // Five asked: the targets 3, 6, 9, 12 snap to 7, (7 again), 8, 14.
  TT_ASSIGN(std::vector<MicroBatch> five, splitStep(s.ids, s.meta, 5));
  ASSERT_EQ(five.size(), 4u);
  std::vector<int64_t> sizes;
  for (const MicroBatch &m : five)
    sizes.push_back(m.meta.numTokens);
  EXPECT_EQ(sizes, (std::vector<int64_t>{7, 1, 6, 1}));
  for (int parts = 2; parts <= 5; ++parts) {
    TT_ASSIGN(std::vector<MicroBatch> mb, splitStep(s.ids, s.meta, parts));
    expectConsistent(s.meta, s.ids, mb);
    int64_t at = 0; // never a cut inside a sequence: parts end at 7, 8, 14 or 15
    for (const MicroBatch &m : mb) {
      at += m.meta.numTokens;
      EXPECT_TRUE(at == 7 || at == 8 || at == 14 || at == 15) << parts << " parts: " << at;
    }
    std::vector<std::pair<int, int>> rows = joinedRows(mb, 5);
    EXPECT_EQ(rows.size(), 5u) << parts;
  }
}

// One part, equal to the step: parts <= 1, a step smaller than two parts
// of minTokens, or a single token. minTokens bounds the part count.
TEST(MicroBatches, SmallStepsAndMinTokens) {
  RaggedStep s;
  for (int parts : {-1, 0, 1}) {
    TT_ASSIGN(std::vector<MicroBatch> mb, splitStep(s.ids, s.meta, parts));
    ASSERT_EQ(mb.size(), 1u);
    EXPECT_EQ(mb[0].tokenIds.rawData(), s.ids.rawData());
    EXPECT_EQ(mb[0].meta.queryStartLoc.rawData(), s.meta.queryStartLoc.rawData());
    EXPECT_EQ(mb[0].keepRows.size(), 15u);
    // Its output comes back as it is.
    Tensor out = labelled(15, 7);
    TT_ASSIGN(Tensor joined, joinParts(mb, {out}));
    EXPECT_EQ(joined.rawData(), out.rawData());
  }
  TT_ASSIGN(std::vector<MicroBatch> big, splitStep(s.ids, s.meta, 4, 6));
  ASSERT_EQ(big.size(), 2u); // 15 / 6: two parts of at least 6
  EXPECT_EQ(big[0].meta.numTokens, 7);
  TT_ASSIGN(std::vector<MicroBatch> none, splitStep(s.ids, s.meta, 4, 8));
  EXPECT_EQ(none.size(), 1u);

  SequenceKV one;
  TT_ASSIGN(StepMetadata decode, prepareStep(*s.pool, {{&one, 1}}));
  TT_ASSIGN(Tensor id, Tensor::fromVector<int64_t>({1}, {5}));
  TT_ASSIGN(std::vector<MicroBatch> single, splitStep(id, decode, 4));
  EXPECT_EQ(single.size(), 1u);
}

TEST(MicroBatches, BadInputIsRefusedInOneSentence) {
  RaggedStep s;
  StatusOr<std::vector<MicroBatch>> r = splitStep(s.ids, s.meta, 2, 0);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(), "a micro-batch needs at least 1 token, not 0");
  TT_ASSIGN(Tensor fewer, Tensor::fromVector<int64_t>({3}, {1, 2, 3}));
  r = splitStep(fewer, s.meta, 2);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(), "the step has 15 tokens but 3 token ids");
  StepMetadata broken = s.meta;
  broken.seqLens = Tensor::zeros(DType::kI64, {4});
  r = splitStep(s.ids, broken, 2);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(),
            "cannot split the step into micro-batches: its seq_lens is i64[4], not i32[4]");

  TT_ASSIGN(std::vector<MicroBatch> mb, splitStep(s.ids, s.meta, 2));
  StatusOr<Tensor> j = joinParts(mb, {labelled(7, 0)});
  ASSERT_FALSE(j.isOk());
  EXPECT_EQ(j.status().message(), "joinParts got 1 outputs for 2 micro-batches");
  j = joinParts(mb, {labelled(7, 0), labelled(3, 1)});
  ASSERT_FALSE(j.isOk());
  EXPECT_NE(j.status().message().find("micro-batch 1 keeps row 3 of its output"),
            std::string::npos)
      << j.status().message();
}
