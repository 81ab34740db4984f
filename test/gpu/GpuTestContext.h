//===- GpuTestContext.h - the one GPU context of a kernel test binary -*- C++ -*-===//
//
// Kernel tests (FlashPrefillTest, GreedyTest, GemvTest) launch the runtime's
// kernels directly: they share one GpuContext on device 0 per process, made
// the first time it is asked for. Without a GPU (or without kernels built
// in) it is null and `why` says why, for GTEST_SKIP. Plan tests only ask
// whether there is a GPU (gpuAvailable, ACCEL_REQUIRE_GPU).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_TEST_GPU_GPUTESTCONTEXT_H
#define ACCEL_TEST_GPU_GPUTESTCONTEXT_H

#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/GpuContext.h"
#include "runtime/cuda/kernels/KernelImage.h"

#include <memory>
#include <string>

namespace accel::rt::test {

/// Whether the CUDA driver loads and sees a GPU; `*why` says why not.
inline bool gpuAvailable(std::string *why) {
  StatusOr<CudaDriver *> d = CudaDriver::get();
  if (!d) {
    *why = d.status().message();
    return false;
  }
  StatusOr<std::vector<GpuInfo>> g = (*d)->listDevices();
  if (!g || g->empty()) {
    *why = g ? "the driver sees no GPU" : g.status().message();
    return false;
  }
  return true;
}

/// The process's GpuContext, or null with `*why` (when given) set.
inline gpu::GpuContext *gpuTestContext(std::string *why) {
  static std::unique_ptr<gpu::GpuContext> ctx;
  static std::string error;
  static bool tried = false;
  if (!tried) {
    tried = true;
    StatusOr<CudaDriver *> d = CudaDriver::get();
    if (!d) {
      error = d.status().message();
    } else if (StatusOr<std::vector<GpuInfo>> g = (*d)->listDevices(); !g || g->empty()) {
      error = g ? "the driver sees no GPU" : g.status().message();
    } else if (gpu::kernelImageBytes() == 0) {
      error = "built without GPU kernels";
    } else if (StatusOr<std::unique_ptr<gpu::GpuContext>> c =
                   gpu::GpuContext::create(0, gpu::kernelImage(), gpu::kernelImageBytes());
               c) {
      ctx = std::move(*c);
    } else {
      error = c.status().message();
    }
  }
  if (!ctx && why)
    *why = error;
  return ctx.get();
}

} // namespace accel::rt::test

/// In a gtest body: the test reports SKIPPED with the reason unless the
/// driver sees a GPU (the plan tests, whose executors make their own
/// contexts).
#define ACCEL_REQUIRE_GPU()                                                                 \
  do {                                                                                      \
    std::string accelNoGpuWhy;                                                              \
    if (!::accel::rt::test::gpuAvailable(&accelNoGpuWhy))                                   \
      GTEST_SKIP() << accelNoGpuWhy;                                                        \
  } while (0)

/// In a gtest body: `var` is the process's GpuContext, or the test reports
/// SKIPPED with the reason.
#define ACCEL_REQUIRE_GPU_CONTEXT(var)                                                      \
  std::string var##Why;                                                                     \
  ::accel::rt::gpu::GpuContext *var = ::accel::rt::test::gpuTestContext(&var##Why);         \
  if (!var)                                                                                 \
    GTEST_SKIP() << var##Why;

#endif // ACCEL_TEST_GPU_GPUTESTCONTEXT_H
