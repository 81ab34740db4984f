// The driver is opened with dlopen; these tests run on machines without a GPU
// (CI) and check that the failure is one clear sentence, not a crash.
#include "runtime/cuda/CudaDriver.h"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace accel::rt;

TEST(CudaDriver, MissingLibraryIsUnavailableWithItsPath) {
  // Must run before anything else opens the driver in this process: gtest
  // runs the tests of this binary in one process, and CudaDriver::get()
  // caches its first answer. Each ctest invocation is a fresh process.
  setenv("ACCEL_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  StatusOr<CudaDriver *> d = CudaDriver::get();
  ASSERT_FALSE(d.isOk());
  EXPECT_EQ(d.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(d.status().message().find("/nonexistent/libcuda.so.1"), std::string::npos)
      << d.status().message();
  EXPECT_NE(d.status().message().find("-target=cpu"), std::string::npos);
}
