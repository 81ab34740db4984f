//===- CublasLt.h - cuBLASLt GEMMs, opened at run time ----------*- C++ -*-===//
//
// The GPU backend's matrix products go through cuBLASLt, opened with dlopen
// like the driver (accel links no CUDA library): `$ACCEL_LIBCUBLASLT` when
// set, else libcublasLt.so.13 (then .12) from the loader's path, then the
// usual install places (/usr/local/cuda/lib64, Python's nvidia/cublas
// package). The few types and enum values used are declared here (they are
// part of cuBLASLt's stable C ABI), so no CUDA header is needed to build.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_CUBLASLT_H
#define ACCEL_RUNTIME_CUDA_CUBLASLT_H

#include "core/DType.h"
#include "runtime/cuda/GpuContext.h"

#include <map>
#include <tuple>

namespace accel::rt::gpu {

struct HeuristicResult;

class CublasLt {
public:
  /// Opens the library and creates a handle; kUnavailable naming what was
  /// tried when it cannot.
  static StatusOr<std::unique_ptr<CublasLt>> create(GpuContext &gpu);
  ~CublasLt();

  /// The path the library was opened from.
  const std::string &path() const { return path_; }

  /// y[T, N] = x[T, K] @ w[N, K]^T, all row-major and contiguous, on the
  /// context's stream. x and w share one dtype (f32, f16 or bf16); y is that
  /// dtype or f32. Accumulation is f32; f32 inputs use exact f32 arithmetic
  /// (no TF32). `autotune` false keeps the heuristic's first algorithm for
  /// a shape this process has not tuned yet (the moe step's per-expert
  /// GEMMs, whose row counts vary from step to step: timing every one of
  /// them would cost more than it saves).
  Status linear(CuDevicePtr x, CuDevicePtr w, CuDevicePtr y, int64_t tokens, int64_t n,
                int64_t k, DType inType, DType outType, bool autotune = true);

  /// acc[T, N] = xq[T, K] @ wq[N, K]^T for W8A8 operands of one 8-bit type:
  /// i8 (tensor-core IMMA) gives exact i32 sums, f8E4M3FN (FP8 tensor cores,
  /// sm_89+) f32 sums. K must be a multiple of 16 and the pointers 16-byte
  /// aligned.
  Status linear8(CuDevicePtr xq, CuDevicePtr wq, CuDevicePtr acc, int64_t tokens, int64_t n,
                 int64_t k, DType qType);

  /// y[T, N] = (xq[T, K] @ wq[N, K]^T) * xs[t] * ws[n] with f8E4M3FN xq and
  /// wq, f32 vectors xs [T] and ws [N], y bf16, f16 or f32: the FP8 GEMM
  /// scales its sums itself (cuBLASLt's outer-vector scale mode), so no f32
  /// accumulator goes through memory. kUnimplemented when this cuBLASLt or
  /// GPU has no such algorithm (then linear8 and a rescale kernel do it).
  Status scaledLinearFp8(CuDevicePtr xq, CuDevicePtr wq, CuDevicePtr xs, CuDevicePtr ws,
                         CuDevicePtr y, int64_t tokens, int64_t n, int64_t k, DType outType);

private:
  struct Plan; // descriptors and the chosen algorithm for one shape
  /// tokens, n, k, in, out, mode (Mode), the operands' alignments (packed
  /// by alignmentKey)
  using Key = std::tuple<int64_t, int64_t, int64_t, int, int, int, int>;
  enum class Mode { kFloat, kInt8, kFp8, kFp8OuterScales };
  /// The plan of one shape and mode, made (and autotuned on x, w, y) on
  /// first use; null with an OK status when cuBLASLt has no algorithm.
  StatusOr<Plan *> planFor(Mode mode, int64_t tokens, int64_t n, int64_t k, DType inType,
                           DType outType, CuDevicePtr x, CuDevicePtr w, CuDevicePtr y,
                           CuDevicePtr aScale, CuDevicePtr bScale, bool tune = true);
  Status run(Plan &p, CuDevicePtr x, CuDevicePtr w, CuDevicePtr y);
  /// Times the `found` candidates on x, w, y (y is overwritten) and returns
  /// the fastest; once per shape and process.
  StatusOr<HeuristicResult> autotune(Plan &p, const HeuristicResult *candidates,
                                            int found, CuDevicePtr x, CuDevicePtr w,
                                            CuDevicePtr y, const Key &key);
  explicit CublasLt(GpuContext &gpu);
  Status load();
  Status check(int status, const char *call) const;

  GpuContext &gpu_;
  void *lib_ = nullptr;
  std::string path_;
  void *handle_ = nullptr;
  DeviceBuffer workspace_;
  std::map<Key, std::unique_ptr<Plan>> plans_;

  // Entry points (cublasStatus_t is an int; handles and descriptors are
  // pointers).
  int (*create_)(void **) = nullptr;
  int (*destroy_)(void *) = nullptr;
  int (*descCreate_)(void **, int, int) = nullptr;
  int (*descDestroy_)(void *) = nullptr;
  int (*descSetAttr_)(void *, int, const void *, std::size_t) = nullptr;
  int (*layoutCreate_)(void **, int, uint64_t, uint64_t, int64_t) = nullptr;
  int (*layoutDestroy_)(void *) = nullptr;
  int (*prefCreate_)(void **) = nullptr;
  int (*prefDestroy_)(void *) = nullptr;
  int (*prefSetAttr_)(void *, int, const void *, std::size_t) = nullptr;
  int (*heuristic_)(void *, void *, void *, void *, void *, void *, void *, int, void *,
                    int *) = nullptr;
  int (*matmul_)(void *, void *, const void *, const void *, void *, const void *, void *,
                 const void *, const void *, void *, void *, void *, const void *, void *,
                 std::size_t, CuStream) = nullptr;
  const char *(*statusString_)(int) = nullptr;
};

} // namespace accel::rt::gpu

#endif // ACCEL_RUNTIME_CUDA_CUBLASLT_H
