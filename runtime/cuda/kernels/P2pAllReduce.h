//===- P2pAllReduce.h - the one-shot all-reduce's launch parameters -*- C++ -*-===//
//
// Shared by runtime/cuda/kernels/AllReduce.cu and its host side
// (runtime/cuda/P2pAllReduce.h): plain C types, so that nvcc and the host
// compiler agree on the layout of what is passed by value.
//
// Every rank of a group in one process owns, on its GPU, a staging buffer of
// two halves of kP2pMaxBytes (even and odd calls) and a flag area of
// kP2pFlagWords 32-bit words:
//   start[kP2pMaxBlocks][kP2pMaxRanks]   rank p writes start[b][p] of every
//                                        rank when its block b arrives
//   counter[kP2pMaxBlocks]               the rank's own epoch per block
// Every rank can read and write every other rank's memory (CUDA peer access).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_KERNELS_P2PALLREDUCE_H
#define ACCEL_RUNTIME_CUDA_KERNELS_P2PALLREDUCE_H

#define ACCEL_P2P_MAX_RANKS 8
#define ACCEL_P2P_MAX_BLOCKS 64

namespace accel_p2p {
constexpr int kP2pMaxRanks = ACCEL_P2P_MAX_RANKS;
constexpr int kP2pMaxBlocks = ACCEL_P2P_MAX_BLOCKS;
constexpr int kP2pFlagWords = kP2pMaxBlocks * kP2pMaxRanks + kP2pMaxBlocks;
/// The largest all-reduce (bytes per rank) the one-shot kernel takes: it
/// reads every rank's whole buffer, which pays only for small messages
/// (decode steps); larger ones go to NCCL.
constexpr unsigned long long kP2pMaxBytes = 1ull << 20;

struct P2pAllReduceParams {
  unsigned long long data[kP2pMaxRanks];  // each rank's staging buffer (device pointers)
  unsigned long long flags[kP2pMaxRanks]; // each rank's flag area
  int rank;
  int ranks;
};
} // namespace accel_p2p

#endif // ACCEL_RUNTIME_CUDA_KERNELS_P2PALLREDUCE_H
