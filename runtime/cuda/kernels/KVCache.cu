//===- KVCache.cu - write a step's K and V into the paged pool --------------===//
//
// The pool of one layer is [num_blocks, block_size, kv_heads, head_dim] for K
// and the same for V (runtime/kv/BlockPool.h's layout), in the activation
// dtype, or f8E4M3FN (kv_write_<S>_kv8: stored = value / scale, one scale
// per layer or per KV head, KvScales.h; a float cache passes scales of 1). Token t goes to slot slot_mapping[t] (block * block_size + offset);
// a negative slot skips the token. One block per token.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"
#include "runtime/cuda/kernels/KvScales.h"

using namespace accel_kernels;

#define KV_WRITE(T, S, C, CS)                                                               \
  extern "C" __global__ void kv_write_##S##CS(const T *k, const T *v, const int *slots,    \
                                              C *kCache, C *vCache, i64 rowElems,          \
                                              i64 headDim,                                 \
                                              accel::rt::kernels::KvScales kvs) {          \
    const i64 t = blockIdx.x;                                                               \
    const i64 slot = slots[t];                                                              \
    if (slot < 0)                                                                           \
      return;                                                                               \
    for (i64 c = threadIdx.x; c < rowElems; c += blockDim.x) {                              \
      const i64 h = c / headDim;                                                            \
      kCache[slot * rowElems + c] = fromF32<C>(toF32(k[t * rowElems + c]) / kvs.kAt(h));    \
      vCache[slot * rowElems + c] = fromF32<C>(toF32(v[t * rowElems + c]) / kvs.vAt(h));    \
    }                                                                                       \
  }
ACCEL_FOR_EACH_DTYPE_AND_KV(KV_WRITE)
