//===- PipelineTest.cpp - micro-batched pipelines on the demo model -------===//
//
// Compiles the demo model (4 layers) with the built accelc once: TP=1, and
// -pp=2, -tp=2 -pp=2, -pp=3, -pp=4. Then:
// - a step run as micro-batches, one after the other through CpuExecutor
//   (engine::splitStep / joinParts), gives the whole step's logits;
// - every pipelined plan, its steps split into micro-batches as
//   TpCpuExecutor runs them (one per stage, 3, and 1: no overlap), gives
//   the TP=1 plan's logits within 1e-5 of max |logit|: whole, token by
//   token, and ragged steps of several sequences mixing prefill chunks,
//   decode tokens and a speculative verification's rows;
// - the schedule's counters (Engine::pipelineStats) count each stage's
//   steps, micro-batches and busy time, and busy + idle is the step's wall;
// - a stage that fails in a later micro-batch stops the pipeline, and the
//   error names that stage and rank.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/TpCpuExecutor.h"
#include "runtime/engine/Engine.h"
#include "runtime/engine/MicroBatches.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

using namespace accel::rt;

const std::string kSource = ACCEL_SOURCE_DIR;

std::string shellQuote(const std::string &s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// The demo plans by their accelc flags ("" is TP=1), compiled once.
struct Plans {
  std::map<std::string, std::string> path;
  std::string error;
};
const std::vector<std::string> kSplits = {"-pp=2", "-tp=2 -pp=2", "-pp=3", "-pp=4"};

const Plans &plans() {
  static Plans p = [] {
    Plans r;
    std::string accelc = ACCEL_ACCELC;
    if (const char *env = std::getenv("ACCEL_ACCELC"))
      accelc = env;
    if (accelc.empty()) {
      r.error = "no accelc (configure with ACCEL_BUILD_COMPILER=ON)";
      return r;
    }
    std::string tmpl = ::testing::TempDir() + "accel-pp-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    const char *dir = mkdtemp(buf.data());
    if (!dir) {
      r.error = "cannot make a temporary folder";
      return r;
    }
    std::vector<std::string> all = {""};
    all.insert(all.end(), kSplits.begin(), kSplits.end());
    for (size_t i = 0; i < all.size(); ++i) {
      const std::string out = std::string(dir) + "/demo" + std::to_string(i) + ".plan";
      const std::string cmd = shellQuote(accelc) + " " +
                              shellQuote(kSource + "/test/fixtures/demo/model.onnx") + " " +
                              all[i] + " -o " + shellQuote(out) + " > " +
                              shellQuote(out + ".log") + " 2>&1";
      if (std::system(cmd.c_str()) != 0) {
        r.error = "accelc " + all[i] + " failed on the demo model (see " + out + ".log)";
        return r;
      }
      r.path[all[i]] = out;
    }
    return r;
  }();
  return p;
}

std::shared_ptr<const plan::PlanFile> openPlan(const std::string &flags) {
  StatusOr<std::shared_ptr<const plan::PlanFile>> p = plan::PlanFile::open(plans().path.at(flags));
  EXPECT_TRUE(p.isOk()) << p.status().message();
  return p.isOk() ? *p : nullptr;
}

std::unique_ptr<engine::Engine> openEngine(const std::string &flags, int microBatches = 0) {
  engine::EngineOptions o;
  o.numKvBlocks = 64;
  o.ppMicroBatches = microBatches;
  StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::open(plans().path.at(flags), o);
  EXPECT_TRUE(e.isOk()) << e.status().message();
  return e.isOk() ? std::move(*e) : nullptr;
}

std::vector<int64_t> randomIds(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> tok(1, 2047);
  std::vector<int64_t> v(n);
  for (int64_t &t : v)
    t = tok(rng);
  return v;
}

/// max |got - want| / max |want| (the tolerance of pp-fixtures.test).
double relError(const Tensor &got, const Tensor &want) {
  EXPECT_EQ(got.numElements(), want.numElements());
  if (got.numElements() != want.numElements())
    return INFINITY;
  double err = 0, scale = 0;
  for (int64_t i = 0; i < want.numElements(); ++i) {
    err = std::max(err, double(std::fabs(got.data<float>()[i] - want.data<float>()[i])));
    scale = std::max(scale, double(std::fabs(want.data<float>()[i])));
  }
  return err / scale;
}

class PipelineTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!plans().error.empty()) {
      if (std::string(ACCEL_ACCELC).empty())
        GTEST_SKIP() << plans().error;
      FAIL() << plans().error;
    }
  }
};

// The demo (TP=1) through CpuExecutor: a ragged step over cached context
// (A continues a prefill, B and D decode, C starts one) run whole into one
// KV pool and as 2..5 micro-batches in order into another gives the same
// logits, every row and each sequence's last.
TEST_F(PipelineTest, MicroBatchesThroughCpuExecutorEqualTheWholeStep) {
  std::shared_ptr<const plan::PlanFile> plan = openPlan("");
  ASSERT_TRUE(plan);
  StatusOr<std::unique_ptr<engine::CpuExecutor>> ex = engine::CpuExecutor::create(plan);
  ASSERT_TRUE(ex.isOk()) << ex.status().message();
  kv::KVCacheConfig cfg;
  cfg.numLayers = 4;
  cfg.numKvHeads = 4;
  cfg.headDim = 32;
  cfg.blockSize = 16;
  cfg.numBlocks = 32;
  for (bool lastRows : {false, true})
    for (int parts = 2; parts <= 5; ++parts) {
      SCOPED_TRACE(std::to_string(parts) + " parts" + (lastRows ? ", last rows" : ""));
      // `blocks` hands out the blocks; `whole` and `split` hold the K/V.
      auto blocks = std::move(kv::BlockPool::create(cfg)).value();
      auto whole = std::move(kv::BlockPool::create(cfg)).value();
      auto split = std::move(kv::BlockPool::create(cfg)).value();
      kv::SequenceKV a, b, c, d;
      // The cached context, written alike into both pools.
      std::vector<int64_t> ctx = randomIds(30, 1);
      StatusOr<kv::StepMetadata> m0 = kv::prepareStep(*blocks, {{&a, 20}, {&b, 3}, {&d, 7}});
      ASSERT_TRUE(m0.isOk()) << m0.status().message();
      Tensor ids0 = *Tensor::fromVector<int64_t>({30}, ctx);
      ASSERT_TRUE((*ex)->run(ids0, *whole, *m0).isOk());
      ASSERT_TRUE((*ex)->run(ids0, *split, *m0).isOk());
      // The ragged step: 13 + 1 + 17 + 1 tokens.
      StatusOr<kv::StepMetadata> m1 =
          kv::prepareStep(*blocks, {{&a, 13}, {&b, 1}, {&c, 17}, {&d, 1}});
      ASSERT_TRUE(m1.isOk()) << m1.status().message();
      m1->lastRowsOnly = lastRows;
      Tensor ids1 = *Tensor::fromVector<int64_t>({32}, randomIds(32, 2));
      StatusOr<Tensor> want = (*ex)->run(ids1, *whole, *m1);
      ASSERT_TRUE(want.isOk()) << want.status().message();
      StatusOr<std::vector<engine::MicroBatch>> mb = engine::splitStep(ids1, *m1, parts);
      ASSERT_TRUE(mb.isOk()) << mb.status().message();
      ASSERT_EQ(int(mb->size()), parts);
      std::vector<Tensor> outs;
      for (const engine::MicroBatch &m : *mb) {
        StatusOr<Tensor> o = (*ex)->run(m.tokenIds, *split, m.meta);
        ASSERT_TRUE(o.isOk()) << o.status().message();
        outs.push_back(std::move(*o));
      }
      StatusOr<Tensor> got = engine::joinParts(*mb, outs);
      ASSERT_TRUE(got.isOk()) << got.status().message();
      EXPECT_EQ(got->numElements(), (lastRows ? 4 : 32) * 2048);
      EXPECT_LE(relError(*got, *want), 1e-5);
    }
}

/// The steps of the ragged check, through one engine: each returns its
/// logits (kAll: every row; kLast: each sequence's last, and A's last 3 on
/// the verification step).
std::vector<Tensor> raggedSteps(engine::Engine &e) {
  std::vector<Tensor> out;
  const std::vector<int64_t> pa = randomIds(40, 3), pb = randomIds(40, 4), pc = randomIds(40, 5);
  kv::SequenceKV a, b, c;
  auto step = [&](const std::vector<engine::BatchSequence> &batch, engine::LogitsRows rows) {
    StatusOr<Tensor> t = e.stepBatch(batch, rows);
    EXPECT_TRUE(t.isOk()) << t.status().message();
    if (t.isOk())
      out.push_back(std::move(*t));
  };
  // Prefill A (19) and B (6).
  step({{&a, pa.data(), 19}, {&b, pb.data(), 6}}, engine::LogitsRows::kAll);
  // A decodes, B continues its prefill (9), C starts (13).
  step({{&a, pa.data() + 19, 1}, {&b, pb.data() + 6, 9}, {&c, pc.data(), 13}},
       engine::LogitsRows::kAll);
  // Every sequence decodes, last rows only.
  step({{&a, pa.data() + 20, 1}, {&b, pb.data() + 15, 1}, {&c, pc.data() + 13, 1}},
       engine::LogitsRows::kLast);
  // A speculative verification of A (4 tokens, 3 rows) beside C's chunk of 7
  // and B's decode.
  std::vector<engine::BatchSequence> verify = {{&a, pa.data() + 21, 4, 3},
                                               {&b, pb.data() + 16, 1},
                                               {&c, pc.data() + 14, 7}};
  step(verify, engine::LogitsRows::kLast);
  // Greedy tokens of a prefill chunk and two decodes.
  step({{&a, pa.data() + 25, 11}, {&b, pb.data() + 17, 1}, {&c, pc.data() + 21, 1}},
       engine::LogitsRows::kLastGreedy);
  for (kv::SequenceKV *s : {&a, &b, &c})
    EXPECT_TRUE(s->release(e.pool()).isOk());
  return out;
}

TEST_F(PipelineTest, TpTimesPpEqualsTp1WholeTokenByTokenAndRagged) {
  std::unique_ptr<engine::Engine> ref = openEngine("");
  ASSERT_TRUE(ref);
  const std::vector<int64_t> prompt = randomIds(37, 6);
  std::vector<Tensor> want;
  for (int64_t chunk : {0, 1, 5}) {
    StatusOr<Tensor> s = ref->score(prompt, chunk);
    ASSERT_TRUE(s.isOk()) << s.status().message();
    want.push_back(std::move(*s));
  }
  const std::vector<Tensor> wantRagged = raggedSteps(*ref);
  ASSERT_EQ(wantRagged.size(), 5u);
  for (const std::string &flags : kSplits)
    for (int micro : {0, 3, 1}) {
      SCOPED_TRACE(flags + ", micro-batches " + std::to_string(micro));
      std::unique_ptr<engine::Engine> e = openEngine(flags, micro);
      ASSERT_TRUE(e);
      for (size_t i = 0; i < 3; ++i) {
        StatusOr<Tensor> s = e->score(prompt, std::vector<int64_t>{0, 1, 5}[i]);
        ASSERT_TRUE(s.isOk()) << s.status().message();
        EXPECT_LE(relError(*s, want[i]), 1e-5) << "score, chunk " << i;
      }
      const std::vector<Tensor> got = raggedSteps(*e);
      ASSERT_EQ(got.size(), wantRagged.size());
      for (size_t i = 0; i + 1 < got.size(); ++i)
        EXPECT_LE(relError(got[i], wantRagged[i]), 1e-5) << "ragged step " << i;
      // The greedy step's tokens.
      const Tensor &g = got.back(), &w = wantRagged.back();
      ASSERT_EQ(g.numElements(), 3);
      for (int64_t i = 0; i < 3; ++i)
        EXPECT_EQ(g.data<int64_t>()[i], w.data<int64_t>()[i]) << "greedy row " << i;
      EXPECT_EQ(e->pool().numFreeBlocks(), e->pool().numBlocks());
    }
}

// Engine::pipelineStats: one entry per stage; each stage ran every step and
// as many micro-batches as the steps were split into; each was busy; busy +
// idle is the sum of the steps' wall times, alike for every stage. A plan
// of one stage has none.
TEST_F(PipelineTest, CountersGiveEachStagesBusyAndIdleTime) {
  std::unique_ptr<engine::Engine> tp1 = openEngine("");
  ASSERT_TRUE(tp1);
  EXPECT_FALSE(tp1->pipelineStats().has_value());
  for (int micro : {0, 2, 1}) {
    SCOPED_TRACE("micro-batches " + std::to_string(micro));
    std::unique_ptr<engine::Engine> e = openEngine("-pp=3", micro);
    ASSERT_TRUE(e);
    std::optional<engine::PipelineStats> before = e->pipelineStats();
    ASSERT_TRUE(before.has_value());
    ASSERT_EQ(before->stages.size(), 3u);
    EXPECT_EQ(before->stages[0].steps, 0);
    // 2 steps: a 12-token prefill (split as asked), a 1-token one (one part).
    const std::vector<int64_t> ids = randomIds(13, 7);
    ASSERT_TRUE(e->score(ids, 12).isOk());
    engine::PipelineStats st = e->pipelineStats()->since(*before);
    const int64_t parts = (micro == 0 ? 3 : micro) + 1;
    double wall = -1;
    for (size_t s = 0; s < 3; ++s) {
      SCOPED_TRACE("stage " + std::to_string(s));
      EXPECT_EQ(st.stages[s].steps, 2);
      EXPECT_EQ(st.stages[s].micro_batches, parts);
      EXPECT_GT(st.stages[s].busy_s, 0);
      EXPECT_GE(st.stages[s].idle_s, 0);
      const double w = st.stages[s].busy_s + st.stages[s].idle_s;
      if (wall < 0)
        wall = w;
      EXPECT_NEAR(w, wall, 1e-9);
    }
  }
}

// A stage that fails in its second micro-batch (an id outside the
// vocabulary, which the Engine would refuse, handed to the executor
// directly): the step fails naming a rank of stage 0, not stage 1, which
// only saw the pipeline stop; the next step runs.
TEST_F(PipelineTest, AFailingStageStopsThePipelineAndIsNamed) {
  std::shared_ptr<const plan::PlanFile> plan = openPlan("-tp=2 -pp=2");
  ASSERT_TRUE(plan);
  StatusOr<std::unique_ptr<engine::TpCpuExecutor>> ex = engine::TpCpuExecutor::create(plan);
  ASSERT_TRUE(ex.isOk()) << ex.status().message();
  EXPECT_EQ((*ex)->microBatches(), 2);
  kv::KVCacheConfig cfg;
  cfg.numLayers = plan->metadata().kv_cache().num_layers();
  cfg.numKvHeads = plan->metadata().kv_cache().num_kv_heads();
  cfg.headDim = plan->metadata().kv_cache().head_dim();
  cfg.blockSize = plan->metadata().kv_cache().block_size();
  cfg.numBlocks = 8;
  auto pool = std::move(kv::BlockPool::create(cfg, kv::KvStorage::kDevice)).value();
  kv::SequenceKV a;
  StatusOr<kv::StepMetadata> m = kv::prepareStep(*pool, {{&a, 10}});
  ASSERT_TRUE(m.isOk());
  std::vector<int64_t> ids = randomIds(10, 8);
  ids[7] = 5000; // in the second part
  StatusOr<Tensor> bad = (*ex)->run(*Tensor::fromVector<int64_t>({10}, ids), *pool, *m);
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().message().rfind("stage 0 rank ", 0), 0u) << bad.status().message();
  EXPECT_EQ(bad.status().message().find("pipeline stopped"), std::string::npos)
      << bad.status().message();
  ids[7] = 7;
  StatusOr<Tensor> good = (*ex)->run(*Tensor::fromVector<int64_t>({10}, ids), *pool, *m);
  ASSERT_TRUE(good.isOk()) << good.status().message();
  EXPECT_EQ(good->numElements(), 10 * 2048);
  ASSERT_TRUE(a.release(*pool).isOk());
  // Micro-batches below 0 are refused in one sentence.
  engine::TpCpuExecutorOptions o;
  o.microBatches = -2;
  StatusOr<std::unique_ptr<engine::TpCpuExecutor>> neg = engine::TpCpuExecutor::create(plan, o);
  ASSERT_FALSE(neg.isOk());
  EXPECT_EQ(neg.status().message(),
            "a pipelined step's micro-batches must be 0 (one per stage) or more, got -2");
}

} // namespace
