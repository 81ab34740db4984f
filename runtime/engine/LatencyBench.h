//===- LatencyBench.h - decode and prefill latency of a plan ----*- C++ -*-===//
//
// What `accel-bench` measures (bench/llama8b/run.sh drives it on the GPU
// machine, next to HF transformers): for each batch size B, B random prompts
// of `inputLen` tokens prefilled in one engine step, then `outputLen - 1`
// decode steps of B tokens (greedy: the argmax of each row), each step timed
// on the wall clock; and the latency of one prefill of `prefillLen` tokens.
// The steps are Engine::stepBatch's, as the serving scheduler runs them
// (LogitsRows::kLastGreedy, the KV cache paged), and synchronous: a step's
// time includes choosing its tokens (on the device for GPU plans, where HF's
// generate() chooses them too) and their reaching the host.
//
// A pipelined plan (accelc -pp) also reports each stage's busy and idle
// time per step (Engine::pipelineStats, runtime/engine/PipelineStats.h):
// of the prefill and of the decode steps apart.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_ENGINE_LATENCYBENCH_H
#define ACCEL_RUNTIME_ENGINE_LATENCYBENCH_H

#include "runtime/engine/Engine.h"

#include <functional>
#include <string>
#include <vector>

namespace accel::rt::engine {

struct LatencyBenchOptions {
  std::vector<int64_t> batchSizes{1, 16, 64};
  int64_t inputLen = 128;
  /// Generated tokens per sequence: the first from the prefill, the rest
  /// from outputLen - 1 decode steps.
  int64_t outputLen = 64;
  /// One prompt of this many tokens, timed alone; 0 skips it.
  int64_t prefillLen = 2048;
  /// Untimed runs of each configuration first (warm-up: allocator caches,
  /// cuBLASLt heuristics, CUDA Graph capture).
  int warmup = 1;
  uint64_t seed = 1;
  /// K > 0: after each decode step, also time one speculative verification
  /// step (the last token and K random guesses a sequence, K+1 logits rows
  /// each, greedy), then cut the sequences back (the rollback of rejected
  /// guesses): the cost of verifying K tokens next to a one-token step.
  int64_t verifyTokens = 0;
};

/// One pipeline stage's share of a kind of step, per step (the mean over
/// the timed steps of that kind).
struct StageLatency {
  int stage = 0;
  double busyMs = 0, idleMs = 0;
  double microBatches = 0;
};

struct DecodeLatency {
  int64_t batch = 0;
  double prefillMs = 0;     // the B x inputLen prefill step
  double stepMsMedian = 0;  // one decode step (engine step, greedy tokens on the host)
  double stepMsMean = 0;
  double stepMsMin = 0;
  int64_t steps = 0;
  double verifyMsMedian = 0; // LatencyBenchOptions::verifyTokens > 0: one verification step
  /// A pipelined plan: each stage in the prefill step and per decode step.
  std::vector<StageLatency> prefillStages, decodeStages;
};

struct LatencyReport {
  std::vector<DecodeLatency> decode;
  int64_t prefillTokens = 0;
  double prefillMs = 0;  // median of the timed prefills of prefillTokens
  std::vector<StageLatency> prefillStages; // a pipelined plan: per timed prefill
};

/// KV-cache blocks of `blockSize` tokens the benchmark needs at most.
int64_t latencyBenchKvBlocks(const LatencyBenchOptions &options, int64_t blockSize);

/// Runs the benchmark on `engine`; `progress` (may be empty) gets one line
/// per finished configuration. kInvalidArgument for empty or non-positive
/// sizes and for sequences longer than the engine's maxModelLen.
StatusOr<LatencyReport> runLatencyBench(Engine &engine, const LatencyBenchOptions &options,
                                        const std::function<void(const std::string &)> &progress);

/// The report as one JSON object (the options echoed, every number in ms).
std::string latencyReportJson(const LatencyReport &report, const LatencyBenchOptions &options);

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_ENGINE_LATENCYBENCH_H
