//===- TpGpuExecutorTest.cpp - a tensor-parallel plan on two GPUs ---------===//
//
// A hand-built plan partitioned for 2 ranks as accelc -tp=2 partitions one
// (vocabulary-parallel embedding + all_reduce, column-parallel Q/K/V and MLP
// up, row-parallel O and MLP down + all_reduce, a GQA cache of one KV head
// per rank, a vocabulary-parallel LM head + all_gather along the last axis)
// runs through the engine on two GPUs (TpGpuExecutor over NCCL) and on the
// CPU (TpCpuExecutor); every step's logits must agree: a ragged prefill
// batch, decode steps replayed from CUDA graphs (batch 3 padded to 4),
// the same eagerly, token-by-token scoring, a copy-on-write fork, the KV
// cache sized by the backend, and the refusal of a device range the
// machine lacks.
//
// Label `gpu`: SKIPPED without two GPUs or without NCCL (ACCEL_LIBNCCL, see
// docs/gpu-backend.md).
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/Nccl.h"
#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/GpuExecutor.h"
#include "runtime/cuda/kernels/KernelImage.h"
#include "runtime/engine/Engine.h"
#include "runtime/kv/SequenceKV.h"

#include "../unit/EngineTestUtil.h"
#include "../unit/PlanTestUtil.h"
#include "EngineSteps.h"
#include "GpuTestContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

using namespace accel::rt;
using accel::test::assembleTp;
namespace pb = accel::plan;
using accel::test::expectForkAppendsMatchScoring;
using accel::test::PlanBuilder;

namespace {

/// Why this machine cannot run the tests ("" when it can).
std::string whyNot() {
  // NVLink multicast stays off on shared machines (docs/gpu-backend.md).
  setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
  StatusOr<CudaDriver *> d = CudaDriver::get();
  if (!d)
    return d.status().message();
  StatusOr<std::vector<GpuInfo>> g = (*d)->listDevices();
  if (!g)
    return g.status().message();
  if (g->size() < 2)
    return "this machine has " + std::to_string(g->size()) + " GPU(s); the test needs 2";
  if (gpu::kernelImageBytes() == 0)
    return "built without GPU kernels";
  StatusOr<const comm::Nccl *> n = comm::Nccl::get();
  if (!n)
    return n.status().message();
  return "";
}

#define REQUIRE_TWO_GPUS()                                                                   \
  do {                                                                                       \
    static const std::string why = whyNot();                                                 \
    if (!why.empty())                                                                        \
      GTEST_SKIP() << why;                                                                   \
  } while (0)

constexpr int64_t kVocab = 12, kHidden = 32, kHeads = 4, kKvHeads = 2, kHeadDim = 16,
                  kInter = 24, kLayers = 2;

std::vector<float> wave(size_t n, float freq, float phase, float amp = 1.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = amp * std::sin(float(i) * freq + phase);
  return v;
}

/// Rows [r0, r0 + n) of a row-major [rows, cols] matrix.
std::vector<float> rowsOf(const std::vector<float> &m, int64_t cols, int64_t r0, int64_t n) {
  return std::vector<float>(m.begin() + r0 * cols, m.begin() + (r0 + n) * cols);
}
/// Columns [c0, c0 + n) of a row-major [rows, cols] matrix.
std::vector<float> colsOf(const std::vector<float> &m, int64_t rows, int64_t cols, int64_t c0,
                          int64_t n) {
  std::vector<float> out;
  for (int64_t r = 0; r < rows; ++r)
    out.insert(out.end(), m.begin() + r * cols + c0, m.begin() + r * cols + c0 + n);
  return out;
}

/// Two ranks' weights sections of one layout: constant(shape, f) adds f(r)
/// to rank r's section.
struct TwoRanks {
  PlanBuilder b, other;
  template <typename Fn> int32_t constant(std::vector<int64_t> shape, Fn f) {
    other.constant(shape, f(1));
    return b.constant(shape, f(0));
  }
};

/// The 2-rank plan for `target` ("cpu" or "sm_80").
std::shared_ptr<const plan::PlanFile> tpPlan(const std::string &target) {
  constexpr int64_t n = 2, v = kVocab / n, hq = kHeads / n, hkv = kKvHeads / n, d = kHeadDim,
                    h = kHidden, inter = kInter / n;
  TwoRanks t;
  PlanBuilder &b = t.b;
  b.meta.set_tp_size(n);
  auto linear = [&](int32_t x, int32_t w, int32_t bias, int64_t out) {
    int32_t y = b.value("f32", {-1, out});
    PlanBuilder::attr(b.step(pb::GEMM, {x, w, bias}, {y}), "out_dtype", "f32");
    return y;
  };
  auto allReduce = [&](int32_t x, int64_t cols) {
    int32_t y = b.value("f32", {-1, cols});
    b.collective(x, y, n);
    return y;
  };
  int32_t ids = b.value("i64", {-1});
  // Vocabulary-parallel embedding: rank r holds rows [r v, (r + 1) v).
  const std::vector<float> table = wave(size_t(kVocab * h), 0.71f, 0.1f);
  int32_t tbl = t.constant({v, h}, [&](int r) { return rowsOf(table, h, r * v, v); });
  int32_t part = b.value("f32", {-1, h});
  PlanBuilder::attr(b.step(pb::EMBEDDING, {tbl, ids}, {part}), "vocab_shards", n);
  int32_t acc = allReduce(part, h);
  int32_t pos = b.value("i64", {-1});
  b.stepInput(pos, pb::Value::POSITIONS);
  for (int64_t layer = 0; layer < kLayers; ++layer) {
    const float ph = float(layer) * 0.37f;
    const std::vector<float> wq = wave(size_t(kHeads * d * h), 0.29f, 0.1f + ph, 0.5f),
                             bq = wave(size_t(kHeads * d), 0.9f, 0.1f + ph, 0.2f),
                             wk = wave(size_t(kKvHeads * d * h), 0.29f, 0.4f + ph, 0.5f),
                             wv = wave(size_t(kKvHeads * d * h), 0.29f, 0.8f + ph, 0.5f),
                             bv = wave(size_t(kKvHeads * d), 0.9f, 0.8f + ph, 0.2f),
                             wo = wave(size_t(h * kHeads * d), 0.29f, 1.3f + ph, 0.5f);
    // Column-parallel Q, K, V: rank r's heads; row-parallel O.
    int32_t q = linear(acc,
                       t.constant({hq * d, h}, [&](int r) { return rowsOf(wq, h, r * hq * d, hq * d); }),
                       t.constant({hq * d}, [&](int r) { return rowsOf(bq, 1, r * hq * d, hq * d); }),
                       hq * d);
    int32_t k = linear(acc,
                       t.constant({hkv * d, h}, [&](int r) { return rowsOf(wk, h, r * hkv * d, hkv * d); }),
                       -1, hkv * d);
    int32_t vv = linear(acc,
                        t.constant({hkv * d, h}, [&](int r) { return rowsOf(wv, h, r * hkv * d, hkv * d); }),
                        t.constant({hkv * d}, [&](int r) { return rowsOf(bv, 1, r * hkv * d, hkv * d); }),
                        hkv * d);
    int32_t qh = b.value("f32", {-1, hq, d}), kh = b.value("f32", {-1, hkv, d}),
            vh = b.value("f32", {-1, hkv, d}), qr = b.value("f32", {-1, hq, d}),
            kr = b.value("f32", {-1, hkv, d}), att = b.value("f32", {-1, hq, d}),
            m = b.value("f32", {-1, hq * d});
    b.viewOf(qh, q);
    b.viewOf(kh, k);
    b.viewOf(vh, vv);
    for (auto [in, out] : {std::pair{qh, qr}, std::pair{kh, kr}}) {
      auto &r = b.step(pb::ROTARY, {in, pos}, {out});
      PlanBuilder::attr(r, "style", "half_split");
      PlanBuilder::attr(r, "rotary_dim", d);
    }
    PlanBuilder::attr(b.step(pb::KV_WRITE, {kr, vh}, {}), "layer", layer);
    auto &s = b.step(pb::ATTENTION, {qr}, {att});
    PlanBuilder::attr(s, "layer", layer);
    PlanBuilder::attr(s, "num_heads", hq);
    PlanBuilder::attr(s, "num_kv_heads", hkv);
    PlanBuilder::attr(s, "head_dim", d);
    PlanBuilder::attr(s, "causal", int64_t(1));
    b.viewOf(m, att);
    int32_t o = linear(m,
                       t.constant({h, hq * d},
                                  [&](int r) { return colsOf(wo, h, kHeads * d, r * hq * d, hq * d); }),
                       -1, h);
    int32_t sum = b.value("f32", {-1, h});
    b.step(pb::RESIDUAL_ADD, {acc, allReduce(o, h)}, {sum});
    // MLP: column-parallel up, row-parallel down.
    const std::vector<float> wu = wave(size_t(kInter * h), 0.31f, 2.1f + ph, 0.5f),
                             wd = wave(size_t(h * kInter), 0.23f, 0.7f + ph, 0.5f);
    int32_t up = linear(sum,
                        t.constant({inter, h}, [&](int r) { return rowsOf(wu, h, r * inter, inter); }),
                        -1, inter);
    int32_t act = b.value("f32", {-1, inter});
    PlanBuilder::attr(b.step(pb::ACTIVATION, {up}, {act}), "kind", "silu");
    int32_t down = linear(act,
                          t.constant({h, inter},
                                     [&](int r) { return colsOf(wd, h, kInter, r * inter, inter); }),
                          -1, h);
    int32_t next = b.value("f32", {-1, h});
    b.step(pb::RESIDUAL_ADD, {sum, allReduce(down, h)}, {next});
    acc = next;
  }
  // Vocabulary-parallel LM head, gathered along the vocabulary (axis 1).
  const std::vector<float> lm = wave(size_t(kVocab * h), 0.37f, 0.3f, 0.6f);
  int32_t wl = t.constant({v, h}, [&](int r) { return rowsOf(lm, h, r * v, v); });
  int32_t lp = b.value("f32", {-1, v}), logits = b.value("f32", {-1, kVocab});
  auto &l = b.step(pb::LOGITS, {acc, wl}, {lp});
  PlanBuilder::attr(l, "out_dtype", "f32");
  b.collective(lp, logits, n, /*axis=*/1);
  b.setModel(ids, logits, kVocab, 64, kLayers, hkv, d);
  b.meta.set_target(target);
  StatusOr<std::shared_ptr<const plan::PlanFile>> p =
      plan::PlanFile::fromBytes((b.place(), assembleTp(b.meta, {b.weights, t.other.weights})), "tp.plan");
  EXPECT_TRUE(p.isOk()) << p.status().message();
  return p ? *p : nullptr;
}

std::unique_ptr<engine::Engine> cpuEngine() {
  engine::EngineOptions o;
  o.numKvBlocks = 64;
  StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::create(tpPlan("cpu"), o);
  EXPECT_TRUE(e.isOk()) << e.status().message();
  return e ? std::move(*e) : nullptr;
}

std::unique_ptr<engine::Engine> gpuEngine(DType dtype, bool graphs, int64_t numKvBlocks = 64,
                                          std::string *error = nullptr,
                                          const engine::GpuTuning &tuning = {},
                                          bool shareGpus = false) {
  engine::GpuExecutorOptions g;
  g.tuning = tuning;
  g.shareGpus = shareGpus;
  g.dtype = dtype;
  g.cudaGraphs = graphs;
  g.graphMaxBatch = 8;
  g.maxNumBatchedTokens = 64;
  g.gpuMemoryUtilization = 0.2;
  engine::EngineOptions o;
  o.numKvBlocks = numKvBlocks;
  o.gpuBackend = engine::makeGpuBackend(g);
  StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::create(tpPlan("sm_80"), o);
  if (error)
    *error = e ? "" : e.status().message();
  else
    EXPECT_TRUE(e.isOk()) << e.status().message();
  return e ? std::move(*e) : nullptr;
}

using accel::rt::test::relDiff;

/// Three sequences through both engines, step by step: a ragged prefill
/// (5, 3 and 7 tokens), then `decodeSteps` decode steps of the three;
/// returns the largest relative difference of any step's logits.
double compareSteps(engine::Engine &gpu, engine::Engine &cpu, int decodeSteps) {
  accel::rt::test::StepScript script;
  script.prompts = {{1, 4, 2, 5, 3}, {7, 0, 11}, {9, 8, 6, 10, 2, 3, 1}};
  script.first = {3, 5, 7};
  script.multiplier = 7;
  script.vocab = kVocab;
  return accel::rt::test::compareSteps(gpu, cpu, decodeSteps, script);
}

TEST(TpGpuExecutor, RaggedPrefillAndGraphDecodeMatchTheCpuRanks) {
  REQUIRE_TWO_GPUS();
  std::unique_ptr<engine::Engine> gpu = gpuEngine(DType::kF32, /*graphs=*/true);
  std::unique_ptr<engine::Engine> cpu = cpuEngine();
  ASSERT_TRUE(gpu && cpu);
  EXPECT_LE(compareSteps(*gpu, *cpu, 8), 1e-5);
  const std::string desc = gpu->backendDescription();
  EXPECT_NE(desc.find("tensor-parallel over 2 GPUs"), std::string::npos) << desc;
  EXPECT_EQ(desc.find("decode steps eager"), std::string::npos)
      << "CUDA graphs were turned off: " << desc;
}

// With tuning.p2pAllReduce off, NCCL carries every all_reduce (the one-shot
// kernel's A/B peer), with the same results.
TEST(TpGpuExecutor, NcclCarriesEveryAllReduceWithoutP2p) {
  REQUIRE_TWO_GPUS();
  engine::GpuTuning tuning;
  tuning.p2pAllReduce = false;
  std::unique_ptr<engine::Engine> gpu =
      gpuEngine(DType::kF32, /*graphs=*/true, 64, nullptr, tuning);
  std::unique_ptr<engine::Engine> cpu = cpuEngine();
  ASSERT_TRUE(gpu && cpu);
  EXPECT_LE(compareSteps(*gpu, *cpu, 4), 1e-5);
  const std::string desc = gpu->backendDescription();
  EXPECT_NE(desc.find("every all_reduce through NCCL (GpuTuning::p2pAllReduce is off)"),
            std::string::npos)
      << desc;
}

TEST(TpGpuExecutor, EagerDecodeMatchesTheCpuRanks) {
  REQUIRE_TWO_GPUS();
  std::unique_ptr<engine::Engine> gpu = gpuEngine(DType::kF32, /*graphs=*/false);
  std::unique_ptr<engine::Engine> cpu = cpuEngine();
  ASSERT_TRUE(gpu && cpu);
  EXPECT_LE(compareSteps(*gpu, *cpu, 4), 1e-5);
}

// bf16 on the GPU against the f32 CPU ranks: 0.043 of max |logit| on two
// H200s (2026-11-30). This synthetic plan is as badly conditioned for bf16
// as GpuExecutorTest's (whose single-GPU bf16 bounds are 0.1-0.15); the
// llama_op18 fixture at -tp=2 in bf16 is 0.0065 off HF (gpu-tp-fixture.sh).
TEST(TpGpuExecutor, Bf16MatchesTheCpuRanks) {
  REQUIRE_TWO_GPUS();
  std::unique_ptr<engine::Engine> gpu = gpuEngine(DType::kBF16, /*graphs=*/true);
  std::unique_ptr<engine::Engine> cpu = cpuEngine();
  ASSERT_TRUE(gpu && cpu);
  EXPECT_LE(compareSteps(*gpu, *cpu, 4), 0.08);
}

// Whole-sequence and token-by-token scoring (batch 1: graph bucket 1).
TEST(TpGpuExecutor, ScoresWholeAndTokenByToken) {
  REQUIRE_TWO_GPUS();
  std::unique_ptr<engine::Engine> gpu = gpuEngine(DType::kF32, /*graphs=*/true);
  std::unique_ptr<engine::Engine> cpu = cpuEngine();
  ASSERT_TRUE(gpu && cpu);
  const std::vector<int64_t> ids = {3, 0, 2, 11, 6, 7, 1, 9, 4, 10};
  StatusOr<Tensor> want = cpu->score(ids, 0);
  ASSERT_TRUE(want.isOk()) << want.status().message();
  for (int64_t chunk : {0, 1, 3}) {
    StatusOr<Tensor> got = gpu->score(ids, chunk);
    ASSERT_TRUE(got.isOk()) << "chunk " << chunk << ": " << got.status().message();
    EXPECT_LE(relDiff(*got, *want), 1e-5) << "chunk " << chunk;
  }
}

// A forked sequence appending into its shared, partly filled last block
// gets a copy of that block on both GPUs: its logits equal those of the
// same tokens scored from scratch.
TEST(TpGpuExecutor, CopyOnWriteReachesEveryRanksKvPool) {
  REQUIRE_TWO_GPUS();
  std::unique_ptr<engine::Engine> e = gpuEngine(DType::kF32, /*graphs=*/true);
  ASSERT_TRUE(e);
  expectForkAppendsMatchScoring(*e, kVocab, 1e-4f);
}

// No KV size given: both ranks run their profiling steps (which meet at
// the collectives) and the engine gets the smaller pool.
TEST(TpGpuExecutor, SizesTheKvCacheOnEveryRank) {
  REQUIRE_TWO_GPUS();
  std::unique_ptr<engine::Engine> gpu = gpuEngine(DType::kF32, /*graphs=*/true, /*blocks=*/0);
  std::unique_ptr<engine::Engine> cpu = cpuEngine();
  ASSERT_TRUE(gpu && cpu);
  EXPECT_TRUE(gpu->kvCacheSizedByBackend());
  EXPECT_GT(gpu->pool().config().numBlocks, 64);
  EXPECT_LE(compareSteps(*gpu, *cpu, 2), 1e-5);
}

// Ranks from GPU 1 on need GPUs 1 and 2: refused in one sentence.
// --share-gpus: both ranks on the last GPU (one GPU is enough), every
// collective through the host-ordered all-reduce in chunks, no NCCL.
TEST(TpGpuExecutor, RanksSharingOneGpuMatchTheCpuRanks) {
  ACCEL_REQUIRE_GPU();
  StatusOr<std::vector<GpuInfo>> gpus = (*CudaDriver::get())->listDevices();
  ASSERT_TRUE(gpus.isOk());
  for (bool graphs : {true, false}) {
    engine::GpuExecutorOptions g;
    g.dtype = DType::kF32;
    g.cudaGraphs = graphs;
    g.graphMaxBatch = 8;
    g.maxNumBatchedTokens = 64;
    g.gpuMemoryUtilization = 0.2;
    g.shareGpus = true;
    g.device = int(gpus->size()) - 1;
    engine::EngineOptions o;
    o.numKvBlocks = 64;
    o.gpuBackend = engine::makeGpuBackend(g);
    StatusOr<std::unique_ptr<engine::Engine>> gpu = engine::Engine::create(tpPlan("sm_80"), o);
    ASSERT_TRUE(gpu.isOk()) << gpu.status().message();
    std::unique_ptr<engine::Engine> cpu = cpuEngine();
    ASSERT_TRUE(cpu);
    EXPECT_LE(compareSteps(**gpu, *cpu, 6), 1e-5) << (graphs ? "graphs" : "eager");
    const std::string desc = (*gpu)->backendDescription();
    EXPECT_NE(desc.find("2 tensor-parallel ranks sharing GPUs"), std::string::npos) << desc;
    // They meet on the host at every collective: no CUDA graphs, asked or not.
    EXPECT_NE(desc.find("without CUDA graphs"), std::string::npos) << desc;
  }
}

TEST(TpGpuExecutor, RefusesMoreRanksThanGpus) {
  REQUIRE_TWO_GPUS();
  StatusOr<std::vector<GpuInfo>> gpus = (*CudaDriver::get())->listDevices();
  ASSERT_TRUE(gpus.isOk());
  engine::GpuExecutorOptions g;
  g.device = int(gpus->size()) - 1;
  engine::EngineOptions o;
  o.numKvBlocks = 16;
  o.gpuBackend = engine::makeGpuBackend(g);
  StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::create(tpPlan("sm_80"), o);
  ASSERT_FALSE(e.isOk());
  EXPECT_EQ(e.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(e.status().message().find("tp.plan: the plan is partitioned for 2 ranks; this machine "
                                      "has " +
                                      std::to_string(gpus->size()) + " GPUs"),
            std::string::npos)
      << e.status().message();
}

// The plan itself, on the CPU ranks (no GPU needed): what the GPU tests
// compare against runs and gives finite logits.
TEST(TpGpuExecutor, ThePlanRunsOnTheCpuRanks) {
  std::unique_ptr<engine::Engine> a = cpuEngine(), b = cpuEngine();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(compareSteps(*a, *b, 3), 0.0);
  StatusOr<Tensor> l = a->score({1, 2, 3, 4, 5, 6}, 0);
  ASSERT_TRUE(l.isOk()) << l.status().message();
  ASSERT_EQ(l->shape(), (Shape{6, kVocab}));
  double largest = 0;
  for (int64_t i = 0; i < l->numElements(); ++i) {
    ASSERT_TRUE(std::isfinite(l->data<float>()[i]));
    largest = std::max(largest, double(std::fabs(l->data<float>()[i])));
  }
  EXPECT_GT(largest, 1e-3);
}

// One GpuExecutor does not run a partitioned plan by itself.
TEST(TpGpuExecutor, OneGpuExecutorRefusesAPartitionedPlan) {
  std::shared_ptr<const plan::PlanFile> p = tpPlan("sm_80");
  ASSERT_TRUE(p);
  StatusOr<std::unique_ptr<engine::GpuExecutor>> g = engine::GpuExecutor::create(p, {});
  ASSERT_FALSE(g.isOk());
  EXPECT_EQ(g.status().message(), "tp.plan: the plan is partitioned for 2 ranks; one GpuExecutor "
                                  "runs one (TpGpuExecutor runs them all)");
}

} // namespace
