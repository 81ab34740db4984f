//===- KVCache.cu - write a step's K and V into the paged pool --------------===//
//
// The pool of one layer is [num_blocks, block_size, kv_heads, head_dim] for K
// and the same for V (runtime/kv/BlockPool.h's layout), in the activation
// dtype. Token t goes to slot slot_mapping[t] (block * block_size + offset);
// a negative slot skips the token. One block per token.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Common.cuh"

using namespace accel_kernels;

#define KV_WRITE(T, S)                                                                      \
  extern "C" __global__ void kv_write_##S(const T *k, const T *v, const int *slots,        \
                                          T *kCache, T *vCache, i64 rowElems) {             \
    const i64 t = blockIdx.x;                                                               \
    const i64 slot = slots[t];                                                              \
    if (slot < 0)                                                                           \
      return;                                                                               \
    for (i64 c = threadIdx.x; c < rowElems; c += blockDim.x) {                              \
      kCache[slot * rowElems + c] = k[t * rowElems + c];                                    \
      vCache[slot * rowElems + c] = v[t * rowElems + c];                                    \
    }                                                                                       \
  }
ACCEL_FOR_EACH_DTYPE(KV_WRITE)
