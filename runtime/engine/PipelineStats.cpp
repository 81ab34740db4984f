//===- PipelineStats.cpp - where a pipeline's stages spend a step ---------===//
#include "runtime/engine/PipelineStats.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace accel::rt::engine {

PipelineStats PipelineStats::since(const PipelineStats &before) const {
  PipelineStats d = *this;
  for (size_t s = 0; s < d.stages.size() && s < before.stages.size(); ++s) {
    d.stages[s].busy_s -= before.stages[s].busy_s;
    d.stages[s].idle_s -= before.stages[s].idle_s;
    d.stages[s].steps -= before.stages[s].steps;
    d.stages[s].micro_batches -= before.stages[s].micro_batches;
  }
  return d;
}

void PipelineStats::add(const PipelineStats &other) {
  if (stages.size() < other.stages.size())
    stages.resize(other.stages.size());
  for (size_t s = 0; s < other.stages.size(); ++s) {
    stages[s].busy_s += other.stages[s].busy_s;
    stages[s].idle_s += other.stages[s].idle_s;
    stages[s].steps += other.stages[s].steps;
    stages[s].micro_batches += other.stages[s].micro_batches;
  }
}

std::string pipelineTraceJson(const PipelineStepTrace &t) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "{\"step\":%lld,\"tokens\":%lld,\"parts\":%lld,\"wall_ms\":%.4f,",
                (long long)t.step, (long long)t.tokens, (long long)t.parts, t.wall_s * 1e3);
  std::string s = buf;
  s += "\"stages\":[";
  for (size_t i = 0; i < t.stages.size(); ++i) {
    const PipelineStageStats &st = t.stages[i];
    std::snprintf(buf, sizeof buf,
                  "%s{\"stage\":%zu,\"busy_ms\":%.4f,\"idle_ms\":%.4f,\"micro_batches\":%lld}",
                  i ? "," : "", i, st.busy_s * 1e3, st.idle_s * 1e3,
                  (long long)st.micro_batches);
    s += buf;
  }
  return s + "]}";
}

PipelineCounters::PipelineCounters(int stages) { totals_.stages.resize(size_t(stages)); }

PipelineCounters::~PipelineCounters() {
  if (trace_)
    std::fclose(trace_);
}

Status PipelineCounters::openTrace(const std::string &path) {
  std::FILE *f = std::fopen(path.c_str(), "a");
  if (!f)
    return invalidArgument("ACCEL_PP_TRACE: cannot open '" + path + "' to append to it: " +
                           std::strerror(errno));
  std::lock_guard<std::mutex> lock(mu_);
  if (trace_)
    std::fclose(trace_);
  trace_ = f;
  tracePath_ = path;
  return Status::ok();
}

int64_t PipelineCounters::nextStep() const {
  std::lock_guard<std::mutex> lock(mu_);
  return steps_;
}

Status PipelineCounters::record(const PipelineStepTrace &step) {
  std::lock_guard<std::mutex> lock(mu_);
  ++steps_;
  for (size_t s = 0; s < step.stages.size() && s < totals_.stages.size(); ++s) {
    PipelineStageStats &t = totals_.stages[s];
    t.busy_s += step.stages[s].busy_s;
    t.idle_s += step.stages[s].idle_s;
    t.steps += step.stages[s].steps;
    t.micro_batches += step.stages[s].micro_batches;
  }
  if (!trace_)
    return Status::ok();
  const std::string line = pipelineTraceJson(step) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), trace_) != line.size() || std::fflush(trace_) != 0)
    return Status(StatusCode::kInternal,
                  "ACCEL_PP_TRACE: cannot append to '" + tracePath_ + "': " + std::strerror(errno));
  return Status::ok();
}

Status PipelineCounters::recordStep(int64_t tokens, int64_t parts, double wall_s,
                                    const std::vector<double> &busy_s,
                                    const std::vector<int64_t> &microBatches) {
  PipelineStepTrace trace;
  trace.step = nextStep();
  trace.tokens = tokens;
  trace.parts = parts;
  trace.wall_s = wall_s;
  for (size_t s = 0; s < busy_s.size(); ++s) {
    PipelineStageStats st;
    st.busy_s = std::min(busy_s[s], wall_s);
    st.idle_s = wall_s - st.busy_s;
    st.steps = 1;
    st.micro_batches = s < microBatches.size() ? microBatches[s] : 0;
    trace.stages.push_back(st);
  }
  return record(trace);
}

PipelineStats PipelineCounters::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return totals_;
}

} // namespace accel::rt::engine
