//===- Common.cuh - shared helpers of the runtime's CUDA kernels -*- CUDA -*-===//
//
// Every kernel of runtime/cuda/kernels is extern "C" (so the runtime finds it by
// name with cuModuleGetFunction) and comes in one variant per activation
// dtype, suffixed _f32, _bf16 or _f16. Activations are stored in that dtype;
// arithmetic is f32. Norm weights, rotary tables and inverse frequencies are
// f32. Token counts and sizes are int64 (long long) parameters.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_KERNELS_COMMON_CUH
#define ACCEL_RUNTIME_CUDA_KERNELS_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

namespace accel_kernels {

typedef long long i64;

__device__ __forceinline__ float toF32(float v) { return v; }
__device__ __forceinline__ float toF32(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float toF32(__half v) { return __half2float(v); }

/// FP8 KV caches (f8E4M3FN): stored = value / scale, saturating to +-448
/// as the CPU's f32ToF8E4M3FN does; read back as stored * scale.
__device__ __forceinline__ float toF32(__nv_fp8_e4m3 v) { return float(v); }

template <typename T> __device__ __forceinline__ T fromF32(float v);
template <> __device__ __forceinline__ float fromF32<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 fromF32<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <> __device__ __forceinline__ __half fromF32<__half>(float v) {
  return __float2half_rn(v);
}
template <> __device__ __forceinline__ __nv_fp8_e4m3 fromF32<__nv_fp8_e4m3>(float v) {
  __nv_fp8_e4m3 r;
  r.__x = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
  return r;
}

/// 16 bytes at `p` (16-byte aligned) read once, through the read-only path
/// without allocating in L1, so that what is reused (x, a row's inputs)
/// stays cached: the GEMVs' and the MoE kernels' weight chunks.
__device__ __forceinline__ uint4 loadStreaming(const void *p) {
  uint4 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
  return r;
}

/// Programmatic dependent launch (sm_90+; GpuContext::launchDependent): a
/// kernel launched that way may start while the kernel before it on the
/// stream still runs, so it must execute pdlWait() before it reads or
/// writes anything an earlier kernel writes or reads (it may read plan
/// constants, e.g. weights, before). pdlLaunchDependents() lets the next
/// dependent launch start before this kernel ends. Both are no-ops below
/// sm_90 and when the kernel was launched plainly.
__device__ __forceinline__ void pdlWait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdlLaunchDependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}
/// The prologue of the small kernels of a decode step (norms, qkv_rotary,
/// decode attention, its combine, argmax): the next kernel may start at
/// once, so that a GEMV after them puts its blocks on the SMs they leave
/// idle and has its first weight loads in flight when they finish; then
/// wait for the previous kernel's results.
__device__ __forceinline__ void pdlPrologue() {
  pdlLaunchDependents();
  pdlWait();
}

/// Sum over a block (blockDim.x a multiple of 32, at most 1024); every thread
/// gets the result. `scratch` holds 32 floats.
__device__ __forceinline__ float warpSum(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warpMax(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float blockSum(float v, float *scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  v = warpSum(v);
  __syncthreads(); // scratch may still be read by a previous call
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  float t = lane < warps ? scratch[lane] : 0.0f;
  return warpSum(t);
}

/// Activation kinds, in runtime/cpu/transformer/Activation.h's order.
__device__ __forceinline__ float sigmoidf_(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ float activate(int kind, float x) {
  switch (kind) {
  case 0: return x * sigmoidf_(x);                                       // silu
  case 1: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));     // gelu
  case 2: {                                                               // gelu_tanh
    const float c = 0.79788456080286536f;
    return 0.5f * x * (1.0f + tanhf(c * (x + 0.044715f * x * x * x)));
  }
  case 3: return x * sigmoidf_(1.702f * x);                               // quick_gelu
  case 4: return x > 0.0f ? x : 0.0f;                                     // relu
  case 5: return x > 0.0f ? x * x : 0.0f;                                 // relu_squared
  case 6: return sigmoidf_(x);                                            // sigmoid
  case 7: return tanhf(x);                                                // tanh
  }
  return x;
}

/// Integer index tensors arrive as i32 or i64 (is64).
__device__ __forceinline__ i64 loadIndex(const void *p, i64 i, int is64) {
  return is64 ? static_cast<const i64 *>(p)[i] : i64(static_cast<const int *>(p)[i]);
}

} // namespace accel_kernels

/// Defines NAME_f32, NAME_bf16 and NAME_f16 from a macro BODY(T, SUFFIX).
/// Kernels that read or write the KV cache also come as NAME_<S>_kv8, whose
/// cache is f8E4M3FN (ACCEL_FOR_EACH_DTYPE_AND_KV(BODY), BODY(T, S, C, CS)
/// with C the cache element type and CS "" or "_kv8").
#define ACCEL_FOR_EACH_DTYPE(BODY)                                                        \
  BODY(float, f32)                                                                        \
  BODY(__nv_bfloat16, bf16)                                                               \
  BODY(__half, f16)
#define ACCEL_FOR_EACH_DTYPE_AND_KV(BODY)                                                 \
  BODY(float, f32, float, )                                                               \
  BODY(__nv_bfloat16, bf16, __nv_bfloat16, )                                              \
  BODY(__half, f16, __half, )                                                             \
  BODY(float, f32, __nv_fp8_e4m3, _kv8)                                                   \
  BODY(__nv_bfloat16, bf16, __nv_fp8_e4m3, _kv8)                                          \
  BODY(__half, f16, __nv_fp8_e4m3, _kv8)

#endif // ACCEL_RUNTIME_CUDA_KERNELS_COMMON_CUH
