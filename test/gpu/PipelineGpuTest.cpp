//===- PipelineGpuTest.cpp - a pipelined plan on one GPU ------------------===//
//
// A hand-built plan of two pipeline stages (PlanTestUtil.h's pipelinePlan:
// the embedding on stage 0, a pp_transfer, the LM head on stage 1) runs
// through the engine on the GPU (TpGpuExecutor: one GpuExecutor per stage,
// both on GPU 0, handing over through GpuPipeline's staging buffers) and on
// the CPU (TpCpuExecutor); every step's logits must agree: a ragged
// prefill, decode steps replayed from CUDA graphs and eagerly, the KV cache
// sized for both stages, a failing stage named and the next step clean.
// The real models at -pp=2 and -pp=4 are gpu-pp-fixture.sh's.
//
// Label `gpu`: SKIPPED without a GPU (the refusals need none).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/GpuExecutor.h"
#include "runtime/cuda/TpGpuExecutor.h"
#include "runtime/engine/Engine.h"
#include "runtime/kv/SequenceKV.h"

#include "../unit/PlanTestUtil.h"
#include "EngineSteps.h"
#include "GpuTestContext.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace accel::rt;

namespace {

constexpr int64_t kVocab = 6, kHidden = 8;

std::shared_ptr<const plan::PlanFile> ppPlan(const std::string &target) {
  std::vector<float> table(size_t(kVocab * kHidden));
  for (size_t i = 0; i < table.size(); ++i)
    table[i] = std::sin(0.37f * float(i) + 0.2f);
  accel::test::PlanBuilder b = accel::test::pipelinePlan(table, kVocab, kHidden);
  b.meta.set_target(target);
  StatusOr<std::shared_ptr<const plan::PlanFile>> p = plan::PlanFile::fromBytes(b.bytes(), "pp.plan");
  EXPECT_TRUE(p.isOk()) << p.status().message();
  return p ? *p : nullptr;
}

std::unique_ptr<engine::Engine> cpuEngine() {
  engine::EngineOptions o;
  o.numKvBlocks = 64;
  StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::create(ppPlan("cpu"), o);
  EXPECT_TRUE(e.isOk()) << e.status().message();
  return e ? std::move(*e) : nullptr;
}

std::unique_ptr<engine::Engine> gpuEngine(bool graphs, int64_t numKvBlocks = 64,
                                          int microBatches = 0) {
  engine::GpuExecutorOptions g;
  g.ppMicroBatches = microBatches;
  g.dtype = DType::kF32;
  g.cudaGraphs = graphs;
  g.graphMaxBatch = 8;
  g.maxNumBatchedTokens = 64;
  g.gpuMemoryUtilization = 0.2;
  g.logMemory = false;
  engine::EngineOptions o;
  o.numKvBlocks = numKvBlocks;
  o.gpuBackend = engine::makeGpuBackend(g);
  StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::create(ppPlan("sm_80"), o);
  EXPECT_TRUE(e.isOk()) << e.status().message();
  return e ? std::move(*e) : nullptr;
}

/// Three sequences through both engines: a ragged prefill (5, 3 and 7
/// tokens), then `decodeSteps` decode steps; the largest relative
/// difference of any step's logits.
double compareSteps(engine::Engine &gpu, engine::Engine &cpu, int decodeSteps) {
  accel::rt::test::StepScript script;
  script.prompts = {{1, 4, 2, 5, 3}, {0, 5, 1}, {3, 2, 4, 0, 1, 5, 2}};
  script.first = {3, 5, 1};
  script.multiplier = 5;
  script.vocab = kVocab;
  script.floor = 1e-30;
  return accel::rt::test::compareSteps(gpu, cpu, decodeSteps, script);
}

TEST(PipelineGpu, StagesSharingOneGpuMatchTheCpuStages) {
  ACCEL_REQUIRE_GPU();
  std::unique_ptr<engine::Engine> gpu = gpuEngine(/*graphs=*/true);
  std::unique_ptr<engine::Engine> cpu = cpuEngine();
  ASSERT_TRUE(gpu && cpu);
  EXPECT_LE(compareSteps(*gpu, *cpu, 6), 1e-6);
  const std::string desc = gpu->backendDescription();
  EXPECT_NE(desc.find("2 pipeline stages"), std::string::npos) << desc;
  EXPECT_EQ(desc.find("decode steps eager"), std::string::npos)
      << "CUDA graphs were turned off: " << desc;
  // Stages sharing the GPU (a machine of one GPU): one micro-batch a step
  // unless asked (nothing overlaps, and each would read the weights again).
  StatusOr<std::vector<GpuInfo>> gpus = (*CudaDriver::get())->listDevices();
  ASSERT_TRUE(gpus.isOk());
  if (gpus->size() == 1) {
    std::optional<engine::PipelineStats> stats = gpu->pipelineStats();
    ASSERT_TRUE(stats.has_value());
    for (const engine::PipelineStageStats &st : stats->stages)
      EXPECT_EQ(st.micro_batches, st.steps);
  }
}

TEST(PipelineGpu, EagerDecodeMatchesTheCpuStages) {
  ACCEL_REQUIRE_GPU();
  std::unique_ptr<engine::Engine> gpu = gpuEngine(/*graphs=*/false);
  std::unique_ptr<engine::Engine> cpu = cpuEngine();
  ASSERT_TRUE(gpu && cpu);
  EXPECT_LE(compareSteps(*gpu, *cpu, 4), 1e-6);
}

// One part (the stages one after the other) and three (parts cut inside
// the prompts) give the CPU's logits too.
TEST(PipelineGpu, EveryMicroBatchCountMatchesTheCpuStages) {
  ACCEL_REQUIRE_GPU();
  for (int parts : {1, 3}) {
    std::unique_ptr<engine::Engine> gpu = gpuEngine(/*graphs=*/true, 64, parts);
    std::unique_ptr<engine::Engine> cpu = cpuEngine();
    ASSERT_TRUE(gpu && cpu);
    EXPECT_LE(compareSteps(*gpu, *cpu, 3), 1e-6) << parts << " micro-batches";
    std::optional<engine::PipelineStats> stats = gpu->pipelineStats();
    ASSERT_TRUE(stats.has_value());
    ASSERT_EQ(stats->stages.size(), 2u);
    for (const engine::PipelineStageStats &st : stats->stages) {
      EXPECT_EQ(st.steps, 4);
      EXPECT_GT(st.busy_s, 0.0);
      EXPECT_GE(st.idle_s, 0.0);
      EXPECT_GE(st.micro_batches, 4); // decode steps of 3 sequences: up to 3 parts each
    }
  }
}

// With no block count given, the backend sizes the KV cache: both stages'
// pools on GPU 0 share its budget and get the same blocks.
TEST(PipelineGpu, SizesTheKvCacheForEveryStage) {
  ACCEL_REQUIRE_GPU();
  std::unique_ptr<engine::Engine> gpu = gpuEngine(/*graphs=*/true, /*numKvBlocks=*/0);
  std::unique_ptr<engine::Engine> cpu = cpuEngine();
  ASSERT_TRUE(gpu && cpu);
  EXPECT_GT(gpu->pool().config().numBlocks, 64);
  EXPECT_LE(compareSteps(*gpu, *cpu, 2), 1e-6);
}

// A step whose block table leaves the device pool fails in both stages,
// named by the stage that said so first; the pipeline starts over and the
// next step is right.
TEST(PipelineGpu, AFailedStepIsNamedAndTheNextRuns) {
  ACCEL_REQUIRE_GPU();
  engine::GpuExecutorOptions g;
  g.cudaGraphs = false;
  g.maxNumBatchedTokens = 64;
  g.graphMaxBatch = 8;
  g.logMemory = false;
  StatusOr<std::unique_ptr<engine::TpGpuExecutor>> ex =
      engine::TpGpuExecutor::create(ppPlan("sm_80"), g);
  ASSERT_TRUE(ex.isOk()) << ex.status().message();
  kv::KVCacheConfig cfg;
  cfg.numLayers = 2;
  cfg.numKvHeads = 1;
  cfg.headDim = 4;
  cfg.blockSize = 4;
  cfg.numBlocks = 8;
  StatusOr<std::unique_ptr<kv::BlockPool>> pool =
      kv::BlockPool::create(cfg, kv::KvStorage::kDevice);
  ASSERT_TRUE(pool.isOk()) << pool.status().message();
  kv::SequenceKV seq;
  StatusOr<kv::StepMetadata> meta = kv::prepareStep(**pool, {{&seq, 3}});
  ASSERT_TRUE(meta.isOk()) << meta.status().message();
  Tensor ids = Tensor::zeros(DType::kI64, {3});
  ids.data<int64_t>()[1] = 2;
  kv::StepMetadata broken = *meta;
  broken.blockTables = meta->blockTables.clone();
  broken.blockTables.data<int32_t>()[0] = 100;
  StatusOr<Tensor> out = (*ex)->run(ids, **pool, broken);
  ASSERT_FALSE(out.isOk());
  EXPECT_NE(out.status().message().find("stage 0 rank 0: "), std::string::npos)
      << out.status().message();
  EXPECT_NE(out.status().message().find("outside the pool"), std::string::npos)
      << out.status().message();
  out = (*ex)->run(ids, **pool, *meta);
  ASSERT_TRUE(out.isOk()) << out.status().message();
  // Stage 1's LM head over stage 0's embedding rows: logits = E[ids] E^T.
  std::vector<float> table(size_t(kVocab * kHidden));
  for (size_t i = 0; i < table.size(); ++i)
    table[i] = std::sin(0.37f * float(i) + 0.2f);
  const Tensor logits = out->toF32();
  ASSERT_EQ(logits.numElements(), 3 * kVocab);
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t v = 0; v < kVocab; ++v) {
      double want = 0;
      const int64_t id = ids.data<int64_t>()[t];
      for (int64_t k = 0; k < kHidden; ++k)
        want += double(table[size_t(id * kHidden + k)]) * double(table[size_t(v * kHidden + k)]);
      EXPECT_NEAR(logits.data<float>()[t * kVocab + v], want, 1e-5) << t << " " << v;
    }
  (void)seq.release(**pool);
}

// One GpuExecutor runs one stage; a pipelined plan without a stage, or a
// stage the plan lacks, is refused before the GPU is touched.
TEST(PipelineGpu, OneExecutorRunsOneStage) {
  std::shared_ptr<const plan::PlanFile> p = ppPlan("sm_80");
  ASSERT_TRUE(p);
  StatusOr<std::unique_ptr<engine::GpuExecutor>> g = engine::GpuExecutor::create(p, {});
  ASSERT_FALSE(g);
  EXPECT_EQ(g.status().message(), "pp.plan: the plan is split into 2 pipeline stages; one "
                                  "GpuExecutor runs one (TpGpuExecutor runs them all)");
  engine::GpuExecutorOptions o;
  o.ppStage = 2;
  g = engine::GpuExecutor::create(p, o);
  ASSERT_FALSE(g);
  EXPECT_EQ(g.status().message(), "pp.plan: stage 2 of a plan with 2 pipeline stages");
}

} // namespace
