//===- PipelineStats.h - where a pipeline's stages spend a step -*- C++ -*-===//
//
// The schedule's own trace of a pipelined plan (accelc -pp): per stage, the
// time it ran its steps (busy) and the rest of each engine step's wall time
// (idle: waiting for a transfer from the stage before it, the bubble before
// its first micro-batch and after its last), and the micro-batches it ran.
// A pipelined backend records every engine step (PipelineCounters::record);
// Backend::pipelineStats() hands out a snapshot of the totals, which
// /metrics (accel:pp_stage_*) and accel-bench read; ACCEL_PP_TRACE=path
// appends one JSON line per step (pipelineTraceJson).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_ENGINE_PIPELINESTATS_H
#define ACCEL_RUNTIME_ENGINE_PIPELINESTATS_H

#include "core/Status.h"

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace accel::rt::engine {

/// One stage's share of the steps (per step, busy_s + idle_s is the step's
/// wall time).
struct PipelineStageStats {
  double busy_s = 0;
  double idle_s = 0;
  int64_t steps = 0;
  int64_t micro_batches = 0;
};

/// Cumulative totals, stage by stage (stages[s] is stage s).
struct PipelineStats {
  std::vector<PipelineStageStats> stages;
  /// This minus an earlier snapshot `before` (of as many stages): what the
  /// steps in between took.
  PipelineStats since(const PipelineStats &before) const;
  /// Adds `other`'s counts stage by stage (taking its stages when this has none).
  void add(const PipelineStats &other);
};

/// One engine step as the schedule ran it.
struct PipelineStepTrace {
  int64_t step = 0;   // the backend's step count before it (0, 1, ...)
  int64_t tokens = 0; // the step's tokens
  int64_t parts = 0;  // its micro-batches
  double wall_s = 0;  // from handing the step to the stages until all were done
  std::vector<PipelineStageStats> stages; // this step's (steps = 1)
};

/// {"step":n,"tokens":..,"parts":..,"wall_ms":..,"stages":[{"stage":0,"busy_ms":..,
/// "idle_ms":..,"micro_batches":..}, ...]} on one line (no newline).
std::string pipelineTraceJson(const PipelineStepTrace &step);

/// The totals of a pipelined backend: record() after each step (the
/// backend's thread), snapshot() from any thread.
class PipelineCounters {
public:
  explicit PipelineCounters(int stages);
  ~PipelineCounters();
  PipelineCounters(const PipelineCounters &) = delete;
  PipelineCounters &operator=(const PipelineCounters &) = delete;

  /// From now on every record() appends its step's JSON line to `path`
  /// (ACCEL_PP_TRACE; created if missing).
  /// kInvalidArgument naming the path when it cannot be opened.
  Status openTrace(const std::string &path);
  /// The next step's number (PipelineStepTrace::step).
  int64_t nextStep() const;
  /// Adds `step` to the totals (and its line to the trace). kInternal when
  /// the trace cannot be written; the totals count it still.
  Status record(const PipelineStepTrace &step);
  /// record() of the next step from what a backend measured: its tokens,
  /// parts and wall time, and per stage its busy seconds (capped at the
  /// wall time; idle is the rest) and the micro-batches it ran.
  Status recordStep(int64_t tokens, int64_t parts, double wall_s,
                    const std::vector<double> &busy_s,
                    const std::vector<int64_t> &microBatches);
  PipelineStats snapshot() const;

private:
  mutable std::mutex mu_;
  PipelineStats totals_;
  int64_t steps_ = 0;
  std::string tracePath_;
  std::FILE *trace_ = nullptr;
};

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_ENGINE_PIPELINESTATS_H
