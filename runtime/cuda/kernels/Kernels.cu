//===- Kernels.cu - the one translation unit of the runtime's kernels ------===//
//
// nvcc -fatbin takes one source: this file includes every kernel file, so
// that the runtime loads one module (runtime/cuda/kernels/GpuKernels.cmake).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/AllReduce.cu"
#include "runtime/cuda/kernels/Attention.cu"
#include "runtime/cuda/kernels/DecodeAttention.cu"
#include "runtime/cuda/kernels/DecodeAttentionKP.cu"
#include "runtime/cuda/kernels/Dequantize.cu"
#include "runtime/cuda/kernels/Elementwise.cu"
#include "runtime/cuda/kernels/Embedding.cu"
#include "runtime/cuda/kernels/FlashPrefill.cu"
#include "runtime/cuda/kernels/Gemv.cu"
#include "runtime/cuda/kernels/GemvInt4.cu"
#include "runtime/cuda/kernels/KVCache.cu"
#include "runtime/cuda/kernels/Moe.cu"
#include "runtime/cuda/kernels/Norm.cu"
#include "runtime/cuda/kernels/QuantizeActivations.cu"
#include "runtime/cuda/kernels/Rotary.cu"
#include "runtime/cuda/kernels/Sampling.cu"
