//===- AllReduce.cu - one-shot all-reduce over CUDA peer access -----------===//
//
// The sum of every rank's x for the ranks of a tensor-parallel group in one
// process (TpGpuExecutor), when the GPUs reach each other's memory (NVLink or
// PCIe peer access): what NCCL does for small messages, in one kernel and
// without NCCL's protocol. Every block b of every rank, in call (epoch) e:
//   1. copies its range of x into half e % 2 of the rank's staging buffer;
//   2. tells every rank it arrived (start[b][rank] = e in the peer's flag
//      area, a release store at system scope) and waits until every rank's
//      flag in its own area reached e (acquire loads);
//   3. sums the range of every rank's half e % 2 in rank order, in f32,
//      rounded once: the same bits on every rank, whatever the transport.
// No barrier at the end: call e + 2 writes the same half again only after
// its peers arrived at call e + 1, that is, after they finished reading call
// e; and a flag may already hold e + 1 when a slow thread looks for e (hence
// "reached", not "equals"). The epoch is the block's counter + 1, kept in
// device memory: a CUDA graph replays the kernel with the same arguments.
// Every rank launches the same grid over the same count, so block b covers
// the same range everywhere, and the grid is small enough (at most 32
// blocks) to be resident at once. A rank that never arrives (its step
// failed) makes the others trap after 30 s instead of spinning forever.
//
// p2p_sum_* is the second half alone, for ranks that share a GPU and meet
// on the host (P2pAllReduce's host-ordered groups): the staging halves are
// filled and ordered by copies and events, and nothing spins.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"
#include "runtime/cuda/kernels/P2pAllReduce.h"

using namespace accel_kernels;
using accel_p2p::P2pAllReduceParams;

namespace {

__device__ __forceinline__ void storeRelease(unsigned *p, unsigned v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned loadAcquire(const unsigned *p) {
  unsigned v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ unsigned long long globalTimerNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
/// A rank that has not arrived after this long never will (its step
/// failed): the kernel traps instead of spinning forever, and the step
/// fails with the context's error.
constexpr unsigned long long kGiveUpNs = 30ull * 1000 * 1000 * 1000;

__device__ __forceinline__ int startWord(int block, int rank) {
  return block * ACCEL_P2P_MAX_RANKS + rank;
}
__device__ __forceinline__ int counterWord(int block) {
  return ACCEL_P2P_MAX_BLOCKS * ACCEL_P2P_MAX_RANKS + block;
}

/// Every rank's block `blockIdx.x` arrives at epoch `epoch`: thread r <
/// ranks signals rank r and waits for rank r.
__device__ __forceinline__ void meet(const P2pAllReduceParams &p, unsigned epoch) {
  __syncthreads();
  if (int(threadIdx.x) < p.ranks) {
    unsigned *peer = reinterpret_cast<unsigned *>(p.flags[threadIdx.x]);
    const unsigned *self = reinterpret_cast<const unsigned *>(p.flags[p.rank]);
    storeRelease(peer + startWord(blockIdx.x, p.rank), epoch);
    const unsigned long long since = globalTimerNs();
    while (int(loadAcquire(self + startWord(blockIdx.x, threadIdx.x)) - epoch) < 0)
      if (globalTimerNs() - since > kGiveUpNs)
        __trap();
  }
  __syncthreads();
}

/// y[i] = the sum over ranks of staging half `half`'s vector i, in rank
/// order, in f32, rounded once.
template <typename T>
__device__ __forceinline__ uint4 sumRanks(const P2pAllReduceParams &p, i64 half, i64 i) {
  constexpr int kPer = 16 / sizeof(T);
  float acc[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j)
    acc[j] = 0.0f;
  for (int r = 0; r < p.ranks; ++r) {
    // Past L1 (not coherent with the peers' writes).
    const uint4 v = __ldcg(reinterpret_cast<const uint4 *>(p.data[r]) + half + i);
    const T *e = reinterpret_cast<const T *>(&v);
#pragma unroll
    for (int j = 0; j < kPer; ++j)
      acc[j] += toF32(e[j]);
  }
  uint4 out;
  T *o = reinterpret_cast<T *>(&out);
#pragma unroll
  for (int j = 0; j < kPer; ++j)
    o[j] = fromF32<T>(acc[j]);
  return out;
}

/// y = sum over ranks of x, `n16` 16-byte vectors of T.
template <typename T>
__device__ __forceinline__ void p2pAllReduce(const P2pAllReduceParams &p, const uint4 *x,
                                             uint4 *y, i64 n16) {
  const i64 per = (n16 + gridDim.x - 1) / gridDim.x;
  const i64 begin = i64(blockIdx.x) * per;
  const i64 end = begin + per < n16 ? begin + per : n16;
  unsigned *self = reinterpret_cast<unsigned *>(p.flags[p.rank]);
  const unsigned epoch = self[counterWord(blockIdx.x)] + 1;
  // Half epoch % 2 of every staging buffer (kP2pMaxBytes each).
  const i64 half = (epoch & 1u) ? i64(accel_p2p::kP2pMaxBytes / 16) : 0;
  uint4 *mine = reinterpret_cast<uint4 *>(p.data[p.rank]) + half;
  for (i64 i = begin + threadIdx.x; i < end; i += blockDim.x)
    mine[i] = x[i];
  meet(p, epoch);
  for (i64 i = begin + threadIdx.x; i < end; i += blockDim.x)
    y[i] = sumRanks<T>(p, half, i);
  if (threadIdx.x == 0)
    self[counterWord(blockIdx.x)] = epoch;
}

} // namespace

#define P2P_ALLREDUCE(T, S)                                                                 \
  extern "C" __global__ void p2p_allreduce_##S(P2pAllReduceParams p, const uint4 *x,       \
                                               uint4 *y, i64 n16) {                         \
    p2pAllReduce<T>(p, x, y, n16);                                                          \
  }
ACCEL_FOR_EACH_DTYPE(P2P_ALLREDUCE)

#define P2P_SUM(T, S)                                                                       \
  extern "C" __global__ void p2p_sum_##S(P2pAllReduceParams p, int half, uint4 *y,          \
                                         i64 n16) {                                         \
    const i64 base = half ? i64(accel_p2p::kP2pMaxBytes / 16) : 0;                          \
    for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < n16;                        \
         i += i64(gridDim.x) * blockDim.x)                                                  \
      y[i] = sumRanks<T>(p, base, i);                                                       \
  }
ACCEL_FOR_EACH_DTYPE(P2P_SUM)
