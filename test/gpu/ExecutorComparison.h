//===- ExecutorComparison.h - a plan through GpuExecutor and CpuExecutor -*- C++ -*-===//
//
// The plan tests (GpuExecutorTest, MoeTest, GeneratedKernelsTest) run a plan
// step by step through CpuExecutor and GpuExecutor on the same step metadata
// and compare the logits: compareExecutors over a ragged batch (prefill
// chunks and decode tokens mixed), compareGraphDecode for decode steps
// replayed from CUDA graphs against eager runs. Gtest expectations say what
// failed; a comparison that cannot finish returns its worst value.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_TEST_GPU_EXECUTORCOMPARISON_H
#define ACCEL_TEST_GPU_EXECUTORCOMPARISON_H

#include "runtime/cpu/CpuExecutor.h"
#include "runtime/cuda/GpuExecutor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace accel::rt::test {

/// The KV geometry of `plan` with a pool of `numBlocks` blocks.
inline kv::KVCacheConfig kvConfigOf(const plan::PlanFile &plan, int64_t numBlocks) {
  const auto &kvc = plan.metadata().kv_cache();
  kv::KVCacheConfig cfg;
  cfg.numLayers = kvc.num_layers();
  cfg.numKvHeads = kvc.num_kv_heads();
  cfg.headDim = kvc.head_dim();
  cfg.blockSize = kvc.block_size();
  cfg.numBlocks = numBlocks;
  if (std::optional<DType> dt = dtypeFromName(kvc.dtype()); dt && *dt == DType::kF8E4M3FN)
    cfg.dtype = *dt; // the CPU's pool holds what the GPU's does
  return cfg;
}

/// One sequence of a ragged batch.
struct Seq {
  std::vector<int64_t> ids;
  std::vector<int64_t> chunks; // tokens per step; the last repeats
};

/// How compareExecutors runs.
struct Comparison {
  engine::GpuTuning tune;     // the GPU executor's
  bool logFallbacks = false;  // the GPU executor's
  int64_t numBlocks = 256;    // the host pool's
  bool cpuOnly = false;       // the CPU backend alone (checks the plan itself)
  std::set<std::string> *fallbacks = nullptr; // when given: the GPU executor's fallbacks
  std::string *described = nullptr;           // when given: the GPU executor's describe()
  /// When given, called after each compared step: its tokens and its error.
  std::function<void(int step, size_t tokens, double err)> onStep;
};

/// Runs both executors step by step on the same metadata; returns the
/// largest |gpu - cpu| / max |cpu| over all steps (1e9 when a step fails or
/// the GPU's logits are not finite).
inline double compareExecutors(const std::string &bytes, DType dtype, const std::vector<Seq> &seqs,
                               const Comparison &how = {}) {
  StatusOr<std::shared_ptr<const plan::PlanFile>> p = plan::PlanFile::fromBytes(bytes, "t.plan");
  EXPECT_TRUE(p) << p.status().message();
  if (!p)
    return 1e9;
  StatusOr<std::unique_ptr<engine::CpuExecutor>> cpu = engine::CpuExecutor::create(*p);
  EXPECT_TRUE(cpu) << cpu.status().message();
  engine::GpuExecutorOptions o;
  o.dtype = dtype;
  o.logFallbacks = how.logFallbacks;
  o.tuning = how.tune;
  StatusOr<std::unique_ptr<engine::GpuExecutor>> gpu =
      how.cpuOnly ? StatusOr<std::unique_ptr<engine::GpuExecutor>>(unavailable("cpu only"))
                  : engine::GpuExecutor::create(*p, o);
  if (!how.cpuOnly) {
    EXPECT_TRUE(gpu) << gpu.status().message();
  }
  if (!cpu || (!how.cpuOnly && !gpu))
    return 1e9;
  if (how.described && !how.cpuOnly)
    *how.described = (*gpu)->describe();
  StatusOr<std::unique_ptr<kv::BlockPool>> pool =
      kv::BlockPool::create(kvConfigOf(**p, how.numBlocks));
  EXPECT_TRUE(pool) << pool.status().message();
  if (!pool)
    return 1e9;
  std::vector<kv::SequenceKV> kvs(seqs.size());
  std::vector<size_t> done(seqs.size(), 0);
  double worst = 0;
  for (int step = 0;; ++step) {
    std::vector<kv::StepSequence> batch;
    std::vector<int64_t> ids;
    for (size_t i = 0; i < seqs.size(); ++i) {
      if (done[i] >= seqs[i].ids.size())
        continue;
      int64_t c = seqs[i].chunks[std::min(size_t(step), seqs[i].chunks.size() - 1)];
      c = std::min<int64_t>(c, int64_t(seqs[i].ids.size() - done[i]));
      batch.push_back({&kvs[i], c});
      ids.insert(ids.end(), seqs[i].ids.begin() + int64_t(done[i]),
                 seqs[i].ids.begin() + int64_t(done[i]) + c);
      done[i] += size_t(c);
    }
    if (batch.empty())
      break;
    StatusOr<kv::StepMetadata> meta = kv::prepareStep(**pool, batch);
    EXPECT_TRUE(meta) << meta.status().message();
    if (!meta)
      return 1e9;
    Tensor tokens = *Tensor::fromVector<int64_t>({int64_t(ids.size())}, ids);
    StatusOr<Tensor> want = (*cpu)->run(tokens, **pool, *meta);
    EXPECT_TRUE(want) << want.status().message();
    if (how.cpuOnly) {
      if (!want)
        return 1e9;
      continue;
    }
    StatusOr<Tensor> got = (*gpu)->run(tokens, **pool, *meta);
    EXPECT_TRUE(got) << "step " << step << ": " << got.status().message();
    if (!want || !got)
      return 1e9;
    Tensor w = want->toF32();
    EXPECT_EQ(w.numElements(), got->numElements()) << "step " << step;
    if (w.numElements() != got->numElements())
      return 1e9;
    double maxRef = 0, maxErr = 0;
    for (int64_t i = 0; i < w.numElements(); ++i) {
      const float a = got->data<float>()[i], r = w.data<float>()[i];
      if (!std::isfinite(a))
        return 1e9;
      maxRef = std::max(maxRef, double(std::fabs(r)));
      maxErr = std::max(maxErr, double(std::fabs(a - r)));
    }
    const double err = maxRef > 0 ? maxErr / maxRef : maxErr;
    if (how.onStep)
      how.onStep(step, ids.size(), err);
    worst = std::max(worst, err);
  }
  if (how.fallbacks && !how.cpuOnly)
    *how.fallbacks = (*gpu)->fallbacks();
  return worst;
}

/// Graph replays against eager runs of the same decode steps (and the CPU).
struct GraphRun {
  double graphVsEager = 1e9; // max |graph - eager| / max |eager| over decode steps
  double graphVsCpu = 1e9;   // the same against CpuExecutor
  size_t graphs = 0;         // graphs the executor captured
  std::string off;           // why graphs are off ("" when on)
};

/// `batch` sequences with prompts of promptLen(i) tokens prefill in one
/// (eager) step, then `decodeSteps` decode steps of every sequence: each
/// step through a GpuExecutor with CUDA graphs, one without, and the CPU;
/// both GPU executors run with `tune`. Token ids stay below the plan's
/// vocabulary.
inline GraphRun compareGraphDecode(const std::string &bytes, DType dtype, int64_t batch,
                                   const std::function<int64_t(int64_t)> &promptLen,
                                   int64_t decodeSteps, int64_t graphMaxBatch = 64,
                                   const engine::GpuTuning &tune = {}) {
  GraphRun r;
  StatusOr<std::shared_ptr<const plan::PlanFile>> p = plan::PlanFile::fromBytes(bytes, "t.plan");
  EXPECT_TRUE(p) << p.status().message();
  if (!p)
    return r;
  const int64_t vocab = (*p)->metadata().model().vocab_size();
  StatusOr<std::unique_ptr<engine::CpuExecutor>> cpu = engine::CpuExecutor::create(*p);
  engine::GpuExecutorOptions o;
  o.dtype = dtype;
  o.logFallbacks = false;
  o.graphMaxBatch = graphMaxBatch;
  o.tuning = tune;
  StatusOr<std::unique_ptr<engine::GpuExecutor>> graph = engine::GpuExecutor::create(*p, o);
  o.cudaGraphs = false;
  StatusOr<std::unique_ptr<engine::GpuExecutor>> eager = engine::GpuExecutor::create(*p, o);
  EXPECT_TRUE(cpu && graph && eager);
  if (!cpu || !graph || !eager)
    return r;
  EXPECT_EQ((*eager)->graphsOffReason(), "--enforce-eager");
  // One host pool: the CPU's cache and the block allocator of both GPU
  // executors (each keeps its own device cache of the same geometry).
  StatusOr<std::unique_ptr<kv::BlockPool>> pool = kv::BlockPool::create(kvConfigOf(**p, 256));
  EXPECT_TRUE(pool);
  if (!pool)
    return r;
  std::vector<kv::SequenceKV> kvs(static_cast<size_t>(batch));
  double worstGE = 0, worstGC = 0;
  for (int64_t step = 0; step <= decodeSteps; ++step) {
    std::vector<kv::StepSequence> b;
    std::vector<int64_t> ids;
    for (int64_t i = 0; i < batch; ++i) {
      const int64_t n = step == 0 ? promptLen(i) : 1;
      b.push_back({&kvs[size_t(i)], n});
      for (int64_t t = 0; t < n; ++t)
        ids.push_back((i * 5 + step * 3 + t * 7) % vocab);
    }
    StatusOr<kv::StepMetadata> meta = kv::prepareStep(**pool, b);
    EXPECT_TRUE(meta) << meta.status().message();
    if (!meta)
      return r;
    Tensor tokens = *Tensor::fromVector<int64_t>({int64_t(ids.size())}, ids);
    StatusOr<Tensor> want = (*cpu)->run(tokens, **pool, *meta);
    StatusOr<Tensor> got = (*graph)->run(tokens, **pool, *meta);
    StatusOr<Tensor> ref = (*eager)->run(tokens, **pool, *meta);
    EXPECT_TRUE(want && got && ref) << "step " << step << ": "
                                    << (!got ? got.status().message()
                                             : !ref ? ref.status().message() : "cpu");
    if (!want || !got || !ref)
      return r;
    if (step == 0)
      continue; // a prefill: eager in both
    Tensor w = want->toF32();
    EXPECT_EQ(got->shape(), ref->shape()) << "step " << step;
    if (got->numElements() != ref->numElements() || got->numElements() != w.numElements())
      return r;
    double maxRef = 0, maxW = 0, errGE = 0, errGC = 0;
    for (int64_t k = 0; k < got->numElements(); ++k) {
      const float g = got->data<float>()[k], e = ref->data<float>()[k], c = w.data<float>()[k];
      if (!std::isfinite(g))
        return r;
      maxRef = std::max(maxRef, double(std::fabs(e)));
      maxW = std::max(maxW, double(std::fabs(c)));
      errGE = std::max(errGE, double(std::fabs(g - e)));
      errGC = std::max(errGC, double(std::fabs(g - c)));
    }
    worstGE = std::max(worstGE, maxRef > 0 ? errGE / maxRef : errGE);
    worstGC = std::max(worstGC, maxW > 0 ? errGC / maxW : errGC);
  }
  r.graphVsEager = worstGE;
  r.graphVsCpu = worstGC;
  r.graphs = (*graph)->numGraphs();
  r.off = (*graph)->graphsOffReason();
  return r;
}

} // namespace accel::rt::test

#endif // ACCEL_TEST_GPU_EXECUTORCOMPARISON_H
