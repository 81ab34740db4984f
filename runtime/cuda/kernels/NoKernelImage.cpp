//===- NoKernelImage.cpp - the kernel image of a build without CUDA -------===//
//
// Built when the CUDA toolkit was not found: an empty image, which
// GpuContext::create reports as "built without GPU kernels".
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/KernelImage.h"

extern "C" {
const unsigned char accel_gpu_kernel_image[1] = {0};
const unsigned long long accel_gpu_kernel_image_size = 0;
}
