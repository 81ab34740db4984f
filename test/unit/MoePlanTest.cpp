//===- MoePlanTest.cpp - the moe step in plans, at TP = 1 and TP = 2 -------===//
//
// A hand-built plan (embedding, moe, logits) run by the engine whole and as
// two tensor-parallel ranks (threads of TpCpuExecutor) whose moe steps hold
// every expert's half of the intermediate size, Megatron-style as
// accel-partition cuts them (passes/Partition/PartitionMoe.cpp), followed by
// an all_reduce: the logits must agree. accelc compiles plans from ONNX only
// (no moe model reaches it yet), so the plan is assembled here.
//
//===----------------------------------------------------------------------===//
#include "runtime/engine/Engine.h"

#include "PlanTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace accel::rt;
using accel::test::assembleTp;
using accel::test::PlanBuilder;

namespace {

constexpr int64_t kV = 11, kH = 8, kE = 4, kI = 6, kS = 4, kTopK = 2;

std::vector<float> wave(size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = 0.5f * std::sin(float(i) * scale + offset);
  return v;
}

/// Rows [b, e) of every [rows, cols] block of `w` ([blocks, rows, cols]).
std::vector<float> rowsOf(const std::vector<float> &w, int64_t blocks, int64_t rows,
                          int64_t cols, std::vector<std::pair<int64_t, int64_t>> ranges) {
  std::vector<float> out;
  for (int64_t b = 0; b < blocks; ++b)
    for (auto [first, last] : ranges)
      out.insert(out.end(), w.begin() + (b * rows + first) * cols,
                 w.begin() + (b * rows + last) * cols);
  return out;
}

/// Columns [b, e) of a [rows, cols] matrix (rows of all blocks together).
std::vector<float> colsOf(const std::vector<float> &w, int64_t rows, int64_t cols, int64_t first,
                          int64_t last) {
  std::vector<float> out;
  for (int64_t r = 0; r < rows; ++r)
    out.insert(out.end(), w.begin() + r * cols + first, w.begin() + r * cols + last);
  return out;
}

struct MoeModel {
  std::vector<float> table = wave(kV * kH, 0.7f, 0.1f);
  std::vector<float> router = wave(kE * kH, 1.3f, 0.4f);
  std::vector<float> gateUp = wave(kE * 2 * kI * kH, 0.37f, 0.9f);
  std::vector<float> down = wave(kE * kH * kI, 0.51f, 1.7f);
  std::vector<float> sharedGateUp = wave(2 * kS * kH, 0.23f, 0.3f);
  std::vector<float> sharedDown = wave(kH * kS, 0.61f, 2.1f);
  std::vector<float> sharedGate = wave(kH, 0.9f, 0.6f);
  std::vector<float> lm = wave(kV * kH, 0.83f, 0.2f);

  /// Rank r of n: the weights in the plan's constant order.
  struct Weights {
    std::vector<float> gateUp, down, sharedGateUp, sharedDown;
  };
  Weights shard(int64_t r, int64_t n) const {
    const int64_t i = kI / n, s = kS / n;
    Weights w;
    w.gateUp = rowsOf(gateUp, kE, 2 * kI, kH, {{r * i, (r + 1) * i}, {kI + r * i, kI + (r + 1) * i}});
    w.down = colsOf(down, kE * kH, kI, r * i, (r + 1) * i);
    w.sharedGateUp =
        rowsOf(sharedGateUp, 1, 2 * kS, kH, {{r * s, (r + 1) * s}, {kS + r * s, kS + (r + 1) * s}});
    w.sharedDown = colsOf(sharedDown, kH, kS, r * s, (r + 1) * s);
    return w;
  }

  /// The plan for `n` ranks (1: unpartitioned, no collective).
  std::string plan(int64_t n, const char *routing) const {
    PlanBuilder b;
    b.meta.set_tp_size(int32_t(n));
    int32_t ids = b.value("i64", {-1});
    Weights w0 = shard(0, n);
    const int64_t i = kI / n, s = kS / n;
    int32_t tbl = b.constant({kV, kH}, table);
    int32_t wr = b.constant({kE, kH}, router);
    int32_t wgu = b.constant({kE, 2 * i, kH}, w0.gateUp);
    int32_t wd = b.constant({kE, kH, i}, w0.down);
    int32_t wsgu = b.constant({2 * s, kH}, w0.sharedGateUp);
    int32_t wsd = b.constant({kH, s}, w0.sharedDown);
    int32_t wsg = b.constant({1, kH}, sharedGate);
    int32_t wl = b.constant({kV, kH}, lm);
    std::vector<std::string> ranks{b.weights};
    for (int64_t r = 1; r < n; ++r) {
      Weights wr_ = shard(r, n);
      PlanBuilder other; // the same layout, rank r's shards
      other.constant({kV, kH}, table);
      other.constant({kE, kH}, router);
      other.constant({kE, 2 * i, kH}, wr_.gateUp);
      other.constant({kE, kH, i}, wr_.down);
      other.constant({2 * s, kH}, wr_.sharedGateUp);
      other.constant({kH, s}, wr_.sharedDown);
      other.constant({1, kH}, sharedGate);
      other.constant({kV, kH}, lm);
      ranks.push_back(other.weights);
    }
    int32_t x = b.value("f32", {-1, kH}), y = b.value("f32", {-1, kH}),
            logits = b.value("f32", {-1, kV});
    b.step(accel::plan::EMBEDDING, {tbl, ids}, {x});
    auto &moe = b.step(accel::plan::MOE, {x, wr, -1, wgu, -1, -1, wd, wsgu, wsd, wsg}, {y});
    PlanBuilder::attr(moe, "kind", "silu");
    PlanBuilder::attr(moe, "routing", routing);
    PlanBuilder::attr(moe, "num_experts", kE);
    PlanBuilder::attr(moe, "top_k", kTopK);
    int32_t sum = y;
    if (n > 1) {
      sum = b.value("f32", {-1, kH});
      b.collective(y, sum, n);
    }
    PlanBuilder::attr(b.step(accel::plan::LOGITS, {sum, wl}, {logits}), "out_dtype", "f32");
    b.meta.mutable_schedule()->set_token_ids(ids);
    b.meta.mutable_schedule()->set_logits(logits);
    b.meta.mutable_model()->set_vocab_size(kV);
    if (n == 1)
      return b.bytes();
    b.place();
    return assembleTp(b.meta, ranks);
  }
};

StatusOr<Tensor> score(const std::string &bytes, const std::vector<int64_t> &ids, int64_t chunk) {
  ACCEL_RT_ASSIGN_OR_RETURN(std::shared_ptr<const plan::PlanFile> p,
                            plan::PlanFile::fromBytes(bytes, "moe.plan"));
  ACCEL_RT_ASSIGN_OR_RETURN(std::unique_ptr<engine::Engine> e, engine::Engine::create(p));
  return e->score(ids, chunk);
}

TEST(MoePlan, TwoRanksGiveTheLogitsOfOne) {
  std::vector<int64_t> ids;
  for (int64_t t = 0; t < 37; ++t)
    ids.push_back((t * 7 + 3) % kV);
  MoeModel m;
  for (const char *routing : {"renormalize", "softmax"}) {
    SCOPED_TRACE(routing);
    StatusOr<Tensor> one = score(m.plan(1, routing), ids, 0);
    ASSERT_TRUE(one.isOk()) << one.status().message();
    ASSERT_EQ(one->shape(), (Shape{37, kV}));
    for (int64_t chunk : {0, 1, 5}) {
      StatusOr<Tensor> two = score(m.plan(2, routing), ids, chunk);
      ASSERT_TRUE(two.isOk()) << two.status().message();
      ASSERT_EQ(two->shape(), one->shape());
      for (int64_t j = 0; j < one->numElements(); ++j)
        ASSERT_NEAR(two->data<float>()[j], one->data<float>()[j], 1e-5f)
            << "chunk " << chunk << " at " << j;
    }
  }
}

TEST(MoePlan, AStepWithoutItsAttributesFailsAtLoad) {
  MoeModel m;
  std::string bytes = m.plan(1, "sideways");
  StatusOr<Tensor> got = score(bytes, {1, 2}, 0);
  ASSERT_FALSE(got.isOk());
  EXPECT_NE(got.status().message().find("moe routing 'sideways' has no CPU kernel"),
            std::string::npos)
      << got.status().message();
}

} // namespace
