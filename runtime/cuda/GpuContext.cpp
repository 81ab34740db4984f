//===- GpuContext.cpp - one GPU: context, stream, kernels, memory ---------===//
#include "runtime/cuda/GpuContext.h"

#include "runtime/cuda/DevicePool.h"

#include <algorithm>

namespace accel::rt::gpu {

/// Free lists by size. Blocks hold a shared_ptr to this, so it outlives the
/// GpuContext while buffers are alive; it frees the cached blocks when the
/// last of them goes.
struct GpuContext::Allocator {
  const CudaApi *api = nullptr;
  std::mutex mu;
  std::multimap<std::size_t, CuDevicePtr> free; // bytes -> block
  std::size_t reserved = 0;
  bool dead = false; // the context is gone: free to the driver at once

  ~Allocator() {
    for (auto &[bytes, ptr] : free)
      api->cuMemFree(ptr);
  }
  void release(DeviceBlock *b) {
    if (b->ptr) {
      std::lock_guard<std::mutex> lock(mu);
      if (dead) {
        api->cuMemFree(b->ptr);
        reserved -= b->bytes;
      } else {
        free.emplace(b->bytes, b->ptr);
      }
    }
    delete b;
  }
};

namespace {
std::size_t roundUp(std::size_t bytes) {
  // 256-byte granules; above 1 MiB, multiples of 1/8 of the next power of two,
  // so that slightly different sizes reuse one block.
  std::size_t r = (bytes + 255) & ~std::size_t(255);
  if (r > (std::size_t(1) << 20)) {
    std::size_t p = std::size_t(1) << 20;
    while (p < r)
      p <<= 1;
    std::size_t g = p / 8;
    r = (r + g - 1) / g * g;
  }
  return r;
}
} // namespace

StatusOr<std::unique_ptr<GpuContext>> GpuContext::create(int ordinal, const void *image,
                                                         std::size_t imageBytes) {
  ACCEL_RT_ASSIGN_OR_RETURN(CudaDriver * drv, CudaDriver::get());
  ACCEL_RT_ASSIGN_OR_RETURN(const CudaApi *api, drv->api());
  ACCEL_RT_ASSIGN_OR_RETURN(std::vector<GpuInfo> gpus, drv->listDevices());
  if (ordinal < 0 || ordinal >= int(gpus.size()))
    return unavailable("GPU " + std::to_string(ordinal) + " does not exist: the driver sees " +
                       std::to_string(gpus.size()) + " GPU(s)");
  if (!image || imageBytes == 0)
    return unavailable("this accel was built without GPU kernels (no CUDA toolkit at build "
                       "time, or -DACCEL_ENABLE_CUDA=OFF)");
  std::unique_ptr<GpuContext> g(new GpuContext());
  g->driver_ = drv;
  g->api_ = api;
  g->info_ = gpus[size_t(ordinal)];
  // Programmatic dependent launch: 4.73 against 4.84 ms per 32-layer batch-1
  // decode step on the H200 (docs/performance.md).
  g->pdl_ = api->cuLaunchKernelEx && g->info_.smMajor >= 9;
  ACCEL_RT_RETURN_IF_ERROR(g->check(api->cuDeviceGet(&g->device_, ordinal), "cuDeviceGet"));
  ACCEL_RT_RETURN_IF_ERROR(
      g->check(api->cuDevicePrimaryCtxRetain(&g->ctx_, g->device_), "cuDevicePrimaryCtxRetain"));
  ACCEL_RT_RETURN_IF_ERROR(g->makeCurrent());
  ACCEL_RT_RETURN_IF_ERROR(g->check(api->cuStreamCreate(&g->stream_, 1 /*non-blocking*/),
                                    "cuStreamCreate"));
  if (Status s = g->check(api->cuModuleLoadData(&g->module_, image), "cuModuleLoadData");
      !s.isOk())
    return unavailable("cannot load the GPU kernels on " + g->info_.name + " (sm_" +
                       std::to_string(g->info_.smMajor) + std::to_string(g->info_.smMinor) +
                       "): " + s.message() +
                       "; the kernels are built for sm_80 and sm_90 (+ PTX for newer GPUs)");
  g->allocator_ = std::make_shared<Allocator>();
  g->allocator_->api = api;
  return g;
}

GpuContext::~GpuContext() {
  if (!api_)
    return;
  if (ctx_)
    api_->cuCtxSetCurrent(ctx_);
  if (stream_)
    api_->cuStreamSynchronize(stream_);
  if (allocator_) {
    std::lock_guard<std::mutex> lock(allocator_->mu);
    for (auto &[bytes, ptr] : allocator_->free) {
      api_->cuMemFree(ptr);
      allocator_->reserved -= bytes;
    }
    allocator_->free.clear();
    allocator_->dead = true;
  }
  if (module_)
    api_->cuModuleUnload(module_);
  if (stream_)
    api_->cuStreamDestroy(stream_);
  // The primary context stays retained while live buffers may still free
  // into it; the driver drops it at process exit.
}

Status GpuContext::makeCurrent() { return check(api_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent"); }

StatusOr<CuFunction> GpuContext::function(const std::string &name) {
  auto it = functions_.find(name);
  if (it != functions_.end())
    return it->second;
  CuFunction fn = nullptr;
  if (Status s = check(api_->cuModuleGetFunction(&fn, module_, name.c_str()),
                       "cuModuleGetFunction");
      !s.isOk())
    return Status(StatusCode::kInternal, "the GPU kernel '" + name + "' is missing: " + s.message());
  functions_.emplace(name, fn);
  return fn;
}

StatusOr<DeviceBuffer> GpuContext::allocate(std::size_t bytes) {
  if (pool_) {
    std::shared_ptr<DevicePool> pool = pool_;
    const std::size_t want = (std::max<std::size_t>(bytes, 1) + 255) & ~std::size_t(255);
    CuDevicePtr p = pool->take(want);
    if (!p) {
      if (int r = pool->grow(want); r != 0) {
        Status s = check(r, "cuMemAlloc");
        return Status(StatusCode::kResourceExhausted,
                      "cannot allocate " + std::to_string(want) + " bytes for a CUDA graph on " +
                          info_.name + ": " + s.message());
      }
      p = pool->take(want);
    }
    return DeviceBuffer(new DeviceBlock{p, want}, [pool](DeviceBlock *b) {
      pool->give(b->ptr, b->bytes);
      delete b;
    });
  }
  const std::size_t want = roundUp(std::max<std::size_t>(bytes, 1));
  std::shared_ptr<Allocator> a = allocator_;
  auto make = [a](CuDevicePtr ptr, std::size_t size) {
    return DeviceBuffer(new DeviceBlock{ptr, size}, [a](DeviceBlock *b) { a->release(b); });
  };
  {
    std::lock_guard<std::mutex> lock(a->mu);
    auto it = a->free.lower_bound(want);
    if (it != a->free.end() && it->first <= want + want / 4) {
      CuDevicePtr p = it->second;
      std::size_t size = it->first;
      a->free.erase(it);
      return make(p, size);
    }
  }
  CuDevicePtr p = 0;
  int r = api_->cuMemAlloc(&p, want);
  if (r != 0) {
    // Out of memory with blocks cached: give them back and try once more.
    (void)synchronize();
    {
      std::lock_guard<std::mutex> lock(a->mu);
      for (auto &[size, ptr] : a->free) {
        api_->cuMemFree(ptr);
        a->reserved -= size;
      }
      a->free.clear();
    }
    r = api_->cuMemAlloc(&p, want);
    if (r != 0) {
      Status s = check(r, "cuMemAlloc");
      return Status(StatusCode::kResourceExhausted,
                    "cannot allocate " + std::to_string(want) + " bytes on " + info_.name + ": " +
                        s.message());
    }
  }
  {
    std::lock_guard<std::mutex> lock(a->mu);
    a->reserved += want;
  }
  return make(p, want);
}

std::size_t GpuContext::bytesReserved() const {
  std::lock_guard<std::mutex> lock(allocator_->mu);
  return allocator_->reserved;
}

Status GpuContext::upload(CuDevicePtr dst, const void *src, std::size_t bytes) {
  if (bytes == 0)
    return Status::ok();
  if (capturing_)
    return Status(StatusCode::kInternal,
                  "a step copies host data to the GPU inside a CUDA graph capture");
  afterKernel_ = false;
  return check(api_->cuMemcpyHtoDAsync(dst, src, bytes, stream_), "cuMemcpyHtoDAsync");
}

Status GpuContext::copy(CuDevicePtr dst, CuDevicePtr src, std::size_t bytes) {
  if (bytes == 0)
    return Status::ok();
  afterKernel_ = false;
  return check(api_->cuMemcpyDtoDAsync(dst, src, bytes, stream_), "cuMemcpyDtoDAsync");
}

Status GpuContext::copyTo(const GpuContext &dstContext, CuDevicePtr dst, CuDevicePtr src,
                          std::size_t bytes) {
  if (dstContext.device_ == device_)
    return copy(dst, src, bytes);
  if (bytes == 0)
    return Status::ok();
  if (!api_->cuMemcpyPeerAsync)
    return Status(StatusCode::kUnavailable,
                  "the CUDA driver has no cuMemcpyPeerAsync to copy between GPUs");
  afterKernel_ = false;
  return check(api_->cuMemcpyPeerAsync(dst, dstContext.ctx_, src, ctx_, bytes, stream_),
               "cuMemcpyPeerAsync");
}

namespace {
/// A 2-D copy of `height` rows of `widthBytes` into device memory at `dst`
/// (rows `dstPitch` apart) from rows `srcPitch` apart; the caller sets the
/// source's memory type and pointer.
CuMemcpy2D deviceRect(CuDevicePtr dst, std::size_t dstPitch, std::size_t srcPitch,
                      std::size_t widthBytes, std::size_t height) {
  CuMemcpy2D p;
  p.srcPitch = srcPitch;
  p.dstMemoryType = 2;
  p.dstDevice = dst;
  p.dstPitch = dstPitch;
  p.WidthInBytes = widthBytes;
  p.Height = height;
  return p;
}
} // namespace

Status GpuContext::copy2D(CuDevicePtr dst, std::size_t dstPitch, CuDevicePtr src,
                          std::size_t srcPitch, std::size_t widthBytes, std::size_t height) {
  if (widthBytes == 0 || height == 0)
    return Status::ok();
  if (widthBytes == srcPitch && widthBytes == dstPitch)
    return copy(dst, src, widthBytes * height);
  CuMemcpy2D p = deviceRect(dst, dstPitch, srcPitch, widthBytes, height);
  p.srcMemoryType = 2;
  p.srcDevice = src;
  afterKernel_ = false;
  return check(api_->cuMemcpy2DAsync(&p, stream_), "cuMemcpy2DAsync");
}

Status GpuContext::upload2D(CuDevicePtr dst, std::size_t dstPitch, const void *src,
                            std::size_t srcPitch, std::size_t widthBytes, std::size_t height) {
  if (widthBytes == 0 || height == 0)
    return Status::ok();
  if (capturing_)
    return Status(StatusCode::kInternal,
                  "a step copies host data to the GPU inside a CUDA graph capture");
  if (widthBytes == srcPitch && widthBytes == dstPitch)
    return upload(dst, src, widthBytes * height);
  CuMemcpy2D p = deviceRect(dst, dstPitch, srcPitch, widthBytes, height);
  p.srcMemoryType = 1;
  p.srcHost = src;
  afterKernel_ = false;
  return check(api_->cuMemcpy2DAsync(&p, stream_), "cuMemcpy2DAsync");
}

StatusOr<DeviceBuffer> GpuContext::allocateExact(std::size_t bytes) {
  const std::size_t want = (std::max<std::size_t>(bytes, 1) + 255) & ~std::size_t(255);
  CuDevicePtr p = 0;
  if (int r = api_->cuMemAlloc(&p, want); r != 0) {
    Status s = check(r, "cuMemAlloc");
    return Status(StatusCode::kResourceExhausted, "cannot allocate " + std::to_string(want) +
                                                      " bytes on " + info_.name + ": " +
                                                      s.message());
  }
  std::shared_ptr<Allocator> a = allocator_;
  {
    std::lock_guard<std::mutex> lock(a->mu);
    a->reserved += want;
  }
  const CudaApi *api = api_;
  return DeviceBuffer(new DeviceBlock{p, want}, [a, api](DeviceBlock *b) {
    api->cuMemFree(b->ptr);
    {
      std::lock_guard<std::mutex> lock(a->mu);
      a->reserved -= b->bytes;
    }
    delete b;
  });
}

Status GpuContext::zero(CuDevicePtr dst, std::size_t bytes) {
  if (bytes == 0)
    return Status::ok();
  afterKernel_ = false;
  return check(api_->cuMemsetD8Async(dst, 0, bytes, stream_), "cuMemsetD8Async");
}

Status GpuContext::download(void *dst, CuDevicePtr src, std::size_t bytes) {
  if (capturing_)
    return Status(StatusCode::kInternal,
                  "a step reads device data on the host inside a CUDA graph capture");
  afterKernel_ = false;
  if (bytes)
    ACCEL_RT_RETURN_IF_ERROR(
        check(api_->cuMemcpyDtoHAsync(dst, src, bytes, stream_), "cuMemcpyDtoHAsync"));
  return synchronize();
}

Status GpuContext::synchronize() {
  return check(api_->cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

namespace {
constexpr int kCaptureModeThreadLocal = 1; // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
} // namespace

Status GpuContext::beginCapture() {
  ACCEL_RT_RETURN_IF_ERROR(
      check(api_->cuStreamBeginCapture(stream_, kCaptureModeThreadLocal), "cuStreamBeginCapture"));
  capturing_ = true;
  afterKernel_ = false; // the graph's first node depends on nothing in it
  return Status::ok();
}

StatusOr<CuGraphExec> GpuContext::endCapture() {
  capturing_ = false;
  afterKernel_ = false;
  rt::CuGraph graph = nullptr;
  ACCEL_RT_RETURN_IF_ERROR(check(api_->cuStreamEndCapture(stream_, &graph), "cuStreamEndCapture"));
  if (!graph)
    return Status(StatusCode::kInternal, "the CUDA graph capture was invalidated");
  CuGraphExec exec = nullptr;
  Status s = check(api_->cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiate");
  api_->cuGraphDestroy(graph); // the instantiated graph does not need it
  if (!s.isOk())
    return s;
  return exec;
}

void GpuContext::abortCapture() {
  if (!capturing_)
    return;
  capturing_ = false;
  rt::CuGraph graph = nullptr;
  api_->cuStreamEndCapture(stream_, &graph);
  if (graph)
    api_->cuGraphDestroy(graph);
}

Status GpuContext::launchGraph(CuGraphExec graph) {
  afterKernel_ = false;
  return check(api_->cuGraphLaunch(graph, stream_), "cuGraphLaunch");
}

void GpuContext::destroyGraph(CuGraphExec graph) {
  if (graph)
    api_->cuGraphExecDestroy(graph);
}

Status GpuContext::memoryInfo(std::size_t *freeBytes, std::size_t *totalBytes) {
  return check(api_->cuMemGetInfo(freeBytes, totalBytes), "cuMemGetInfo");
}

} // namespace accel::rt::gpu
