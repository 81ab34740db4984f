//===- Phases.cpp - per-phase timings and memory of a compile -------------===//
#include "accel/Driver/Phases.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"

#include <cstdio>
#include <cstring>

using namespace accel;

MemoryUse accel::currentMemoryUse() {
  MemoryUse m;
  std::FILE *f = std::fopen("/proc/self/status", "r");
  if (!f)
    return m;
  char line[256];
  while (std::fgets(line, sizeof(line), f)) {
    unsigned long long kb = 0;
    if (std::sscanf(line, "VmRSS: %llu kB", &kb) == 1)
      m.rss = kb * 1024;
    else if (std::sscanf(line, "VmHWM: %llu kB", &kb) == 1)
      m.peak = kb * 1024;
    else if (std::sscanf(line, "RssAnon: %llu kB", &kb) == 1)
      m.anon = kb * 1024;
    else if (std::sscanf(line, "RssFile: %llu kB", &kb) == 1)
      m.file = kb * 1024;
  }
  std::fclose(f);
  return m;
}

void PhaseTimer::begin(const std::string &name) {
  if (started_)
    started_(name);
  if (!sink_)
    return;
  end();
  current_ = name;
  start_ = std::chrono::steady_clock::now();
}

void PhaseTimer::end() {
  if (!sink_ || current_.empty())
    return;
  auto now = std::chrono::steady_clock::now();
  double s = std::chrono::duration<double>(now - start_).count();
  double t = std::chrono::duration<double>(now - total_).count();
  MemoryUse m = currentMemoryUse();
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "accelc: %-36s %8.2f s (at %7.2f s)  rss %6.2f GB (heap %.2f, mapped %.2f)  "
                "peak %6.2f GB",
                current_.c_str(), s, t, double(m.rss) / 1e9, double(m.anon) / 1e9,
                double(m.file) / 1e9, double(m.peak) / 1e9);
  sink_(buf);
  current_.clear();
}

namespace {
/// Each pass that is not a pipeline adaptor is a phase.
struct PhaseInstrumentation : mlir::PassInstrumentation {
  explicit PhaseInstrumentation(PhaseTimer &t) : timer(t) {}
  static bool isAdaptor(mlir::Pass *pass) {
    return pass->getArgument().empty() && llvm::StringRef(pass->getName()).contains("Adaptor");
  }
  void runBeforePass(mlir::Pass *pass, mlir::Operation *) override {
    if (!isAdaptor(pass))
      timer.begin(pass->getArgument().empty() ? pass->getName().str()
                                              : pass->getArgument().str());
  }
  void runAfterPass(mlir::Pass *pass, mlir::Operation *) override {
    if (!isAdaptor(pass))
      timer.end();
  }
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *op) override {
    runAfterPass(pass, op);
  }
  PhaseTimer &timer;
};
} // namespace

void PhaseTimer::instrument(mlir::PassManager &pm) {
  if (sink_ || started_)
    pm.addInstrumentation(std::make_unique<PhaseInstrumentation>(*this));
}
