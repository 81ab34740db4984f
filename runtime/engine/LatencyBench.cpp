//===- LatencyBench.cpp - decode and prefill latency of a plan -------------===//
#include "runtime/engine/LatencyBench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>

namespace accel::rt::engine {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Sequences of one configuration, given back to the pool whatever happens.
struct Batch {
  kv::BlockPool &pool;
  std::vector<kv::SequenceKV> seqs;
  std::vector<std::vector<int64_t>> ids;
  Batch(kv::BlockPool &pool, size_t n) : pool(pool), seqs(n), ids(n) {}
  ~Batch() {
    for (kv::SequenceKV &s : seqs)
      (void)s.release(pool);
  }
  std::vector<BatchSequence> entries(int64_t from) {
    std::vector<BatchSequence> out;
    for (size_t i = 0; i < seqs.size(); ++i)
      out.push_back({&seqs[i], ids[i].data() + from, int64_t(ids[i].size()) - from});
    return out;
  }
};

/// Appends each sequence's greedy token (stepBatch's kLastGreedy result).
void appendTokens(const Tensor &tokens, Batch &b) {
  for (size_t i = 0; i < b.ids.size(); ++i)
    b.ids[i].push_back(tokens.data<int64_t>()[i]);
}

/// A pipelined plan's counters over some steps (nothing for other plans):
/// add() the steps between begin() and end().
struct StageMeter {
  const Engine &e;
  std::optional<PipelineStats> at;
  PipelineStats sum;
  void begin() { at = e.pipelineStats(); }
  void end() {
    if (at)
      sum.add(e.pipelineStats()->since(*at));
  }
};

/// `total`'s stages per one of its `steps` steps.
std::vector<StageLatency> perStep(const PipelineStats &total, int64_t steps) {
  std::vector<StageLatency> out;
  const double n = double(std::max<int64_t>(steps, 1));
  for (size_t s = 0; s < total.stages.size(); ++s) {
    const PipelineStageStats &t = total.stages[s];
    out.push_back({int(s), t.busy_s * 1e3 / n, t.idle_s * 1e3 / n, double(t.micro_batches) / n});
  }
  return out;
}

struct OneRun {
  double prefillMs = 0;
  std::vector<double> steps, verify;
  std::vector<StageLatency> prefillStages, decodeStages;
};

StatusOr<OneRun> runDecode(Engine &e, int64_t batch, const LatencyBenchOptions &o,
                           std::mt19937_64 &rng) {
  Batch b(e.pool(), size_t(batch));
  std::uniform_int_distribution<int64_t> tok(0, e.vocabSize() - 1);
  for (auto &ids : b.ids)
    for (int64_t t = 0; t < o.inputLen; ++t)
      ids.push_back(tok(rng));
  OneRun r;
  StageMeter prefill{e}, decode{e};
  prefill.begin();
  Clock::time_point t0 = Clock::now();
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor next, e.stepBatch(b.entries(0), LogitsRows::kLastGreedy));
  r.prefillMs = msSince(t0);
  prefill.end();
  appendTokens(next, b);
  for (int64_t s = 1; s < o.outputLen; ++s) {
    const int64_t from = int64_t(b.ids[0].size()) - 1;
    decode.begin();
    t0 = Clock::now();
    ACCEL_RT_ASSIGN_OR_RETURN(next, e.stepBatch(b.entries(from), LogitsRows::kLastGreedy));
    r.steps.push_back(msSince(t0));
    decode.end();
    appendTokens(next, b);
    if (o.verifyTokens > 0) {
      // A verification step: K+1 rows a sequence, then the guesses' KV
      // given back, as when every guess is rejected.
      const int64_t k = o.verifyTokens;
      std::vector<std::vector<int64_t>> ids(b.seqs.size());
      std::vector<BatchSequence> entries;
      std::vector<int64_t> before;
      for (size_t i = 0; i < b.seqs.size(); ++i) {
        ids[i].push_back(b.ids[i].back());
        for (int64_t j = 0; j < k; ++j)
          ids[i].push_back(tok(rng));
        before.push_back(b.seqs[i].numTokens());
        entries.push_back({&b.seqs[i], ids[i].data(), k + 1, k + 1});
      }
      t0 = Clock::now();
      ACCEL_RT_RETURN_IF_ERROR(e.stepBatch(entries, LogitsRows::kLastGreedy).status());
      r.verify.push_back(msSince(t0));
      for (size_t i = 0; i < b.seqs.size(); ++i)
        ACCEL_RT_RETURN_IF_ERROR(b.seqs[i].truncate(e.pool(), before[i]));
    }
  }
  r.prefillStages = perStep(prefill.sum, 1);
  r.decodeStages = perStep(decode.sum, int64_t(r.steps.size()));
  return r;
}

/// "batch 3: pipeline stage 0: prefill busy 1.200 ms, idle 0.400 ms
/// (micro-batches: 2); decode step busy ..." lines, one per stage.
void stageLines(const std::string &what, const std::vector<StageLatency> &first,
                const char *firstName, const std::vector<StageLatency> &second,
                const char *secondName, const std::function<void(const std::string &)> &progress) {
  char line[320];
  for (size_t s = 0; s < first.size(); ++s) {
    int n = std::snprintf(line, sizeof line,
                          "%s: pipeline stage %d: %s busy %.3f ms, idle %.3f ms "
                          "(micro-batches: %.3g)",
                          what.c_str(), first[s].stage, firstName, first[s].busyMs,
                          first[s].idleMs, first[s].microBatches);
    if (s < second.size() && n > 0 && size_t(n) < sizeof line)
      std::snprintf(line + n, sizeof line - size_t(n),
                    "; %s busy %.3f ms, idle %.3f ms (micro-batches: %.3g)", secondName,
                    second[s].busyMs, second[s].idleMs, second[s].microBatches);
    progress(line);
  }
}

StatusOr<double> runPrefill(Engine &e, int64_t len, std::mt19937_64 &rng,
                            PipelineStats *stages = nullptr) {
  Batch b(e.pool(), 1);
  std::uniform_int_distribution<int64_t> tok(0, e.vocabSize() - 1);
  for (int64_t t = 0; t < len; ++t)
    b.ids[0].push_back(tok(rng));
  StageMeter meter{e};
  meter.begin();
  Clock::time_point t0 = Clock::now();
  ACCEL_RT_RETURN_IF_ERROR(e.stepBatch(b.entries(0), LogitsRows::kLastGreedy).status());
  const double ms = msSince(t0);
  meter.end();
  if (stages)
    stages->add(meter.sum);
  return ms;
}

} // namespace

int64_t latencyBenchKvBlocks(const LatencyBenchOptions &o, int64_t blockSize) {
  int64_t most = 0;
  for (int64_t b : o.batchSizes)
    most = std::max(most, b * ((o.inputLen + o.outputLen + o.verifyTokens + blockSize - 1) /
                               blockSize));
  return std::max(most, (o.prefillLen + blockSize - 1) / blockSize);
}

StatusOr<LatencyReport> runLatencyBench(Engine &e, const LatencyBenchOptions &o,
                                        const std::function<void(const std::string &)> &progress) {
  auto bad = [](const std::string &m) { return Status(StatusCode::kInvalidArgument, m); };
  if (o.batchSizes.empty() && o.prefillLen == 0)
    return bad("the benchmark has nothing to run: no batch sizes and no prefill");
  for (int64_t b : o.batchSizes)
    if (b < 1)
      return bad("batch size " + std::to_string(b) + " is not positive");
  if (!o.batchSizes.empty() && (o.inputLen < 1 || o.outputLen < 2))
    return bad("the decode benchmark needs an input length >= 1 and an output length >= 2, got " +
               std::to_string(o.inputLen) + " and " + std::to_string(o.outputLen));
  if (o.verifyTokens < 0 || o.verifyTokens > 16)
    return bad("the verification step's guesses must be between 0 and 16, got " +
               std::to_string(o.verifyTokens));
  if (o.inputLen + o.outputLen + o.verifyTokens > e.maxModelLen() ||
      o.prefillLen > e.maxModelLen())
    return bad("the benchmark's sequences (" + std::to_string(o.inputLen + o.outputLen) +
               " and " + std::to_string(o.prefillLen) + " tokens) do not fit the context of " +
               std::to_string(e.maxModelLen()) + " tokens (--max-model-len)");
  if (o.prefillLen < 0 || o.warmup < 0)
    return bad("the prefill length and the warm-up count must not be negative");

  std::mt19937_64 rng(o.seed);
  LatencyReport report;
  for (int64_t batch : o.batchSizes) {
    for (int w = 0; w < o.warmup; ++w)
      ACCEL_RT_RETURN_IF_ERROR(runDecode(e, batch, o, rng).status());
    ACCEL_RT_ASSIGN_OR_RETURN(OneRun r, runDecode(e, batch, o, rng));
    DecodeLatency d;
    d.batch = batch;
    d.prefillMs = r.prefillMs;
    d.steps = int64_t(r.steps.size());
    d.stepMsMedian = median(r.steps);
    d.stepMsMean = std::accumulate(r.steps.begin(), r.steps.end(), 0.0) / double(d.steps);
    d.stepMsMin = *std::min_element(r.steps.begin(), r.steps.end());
    d.verifyMsMedian = median(r.verify);
    d.prefillStages = r.prefillStages;
    d.decodeStages = r.decodeStages;
    report.decode.push_back(d);
    if (progress) {
      char line[256];
      std::snprintf(line, sizeof line,
                    "batch %lld: prefill %lld x %lld tokens %.2f ms; decode step median %.3f ms "
                    "(mean %.3f, min %.3f) over %lld steps",
                    (long long)batch, (long long)batch, (long long)o.inputLen, d.prefillMs,
                    d.stepMsMedian, d.stepMsMean, d.stepMsMin,
                    (long long)d.steps);
      progress(line);
      if (o.verifyTokens > 0) {
        std::snprintf(line, sizeof line,
                      "batch %lld: verification step (%lld tokens a sequence) median %.3f ms, "
                      "%.2fx the decode step",
                      (long long)batch, (long long)(o.verifyTokens + 1), d.verifyMsMedian,
                      d.stepMsMedian > 0 ? d.verifyMsMedian / d.stepMsMedian : 0.0);
        progress(line);
      }
      stageLines("batch " + std::to_string(batch), d.prefillStages, "prefill", d.decodeStages,
                 "decode step", progress);
    }
  }
  if (o.prefillLen > 0) {
    for (int w = 0; w < o.warmup; ++w)
      ACCEL_RT_RETURN_IF_ERROR(runPrefill(e, o.prefillLen, rng).status());
    std::vector<double> t;
    PipelineStats stages;
    for (int i = 0; i < 3; ++i) {
      ACCEL_RT_ASSIGN_OR_RETURN(double ms, runPrefill(e, o.prefillLen, rng, &stages));
      t.push_back(ms);
    }
    report.prefillTokens = o.prefillLen;
    report.prefillMs = median(t);
    report.prefillStages = perStep(stages, 3);
    if (progress) {
      progress("prefill " + std::to_string(o.prefillLen) + " tokens: " +
               std::to_string(report.prefillMs) + " ms (median of 3)");
      stageLines("prefill " + std::to_string(o.prefillLen) + " tokens", report.prefillStages,
                 "per step (mean of 3)", {}, "", progress);
    }
  }
  return report;
}

namespace {
/// [{"stage": 0, "<a>_busy_ms": .., "<a>_idle_ms": .., "<a>_micro_batches": .., <b> too}, ..]
std::string stagesJson(const std::vector<StageLatency> &a, const char *aName,
                       const std::vector<StageLatency> &b, const char *bName) {
  std::string s = "[";
  char buf[320];
  for (size_t i = 0; i < a.size(); ++i) {
    std::snprintf(buf, sizeof buf,
                  "%s{\"stage\": %d, \"%s_busy_ms\": %.4f, \"%s_idle_ms\": %.4f, "
                  "\"%s_micro_batches\": %.4g",
                  i ? ", " : "", a[i].stage, aName, a[i].busyMs, aName, a[i].idleMs, aName,
                  a[i].microBatches);
    s += buf;
    if (i < b.size()) {
      std::snprintf(buf, sizeof buf,
                    ", \"%s_busy_ms\": %.4f, \"%s_idle_ms\": %.4f, \"%s_micro_batches\": %.4g",
                    bName, b[i].busyMs, bName, b[i].idleMs, bName, b[i].microBatches);
      s += buf;
    }
    s += "}";
  }
  return s + "]";
}
} // namespace

std::string latencyReportJson(const LatencyReport &r, const LatencyBenchOptions &o) {
  std::string s = "{\"input_len\": " + std::to_string(o.inputLen) +
                  ", \"output_len\": " + std::to_string(o.outputLen) + ", \"decode\": [";
  char buf[512];
  for (size_t i = 0; i < r.decode.size(); ++i) {
    const DecodeLatency &d = r.decode[i];
    std::snprintf(buf, sizeof buf,
                  "%s{\"batch\": %lld, \"prefill_ms\": %.4f, \"decode_ms_per_step\": %.4f, "
                  "\"decode_ms_mean\": %.4f, \"decode_ms_min\": %.4f, \"steps\": %lld, "
                  "\"verify_tokens\": %lld, \"verify_ms_per_step\": %.4f}",
                  i ? ", " : "", (long long)d.batch, d.prefillMs, d.stepMsMedian, d.stepMsMean,
                  d.stepMsMin, (long long)d.steps, (long long)o.verifyTokens, d.verifyMsMedian);
    s += buf;
    if (!d.decodeStages.empty()) {
      s.pop_back(); // the closing brace
      s += ", \"pp_stages\": " +
           stagesJson(d.prefillStages, "prefill", d.decodeStages, "decode") + "}";
    }
  }
  std::snprintf(buf, sizeof buf, "], \"prefill_tokens\": %lld, \"prefill_ms\": %.4f",
                (long long)r.prefillTokens, r.prefillMs);
  s += buf;
  if (!r.prefillStages.empty())
    s += ", \"prefill_pp_stages\": " + stagesJson(r.prefillStages, "prefill", {}, "");
  return s + "}";
}

} // namespace accel::rt::engine
