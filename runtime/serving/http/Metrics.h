//===- Metrics.h - Prometheus metrics of the server -------------*- C++ -*-===//
//
// What GET /metrics answers, in the Prometheus text format (version 0.0.4).
// The names follow vLLM's (vllm:time_to_first_token_seconds ->
// accel:time_to_first_token_seconds, ...) so that dashboards carry over;
// every series has the label model_name. docs/serving.md lists them.
//
// Latencies are observed by the server (OpenAiApi) as events arrive; the
// scheduler's counters and gauges (running, waiting, KV blocks, prefix
// cache, token totals) are read from SchedulerStats at render time.
//
// Thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_HTTP_METRICS_H
#define ACCEL_RUNTIME_SERVING_HTTP_METRICS_H

#include "runtime/serving/Scheduler.h"
#include "runtime/serving/http/Admission.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace accel::rt::server {

/// A cumulative histogram with fixed upper bounds (+Inf implied).
class Histogram {
public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);
  const std::vector<double> &bounds() const { return bounds_; }
  /// counts()[i]: observations <= bounds()[i] (cumulative); count(): all.
  std::vector<int64_t> cumulativeCounts() const;
  int64_t count() const { return count_; }
  double sum() const { return sum_; }

private:
  std::vector<double> bounds_;
  std::vector<int64_t> counts_; // per bucket, not cumulative; last = +Inf
  int64_t count_ = 0;
  double sum_ = 0.0;
};

class Metrics {
public:
  explicit Metrics(std::string modelName);

  /// Arrival at the server until the scheduler took the request (parse,
  /// tokenization, admission).
  void observeQueueTime(double seconds);
  void observeTtft(double seconds);
  void observeItl(double seconds);
  void observeE2e(double seconds);
  /// A request's last event: reason is stop, length, abort or error.
  void requestFinished(std::string_view reason, int64_t promptTokens, int64_t completionTokens);
  /// Answered 429: reason is admission or queue_full.
  void requestRejected(std::string_view reason);
  /// Every HTTP answer by status code.
  void httpResponse(int status);

  struct ServerGauges {
    int64_t openConnections = 0;
    AdmissionSnapshot admission;
  };
  std::string render(const serve::SchedulerStats &stats, const ServerGauges &gauges) const;

private:
  std::string model_;
  mutable std::mutex mu_;
  Histogram queue_, ttft_, itl_, e2e_, promptTokens_, generationTokens_;
  std::map<std::string, int64_t, std::less<>> finished_, rejected_;
  std::map<int, int64_t> responses_;
};

} // namespace accel::rt::server

#endif // ACCEL_RUNTIME_SERVING_HTTP_METRICS_H
