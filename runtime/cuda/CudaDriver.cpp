//===- CudaDriver.cpp - the CUDA driver API, opened at run time -----------===//
#include "runtime/cuda/CudaDriver.h"

#include "runtime/Env.h"

#include <dlfcn.h>
#include <mutex>
#include <type_traits>
#include <utility>

namespace accel::rt {
namespace {
// CUdevice_attribute values from cuda.h (stable across driver versions).
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kCudaErrorNoDevice = 100;
} // namespace

StatusOr<CudaDriver *> CudaDriver::get() {
  static CudaDriver driver;
  static Status loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    loaded = driver.load(env().libcuda);
  });
  if (!loaded.isOk())
    return loaded;
  return &driver;
}

Status CudaDriver::load(const std::string &path) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char *why = dlerror();
    return unavailable("no NVIDIA driver: cannot open " + path + " (" +
                       (why ? why : "unknown reason") +
                       "); use -target=cpu plans on this machine");
  }
  auto sym = [&](auto &fn, const char *name) -> bool {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(handle_, name));
    return fn != nullptr;
  };
  if (!sym(cuInit_, "cuInit") ||
      !sym(cuDriverGetVersion_, "cuDriverGetVersion") ||
      !sym(cuDeviceGetCount_, "cuDeviceGetCount") ||
      !sym(cuDeviceGet_, "cuDeviceGet") ||
      !sym(cuDeviceGetName_, "cuDeviceGetName") ||
      !sym(cuDeviceGetAttribute_, "cuDeviceGetAttribute") ||
      !sym(cuDeviceTotalMem_, "cuDeviceTotalMem_v2") ||
      !sym(cuGetErrorString_, "cuGetErrorString"))
    return unavailable(path + " is not a usable CUDA driver: it lacks the "
                       "driver API entry points accel needs");
  // The execution entry points are optional here: listDevices() works
  // without them; api() says which one is missing.
  auto opt = [&](auto &fn, const char *name) {
    if (!sym(fn, name) && apiMissing_.empty())
      apiMissing_ = name;
  };
  opt(api_.cuDeviceGet, "cuDeviceGet");
  opt(api_.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  opt(api_.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  opt(api_.cuCtxSetCurrent, "cuCtxSetCurrent");
  opt(api_.cuCtxSynchronize, "cuCtxSynchronize");
  opt(api_.cuModuleLoadData, "cuModuleLoadData");
  opt(api_.cuModuleLoadDataEx, "cuModuleLoadDataEx");
  opt(api_.cuModuleUnload, "cuModuleUnload");
  opt(api_.cuModuleGetFunction, "cuModuleGetFunction");
  opt(api_.cuLaunchKernel, "cuLaunchKernel");
  sym(api_.cuLaunchKernelEx, "cuLaunchKernelEx"); // optional: programmatic dependent launch
  opt(api_.cuMemAlloc, "cuMemAlloc_v2");
  opt(api_.cuMemFree, "cuMemFree_v2");
  opt(api_.cuMemGetInfo, "cuMemGetInfo_v2");
  opt(api_.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  opt(api_.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  opt(api_.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  opt(api_.cuMemcpy2DAsync, "cuMemcpy2DAsync_v2");
  opt(api_.cuMemsetD8Async, "cuMemsetD8Async");
  opt(api_.cuStreamCreate, "cuStreamCreate");
  opt(api_.cuStreamDestroy, "cuStreamDestroy_v2");
  opt(api_.cuStreamSynchronize, "cuStreamSynchronize");
  opt(api_.cuStreamBeginCapture, "cuStreamBeginCapture_v2");
  opt(api_.cuStreamEndCapture, "cuStreamEndCapture");
  opt(api_.cuThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode");
  opt(api_.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
  opt(api_.cuGraphLaunch, "cuGraphLaunch");
  opt(api_.cuGraphExecDestroy, "cuGraphExecDestroy");
  opt(api_.cuGraphDestroy, "cuGraphDestroy");
  sym(api_.cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer");
  sym(api_.cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess");
  sym(api_.cuEventCreate, "cuEventCreate");
  sym(api_.cuEventDestroy, "cuEventDestroy_v2");
  sym(api_.cuEventRecord, "cuEventRecord");
  sym(api_.cuEventSynchronize, "cuEventSynchronize");
  sym(api_.cuEventElapsedTime, "cuEventElapsedTime");
  sym(api_.cuStreamWaitEvent, "cuStreamWaitEvent");
  sym(api_.cuMemcpyPeerAsync, "cuMemcpyPeerAsync");
  if (Status s = check(cuInit_(0), "cuInit"); !s.isOk())
    return s;
  return check(cuDriverGetVersion_(&driverVersion_), "cuDriverGetVersion");
}

Status CudaDriver::check(int result, const char *call) const {
  if (result == 0)
    return Status::ok();
  const char *text = nullptr;
  if (cuGetErrorString_)
    cuGetErrorString_(result, &text);
  std::string msg = std::string(call) + " failed with CUDA error " +
                    std::to_string(result) + (text ? std::string(" (") + text + ")" : "");
  if (result == kCudaErrorNoDevice)
    return unavailable(msg + ": the driver sees no GPU");
  return unavailable(msg);
}

StatusOr<const CudaApi *> CudaDriver::api() const {
  if (!apiMissing_.empty())
    return unavailable("the CUDA driver lacks " + apiMissing_ +
                       ", which the GPU backend needs (driver version " +
                       std::to_string(driverVersion_) + ")");
  return &api_;
}

StatusOr<std::vector<GpuInfo>> CudaDriver::listDevices() {
  int count = 0;
  if (Status s = check(cuDeviceGetCount_(&count), "cuDeviceGetCount"); !s.isOk())
    return s;
  std::vector<GpuInfo> gpus;
  for (int i = 0; i < count; ++i) {
    int dev = 0;
    GpuInfo info;
    info.ordinal = i;
    char name[256] = {0};
    if (Status s = check(cuDeviceGet_(&dev, i), "cuDeviceGet"); !s.isOk())
      return s;
    if (Status s = check(cuDeviceGetName_(name, sizeof(name) - 1, dev),
                         "cuDeviceGetName");
        !s.isOk())
      return s;
    info.name = name;
    for (auto [out, attr] : {std::pair{&info.smMajor, kAttrComputeCapabilityMajor},
                             std::pair{&info.smMinor, kAttrComputeCapabilityMinor},
                             std::pair{&info.multiprocessors, kAttrMultiprocessorCount}})
      if (Status s = check(cuDeviceGetAttribute_(out, attr, dev),
                           "cuDeviceGetAttribute");
          !s.isOk())
        return s;
    if (Status s = check(cuDeviceTotalMem_(&info.totalMemoryBytes, dev),
                         "cuDeviceTotalMem");
        !s.isOk())
      return s;
    gpus.push_back(std::move(info));
  }
  return gpus;
}

} // namespace accel::rt
