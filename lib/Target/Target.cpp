//===- Target.cpp - cpu, a100, h100 and h200 descriptions ------------------===//
//
// Sources (public NVIDIA documents; SXM boards throughout):
//
// [A100-WP]  "NVIDIA A100 Tensor Core GPU Architecture" whitepaper (V1.0,
//            2020): 108 SMs, 40 MB L2, 192 KB combined L1/shared per SM of
//            which up to 164 KB shared, 64K 32-bit registers (256 KB) per
//            SM, 2048 threads per SM; peak table (FP32 19.5, TF32 156,
//            BF16/FP16 312 TFLOPS, INT8 624 TOPS, dense).
// [A100-DS]  "NVIDIA A100 Tensor Core GPU" datasheet (A100 80GB SXM column):
//            80 GB HBM2e, 2,039 GB/s.
// [H100-WP]  "NVIDIA H100 Tensor Core GPU Architecture" whitepaper (2022):
//            132 SMs on H100 SXM5, 50 MB L2, 256 KB combined L1/shared per
//            SM of which up to 228 KB shared, 64K registers per SM.
// [H100-DS]  "NVIDIA H100 Tensor Core GPU" datasheet (H100 SXM column):
//            80 GB, 3.35 TB/s; FP32 67 TFLOPS; TF32 989, BF16/FP16 1,979,
//            FP8 3,958 TFLOPS and INT8 3,958 TOPS *with sparsity* (the
//            footnote): dense is half.
// [H200-DS]  "NVIDIA H200 Tensor Core GPU" datasheet (H200 SXM column):
//            141 GB HBM3e, 4.8 TB/s; the same compute figures as H100 SXM
//            (same GH100 chip, same 132 SMs, same 50 MB L2).
// [CUDA-PG]  "CUDA C++ Programming Guide", Technical Specifications per
//            Compute Capability: shared memory per SM 164 KB (8.0) / 228 KB
//            (9.0), per block 48 KB without opt-in and 163 KB (8.0) / 227 KB
//            (9.0) with it; 255 registers per thread; 1024 threads per
//            block; warp size 32.
//
// "KB"/"MB" in NVIDIA's documents are binary (KiB, MiB) for on-chip memory;
// HBM capacities are nominal marketing GB, recorded here as GiB (the runtime
// sizes its pools from the device's own free-memory query, never from
// these).
//
//===----------------------------------------------------------------------===//
#include "accel/Target/Target.h"

namespace accel::target {

namespace {

constexpr int64_t KiB = 1024;
constexpr int64_t MiB = 1024 * KiB;
constexpr int64_t GiB = 1024 * MiB;

/// What every NVIDIA data-centre GPU since Volta shares [CUDA-PG].
TargetDesc nvidiaCommon() {
  TargetDesc d;
  d.isGpu = true;
  d.sharedMemoryPerBlock = 48 * KiB;
  d.registersPerSm = 64 * 1024;
  d.maxRegistersPerThread = 255;
  d.maxThreadsPerSm = 2048;
  d.maxThreadsPerBlock = 1024;
  d.warpSize = 32;
  d.gemmDimMultiple = 64; // [CUDA-PG] 16-byte vectors; cuBLASLt/CUTLASS K tiles (Target.h)
  return d;
}

TargetDesc makeCpu() {
  TargetDesc d;
  d.name = "cpu";
  d.product = "host CPU (the plain C++ backend; no hardware model)";
  d.arch = "cpu";
  return d;
}

TargetDesc makeA100() {
  TargetDesc d = nvidiaCommon();
  d.name = "a100";
  d.product = "NVIDIA A100 SXM4 80GB";
  d.arch = "sm_80";
  d.computeCapability = 80;
  d.smCount = 108;                          // [A100-WP]
  d.sharedMemoryPerSm = 164 * KiB;          // [A100-WP], [CUDA-PG]
  d.sharedMemoryPerBlockOptIn = 163 * KiB;  // [CUDA-PG]
  d.l2Bytes = 40 * MiB;                     // [A100-WP]
  d.memoryBytes = 80 * GiB;                 // [A100-DS]
  d.memoryBandwidth = 2039e9;               // [A100-DS]
  d.peakTflopsF32 = 19.5;                   // [A100-WP], [A100-DS]
  d.peakTflopsTF32 = 156;
  d.peakTflopsBF16 = 312;
  d.peakTflopsF16 = 312;
  d.peakTflopsFP8 = 0;                      // no FP8 Tensor Cores on sm_80
  d.peakTopsInt8 = 624;
  return d;
}

/// H100 SXM5 and H200 SXM: one GH100 configuration.
TargetDesc makeGh100() {
  TargetDesc d = nvidiaCommon();
  d.arch = "sm_90";
  d.computeCapability = 90;
  d.smCount = 132;                          // [H100-WP], [H200-DS]
  d.sharedMemoryPerSm = 228 * KiB;          // [H100-WP], [CUDA-PG]
  d.sharedMemoryPerBlockOptIn = 227 * KiB;  // [CUDA-PG]
  d.l2Bytes = 50 * MiB;                     // [H100-WP]
  d.peakTflopsF32 = 67;                     // [H100-DS], [H200-DS]
  d.peakTflopsTF32 = 989.0 / 2;             // datasheet figures are with
  d.peakTflopsBF16 = 1979.0 / 2;            // 2:4 sparsity; dense is half
  d.peakTflopsF16 = 1979.0 / 2;
  d.peakTflopsFP8 = 3958.0 / 2;
  d.peakTopsInt8 = 3958.0 / 2;
  return d;
}

TargetDesc makeH100() {
  TargetDesc d = makeGh100();
  d.name = "h100";
  d.product = "NVIDIA H100 SXM5 80GB";
  d.memoryBytes = 80 * GiB;                 // [H100-DS]
  d.memoryBandwidth = 3.35e12;              // [H100-DS]
  return d;
}

TargetDesc makeH200() {
  TargetDesc d = makeGh100();
  d.name = "h200";
  d.product = "NVIDIA H200 SXM 141GB";
  d.memoryBytes = 141 * GiB;                // [H200-DS]
  d.memoryBandwidth = 4.8e12;               // [H200-DS]
  return d;
}

const TargetDesc kCpu = makeCpu();
const TargetDesc kA100 = makeA100();
const TargetDesc kH100 = makeH100();
const TargetDesc kH200 = makeH200();

} // namespace

std::string_view elementKindName(ElementKind kind) {
  switch (kind) {
  case ElementKind::kF32:
    return "fp32";
  case ElementKind::kTF32:
    return "tf32";
  case ElementKind::kBF16:
    return "bf16";
  case ElementKind::kF16:
    return "fp16";
  case ElementKind::kFP8:
    return "fp8";
  case ElementKind::kInt8:
    return "int8";
  }
  return "?";
}

double TargetDesc::peakTflops(ElementKind kind) const {
  switch (kind) {
  case ElementKind::kF32:
    return peakTflopsF32;
  case ElementKind::kTF32:
    return peakTflopsTF32;
  case ElementKind::kBF16:
    return peakTflopsBF16;
  case ElementKind::kF16:
    return peakTflopsF16;
  case ElementKind::kFP8:
    return peakTflopsFP8;
  case ElementKind::kInt8:
    return peakTopsInt8;
  }
  return 0;
}

bool TargetDesc::supports(ElementKind kind) const {
  return !isGpu || peakTflops(kind) > 0;
}

double TargetDesc::ridgePoint(ElementKind kind) const {
  if (!isGpu || memoryBandwidth <= 0)
    return 0;
  return peakTflops(kind) * 1e12 / memoryBandwidth;
}

const std::vector<const TargetDesc *> &all() {
  static const std::vector<const TargetDesc *> targets = {&kCpu, &kA100, &kH100,
                                                          &kH200};
  return targets;
}

const TargetDesc *lookup(std::string_view name) {
  for (const TargetDesc *t : all())
    if (t->name == name)
      return t;
  return nullptr;
}

const TargetDesc *lookupBySm(std::string_view sm) {
  if (sm == "cpu")
    return &kCpu;
  if (sm.substr(0, 3) == "sm_")
    sm.remove_prefix(3);
  else if (sm.substr(0, 2) == "sm")
    sm.remove_prefix(2);
  for (const TargetDesc *t : all())
    if (t->isGpu && std::to_string(t->computeCapability) == sm)
      return t;
  return nullptr;
}

std::string describeNames() {
  std::string s;
  const auto &targets = all();
  for (size_t i = 0; i < targets.size(); ++i) {
    if (i)
      s += i + 1 == targets.size() ? " or " : ", ";
    s += targets[i]->name;
  }
  return s;
}

} // namespace accel::target
