//===- Admission.cpp - bounded in-flight requests, adaptive limit ---------===//
#include "runtime/serving/http/Admission.h"

#include <algorithm>
#include <cmath>

namespace accel::rt::server {

double quantile(std::vector<double> &v, double q) {
  if (v.empty())
    return 0.0;
  size_t rank = size_t(std::ceil(q * double(v.size())));
  size_t i = rank == 0 ? 0 : std::min(v.size() - 1, rank - 1);
  std::nth_element(v.begin(), v.begin() + i, v.end());
  return v[i];
}

Admission::Admission(const AdmissionOptions &options) : opts_(options) {
  opts_.minLimit = std::max<int64_t>(1, opts_.minLimit);
  opts_.maxInFlight = std::max(opts_.minLimit, opts_.maxInFlight);
  opts_.window = std::max<int64_t>(1, opts_.window);
  limit_ = opts_.maxInFlight;
}

bool Admission::tryAcquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (inFlight_ >= limit_) {
    ++rejected_;
    peakInWindow_ = std::max(peakInWindow_, inFlight_ + 1); // demand beyond the limit
    return false;
  }
  ++inFlight_;
  ++admitted_;
  peakInWindow_ = std::max(peakInWindow_, inFlight_);
  return true;
}

void Admission::release() {
  std::lock_guard<std::mutex> lock(mu_);
  if (inFlight_ > 0)
    --inFlight_;
}

void Admission::observeLoad(double kvUsage, int64_t waiting) {
  std::lock_guard<std::mutex> lock(mu_);
  kvUsage_ = kvUsage;
  waiting_ = waiting;
  if (kvUsage >= opts_.kvHighWatermark && waiting > 0)
    kvPressure_ = true;
}

void Admission::observeTtft(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  samples_.push_back(seconds);
  if (int64_t(samples_.size()) >= opts_.window)
    adjustLocked();
}

void Admission::adjustLocked() {
  lastP95_ = quantile(samples_, 0.95);
  lastP50_ = quantile(samples_, 0.50);
  samples_.clear();
  bool slow = opts_.targetTtftP95 > 0 && lastP95_ > opts_.targetTtftP95;
  if (slow || kvPressure_) {
    int64_t next = std::max(opts_.minLimit, int64_t(std::floor(double(limit_) * opts_.decrease)));
    if (next < limit_)
      ++decreases_;
    limit_ = next;
  } else if (peakInWindow_ >= limit_) {
    int64_t next = std::min(opts_.maxInFlight, limit_ + std::max<int64_t>(1, limit_ / 8));
    if (next > limit_)
      ++increases_;
    limit_ = next;
  }
  kvPressure_ = false; // seen again at the next observeLoad under pressure
  peakInWindow_ = inFlight_;
}

int Admission::retryAfterSeconds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return int(std::clamp(std::ceil(lastP50_), 1.0, 30.0));
}

AdmissionSnapshot Admission::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  AdmissionSnapshot s;
  s.limit = limit_;
  s.inFlight = inFlight_;
  s.admitted = admitted_;
  s.rejected = rejected_;
  s.increases = increases_;
  s.decreases = decreases_;
  s.lastWindowP95 = lastP95_;
  return s;
}

} // namespace accel::rt::server
