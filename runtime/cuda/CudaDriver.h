//===- CudaDriver.h - the CUDA driver API, opened at run time ---*- C++ -*-===//
//
// accel-run starts on machines without a GPU: libcuda is never linked, only
// opened with dlopen when a GPU is asked for. This file resolves the driver
// entry points the runtime uses and says plainly why a GPU cannot be used.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_CUDADRIVER_H
#define ACCEL_RUNTIME_CUDA_CUDADRIVER_H

#include "core/Status.h"

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

/// The driver's handles, as the runtime passes them around (cuda.h's CUcontext,
/// CUmodule, CUfunction, CUstream are pointers; CUdeviceptr is 64 bits).
using CuContext = void *;
using CuModule = void *;
using CuFunction = void *;
using CuStream = void *;
using CuDevicePtr = unsigned long long;
using CuGraph = void *;
using CuGraphExec = void *;
using CuEvent = void *;

/// cuda.h's CUDA_MEMCPY2D (for cuMemcpy2DAsync_v2), declared here so that the
/// runtime needs no CUDA headers to build.
struct CuMemcpy2D {
  std::size_t srcXInBytes = 0, srcY = 0;
  unsigned srcMemoryType = 0; // CU_MEMORYTYPE_HOST 1, DEVICE 2
  const void *srcHost = nullptr;
  CuDevicePtr srcDevice = 0;
  void *srcArray = nullptr;
  std::size_t srcPitch = 0;
  std::size_t dstXInBytes = 0, dstY = 0;
  unsigned dstMemoryType = 0;
  void *dstHost = nullptr;
  CuDevicePtr dstDevice = 0;
  void *dstArray = nullptr;
  std::size_t dstPitch = 0;
  std::size_t WidthInBytes = 0, Height = 0;
};

/// cuda.h's CUlaunchAttribute and CUlaunchConfig (cuLaunchKernelEx), for
/// the one attribute the runtime sets: programmatic stream serialization
/// (id 6), i.e. programmatic dependent launch.
struct CuLaunchAttribute {
  int id = 0;
  char pad[4] = {};
  union alignas(8) {
    char bytes[64];
    int value;
  } value = {};
};
struct CuLaunchConfig {
  unsigned gridDimX = 1, gridDimY = 1, gridDimZ = 1;
  unsigned blockDimX = 1, blockDimY = 1, blockDimZ = 1;
  unsigned sharedMemBytes = 0;
  CuStream hStream = nullptr;
  CuLaunchAttribute *attrs = nullptr;
  unsigned numAttrs = 0;
};
constexpr int kCuLaunchAttributeProgrammaticStreamSerialization = 6;

/// The driver entry points that run work: contexts, modules, launches,
/// memory, streams. Each returns a CUresult (0: success); wrap calls in
/// CudaDriver::check().
struct CudaApi {
  int (*cuDeviceGet)(int *, int) = nullptr;
  int (*cuDevicePrimaryCtxRetain)(CuContext *, int) = nullptr;
  int (*cuDevicePrimaryCtxRelease)(int) = nullptr;
  int (*cuCtxSetCurrent)(CuContext) = nullptr;
  int (*cuCtxSynchronize)() = nullptr;
  int (*cuModuleLoadData)(CuModule *, const void *) = nullptr;
  // With JIT options (cuda.h's CUjit_option values are ints): the plan's
  // generated kernels, whose PTX the driver may have to compile.
  int (*cuModuleLoadDataEx)(CuModule *, const void *, unsigned, int *, void **) = nullptr;
  int (*cuModuleUnload)(CuModule) = nullptr;
  int (*cuModuleGetFunction)(CuFunction *, CuModule, const char *) = nullptr;
  int (*cuLaunchKernel)(CuFunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, unsigned, CuStream, void **, void **) = nullptr;
  // Optional (null when the driver lacks it): launches with attributes.
  int (*cuLaunchKernelEx)(const CuLaunchConfig *, CuFunction, void **, void **) = nullptr;
  int (*cuMemAlloc)(CuDevicePtr *, std::size_t) = nullptr;
  int (*cuMemFree)(CuDevicePtr) = nullptr;
  int (*cuMemGetInfo)(std::size_t *, std::size_t *) = nullptr;
  int (*cuMemcpyHtoDAsync)(CuDevicePtr, const void *, std::size_t, CuStream) = nullptr;
  int (*cuMemcpyDtoHAsync)(void *, CuDevicePtr, std::size_t, CuStream) = nullptr;
  int (*cuMemcpyDtoDAsync)(CuDevicePtr, CuDevicePtr, std::size_t, CuStream) = nullptr;
  int (*cuMemcpy2DAsync)(const CuMemcpy2D *, CuStream) = nullptr;
  int (*cuMemsetD8Async)(CuDevicePtr, unsigned char, std::size_t, CuStream) = nullptr;
  int (*cuStreamCreate)(CuStream *, unsigned) = nullptr;
  int (*cuStreamDestroy)(CuStream) = nullptr;
  int (*cuStreamSynchronize)(CuStream) = nullptr;
  // CUDA Graphs (decode steps replayed from stream captures): cuda.h's
  // CUgraph and CUgraphExec are pointers, CUstreamCaptureMode an int.
  int (*cuStreamBeginCapture)(CuStream, int) = nullptr; // cuStreamBeginCapture_v2
  int (*cuStreamEndCapture)(CuStream, CuGraph *) = nullptr;
  int (*cuThreadExchangeStreamCaptureMode)(int *) = nullptr;
  int (*cuGraphInstantiateWithFlags)(CuGraphExec *, CuGraph, unsigned long long) = nullptr;
  int (*cuGraphLaunch)(CuGraphExec, CuStream) = nullptr;
  int (*cuGraphExecDestroy)(CuGraphExec) = nullptr;
  int (*cuGraphDestroy)(CuGraph) = nullptr;
  // Peer access between the GPUs of one process (the one-shot all-reduce,
  // runtime/cuda/P2pAllReduce.h); optional.
  int (*cuDeviceCanAccessPeer)(int *, int, int) = nullptr;
  int (*cuCtxEnablePeerAccess)(CuContext, unsigned) = nullptr;
  // Events and copies between GPUs: pipeline stages of one process hand
  // their activations over (runtime/cuda/GpuPipeline.h); optional.
  int (*cuEventCreate)(CuEvent *, unsigned) = nullptr;
  int (*cuEventDestroy)(CuEvent) = nullptr;
  int (*cuEventRecord)(CuEvent, CuStream) = nullptr;
  int (*cuEventSynchronize)(CuEvent) = nullptr;
  int (*cuEventElapsedTime)(float *, CuEvent, CuEvent) = nullptr;
  int (*cuStreamWaitEvent)(CuStream, CuEvent, unsigned) = nullptr;
  int (*cuMemcpyPeerAsync)(CuDevicePtr, CuContext, CuDevicePtr, CuContext, std::size_t,
                           CuStream) = nullptr;
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

  /// The entry points that run work, or kUnavailable naming the first one
  /// this driver lacks.
  StatusOr<const CudaApi *> api() const;

  /// Status::ok() for CUDA_SUCCESS, else kUnavailable naming `call` and the
  /// driver's description of `result`.
  Status check(int result, const char *call) const;

private:
  CudaDriver() = default;
  Status load(const std::string &path);

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
  CudaApi api_;
  std::string apiMissing_; // the first entry point api_ lacks, if any
};

} // namespace accel::rt

#endif // ACCEL_RUNTIME_CUDA_CUDADRIVER_H
