//===- GpuContext.h - one GPU: context, stream, kernels, memory -*- C++ -*-===//
//
// What the GPU backend holds of one device, all through the CUDA driver API
// opened at run time (CudaDriver): the device's primary context, one stream
// on which every copy and launch is ordered, the module of the runtime's own
// kernels (runtime/cuda/kernels, one fatbin embedded in the library), and a
// caching allocator of device memory.
//
// Memory: DeviceBuffer is a shared handle of one allocation. When the last
// handle goes, the block returns to the allocator's free list (never to the
// driver until the context goes), so that the per-step activations of one
// engine step reuse the blocks of the previous one without cuMemAlloc's
// implicit synchronisation. Reuse is safe because all work is on one stream:
// a block freed on the host after its last reader was *enqueued* is written
// by its next owner's work only after that reader ran.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_GPUCONTEXT_H
#define ACCEL_RUNTIME_CUDA_GPUCONTEXT_H

#include "runtime/cuda/CudaDriver.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace accel::rt::gpu {

using rt::CuContext;
using rt::CuDevicePtr;
using rt::CuFunction;
using rt::CuGraphExec;
using rt::CuModule;
using rt::CuStream;

class GpuContext;

/// One block of device memory, returned to its allocator when released.
struct DeviceBlock {
  CuDevicePtr ptr = 0;
  std::size_t bytes = 0;
};
using DeviceBuffer = std::shared_ptr<DeviceBlock>;

/// Launch geometry (cuda's dim3).
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

/// A private pool of device memory (runtime/cuda/DevicePool.h): while it is
/// a context's current pool (GpuContext::setPool), allocate() takes from it.
struct DevicePool;

class GpuContext {
public:
  /// Opens the driver, makes device `ordinal`'s primary context current and
  /// loads `image` (a fatbin, cubin or PTX) as the kernel module. Fails with
  /// kUnavailable (no driver, no such GPU, an image without code for this
  /// GPU) in one sentence.
  static StatusOr<std::unique_ptr<GpuContext>> create(int ordinal, const void *image,
                                                      std::size_t imageBytes);
  ~GpuContext();
  GpuContext(const GpuContext &) = delete;
  GpuContext &operator=(const GpuContext &) = delete;

  const GpuInfo &info() const { return info_; }
  const CudaApi &api() const { return *api_; }
  CudaDriver &driver() const { return *driver_; }
  CuStream stream() const { return stream_; }
  Status check(int result, const char *call) const { return driver_->check(result, call); }

  /// Makes this context current on the calling thread.
  Status makeCurrent();
  /// The device's primary context and ordinal.
  CuContext context() const { return ctx_; }
  int device() const { return device_; }

  /// A kernel of the module by its (extern "C") name; cached.
  StatusOr<CuFunction> function(const std::string &name);

  /// Launches `fn` on the stream with `args` (each passed by value; their C++
  /// types must be exactly the kernel's parameter types).
  template <typename... Args>
  Status launch(CuFunction fn, Dim3 grid, Dim3 block, unsigned sharedBytes, Args... args) {
    void *params[] = {static_cast<void *>(&args)..., nullptr};
    afterKernel_ = true;
    return check(api_->cuLaunchKernel(fn, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                      sharedBytes, stream_, params, nullptr),
                 "cuLaunchKernel");
  }

  /// launch() with programmatic dependent launch (Hopper and later): the
  /// kernel may start while the previous kernel on the stream finishes, and
  /// must execute `griddepcontrol.wait` before it reads or writes anything
  /// an earlier kernel writes or reads (it may read constants, e.g.
  /// weights, before). A plain launch without driver support, below sm_90,
  /// and when the work before it on the stream is not a kernel of ours (a
  /// copy, a memset, a graph, cuBLASLt or NCCL: see noteForeignWork).
  template <typename... Args>
  Status launchDependent(CuFunction fn, Dim3 grid, Dim3 block, unsigned sharedBytes,
                         Args... args) {
    if (!pdl_ || !afterKernel_)
      return launch(fn, grid, block, sharedBytes, args...);
    void *params[] = {static_cast<void *>(&args)..., nullptr};
    CuLaunchAttribute attr;
    attr.id = kCuLaunchAttributeProgrammaticStreamSerialization;
    attr.value.value = 1;
    CuLaunchConfig cfg;
    cfg.gridDimX = grid.x, cfg.gridDimY = grid.y, cfg.gridDimZ = grid.z;
    cfg.blockDimX = block.x, cfg.blockDimY = block.y, cfg.blockDimZ = block.z;
    cfg.sharedMemBytes = sharedBytes;
    cfg.hStream = stream_;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    afterKernel_ = true;
    return check(api_->cuLaunchKernelEx(&cfg, fn, params, nullptr), "cuLaunchKernelEx");
  }
  /// Whether launchDependent() uses programmatic dependent launch.
  bool dependentLaunches() const { return pdl_; }
  /// Work another library put on the stream (cuBLASLt, NCCL): the next
  /// launchDependent() is a plain launch.
  void noteForeignWork() { afterKernel_ = false; }

  /// Device memory of at least `bytes` (0 gives a valid empty buffer), from
  /// the current pool when one is set, else from the shared caching allocator.
  StatusOr<DeviceBuffer> allocate(std::size_t bytes);
  /// Routes allocate() to `pool` (null: back to the shared allocator). A
  /// CUDA graph's activations come from such a pool, so that no allocation
  /// outside the graph ever reuses its addresses.
  void setPool(std::shared_ptr<DevicePool> pool) { pool_ = std::move(pool); }

  /// CUDA Graphs: every launch and copy on the stream between beginCapture()
  /// and endCapture() is recorded, not run; endCapture() instantiates the
  /// graph. While capturing, upload() and download() fail (a host copy
  /// cannot be part of a graph that is replayed with new data). A capture
  /// that failed midway must still be ended: abortCapture().
  Status beginCapture();
  StatusOr<CuGraphExec> endCapture();
  void abortCapture();
  bool capturing() const { return capturing_; }
  Status launchGraph(CuGraphExec graph);
  void destroyGraph(CuGraphExec graph);
  /// Free and total device memory (cuMemGetInfo).
  Status memoryInfo(std::size_t *freeBytes, std::size_t *totalBytes);
  /// Stream-ordered copies. Host memory is pageable: the call returns once
  /// the driver staged the bytes, so `src` may be reused at once.
  Status upload(CuDevicePtr dst, const void *src, std::size_t bytes);
  Status copy(CuDevicePtr dst, CuDevicePtr src, std::size_t bytes);
  /// A stream-ordered copy into memory of `dstContext`'s GPU (this GPU's
  /// stream; another GPU's memory through cuMemcpyPeerAsync, the same GPU's
  /// as copy()).
  Status copyTo(const GpuContext &dstContext, CuDevicePtr dst, CuDevicePtr src,
                std::size_t bytes);
  /// `height` rows of `widthBytes` from pitch `srcPitch` to pitch `dstPitch`.
  Status copy2D(CuDevicePtr dst, std::size_t dstPitch, CuDevicePtr src, std::size_t srcPitch,
                std::size_t widthBytes, std::size_t height);
  /// The same from (pageable) host memory.
  Status upload2D(CuDevicePtr dst, std::size_t dstPitch, const void *src, std::size_t srcPitch,
                  std::size_t widthBytes, std::size_t height);
  /// Exactly `bytes` of device memory straight from the driver, given back
  /// to it when released (large, long-lived buffers such as the KV pool:
  /// the caching allocator's size classes would round them up by up to
  /// 1/8).
  StatusOr<DeviceBuffer> allocateExact(std::size_t bytes);
  Status zero(CuDevicePtr dst, std::size_t bytes);
  /// Copies to the host and waits for it (and everything before it).
  Status download(void *dst, CuDevicePtr src, std::size_t bytes);
  Status synchronize();

  /// Bytes the allocator holds (in use + cached).
  std::size_t bytesReserved() const;

private:
  GpuContext() = default;
  struct Allocator;

  CudaDriver *driver_ = nullptr;
  const CudaApi *api_ = nullptr;
  GpuInfo info_;
  int device_ = 0;
  CuContext ctx_ = nullptr;
  CuStream stream_ = nullptr;
  bool pdl_ = false; // launchDependent() uses cuLaunchKernelEx
  bool afterKernel_ = false; // the last work on the stream is a launch()
  CuModule module_ = nullptr;
  std::unordered_map<std::string, CuFunction> functions_;
  std::shared_ptr<Allocator> allocator_;
  std::shared_ptr<DevicePool> pool_;
  bool capturing_ = false;
};

} // namespace accel::rt::gpu

#endif // ACCEL_RUNTIME_CUDA_GPUCONTEXT_H
