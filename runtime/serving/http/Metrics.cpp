//===- Metrics.cpp - Prometheus metrics of the server ---------------------===//
#include "runtime/serving/http/Metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace accel::rt::server {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double v) {
  size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  ++counts_[i];
  ++count_;
  sum_ += v;
}

std::vector<int64_t> Histogram::cumulativeCounts() const {
  std::vector<int64_t> out(bounds_.size());
  int64_t run = 0;
  for (size_t i = 0; i < bounds_.size(); ++i)
    out[i] = run += counts_[i];
  return out;
}

namespace {
// vLLM's buckets, with finer low ends: a small model on a CPU answers in
// milliseconds.
std::vector<double> latencyBuckets() {
  return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
          2.5,   5.0,   7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
}
std::vector<double> itlBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3,
          0.4,   0.5,    0.75,  1.0,  2.5,   5.0,  7.5,   10.0, 20.0, 40.0, 80.0};
}
std::vector<double> e2eBuckets() {
  return {0.01, 0.05, 0.1,  0.3,  0.5,  0.8,  1.0,   1.5,   2.0,   2.5,   5.0,  10.0,
          15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
}
std::vector<double> tokenBuckets() {
  return {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000};
}

std::string num(double v) {
  if (std::isinf(v))
    return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v))
    return "NaN";
  char buf[40];
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.1f", v);
  else
    std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

/// Label values escape backslash, quote and newline.
std::string escapeLabel(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"')
      out += '\\', out += c;
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

struct Writer {
  std::string out;
  std::string model; // label set: model_name="..."

  void header(const char *name, const char *type, const char *help) {
    out += "# HELP ";
    out += name;
    out += ' ';
    out += help;
    out += "\n# TYPE ";
    out += name;
    out += ' ';
    out += type;
    out += '\n';
  }
  void sample(const std::string &name, double v, const std::string &extraLabels = "") {
    out += name + "{model_name=\"" + model + "\"" + extraLabels + "} " + num(v) + "\n";
  }
  void scalar(const char *name, const char *type, const char *help, double v) {
    header(name, type, help);
    sample(name, v);
  }
  void histogram(const char *name, const char *help, const Histogram &h) {
    header(name, "histogram", help);
    std::vector<int64_t> c = h.cumulativeCounts();
    for (size_t i = 0; i < c.size(); ++i)
      sample(std::string(name) + "_bucket", double(c[i]), ",le=\"" + num(h.bounds()[i]) + "\"");
    sample(std::string(name) + "_bucket", double(h.count()), ",le=\"+Inf\"");
    sample(std::string(name) + "_sum", h.sum());
    sample(std::string(name) + "_count", double(h.count()));
  }
};
} // namespace

Metrics::Metrics(std::string modelName)
    : model_(std::move(modelName)), queue_(latencyBuckets()), ttft_(latencyBuckets()),
      itl_(itlBuckets()), e2e_(e2eBuckets()), promptTokens_(tokenBuckets()),
      generationTokens_(tokenBuckets()) {
  for (const char *r : {"stop", "length", "abort", "error"})
    finished_[r] = 0;
  for (const char *r : {"admission", "queue_full"})
    rejected_[r] = 0;
}

void Metrics::observeQueueTime(double s) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.observe(s);
}
void Metrics::observeTtft(double s) {
  std::lock_guard<std::mutex> lock(mu_);
  ttft_.observe(s);
}
void Metrics::observeItl(double s) {
  std::lock_guard<std::mutex> lock(mu_);
  itl_.observe(s);
}
void Metrics::observeE2e(double s) {
  std::lock_guard<std::mutex> lock(mu_);
  e2e_.observe(s);
}
void Metrics::requestFinished(std::string_view reason, int64_t promptTokens,
                              int64_t completionTokens) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = finished_.find(reason);
  if (it == finished_.end())
    it = finished_.emplace(std::string(reason), 0).first;
  ++it->second;
  promptTokens_.observe(double(promptTokens));
  generationTokens_.observe(double(completionTokens));
}
void Metrics::requestRejected(std::string_view reason) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = rejected_.find(reason);
  if (it == rejected_.end())
    it = rejected_.emplace(std::string(reason), 0).first;
  ++it->second;
}
void Metrics::httpResponse(int status) {
  std::lock_guard<std::mutex> lock(mu_);
  ++responses_[status];
}

std::string Metrics::render(const serve::SchedulerStats &s, const ServerGauges &g) const {
  std::lock_guard<std::mutex> lock(mu_);
  Writer w;
  w.model = escapeLabel(model_);
  w.scalar("accel:num_requests_running", "gauge",
           "Sequences in the running batch (scheduler).", double(s.running));
  w.scalar("accel:num_requests_waiting", "gauge",
           "Requests waiting for the running batch (scheduler queue).", double(s.waiting));
  double usage = s.kvBlocksTotal > 0 ? double(s.kvBlocksUsed) / double(s.kvBlocksTotal) : 0.0;
  w.scalar("accel:kv_cache_usage_perc", "gauge", "KV-cache usage: 1 means 100 percent.", usage);
  w.scalar("accel:kv_cache_blocks_used", "gauge", "KV-cache blocks in use.",
           double(s.kvBlocksUsed));
  w.scalar("accel:kv_cache_blocks_total", "gauge", "KV-cache blocks in the pool.",
           double(s.kvBlocksTotal));
  w.scalar("accel:prefix_cache_queries_total", "counter",
           "Prompt tokens looked up in the prefix cache.", double(s.prefixCacheQueries));
  w.scalar("accel:prefix_cache_hits_total", "counter",
           "Prompt tokens found in the prefix cache.", double(s.prefixCacheHits));
  w.scalar("accel:prompt_tokens_total", "counter", "Prefill tokens processed.",
           double(s.promptTokensTotal));
  w.scalar("accel:generation_tokens_total", "counter", "Generation tokens processed.",
           double(s.generationTokensTotal));
  w.scalar("accel:num_preemptions_total", "counter",
           "Sequences preempted (KV blocks freed, recomputed later).",
           double(s.preemptionsTotal));
  w.scalar("accel:engine_steps_total", "counter", "Engine steps run by the scheduler.",
           double(s.stepsTotal));
  w.scalar("accel:spec_decode_num_draft_tokens_total", "counter",
           "Speculative decoding: draft tokens proposed.", double(s.specDraftTokens));
  w.scalar("accel:spec_decode_num_accepted_tokens_total", "counter",
           "Speculative decoding: draft tokens the target kept.", double(s.specAcceptedTokens));
  w.scalar("accel:spec_decode_draft_acceptance_rate", "gauge",
           "Speculative decoding: accepted / proposed draft tokens (0 before any).",
           s.specDraftTokens ? double(s.specAcceptedTokens) / double(s.specDraftTokens) : 0.0);
  w.scalar("accel:step_seconds_total", "counter",
           "Wall time of the scheduler's engine steps: scheduling, the engine run, sampling, "
           "stop checks, detokenisation and streaming.",
           s.stepSecondsTotal);
  w.scalar("accel:step_engine_seconds_total", "counter",
           "The part of accel:step_seconds_total spent inside the engine's step.",
           s.engineSecondsTotal);
  w.scalar("accel:step_host_overhead_ratio", "gauge",
           "Step wall time per engine time, minus one, over the last 256 engine steps.",
           s.hostOverhead());

  if (s.pipeline) {
    // A pipelined plan: each stage's share of the engine steps.
    const std::vector<engine::PipelineStageStats> &st = s.pipeline->stages;
    auto perStage = [&](const char *name, const char *help, auto value) {
      w.header(name, "counter", help);
      for (size_t i = 0; i < st.size(); ++i)
        w.sample(name, double(value(st[i])), ",stage=\"" + std::to_string(i) + "\"");
    };
    perStage("accel:pp_stage_busy_seconds_total",
             "Pipeline stages: time running the stage's steps (its first rank), waits for "
             "transfers from the stage before excluded.",
             [](const engine::PipelineStageStats &x) { return x.busy_s; });
    perStage("accel:pp_stage_idle_seconds_total",
             "Pipeline stages: the rest of each engine step's wall time (the bubble: waiting for "
             "the stage before, before the stage's first micro-batch and after its last).",
             [](const engine::PipelineStageStats &x) { return x.idle_s; });
    perStage("accel:pp_stage_micro_batches_total",
             "Pipeline stages: micro-batches run (an engine step is split into up to one per "
             "stage).",
             [](const engine::PipelineStageStats &x) { return x.micro_batches; });
  }

  w.header("accel:request_success_total", "counter",
           "Requests finished, by finish reason (abort: the client went away).");
  for (const auto &[reason, n] : finished_)
    w.sample("accel:request_success_total", double(n),
             ",finished_reason=\"" + escapeLabel(reason) + "\"");
  w.header("accel:request_rejected_total", "counter",
           "Requests answered 429, by reason (admission: the adaptive limit; queue_full: the "
           "scheduler's waiting queue).");
  for (const auto &[reason, n] : rejected_)
    w.sample("accel:request_rejected_total", double(n), ",reason=\"" + escapeLabel(reason) + "\"");
  w.header("accel:http_responses_total", "counter", "HTTP answers by status code.");
  for (const auto &[code, n] : responses_)
    w.sample("accel:http_responses_total", double(n), ",code=\"" + std::to_string(code) + "\"");

  w.histogram("accel:time_to_first_token_seconds",
              "Arrival of the request to its first generated token.", ttft_);
  w.histogram("accel:inter_token_latency_seconds",
              "Time between consecutive generated tokens of a request.", itl_);
  w.histogram("accel:e2e_request_latency_seconds", "Arrival of the request to its last event.",
              e2e_);
  w.histogram("accel:request_queue_time_seconds",
              "Arrival of the request to its submission to the scheduler (parse, tokenize, "
              "admission); time in the scheduler's waiting queue is part of time to first token.",
              queue_);
  w.histogram("accel:request_prompt_tokens", "Prompt tokens per finished request.",
              promptTokens_);
  w.histogram("accel:request_generation_tokens", "Generated tokens per finished request.",
              generationTokens_);

  w.scalar("accel:admission_limit", "gauge",
           "Adaptive limit on requests in flight (running + waiting).",
           double(g.admission.limit));
  w.scalar("accel:admission_in_flight", "gauge", "Requests holding an admission slot.",
           double(g.admission.inFlight));
  w.scalar("accel:admission_window_ttft_p95_seconds", "gauge",
           "p95 time to first token of the last admission window.", g.admission.lastWindowP95);
  w.scalar("accel:http_open_connections", "gauge", "Open HTTP connections.",
           double(g.openConnections));
  return std::move(w.out);
}

} // namespace accel::rt::server
