//===- Admission.h - bounded in-flight requests, adaptive limit -*- C++ -*-===//
//
// Decides, before a request reaches the scheduler, whether the server takes
// it or answers 429 (with Retry-After). A request holds a slot from
// admission until its last event; the number of slots is an adaptive limit
// between `minLimit` (--max-num-seqs: a full batch is always allowed) and
// `maxInFlight` (--max-num-seqs + --max-waiting: the bounded queue).
//
// The limit moves by AIMD once per `window` observed times to first token:
//   - congested (the window's p95 time to first token is above
//     targetTtftP95, or the KV cache is above kvHighWatermark while
//     requests wait for it): limit *= decrease (not below minLimit);
//   - otherwise, when the limit was reached during the window (demand is
//     there): limit += max(1, limit / 8) (not above maxInFlight).
// It starts at maxInFlight (a fresh server queues a burst, as vLLM does);
// the first slow window brings it down. Time to first token includes
// the time spent waiting in the scheduler's queue, which is what more
// admission lengthens; the queue shrinks when the latency says it is too
// long, and grows again while it is not.
//
// Thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_HTTP_ADMISSION_H
#define ACCEL_RUNTIME_SERVING_HTTP_ADMISSION_H

#include <cstdint>
#include <mutex>
#include <vector>

namespace accel::rt::server {

struct AdmissionOptions {
  int64_t minLimit = 64;       // --max-num-seqs
  int64_t maxInFlight = 1088;  // --max-num-seqs + --max-waiting
  double targetTtftP95 = 10.0; // seconds (--admission-ttft-target); 0: latency ignored
  double kvHighWatermark = 0.95;
  int64_t window = 32;         // TTFT samples per adjustment
  double decrease = 0.8;
};

struct AdmissionSnapshot {
  int64_t limit = 0, inFlight = 0;
  int64_t admitted = 0, rejected = 0;
  int64_t increases = 0, decreases = 0;
  double lastWindowP95 = 0.0; // seconds; 0 before the first window
};

class Admission {
public:
  explicit Admission(const AdmissionOptions &options);

  /// Takes a slot, or false (answer 429) when the limit is reached.
  bool tryAcquire();
  /// Gives a slot back (once per successful tryAcquire).
  void release();

  /// A finished request's time to first token (arrival to first token).
  void observeTtft(double seconds);
  /// The scheduler's KV usage (0..1) and waiting count, for the KV signal.
  void observeLoad(double kvUsage, int64_t waiting);

  /// The Retry-After a 429 carries: the last window's median time to first
  /// token, rounded up, within [1, 30] seconds.
  int retryAfterSeconds() const;
  AdmissionSnapshot snapshot() const;
  const AdmissionOptions &options() const { return opts_; }

private:
  void adjustLocked();

  AdmissionOptions opts_;
  mutable std::mutex mu_;
  int64_t limit_ = 0, inFlight_ = 0, peakInWindow_ = 0;
  int64_t admitted_ = 0, rejected_ = 0, increases_ = 0, decreases_ = 0;
  double kvUsage_ = 0.0;
  int64_t waiting_ = 0;
  bool kvPressure_ = false; // seen during the window
  std::vector<double> samples_;
  double lastP95_ = 0.0, lastP50_ = 0.0;
};

/// The q-quantile (0..1) of `v` by nearest rank (v is reordered).
double quantile(std::vector<double> &v, double q);

} // namespace accel::rt::server

#endif // ACCEL_RUNTIME_SERVING_HTTP_ADMISSION_H
