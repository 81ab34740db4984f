//===- KvScales.h - an FP8 KV cache's scales, passed to kernels -*- C++ -*-===//
//
// Shared by the kernels that write or read an f8E4M3FN KV cache (KVCache.cu,
// Rotary.cu, Attention.cu, DecodeAttention.cu: stored = value / scale, read
// back as stored * scale) and the runtime that launches them
// (runtime/cuda/ops/Attention.cpp, GpuRotary.cpp). One layer's scales travel
// by value as a kernel parameter (no device buffer, and a CUDA graph keeps
// them): one k and one v scale for the layer (`heads` = 1: accelc
// -kv-cache-dtype=fp8), or one per KV head (accelc -kv-cache-dtype=fp8
// -calibration, at most kMaxKvScaleHeads). A float cache passes scales of 1.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_KERNELS_KVSCALES_H
#define ACCEL_RUNTIME_CUDA_KERNELS_KVSCALES_H

namespace accel::rt::kernels {

constexpr int kMaxKvScaleHeads = 32;

struct KvScales {
  int heads = 1; // 1: one scale for every head
  float k[kMaxKvScaleHeads] = {1.0f};
  float v[kMaxKvScaleHeads] = {1.0f};
#ifdef __CUDACC__
  __host__ __device__
#endif
  float kAt(long long kvHead) const { return k[heads == 1 ? 0 : kvHead]; }
#ifdef __CUDACC__
  __host__ __device__
#endif
  float vAt(long long kvHead) const { return v[heads == 1 ? 0 : kvHead]; }
};

} // namespace accel::rt::kernels

#endif // ACCEL_RUNTIME_CUDA_KERNELS_KVSCALES_H
