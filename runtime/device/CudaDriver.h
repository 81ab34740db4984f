//===- CudaDriver.h - the CUDA driver API, opened at run time ---*- C++ -*-===//
//
// accel-run starts on machines without a GPU: libcuda is never linked, only
// opened with dlopen when a GPU is asked for. This file resolves the driver
// entry points the runtime uses and says plainly why a GPU cannot be used.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_DEVICE_CUDADRIVER_H
#define ACCEL_RUNTIME_DEVICE_CUDADRIVER_H

#include "runtime/support/Status.h"

#include <cstddef>
#include <string>
#include <vector>

namespace accel::rt {

/// What the runtime needs to know of one GPU to pick kernels for it.
struct GpuInfo {
  int ordinal = 0;
  std::string name;
  int smMajor = 0, smMinor = 0;
  int multiprocessors = 0;
  std::size_t totalMemoryBytes = 0;
};

class CudaDriver {
public:
  /// Opens the driver library: `$ACCEL_LIBCUDA` when set, else libcuda.so.1.
  /// Fails with kUnavailable naming the library and the loader's reason.
  static StatusOr<CudaDriver *> get();

  /// Lists the GPUs the driver sees (cuInit + cuDeviceGet*).
  StatusOr<std::vector<GpuInfo>> listDevices();

  /// The driver's version as reported by cuDriverGetVersion (e.g. 13000).
  int driverVersion() const { return driverVersion_; }

private:
  CudaDriver() = default;
  Status load(const std::string &path);
  Status check(int result, const char *call) const;

  void *handle_ = nullptr;
  int driverVersion_ = 0;
  // Entry points (CUresult is an int; CUdevice is an int).
  int (*cuInit_)(unsigned) = nullptr;
  int (*cuDriverGetVersion_)(int *) = nullptr;
  int (*cuDeviceGetCount_)(int *) = nullptr;
  int (*cuDeviceGet_)(int *, int) = nullptr;
  int (*cuDeviceGetName_)(char *, int, int) = nullptr;
  int (*cuDeviceGetAttribute_)(int *, int, int) = nullptr;
  int (*cuDeviceTotalMem_)(std::size_t *, int) = nullptr;
  int (*cuGetErrorString_)(int, const char **) = nullptr;
};

} // namespace accel::rt

#endif // ACCEL_RUNTIME_DEVICE_CUDADRIVER_H
