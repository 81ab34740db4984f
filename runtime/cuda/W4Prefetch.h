//===- W4Prefetch.h - 4-bit weights dequantised a GEMM ahead -----*- C++ -*-===//
//
// A 4-bit linear of more than 64 rows (prefill, large mixed steps) cannot
// run gemm_w4 (GemvInt4.cu): its weight is dequantised into the compute
// dtype (dequantize_w4_*) and multiplied by cuBLASLt. Dequantising is bound
// by memory (0.5 byte read and 2 written per weight) and the GEMM, at these
// rows, by the tensor cores; run one after the other they cost a prefill of
// the Llama-3-8B shapes 62.9 ms where bf16 takes 53.6 (H100, 2026-12-08).
//
// W4Prefetcher overlaps them: it knows the plan's 4-bit weights in the order
// its steps read them (GpuExecutor gives it at load) and keeps two buffers
// of the largest one. acquire() hands the GEMM its weight dequantised:
// prefetched into a buffer on a side stream (the compute stream waits for
// that dequantisation's event), or dequantised there and then on the compute
// stream. release(), once the GEMM is enqueued, records its "read" event
// and starts the next weight's dequantisation into the other buffer on the
// side stream, after that buffer's last GEMM. So while the GEMM of weight i
// runs, weight i + 1 is dequantised beside it; after a step's last weight
// the first is prefetched for the next step.
//
// Eager steps only: a step being captured in a CUDA graph (decode batches
// above 64 rows) dequantises on the compute stream as before (int4Gemm does
// not call acquire() then). The buffers are allocated at the first
// acquire() (a workload of decode steps only never pays for them); when
// they cannot be, acquire() says so (0) and int4Gemm dequantises as before.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_W4PREFETCH_H
#define ACCEL_RUNTIME_CUDA_W4PREFETCH_H

#include "core/DType.h"
#include "runtime/cuda/GpuContext.h"

#include <array>
#include <memory>
#include <unordered_map>
#include <vector>

namespace accel::rt::engine {

struct DeviceTensor;

/// One packed 4-bit weight [n, k] as dequantize_w4_* reads it.
struct W4Dequant {
  CuDevicePtr w = 0, scale = 0, zp = 0; // zp 0: none
  int qmin = 0;                              // -8 (i4) or 0 (u4)
  int64_t n = 0, k = 0;
  int64_t scaleRow = 0, groupChunks = 1; // GemvInt4.cu's scale indexing
  int64_t packedBytes = 0;               // Int4Layout.h's w4Layout(n, k).bytes()
};

/// The dequantisation of a packed 4-bit weight `w` with f32 `scale` (per
/// group of `group` columns when group > 0, else per channel or per
/// tensor) and optional zero points `zp`; one sentence naming what is
/// wrong otherwise (shared by int4Gemm and GpuExecutor).
StatusOr<W4Dequant> w4Dequant(const DeviceTensor &w, const DeviceTensor &scale,
                              const DeviceTensor *zp, int64_t group);

class W4Prefetcher {
public:
  /// `order`: the 4-bit weights in the order the schedule's steps read
  /// them (each once; 2 or more). The buffers hold `cdt` (bf16, f16, f32).
  static StatusOr<std::unique_ptr<W4Prefetcher>> create(gpu::GpuContext &g, DType cdt,
                                                        std::vector<W4Dequant> order);
  ~W4Prefetcher();
  W4Prefetcher(const W4Prefetcher &) = delete;
  W4Prefetcher &operator=(const W4Prefetcher &) = delete;

  /// `d` dequantised (n x k of the compute dtype) for a GEMM about to be
  /// enqueued on the context's stream: the buffer's address, valid until
  /// the next release() but one; 0 when the prefetcher cannot serve it (a
  /// weight it does not know, no memory for the buffers): dequantise as
  /// without it. Every acquire() that returns a buffer needs a release()
  /// after its GEMM, before the next acquire().
  StatusOr<CuDevicePtr> acquire(const W4Dequant &d);
  /// After the GEMM reading the acquired buffer is enqueued: records that
  /// read and dequantises the next weight into the other buffer on the
  /// side stream.
  Status release();

  /// The compute dtype its buffers hold.
  DType dtype() const { return cdt_; }
  /// Acquires that found their weight already dequantised (tests, -v).
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }

private:
  W4Prefetcher() = default;
  Status ensureBuffers();
  Status launchDequant(const W4Dequant &d, CuDevicePtr out, CuStream stream);

  gpu::GpuContext *g_ = nullptr;
  DType cdt_ = DType::kBF16;
  CuFunction dequant_ = nullptr;
  std::vector<W4Dequant> order_;
  std::unordered_map<CuDevicePtr, int> index_; // weight address -> place in order_
  std::size_t bufferBytes_ = 0;
  bool noBuffers_ = false; // allocating them failed once: serve nothing
  std::array<gpu::DeviceBuffer, 2> buf_;
  std::array<int, 2> holds_{{-1, -1}}; // the weight (index) each buffer holds or will hold
  std::array<CuEvent, 2> ready_{{nullptr, nullptr}}; // its dequantisation done
  std::array<CuEvent, 2> read_{{nullptr, nullptr}};  // its last GEMM done
  CuStream side_ = nullptr;
  int current_ = -1; // the buffer acquire() handed out, until release()
  int64_t hits_ = 0, misses_ = 0;
};

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_CUDA_W4PREFETCH_H
