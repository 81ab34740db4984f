//===- Target.h - the machines accel compiles for ---------------*- C++ -*-===//
//
// One TargetDesc per `-target=` name: the numbers the compiler's cost
// decisions read (kernel tiling and occupancy from the SM's shared memory,
// registers and threads; memory planning from HBM capacity; roofline
// estimates from bandwidth and peak throughput). Plain C++, no MLIR: the
// runtime and tools may link it too.
//
// GPU numbers are NVIDIA's public datasheet and whitepaper figures for the
// SXM boards (lib/Target/Target.cpp cites the documents); peak throughputs
// are *dense* Tensor Core figures (the datasheets' headline numbers with
// 2:4 sparsity are twice these). The cpu target describes no particular
// machine: its hardware fields are 0 ("unknown"), and code must not size
// anything by them.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_TARGET_TARGET_H
#define ACCEL_TARGET_TARGET_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace accel::target {

/// The element types peak throughput is given for. fp32 is the CUDA-core
/// (non-Tensor-Core) rate; the others are Tensor Core rates.
enum class ElementKind { kF32, kTF32, kBF16, kF16, kFP8, kInt8 };

/// "fp32", "tf32", "bf16", "fp16", "fp8", "int8".
std::string_view elementKindName(ElementKind kind);

struct TargetDesc {
  /// The `-target=` name: "cpu", "a100", "h100", "h200".
  std::string_view name;
  /// What the numbers describe ("NVIDIA A100 SXM4 80GB").
  std::string_view product;
  /// The SM architecture a plan records and kernels are built for: "sm_80",
  /// "sm_90"; "cpu" for the CPU target.
  std::string_view arch;
  /// Compute capability as major * 10 + minor (80, 90); 0 for the CPU.
  int computeCapability = 0;
  bool isGpu = false;

  /// Streaming multiprocessors.
  int smCount = 0;
  /// Shared memory per SM (the largest carve-out), bytes.
  int64_t sharedMemoryPerSm = 0;
  /// Shared memory a block may use without opting in (48 KiB), and with
  /// cudaFuncAttributeMaxDynamicSharedMemorySize (opt-in), bytes.
  int64_t sharedMemoryPerBlock = 0;
  int64_t sharedMemoryPerBlockOptIn = 0;
  /// L2 cache, bytes.
  int64_t l2Bytes = 0;
  /// Device memory (HBM) capacity, bytes, and peak bandwidth, bytes/s.
  int64_t memoryBytes = 0;
  double memoryBandwidth = 0;
  /// 32-bit registers per SM, and the most one thread may use.
  int registersPerSm = 0;
  int maxRegistersPerThread = 0;
  int maxThreadsPerSm = 0;
  int maxThreadsPerBlock = 0;
  int warpSize = 0;

  /// The layout rule for GEMM dimensions (accel-pad-gemm-dims): a
  /// feed-forward block's intermediate size, N of its first GEMM and K of
  /// its second, is padded to a multiple of this many elements. 64 on the
  /// GPUs: Gemv.cu's batch-1 kernels read K in 16-byte vectors (8 bf16/f16,
  /// 16 int8/fp8 elements) and fall back to cuBLASLt otherwise, and
  /// cuBLASLt's and CUTLASS's tensor-core kernels take K in tiles of 32-64
  /// (bf16) and N in tiles of 64 or more. 0 on the CPU: OpenBLAS and the
  /// reference kernels take any size.
  int64_t gemmDimMultiple = 0;
  /// Peak dense throughput in TFLOPS (TOPS for int8); 0 where the target
  /// has no hardware path for the type (fp8 on sm_80) or it is unknown
  /// (cpu).
  double peakTflopsF32 = 0, peakTflopsTF32 = 0, peakTflopsBF16 = 0,
         peakTflopsF16 = 0, peakTflopsFP8 = 0, peakTopsInt8 = 0;

  /// Peak dense throughput for `kind` (TFLOPS / TOPS), 0 when unsupported.
  double peakTflops(ElementKind kind) const;
  /// Whether the target has a hardware path for `kind` (peakTflops > 0);
  /// the CPU target runs every kind in software and answers true.
  bool supports(ElementKind kind) const;
  /// The arithmetic intensity (flops per byte of HBM traffic) above which a
  /// kernel on `kind` is compute-bound: peak / bandwidth. 0 on the CPU.
  double ridgePoint(ElementKind kind) const;
};

/// The description for a `-target=` name (case-sensitive: "cpu", "a100",
/// "h100", "h200"), or nullptr.
const TargetDesc *lookup(std::string_view name);

/// The first description (in all() order) for an SM architecture, "sm_80" or
/// "sm_90" (also accepted: "80", "90", "sm80", "sm90"), or for "cpu";
/// nullptr for anything else. sm_90 answers h100: h100 and h200 share the
/// GH100 chip and differ in memory only.
const TargetDesc *lookupBySm(std::string_view sm);

/// Every target, in the order "cpu", "a100", "h100", "h200".
const std::vector<const TargetDesc *> &all();

/// "cpu, a100, h100 or h200": for messages.
std::string describeNames();

} // namespace accel::target

#endif // ACCEL_TARGET_TARGET_H
