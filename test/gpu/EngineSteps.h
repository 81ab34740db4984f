//===- EngineSteps.h - two engines stepped alike, their logits compared -*- C++ -*-===//
//
// The partitioned-plan tests (TpGpuExecutorTest, PipelineGpuTest) run the
// same sequences through a GPU engine and a CPU engine step by step: a
// ragged prefill of three prompts, then decode steps of all three, and take
// the largest relative difference of any step's logits.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_TEST_GPU_ENGINESTEPS_H
#define ACCEL_TEST_GPU_ENGINESTEPS_H

#include "runtime/engine/Engine.h"
#include "runtime/kv/SequenceKV.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace accel::rt::test {

/// max |a - b| / max(floor, max |b|).
inline double relDiff(const Tensor &a, const Tensor &b, double floor = 1.0) {
  EXPECT_EQ(a.shape(), b.shape());
  if (a.shape() != b.shape())
    return 1e30;
  Tensor fa = a.toF32(), fb = b.toF32();
  double diff = 0, scale = floor;
  for (int64_t i = 0; i < fa.numElements(); ++i) {
    diff = std::max(diff, double(std::fabs(fa.data<float>()[i] - fb.data<float>()[i])));
    scale = std::max(scale, double(std::fabs(fb.data<float>()[i])));
  }
  return diff / scale;
}

/// What compareSteps feeds: three prompts, the first decode tokens, and how
/// the next ones follow (next = (next * multiplier + step + i) % vocab).
struct StepScript {
  std::vector<std::vector<int64_t>> prompts;
  std::vector<int64_t> first;
  int64_t multiplier = 7;
  int64_t vocab = 1;
  double floor = 1.0; // relDiff's
};

/// The script through both engines: a ragged prefill, then `decodeSteps`
/// decode steps of every sequence; the worst relDiff of any step (1e30
/// when a step fails). The sequences are released at the end.
inline double compareSteps(engine::Engine &gpu, engine::Engine &cpu, int decodeSteps,
                           const StepScript &script) {
  const size_t n = script.prompts.size();
  std::vector<kv::SequenceKV> gs(n), cs(n);
  std::vector<engine::BatchSequence> gb, cb;
  for (size_t i = 0; i < n; ++i) {
    gb.push_back({&gs[i], script.prompts[i].data(), int64_t(script.prompts[i].size())});
    cb.push_back({&cs[i], script.prompts[i].data(), int64_t(script.prompts[i].size())});
  }
  StatusOr<Tensor> g = gpu.stepBatch(gb), c = cpu.stepBatch(cb);
  EXPECT_TRUE(g.isOk()) << g.status().message();
  EXPECT_TRUE(c.isOk()) << c.status().message();
  if (!g || !c)
    return 1e30;
  double worst = relDiff(*g, *c, script.floor);
  std::vector<int64_t> next = script.first;
  for (int step = 0; step < decodeSteps; ++step) {
    gb.clear();
    cb.clear();
    for (size_t i = 0; i < n; ++i) {
      gb.push_back({&gs[i], &next[i], 1});
      cb.push_back({&cs[i], &next[i], 1});
    }
    g = gpu.stepBatch(gb);
    c = cpu.stepBatch(cb);
    EXPECT_TRUE(g.isOk()) << "decode step " << step << ": " << g.status().message();
    EXPECT_TRUE(c.isOk()) << c.status().message();
    if (!g || !c)
      return 1e30;
    worst = std::max(worst, relDiff(*g, *c, script.floor));
    for (size_t i = 0; i < n; ++i)
      next[i] = (next[i] * script.multiplier + step + int64_t(i)) % script.vocab;
  }
  for (size_t i = 0; i < n; ++i) {
    EXPECT_TRUE(gs[i].release(gpu.pool()).isOk());
    EXPECT_TRUE(cs[i].release(cpu.pool()).isOk());
  }
  return worst;
}

} // namespace accel::rt::test

#endif // ACCEL_TEST_GPU_ENGINESTEPS_H
