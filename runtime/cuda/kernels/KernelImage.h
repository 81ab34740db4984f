//===- KernelImage.h - the embedded fatbin of cuda/kernels ------*- C++ -*-===//
#ifndef ACCEL_RUNTIME_CUDA_KERNELS_KERNELIMAGE_H
#define ACCEL_RUNTIME_CUDA_KERNELS_KERNELIMAGE_H

#include <cstddef>

extern "C" {
extern const unsigned char accel_gpu_kernel_image[];
extern const unsigned long long accel_gpu_kernel_image_size;
}

namespace accel::rt::gpu {

/// The fatbin's bytes (size 0 in a build without the CUDA toolkit).
inline const void *kernelImage() { return accel_gpu_kernel_image; }
inline std::size_t kernelImageBytes() { return std::size_t(accel_gpu_kernel_image_size); }

} // namespace accel::rt::gpu

#endif // ACCEL_RUNTIME_CUDA_KERNELS_KERNELIMAGE_H
