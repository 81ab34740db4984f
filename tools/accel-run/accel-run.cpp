//===- accel-run.cpp - serve or run a compiled plan -----------------------===//
//
// Thin: parses flags and hands over to runtime/. Links no LLVM or MLIR.
//
//===----------------------------------------------------------------------===//
#include "runtime/device/CudaDriver.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

using namespace accel::rt;

static void printUsage() {
  std::puts(
      "usage: accel-run [options] <model.plan>\n"
      "\n"
      "  --list-devices   list the GPUs the CUDA driver sees, then exit\n"
      "  --version        print the version, then exit\n"
      "  -h, --help       print this help, then exit\n");
}

static int listDevices() {
  StatusOr<CudaDriver *> driver = CudaDriver::get();
  if (!driver) {
    std::fprintf(stderr, "accel-run: %s\n", driver.status().message().c_str());
    return 1;
  }
  StatusOr<std::vector<GpuInfo>> gpus = (*driver)->listDevices();
  if (!gpus) {
    std::fprintf(stderr, "accel-run: %s\n", gpus.status().message().c_str());
    return 1;
  }
  std::printf("CUDA driver %d.%d, %zu GPU(s)\n", (*driver)->driverVersion() / 1000,
              ((*driver)->driverVersion() % 1000) / 10, gpus->size());
  for (const GpuInfo &g : *gpus)
    std::printf("  %d: %s, sm_%d%d, %d SMs, %.1f GiB\n", g.ordinal, g.name.c_str(),
                g.smMajor, g.smMinor, g.multiprocessors,
                double(g.totalMemoryBytes) / (1024.0 * 1024 * 1024));
  return 0;
}

int main(int argc, char **argv) {
  std::string planPath;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      printUsage();
      return 0;
    }
    if (arg == "--version") {
      std::puts("accel-run 0.1.0");
      return 0;
    }
    if (arg == "--list-devices")
      return listDevices();
    if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "accel-run: unknown option '%s' (see --help)\n", arg.c_str());
      return 2;
    }
    if (!planPath.empty()) {
      std::fprintf(stderr, "accel-run: more than one plan given ('%s' and '%s')\n",
                   planPath.c_str(), arg.c_str());
      return 2;
    }
    planPath = arg;
  }
  if (planPath.empty()) {
    std::fprintf(stderr, "accel-run: no plan given (see --help)\n");
    return 2;
  }
  if (!std::ifstream(planPath)) {
    std::fprintf(stderr, "accel-run: cannot open plan '%s': %s\n", planPath.c_str(),
                 std::strerror(errno));
    return 1;
  }
  std::fprintf(stderr,
               "accel-run: executing plans is not implemented yet (the plan "
               "loader and CPU backend arrive with issue 4)\n");
  return 3;
}
