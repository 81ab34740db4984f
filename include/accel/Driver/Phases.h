//===- Phases.h - per-phase timings and memory of a compile -----*- C++ -*-===//
//
// accelc -v prints one line per phase of a compile (the import, each pass,
// kernel generation, the plan writer): its wall time, the process's resident
// memory after it and the peak so far, read from /proc/self/status.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_DRIVER_PHASES_H
#define ACCEL_DRIVER_PHASES_H

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace mlir {
class PassManager;
}

namespace accel {

/// Resident and peak resident bytes of this process (0 when unknown).
struct MemoryUse {
  uint64_t rss = 0;
  uint64_t peak = 0;
  uint64_t anon = 0; ///< of rss: anonymous (heap) memory
  uint64_t file = 0; ///< of rss: pages of mapped files (the weights read)
};
MemoryUse currentMemoryUse();

/// Times phases and reports each as a line to `sink`.
class PhaseTimer {
public:
  /// `sink` gets the line of each phase that ends; `started` the name of
  /// each phase that begins (either may be unset).
  explicit PhaseTimer(std::function<void(const std::string &)> sink,
                      std::function<void(const std::string &)> started = {})
      : sink_(std::move(sink)), started_(std::move(started)) {}
  /// Starts timing `name` (ending the phase before it).
  void begin(const std::string &name);
  /// Ends the current phase, reporting it.
  void end();
  /// Reports every pass `pm` runs as its own phase.
  void instrument(mlir::PassManager &pm);

private:
  std::function<void(const std::string &)> sink_;
  std::function<void(const std::string &)> started_;
  std::string current_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point total_ = std::chrono::steady_clock::now();
};

} // namespace accel

#endif // ACCEL_DRIVER_PHASES_H
