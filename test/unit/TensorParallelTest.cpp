//===- TensorParallelTest.cpp - communicator, TP plans, TP executor -------===//
//
// The in-process communicator (all_reduce sum in rank order, all_gather
// along an axis, abort), the loader's checks of a tensor-parallel plan (a
// weights section per rank, well-formed collectives), and a hand-built
// 2-rank plan run by the engine as two threads against a reference
// computed here.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/Communicator.h"
#include "runtime/engine/Engine.h"
#include "runtime/engine/PlanMemory.h"
#include "runtime/kv/SequenceKV.h"

#include "EngineTestUtil.h"
#include "PlanTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <functional>
#include <limits>
#include <thread>

using namespace accel::rt;
using accel::test::assembleTp;
using accel::test::expectForkAppendsMatchScoring;
using accel::test::PlanBuilder;

namespace {

/// Runs fn(rank, comm) on `n` threads of one group.
template <typename Fn> void onRanks(int n, Fn fn) {
  auto comms = comm::createInProcessGroup(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] { fn(r, *comms[size_t(r)]); });
  for (auto &t : threads)
    t.join();
}

Tensor filled(DType dt, Shape shape, float base) {
  Tensor f = *Tensor::allocate(DType::kF32, shape);
  for (int64_t i = 0; i < f.numElements(); ++i)
    f.data<float>()[i] = base + float(i);
  return dt == DType::kF32 ? f : f.astype(dt);
}

TEST(Communicator, AllReduceSumsEveryRankInRankOrder) {
  constexpr int n = 4;
  std::vector<Tensor> out(n);
  onRanks(n, [&](int r, comm::Communicator &c) {
    EXPECT_EQ(c.rank(), r);
    EXPECT_EQ(c.size(), n);
    Tensor x = filled(DType::kF32, {2, 3}, float(10 * r));
    StatusOr<Tensor> y = c.allReduceSum(x);
    ASSERT_TRUE(y.isOk()) << y.status().message();
    out[size_t(r)] = std::move(*y);
  });
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(out[size_t(r)].shape(), (Shape{2, 3}));
    for (int64_t i = 0; i < 6; ++i) // sum over r of (10 r + i) = 60 + 4 i
      EXPECT_EQ(out[size_t(r)].data<float>()[i], 60.0f + 4.0f * float(i));
  }
}

TEST(Communicator, AllReduceOfBf16SumsInF32) {
  std::vector<Tensor> out(2);
  onRanks(2, [&](int r, comm::Communicator &c) {
    StatusOr<Tensor> y = c.allReduceSum(filled(DType::kBF16, {4}, 1.0f));
    ASSERT_TRUE(y.isOk());
    out[size_t(r)] = std::move(*y);
  });
  ASSERT_EQ(out[0].dtype(), DType::kBF16);
  Tensor f = out[1].toF32();
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(f.data<float>()[i], 2.0f * (1.0f + float(i)));
}

TEST(Communicator, AllGatherConcatenatesAlongTheAxis) {
  std::vector<Tensor> cols(3), rows(3);
  onRanks(3, [&](int r, comm::Communicator &c) {
    Tensor x = filled(DType::kF32, {2, 2}, float(100 * r)); // [[b, b+1], [b+2, b+3]]
    StatusOr<Tensor> a = c.allGather(x, 1);
    StatusOr<Tensor> b = c.allGather(x, 0);
    ASSERT_TRUE(a.isOk() && b.isOk());
    cols[size_t(r)] = std::move(*a);
    rows[size_t(r)] = std::move(*b);
  });
  ASSERT_EQ(cols[2].shape(), (Shape{2, 6}));
  ASSERT_EQ(rows[2].shape(), (Shape{6, 2}));
  const float wantCols[] = {0, 1, 100, 101, 200, 201, 2, 3, 102, 103, 202, 203};
  const float wantRows[] = {0, 1, 2, 3, 100, 101, 102, 103, 200, 201, 202, 203};
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < 12; ++i) {
      EXPECT_EQ(cols[size_t(r)].data<float>()[i], wantCols[i]);
      EXPECT_EQ(rows[size_t(r)].data<float>()[i], wantRows[i]);
    }
}

TEST(Communicator, MismatchedShapesFailOnEveryRank) {
  std::vector<std::string> errors(2);
  onRanks(2, [&](int r, comm::Communicator &c) {
    StatusOr<Tensor> y = c.allReduceSum(filled(DType::kF32, {1 + r}, 0.0f));
    ASSERT_FALSE(y.isOk());
    errors[size_t(r)] = y.status().message();
  });
  EXPECT_NE(errors[0].find("all_reduce: rank 1 brings f32[2]"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("all_reduce: rank 0 brings f32[1]"), std::string::npos) << errors[1];
}

TEST(Communicator, AbortReleasesRanksWaitingAtACollective) {
  std::vector<std::string> errors(3);
  onRanks(3, [&](int r, comm::Communicator &c) {
    if (r == 2) { // this rank's step failed: it never reaches the collective
      c.abort(Status(StatusCode::kInvalidArgument, "rank 2 broke"));
      return;
    }
    StatusOr<Tensor> y = c.allReduceSum(filled(DType::kF32, {1}, 0.0f));
    ASSERT_FALSE(y.isOk());
    errors[size_t(r)] = y.status().message();
  });
  EXPECT_EQ(errors[0], "the tensor-parallel group stopped: rank 2 broke");
  EXPECT_EQ(errors[1], errors[0]);
}

//===----------------------------------------------------------------------===//
// Tensor-parallel plans
//===----------------------------------------------------------------------===//

constexpr int64_t kV = 4, kH = 3;

std::vector<float> wave(size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = std::sin(float(i) * scale + offset);
  return v;
}

/// ids → embedding (replicated table) → linear with rank r's own weight
/// A_r → all_reduce (x A_0^T + x A_1^T) → logits over rank r's vocabulary
/// rows L_r → all_gather along the vocabulary.
struct TpModel {
  std::vector<float> table = wave(kV * kH, 0.7f, 0.1f);
  std::vector<float> a[2] = {wave(kH * kH, 0.3f, 0.5f), wave(kH * kH, 0.4f, 1.5f)};
  std::vector<float> lm = wave(kV * kH, 0.9f, 0.2f); // rank r: rows [2r, 2r+2)

  std::string plan(int64_t gatherAxis = 1, int64_t group = 2, int32_t metaTp = 2,
                   uint32_t headerTp = 2, size_t sections = 2) const {
    std::string w[2];
    PlanBuilder b;
    b.meta.set_tp_size(metaTp);
    int32_t ids = b.value("i64", {-1});
    int32_t tbl = b.constant({kV, kH}, table);
    int32_t wa = b.constant({kH, kH}, a[0]);
    int32_t wl = b.constant({kV / 2, kH}, std::vector<float>(lm.begin(), lm.begin() + 2 * kH));
    w[0] = b.weights;
    // Rank 1: the same layout, its own A and vocabulary rows.
    PlanBuilder other;
    other.constant({kV, kH}, table);
    other.constant({kH, kH}, a[1]);
    other.constant({kV / 2, kH}, std::vector<float>(lm.begin() + 2 * kH, lm.end()));
    w[1] = other.weights;
    int32_t x = b.value("f32", {-1, kH}), p = b.value("f32", {-1, kH}),
            s = b.value("f32", {-1, kH}), lp = b.value("f32", {-1, kV / 2}),
            logits = b.value("f32", {-1, kV});
    b.step(accel::plan::EMBEDDING, {tbl, ids}, {x});
    PlanBuilder::attr(b.step(accel::plan::GEMM, {x, wa}, {p}), "out_dtype", "f32");
    b.collective(p, s, group);
    auto &l = b.step(accel::plan::LOGITS, {s, wl}, {lp});
    PlanBuilder::attr(l, "out_dtype", "f32");
    b.collective(lp, logits, group, gatherAxis);
    b.meta.mutable_schedule()->set_token_ids(ids);
    b.meta.mutable_schedule()->set_logits(logits);
    b.meta.mutable_model()->set_vocab_size(kV);
    std::vector<std::string> ranks(w, w + sections);
    b.place();
    return assembleTp(b.meta, ranks, headerTp);
  }

  /// The logits computed here, unpartitioned.
  std::vector<float> reference(const std::vector<int64_t> &ids) const {
    std::vector<float> out;
    for (int64_t id : ids) {
      const float *x = &table[size_t(id * kH)];
      float s[kH];
      for (int64_t o = 0; o < kH; ++o) {
        s[o] = 0;
        for (int64_t i = 0; i < kH; ++i)
          s[o] += x[i] * (a[0][size_t(o * kH + i)] + a[1][size_t(o * kH + i)]);
      }
      for (int64_t v = 0; v < kV; ++v) {
        float acc = 0;
        for (int64_t i = 0; i < kH; ++i)
          acc += s[i] * lm[size_t(v * kH + i)];
        out.push_back(acc);
      }
    }
    return out;
  }
};

std::string loadError(const std::string &bytes) {
  StatusOr<std::shared_ptr<const plan::PlanFile>> p = plan::PlanFile::fromBytes(bytes, "tp.plan");
  return p ? "ok" : p.status().message();
}

TEST(TensorParallelPlan, RunsAsTwoRanksAndMatchesTheReference) {
  TpModel m;
  StatusOr<std::shared_ptr<const plan::PlanFile>> p =
      plan::PlanFile::fromBytes(m.plan(), "tp.plan");
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_EQ((*p)->tpSize(), 2);
  StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::create(*p);
  ASSERT_TRUE(e.isOk()) << e.status().message();
  const std::vector<int64_t> ids = {3, 0, 2, 1, 3};
  std::vector<float> want = m.reference(ids);
  for (int64_t chunk : {0, 1, 2}) {
    StatusOr<Tensor> got = (*e)->score(ids, chunk);
    ASSERT_TRUE(got.isOk()) << got.status().message();
    ASSERT_EQ(got->shape(), (Shape{5, kV}));
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(got->data<float>()[i], want[i], 1e-5f) << "chunk " << chunk << " at " << i;
  }
}

TEST(TensorParallelPlan, LoaderChecksRanksAndCollectives) {
  TpModel m;
  EXPECT_EQ(loadError(m.plan(1, 2, 2, 2, 1)),
            "tp.plan: the plan is partitioned for 2 ranks but has no weights section for rank 1");
  EXPECT_EQ(loadError(m.plan(1, 2, 2, 1, 2)),
            "tp.plan: the metadata's tensor-parallel size 2 and the header's 1 differ or are "
            "invalid");
  EXPECT_EQ(loadError(m.plan(1, 2, 1, 1, 2)),
            "tp.plan: section 1 ('weights.rank1') holds the weights of rank 1 in a plan for 1 "
            "ranks");
  EXPECT_EQ(loadError(m.plan(1, 4)),
            "tp.plan: schedule: step 2 (collective) has group_size 4 in a plan for 2 "
            "ranks");
  EXPECT_EQ(loadError(m.plan(2)),
            "tp.plan: schedule: step 4 (collective) gathers along axis 2, outside its "
            "2-D input");
}

/// A 2-rank plan with attention: rank r projects the embedding onto its own
/// head (q = k = v = x W_r^T, head_dim 2), attends over its KV cache shard,
/// projects back with O_r and the ranks all_reduce; the lm head is
/// replicated. One layer, blocks of 4 tokens.
std::string attentionTpPlan() {
  constexpr int64_t V = 6, H = 4, D = 2;
  std::vector<float> table = wave(V * H, 0.7f, 0.1f), lm = wave(V * H, 0.9f, 0.2f);
  std::string w[2];
  PlanBuilder b;
  b.meta.set_tp_size(2);
  int32_t ids = b.value("i64", {-1});
  int32_t tbl = 0, wq = 0, wo = 0, wl = 0;
  for (int r = 0; r < 2; ++r) {
    PlanBuilder &pb = b;
    PlanBuilder other;
    PlanBuilder &t = r == 0 ? pb : other;
    int32_t a = t.constant({V, H}, table);
    int32_t q = t.constant({D, H}, wave(D * H, 0.3f + 0.2f * float(r), 0.5f));
    int32_t o = t.constant({H, D}, wave(H * D, 0.4f + 0.1f * float(r), 1.5f));
    int32_t l = t.constant({V, H}, lm);
    if (r == 0) {
      tbl = a, wq = q, wo = o, wl = l;
      w[0] = b.weights;
    } else {
      w[1] = other.weights;
    }
  }
  int32_t x = b.value("f32", {-1, H}), p = b.value("f32", {-1, D}),
          heads = b.value("f32", {-1, 1, D}), att = b.value("f32", {-1, 1, D}),
          merged = b.value("f32", {-1, D}), part = b.value("f32", {-1, H}),
          sum = b.value("f32", {-1, H}), logits = b.value("f32", {-1, V});
  b.step(accel::plan::EMBEDDING, {tbl, ids}, {x});
  PlanBuilder::attr(b.step(accel::plan::GEMM, {x, wq}, {p}), "out_dtype", "f32");
  b.viewOf(heads, p);
  PlanBuilder::attr(b.step(accel::plan::KV_WRITE, {heads, heads}, {}), "layer", int64_t(0));
  auto &a = b.step(accel::plan::ATTENTION, {heads}, {att});
  PlanBuilder::attr(a, "layer", int64_t(0));
  PlanBuilder::attr(a, "scale", 0.5);
  PlanBuilder::attr(a, "causal", int64_t(1));
  b.viewOf(merged, att);
  PlanBuilder::attr(b.step(accel::plan::GEMM, {merged, wo}, {part}), "out_dtype", "f32");
  b.collective(part, sum, 2);
  auto &l = b.step(accel::plan::LOGITS, {sum, wl}, {logits});
  PlanBuilder::attr(l, "out_dtype", "f32");
  b.setModel(ids, logits, V, 64, 1, 1, D);
  b.place();
  return assembleTp(b.meta, {w[0], w[1]}, 2);
}

// A forked sequence appending into its shared, partly filled last block
// gets a copy of that block on every rank: its logits equal those of the
// same tokens scored from scratch (a copy on rank 0 only would leave rank
// 1's copy empty and change them).
TEST(TensorParallelPlan, CopyOnWriteReachesEveryRanksKvShard) {
  StatusOr<std::shared_ptr<const plan::PlanFile>> p =
      plan::PlanFile::fromBytes(attentionTpPlan(), "tp.plan");
  ASSERT_TRUE(p.isOk()) << p.status().message();
  StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::create(*p);
  ASSERT_TRUE(e.isOk()) << e.status().message();
  expectForkAppendsMatchScoring(**e, 6, 1e-5f);
}

//===----------------------------------------------------------------------===//
// Pipeline stages (accelc -pp)
//===----------------------------------------------------------------------===//

TEST(StageLink, SendsToTheSameRankOfALaterStage) {
  auto links = comm::createInProcessPipeline(3, 2); // s * 2 + r
  Tensor x = *Tensor::fromVector<float>({3}, std::vector<float>{1, 2, 3});
  Tensor y = *Tensor::fromVector<float>({3}, std::vector<float>{4, 5, 6});
  ASSERT_TRUE(links[1]->send(x, 2, 7).isOk()); // stage 0 rank 1 -> stage 2 rank 1
  ASSERT_TRUE(links[0]->send(y, 1, 7).isOk()); // stage 0 rank 0 -> stage 1 rank 0
  StatusOr<Tensor> got = Tensor();
  std::thread t([&] { got = links[5]->recv(0, 7); });
  t.join();
  ASSERT_TRUE(got.isOk()) << got.status().message();
  EXPECT_EQ(got->data<float>()[2], 3.0f);
  StatusOr<Tensor> got0 = links[2]->recv(0, 7);
  ASSERT_TRUE(got0.isOk());
  EXPECT_EQ(got0->data<float>()[0], 4.0f);
  // Not backwards, not to itself.
  EXPECT_FALSE(links[2]->send(x, 0, 1).isOk());
  EXPECT_FALSE(links[2]->send(x, 1, 1).isOk());
}

TEST(StageLink, AbortReleasesAStageWaitingToReceive) {
  auto links = comm::createInProcessPipeline(2, 1);
  StatusOr<Tensor> got = Tensor();
  std::thread t([&] { got = links[1]->recv(0, 3); });
  links[0]->abort(Status(StatusCode::kInternal, "stage 0 broke"));
  t.join();
  ASSERT_FALSE(got.isOk());
  EXPECT_EQ(got.status().message(), "the pipeline stopped: stage 0 broke");
}

// What each GPU of a plan holds (runtime/engine/PlanMemory.h, accelc's HBM
// check): each stage counts the constants its own steps read (the tied
// table: stage 0's embedding and stage 1's logits), its own layers' K and
// V per token, and the arena; narrowed to a bf16 compute dtype, f32
// weights and the cache take half.
TEST(PipelinePlan, MemoryPerStageCountsWhatEachStageReads) {
  std::vector<float> table = wave(kV * kH, 0.7f, 0.1f);
  for (bool bf16 : {false, true}) {
    accel::test::PlanBuilder b = accel::test::pipelinePlan(table, kV, kH);
    if (bf16)
      b.meta.set_compute_dtype("bf16");
    StatusOr<std::shared_ptr<const plan::PlanFile>> p =
        plan::PlanFile::fromBytes(b.bytes(), "pp.plan");
    ASSERT_TRUE(p.isOk()) << p.status().message();
    engine::PlanMemoryOptions o;
    o.deviceBytes = int64_t(4) << 30;
    o.utilization = 0.5;
    std::vector<engine::GpuShare> shares = engine::planMemoryByGpu(**p, o);
    ASSERT_EQ(shares.size(), 2u);
    const int64_t tableBytes = kV * kH * (bf16 ? 2 : 4);
    const int64_t kvPerToken = 1 * 2 * 1 * 4 * (bf16 ? 2 : 4); // layer, K+V, head, dim
    for (int st = 0; st < 2; ++st) {
      EXPECT_EQ(shares[size_t(st)].stage, st);
      EXPECT_EQ(shares[size_t(st)].rank, 0);
      EXPECT_EQ(shares[size_t(st)].weightBytes, tableBytes) << st;
      EXPECT_EQ(shares[size_t(st)].kvBytesPerToken, kvPerToken) << st;
      const int64_t left = (int64_t(2) << 30) - tableBytes - shares[size_t(st)].activationBytes -
                           engine::kGpuRuntimeReserveBytes;
      EXPECT_EQ(shares[size_t(st)].leftBytes, left) << st;
      EXPECT_EQ(shares[size_t(st)].kvTokens, left / kvPerToken) << st;
    }
    EXPECT_EQ(engine::checkPlanFits(shares, o, "h200", 1, 2), "");
    // Half a GiB allowed: the runtime's reserve alone does not fit.
    o.deviceBytes = int64_t(1) << 30;
    shares = engine::planMemoryByGpu(**p, o);
    const std::string refused = engine::checkPlanFits(shares, o, "h200", 1, 2);
    EXPECT_NE(refused.find("-tp=1 -pp=2 does not fit the h200: stage 0 rank 0 needs"),
              std::string::npos)
        << refused;
    EXPECT_NE(refused.find("more than the 512.00 MiB that 0.5 of its 1.00 GiB allows"),
              std::string::npos)
        << refused;
  }
}

TEST(PipelinePlan, RunsAsTwoStagesAndMatchesTheReference) {
  std::vector<float> table = wave(kV * kH, 0.7f, 0.1f);
  StatusOr<std::shared_ptr<const plan::PlanFile>> p =
      plan::PlanFile::fromBytes(accel::test::pipelinePlan(table, kV, kH).bytes(), "pp.plan");
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_EQ((*p)->ppSize(), 2);
  EXPECT_EQ((*p)->stageLayers(1), 1);
  StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::create(*p);
  ASSERT_TRUE(e.isOk()) << e.status().message();
  const std::vector<int64_t> ids = {3, 0, 2, 1};
  for (int64_t chunk : {0, 1}) {
    StatusOr<Tensor> got = (*e)->score(ids, chunk);
    ASSERT_TRUE(got.isOk()) << got.status().message();
    ASSERT_EQ(got->shape(), (Shape{4, kV}));
    for (size_t t = 0; t < ids.size(); ++t)
      for (int64_t v = 0; v < kV; ++v) {
        float want = 0;
        for (int64_t i = 0; i < kH; ++i)
          want += table[size_t(ids[t] * kH + i)] * table[size_t(v * kH + i)];
        EXPECT_NEAR(got->data<float>()[t * kV + size_t(v)], want, 1e-5f) << t << " " << v;
      }
  }
}

TEST(PipelinePlan, LoaderChecksStagesAndTransfers) {
  std::vector<float> table = wave(kV * kH, 0.7f, 0.1f);
  auto damaged = [&](const std::function<void(accel::plan::PlanMetadata &)> &f) {
    accel::test::PlanBuilder b = accel::test::pipelinePlan(table, kV, kH);
    f(b.meta);
    return loadError(b.bytes());
  };
  auto steps = [](accel::plan::PlanMetadata &m) { return m.mutable_schedule()->mutable_steps(); };
  EXPECT_EQ(damaged([](accel::plan::PlanMetadata &) {}), "ok");
  // The logits step in stage 0 reads what stage 1 received.
  EXPECT_EQ(damaged([&](accel::plan::PlanMetadata &m) { steps(m)->Mutable(2)->set_stage(0); }),
            "tp.plan: schedule: step 2 (logits) runs in pipeline stage 0 and reads value 3, "
            "which stage 1 writes");
  // Without the transfer, stage 1 would read stage 0's value.
  EXPECT_EQ(damaged([&](accel::plan::PlanMetadata &m) {
              steps(m)->Mutable(2)->set_inputs(0, 2);
            }),
            "tp.plan: schedule: step 2 (logits) runs in pipeline stage 1 and reads value 2, "
            "which stage 0 writes");
  EXPECT_EQ(damaged([&](accel::plan::PlanMetadata &m) {
              steps(m)->Mutable(1)->mutable_attributes(1)->set_i(2);
            }),
            "tp.plan: schedule: step 1 (pp_transfer) sends from stage 0 to stage 2 (run "
            "in stage 1) in a plan of 2 stages");
  EXPECT_EQ(damaged([&](accel::plan::PlanMetadata &m) { steps(m)->Mutable(0)->set_stage(2); }),
            "tp.plan: schedule: step 0 (embedding) runs in pipeline stage 2 of a plan with 2");
  EXPECT_EQ(damaged([](accel::plan::PlanMetadata &m) {
              m.mutable_kv_cache()->set_stage_layers(1, 2);
            }),
            "tp.plan: the plan has 2 pipeline stages but its KV cache does not give a positive "
            "layer count for each that sums to its 2 layers");
}

// The host rule of greedy steps (the GPU's argmax_rows_* follows it):
// lowest index on ties; -1 for rows the sampler refuses.
TEST(GreedyToken, ArgmaxLowestIndexAndRefusedRows) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> tie = {1.0f, 3.0f, -2.0f, 3.0f}, neg = {-inf, -5.0f, -inf},
                           allNeg = {-inf, -inf}, withNan = {1.0f, nan, 2.0f},
                           withInf = {1.0f, inf, 2.0f};
  EXPECT_EQ(engine::greedyToken(tie.data(), 4), 1);
  EXPECT_EQ(engine::greedyToken(neg.data(), 3), 1);
  EXPECT_EQ(engine::greedyToken(allNeg.data(), 2), -1);
  EXPECT_EQ(engine::greedyToken(withNan.data(), 3), -1);
  EXPECT_EQ(engine::greedyToken(withInf.data(), 3), -1);
}

// Engine::stepBatch with LogitsRows::kLastGreedy: i64 token ids, each
// sequence's argmax of its last row (the CPU backend returns logits and the
// Engine picks on the host), for a ragged prefill and a decode step.
TEST(TensorParallelPlan, GreedyStepsPickEachSequencesLastArgmax) {
  StatusOr<std::shared_ptr<const plan::PlanFile>> p =
      plan::PlanFile::fromBytes(attentionTpPlan(), "tp.plan");
  ASSERT_TRUE(p.isOk()) << p.status().message();
  StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::create(*p);
  ASSERT_TRUE(e.isOk()) << e.status().message();
  engine::Engine &eng = **e;
  const std::vector<int64_t> pa = {1, 4, 2, 5, 3}, pb = {5, 0, 3};
  kv::SequenceKV a, b, ga, gb;
  StatusOr<Tensor> logits = eng.stepBatch({{&a, pa.data(), 5}, {&b, pb.data(), 3}},
                                          engine::LogitsRows::kLast);
  ASSERT_TRUE(logits.isOk()) << logits.status().message();
  StatusOr<Tensor> ids = eng.stepBatch({{&ga, pa.data(), 5}, {&gb, pb.data(), 3}},
                                       engine::LogitsRows::kLastGreedy);
  ASSERT_TRUE(ids.isOk()) << ids.status().message();
  ASSERT_EQ(ids->dtype(), DType::kI64);
  ASSERT_EQ(ids->numElements(), 2);
  const int64_t vocab = eng.vocabSize();
  std::vector<int64_t> next(2);
  for (int64_t i = 0; i < 2; ++i) {
    const float *row = logits->data<float>() + i * vocab;
    next[size_t(i)] = std::max_element(row, row + vocab) - row;
    EXPECT_EQ(ids->data<int64_t>()[i], next[size_t(i)]) << "sequence " << i;
  }
  // A decode step of both, from the chosen tokens.
  logits = eng.stepBatch({{&a, &next[0], 1}, {&b, &next[1], 1}}, engine::LogitsRows::kLast);
  ids = eng.stepBatch({{&ga, &next[0], 1}, {&gb, &next[1], 1}}, engine::LogitsRows::kLastGreedy);
  ASSERT_TRUE(logits.isOk() && ids.isOk());
  for (int64_t i = 0; i < 2; ++i) {
    const float *row = logits->data<float>() + i * vocab;
    EXPECT_EQ(ids->data<int64_t>()[i], std::max_element(row, row + vocab) - row) << i;
  }
  for (kv::SequenceKV *s : {&a, &b, &ga, &gb})
    ASSERT_TRUE(s->release(eng.pool()).isOk());
}

} // namespace
