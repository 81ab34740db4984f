// GPU tests (ctest label `gpu`): run on the GPU machine, skipped elsewhere.
#include "runtime/cuda/CudaDriver.h"

#include <gtest/gtest.h>

using namespace accel::rt;

TEST(GpuDevice, DriverListsAtLeastOneGpuWithItsCapability) {
  StatusOr<CudaDriver *> d = CudaDriver::get();
  if (!d.isOk())
    GTEST_SKIP() << d.status().message();
  StatusOr<std::vector<GpuInfo>> gpus = (*d)->listDevices();
  ASSERT_TRUE(gpus.isOk()) << gpus.status().message();
  ASSERT_FALSE(gpus->empty());
  for (const GpuInfo &g : *gpus) {
    EXPECT_FALSE(g.name.empty());
    EXPECT_GE(g.smMajor, 7) << g.name;
    EXPECT_GT(g.multiprocessors, 0) << g.name;
    EXPECT_GT(g.totalMemoryBytes, std::size_t(1) << 30) << g.name;
  }
  EXPECT_GE((*d)->driverVersion(), 12000);
}
