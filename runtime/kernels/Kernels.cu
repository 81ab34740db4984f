//===- Kernels.cu - the one translation unit of the runtime's kernels ------===//
//
// nvcc -fatbin takes one source: this file includes every kernel file, so
// that the runtime loads one module (runtime/kernels/GpuKernels.cmake).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/AllReduce.cu"
#include "runtime/kernels/Attention.cu"
#include "runtime/kernels/DecodeAttention.cu"
#include "runtime/kernels/Dequantize.cu"
#include "runtime/kernels/Elementwise.cu"
#include "runtime/kernels/Embedding.cu"
#include "runtime/kernels/FlashPrefill.cu"
#include "runtime/kernels/Gemv.cu"
#include "runtime/kernels/KVCache.cu"
#include "runtime/kernels/Norm.cu"
#include "runtime/kernels/QuantizeActivations.cu"
#include "runtime/kernels/Rotary.cu"
#include "runtime/kernels/Sampling.cu"
